package checkpoint

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/logstore"
)

// withProcs runs f with GOMAXPROCS at n: ReadTransient pipelines decoding
// and fn only on more than one.
func withProcs(t *testing.T, n int, f func()) {
	t.Helper()
	old := runtime.GOMAXPROCS(n)
	defer runtime.GOMAXPROCS(old)
	f()
}

// pipeGoroutines returns the stacks of the goroutines a read starts (the
// consumer of a pipelined ReadTransient, the page readers), once they
// have ended or after a generous wait: none may outlive the read.
func pipeGoroutines() string {
	var left string
	for range 500 {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		left = ""
		for g := range strings.SplitSeq(string(buf), "\n\n") {
			if strings.Contains(g, "checkpoint.(*pipe).consume") || strings.Contains(g, "parquetio.(*PageAhead).run") {
				left += g + "\n\n"
			}
		}
		if left == "" {
			return ""
		}
		time.Sleep(10 * time.Millisecond)
	}
	return left
}

// TestReadTransientStops stops pipelined and plain transient reads in
// every way one can stop: fn failing, the context cancelled by fn, the
// decoder failing on a later part (missing, or not Parquet) while fn has
// batches, and fn panicking. Each must return the cause, call fn for no
// batch after the one that failed, and leave no goroutine behind; -race
// checks that the two goroutines share nothing unguarded.
func TestReadTransientStops(t *testing.T) {
	rows, _ := manyFiles(6*batchSize + 17)
	data := writeRows(t, rows, parquet.PageBufferSize(4096))
	key1 := "_delta_log/00000000000000000001.checkpoint.0000000001.0000000002.parquet"
	key2 := "_delta_log/00000000000000000001.checkpoint.0000000002.0000000002.parquet"
	errFn := errors.New("fn failed")
	cases := []struct {
		name    string
		files   map[string][]byte
		failAt  int // fn's batch that fails; -1 for none
		cancel  bool
		panics  bool
		wantErr error
		batches int // batches fn must see, 0 for any
	}{
		{"fn fails", map[string][]byte{key1: data, key2: data}, 2, false, false, errFn, 3},
		{"fn cancels", map[string][]byte{key1: data, key2: data}, 2, true, false, context.Canceled, 3},
		{"part missing", map[string][]byte{key1: data}, -1, false, false, logstore.ErrNotFound, 7},
		{"part not parquet", map[string][]byte{key1: data, key2: []byte("not a parquet file at all, nor a checkpoint")}, -1, false, false, deltaerr.ErrCorrupt, 7},
		{"fn panics", map[string][]byte{key1: data, key2: data}, 1, false, true, nil, 2},
	}
	for _, procs := range []int{1, 2} {
		for _, c := range cases {
			withProcs(t, procs, func() {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				store := newMemStore(c.files)
				calls := 0
				var panicked any
				var err error
				func() {
					defer func() { panicked = recover() }()
					err = ReadTransient(ctx, store, []string{key1, key2}, Add, func(batch []actions.Action) error {
						calls++
						if calls-1 == c.failAt {
							switch {
							case c.panics:
								panic("fn's panic")
							case c.cancel:
								cancel()
							default:
								return errFn
							}
						}
						return nil
					})
				}()
				if c.panics {
					if panicked != "fn's panic" {
						t.Errorf("%d procs, %s: recovered %v, want fn's panic", procs, c.name, panicked)
					}
				} else if panicked != nil {
					t.Fatalf("%d procs, %s: panic %v", procs, c.name, panicked)
				} else if !errors.Is(err, c.wantErr) {
					t.Errorf("%d procs, %s: got %v, want %v", procs, c.name, err, c.wantErr)
				}
				if calls != c.batches {
					t.Errorf("%d procs, %s: fn called %d times, want %d", procs, c.name, calls, c.batches)
				}
				if left := pipeGoroutines(); left != "" {
					t.Fatalf("%d procs, %s: goroutines left after the read:\n%s", procs, c.name, left)
				}
			})
		}
	}
}

// TestReadTransientProcs reads a checkpoint of many small pages with
// ReadTransient pipelined (two procs) and not (one), and checks that
// both give the actions Read gives.
func TestReadTransientProcs(t *testing.T) {
	rows, _ := manyFiles(5*batchSize + 3)
	store := newMemStore(map[string][]byte{corruptKey: writeRows(t, rows, parquet.PageBufferSize(512))})
	want, _ := jsonLines(t, Read, store, []string{corruptKey}, All)
	for _, procs := range []int{1, 2} {
		withProcs(t, procs, func() {
			got, _ := jsonLines(t, ReadTransient, store, []string{corruptKey}, All)
			if len(got) != len(want) {
				t.Fatalf("%d procs: %d actions, want %d", procs, len(got), len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("%d procs: action %d is %s, want %s", procs, i, got[i], want[i])
				}
			}
		})
	}
}

// TestReadTransientGoexit ends the goroutine of a pipelined read's fn with
// runtime.Goexit (as a t.FailNow there would): the read must fail, not
// wait for it forever.
func TestReadTransientGoexit(t *testing.T) {
	rows, _ := manyFiles(6*batchSize + 17)
	store := newMemStore(map[string][]byte{corruptKey: writeRows(t, rows, parquet.PageBufferSize(4096))})
	withProcs(t, 2, func() {
		calls := 0
		err := ReadTransient(context.Background(), store, []string{corruptKey}, Add, func(batch []actions.Action) error {
			if calls++; calls == 2 {
				runtime.Goexit()
			}
			return nil
		})
		if !errors.Is(err, errConsumerExited) {
			t.Errorf("got %v, want errConsumerExited", err)
		}
		if calls != 2 {
			t.Errorf("fn called %d times, want 2", calls)
		}
		if left := pipeGoroutines(); left != "" {
			t.Fatalf("goroutines left after the read:\n%s", left)
		}
	})
}

// TestReadTransientPrepared checks that prep sees each batch before fn
// does, that fn gets what prep returned for that very batch, that prep
// gets back for reuse only what it returned for a batch fn is done with,
// and that an error of prep stops the read, pipelined or not, leaving no
// goroutine behind.
func TestReadTransientPrepared(t *testing.T) {
	rows, _ := manyFiles(5*batchSize + 3)
	store := newMemStore(map[string][]byte{corruptKey: writeRows(t, rows, parquet.PageBufferSize(512))})
	want, _ := jsonLines(t, Read, store, []string{corruptKey}, All)
	type prepared struct {
		seq   int
		paths string // the batch's paths, copied
	}
	paths := func(batch []actions.Action) string {
		var b strings.Builder
		for i := range batch {
			if a := batch[i].Add; a != nil {
				b.WriteString(a.Path + "\n")
			}
		}
		return b.String()
	}
	errPrep := errors.New("prep failed")
	for _, procs := range []int{1, 2} {
		withProcs(t, procs, func() {
			for _, failAt := range []int{-1, 2} {
				var mu sync.Mutex
				done := map[int]bool{} // batches fn is done with
				preps, calls, actionsSeen := 0, 0, 0
				err := ReadTransientPrepared(context.Background(), store, []string{corruptKey}, All,
					func(batch []actions.Action, reuse *prepared) (*prepared, error) {
						if reuse != nil {
							mu.Lock()
							ok := done[reuse.seq]
							mu.Unlock()
							if !ok {
								t.Errorf("%d procs: prep got back batch %d before fn was done with it", procs, reuse.seq)
							}
						}
						if preps == failAt {
							return reuse, errPrep
						}
						preps++
						return &prepared{seq: preps - 1, paths: paths(batch)}, nil
					},
					func(batch []actions.Action, p *prepared) error {
						if p == nil || p.seq != calls || p.paths != paths(batch) {
							t.Errorf("%d procs: fn's batch %d came with the preparation of another", procs, calls)
						}
						actionsSeen += len(batch)
						mu.Lock()
						done[calls] = true
						mu.Unlock()
						calls++
						return nil
					})
				switch {
				case failAt < 0 && (err != nil || actionsSeen != len(want)):
					t.Errorf("%d procs: %v, %d actions, want %d", procs, err, actionsSeen, len(want))
				case failAt >= 0 && !errors.Is(err, errPrep):
					t.Errorf("%d procs: got %v, want prep's error", procs, err)
				case failAt >= 0 && (calls > failAt || procs == 1 && calls != failAt):
					t.Errorf("%d procs: fn called %d times after prep failed on batch %d", procs, calls, failAt)
				}
				if left := pipeGoroutines(); left != "" {
					t.Fatalf("%d procs: goroutines left after the read:\n%s", procs, left)
				}
			}
		})
	}
}

package write

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/godelta/delta/schema"
)

// keepKey is a ColumnObserver over some columns that keeps every row it
// observes as given (their strings too, as a sample would), fails or
// panics at a row when told to, and keys rows by column 0.
type keepKey struct {
	cols    []int
	kept    [][]schema.Value
	failAt  int // 1-based row number: Observe returns errObserve there
	panicAt int // likewise, panics
}

var errObserve = errors.New("observe failed")

func (k *keepKey) ObservedColumns() []int { return k.cols }

func (k *keepKey) Observe(row []schema.Value) error {
	k.kept = append(k.kept, slices.Clone(row))
	switch len(k.kept) {
	case k.failAt:
		return errObserve
	case k.panicAt:
		panic("observe panicked")
	}
	return nil
}

func (k *keepKey) Prepare() (RowKey, error) {
	return RowKey{Words: 1, Key: func(dst []uint64, row []schema.Value) error {
		dst[0] = uint64(row[0].Int64())
		return nil
	}}, nil
}

// noGoroutinesLeft fails t unless the goroutines are back to before
// within a few seconds: a goroutine the sorter waited for may still be
// returning (its deferred calls) when the sorter does.
func noGoroutinesLeft(t *testing.T, before int) {
	t.Helper()
	after := runtime.NumGoroutine()
	for i := 0; i < 300 && after > before; i++ {
		time.Sleep(10 * time.Millisecond)
		after = runtime.NumGoroutine()
	}
	if after > before {
		t.Errorf("%d goroutines before, %d after", before, after)
	}
}

// withProcs runs fn with GOMAXPROCS set to n.
func withProcs(n int, fn func()) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(n))
	fn()
}

// observeRows are rows of a long, a string and a struct holding a
// string, with nulls.
func observeRows(n int) [][]schema.Value {
	var rows [][]schema.Value
	for i := range n {
		var s, st schema.Value
		if i%7 != 0 {
			s = schema.StringValue(fmt.Sprint("name-", i))
			st = schema.StructValue([]schema.Value{schema.StringValue(fmt.Sprint("in-", i)), schema.LongValue(int64(i))})
		}
		rows = append(rows, []schema.Value{schema.LongValue(int64((i * 7919) % 1000)), s, st, schema.DoubleValue(float64(i))})
	}
	return rows
}

// TestObserverSeesEveryRow: a ColumnObserver sees every row staged, in
// read order, with its observed values and the others null, on one core
// or two (the observer's goroutine), in memory or spilling; the values
// it keeps, strings and nested ones included, stay what they were after
// the sorter reused its pages; and the rows come out the same.
func TestObserverSeesEveryRow(t *testing.T) {
	rows := observeRows(20000)
	for _, procs := range []int{1, 2} {
		for _, budget := range []int64{0, 64 << 10} {
			for _, cols := range [][]int{{0}, {1, 3}, {2}, {0, 1, 2, 3}} {
				t.Run(fmt.Sprintf("procs%d-budget%d-cols%v", procs, budget, cols), func(t *testing.T) {
					withProcs(procs, func() {
						key := &keepKey{cols: cols}
						s := newColSorter(budget, t.TempDir(), key, 4)
						defer s.close()
						for _, r := range rows {
							if err := s.add(r); err != nil {
								t.Fatal(err)
							}
						}
						if (s.obs != nil) != (procs > 1) {
							t.Fatalf("%d cores: observer %v", procs, s.obs != nil)
						}
						n := 0
						if err := s.drain(func([]schema.Value) error { n++; return nil }); err != nil {
							t.Fatal(err)
						}
						if n != len(rows) || len(key.kept) != len(rows) {
							t.Fatalf("%d rows out, %d observed, of %d", n, len(key.kept), len(rows))
						}
						for i, got := range key.kept {
							for j := range rows[i] {
								want := schema.Value{}
								if slices.Contains(cols, j) || procs == 1 {
									want = rows[i][j]
								}
								if j < len(got) && !sameStaged(got[j], want) || j >= len(got) && !want.IsNull() {
									t.Fatalf("row %d column %d: observed %v, want %v", i, j, got, want)
								}
							}
						}
					})
				})
			}
		}
	}
}

// TestObserverFailure: an error of Observe on the observer's goroutine
// comes back from the sorter as is; a panic is raised again on the
// caller's goroutine; neither leaves the goroutine behind.
func TestObserverFailure(t *testing.T) {
	rows := observeRows(5000)
	run := func(key *keepKey) (err error) {
		s := newColSorter(0, t.TempDir(), key, 4)
		defer s.close()
		for _, r := range rows {
			if err := s.add(r); err != nil {
				return err
			}
		}
		return s.drain(func([]schema.Value) error { return nil })
	}
	withProcs(2, func() {
		before := runtime.NumGoroutine()
		for _, at := range []int{1, 3000, 5000} {
			if err := run(&keepKey{cols: []int{0}, failAt: at}); !errors.Is(err, errObserve) {
				t.Errorf("fail at row %d: %v", at, err)
			}
			func() {
				defer func() {
					if r := recover(); r != "observe panicked" {
						t.Errorf("panic at row %d: recovered %v", at, r)
					}
				}()
				_ = run(&keepKey{cols: []int{0}, panicAt: at})
			}()
		}
		// Each sorter stopped its goroutine before it returned.
		noGoroutinesLeft(t, before)
	})
}

// TestObserverColumnsOutside: a key naming columns beyond the table row
// is observed on the staging goroutine, as one that names none.
func TestObserverColumnsOutside(t *testing.T) {
	withProcs(2, func() {
		for _, cols := range [][]int{nil, {4}, {-1}} {
			if o := newObserver(&keepKey{cols: cols}, 4); o != nil {
				o.stop()
				t.Errorf("columns %v: an observer", cols)
			}
		}
	})
}

// failKey keys rows by column 0 and fails, panics or exits its goroutine
// at the key of the row whose column 0 is at.
type failKey struct {
	at   int64
	how  string // "error", "panic" or "goexit"
	seen int
}

var errKey = errors.New("key failed")

func (k *failKey) Observe([]schema.Value) error { k.seen++; return nil }

func (k *failKey) Prepare() (RowKey, error) {
	return RowKey{Words: 1, Columns: []int{0}, Key: func(dst []uint64, row []schema.Value) error {
		if row[0].Int64() == k.at {
			switch k.how {
			case "error":
				return errKey
			case "panic":
				panic("key panicked")
			default:
				runtime.Goexit()
			}
		}
		dst[0] = uint64(row[0].Int64())
		return nil
	}}, nil
}

// TestKeyAheadFailure: when the sort runs on goroutines of its own
// (drainPiped's, and keyAhead's for the keys), a key's error comes back
// as is, its panic is raised on the caller's goroutine, its goroutine's
// exit is an error; none leaves a goroutine behind, whether the failure
// is at the first, a middle or the last row.
func TestKeyAheadFailure(t *testing.T) {
	// The rows sortedRows keys first, to cut the buckets, are every
	// third one (n/sampleRows): row 0 fails there (on drainPiped's
	// goroutine), the others only when keyed ahead.
	const n = 3 * sampleRows
	withProcs(2, func() {
		before := runtime.NumGoroutine()
		for _, at := range []int64{0, 1, n/2 + 1, n - 1} {
			for _, how := range []string{"error", "panic", "goexit"} {
				func() {
					key := &failKey{at: at, how: how}
					s := newColSorter(0, t.TempDir(), key, 1)
					s.parallelRows = 1
					defer s.close()
					defer func() {
						r := recover()
						if how == "panic" && r != "key panicked" || how != "panic" && r != nil {
							t.Errorf("%s at %d: recovered %v", how, at, r)
						}
					}()
					for i := range int64(n) {
						if err := s.add([]schema.Value{schema.LongValue(i)}); err != nil {
							t.Fatal(err)
						}
					}
					err := s.drain(func([]schema.Value) error { return nil })
					switch how {
					case "error":
						if !errors.Is(err, errKey) {
							t.Errorf("error at %d: %v", at, err)
						}
					case "goexit":
						if err == nil {
							t.Errorf("goexit at %d: no error", at)
						}
					}
				}()
			}
		}
		noGoroutinesLeft(t, before)
	})
}

// TestDrainPipedFnFailure: when the rows are decoded ahead of fn on
// another goroutine, an error of fn comes back as is and a panic of fn
// goes on up, at the first row, in the middle or at the last, and the
// sort's goroutine has ended when drain returns.
func TestDrainPipedFnFailure(t *testing.T) {
	const n = 3*pipedRows + 10
	errFn := errors.New("fn failed")
	withProcs(2, func() {
		before := runtime.NumGoroutine()
		for _, at := range []int{0, n / 2, n - 1} {
			for _, panics := range []bool{false, true} {
				func() {
					s := newColSorter(0, t.TempDir(), &failKey{at: -1}, 1)
					s.parallelRows = 1
					defer s.close()
					for i := range n {
						if err := s.add([]schema.Value{schema.LongValue(int64(n - i))}); err != nil {
							t.Fatal(err)
						}
					}
					defer func() {
						if r := recover(); panics && r != "fn panicked" || !panics && r != nil {
							t.Errorf("panic at %d: recovered %v", at, r)
						}
					}()
					i := 0
					err := s.drain(func(row []schema.Value) error {
						if i++; i-1 == at {
							if panics {
								panic("fn panicked")
							}
							return errFn
						}
						if got := row[0].Int64(); got != int64(i) {
							t.Fatalf("row %d: %d", i-1, got)
						}
						return nil
					})
					if !panics && !errors.Is(err, errFn) {
						t.Errorf("error at %d: %v", at, err)
					}
				}()
			}
		}
		noGoroutinesLeft(t, before)
	})
}

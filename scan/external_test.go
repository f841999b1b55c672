package scan_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/location"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/snapshot"
)

// extScheme names memory stores whose opening by logstore.Open and whose
// closing are counted: the external roots of the tests below.
const extScheme = "scanext"

// extCount counts the stores logstore.Open made for extScheme, by name,
// and their first Closes.
var extCount struct {
	sync.Mutex
	opened, closed map[string]int
}

func extCounts(name string) (opened, closed int) {
	extCount.Lock()
	defer extCount.Unlock()
	return extCount.opened[name], extCount.closed[name]
}

// errCloseFailed is what Close of a store named "*fail-close*" returns.
var errCloseFailed = errors.New("close failed")

func init() {
	extCount.opened, extCount.closed = map[string]int{}, map[string]int{}
	logstore.Register(extScheme, func(_ context.Context, uri string) (logstore.Store, error) {
		name := strings.TrimSuffix(strings.TrimPrefix(uri, extScheme+"://"), "/")
		extCount.Lock()
		extCount.opened[name]++
		extCount.Unlock()
		return &extStore{Store: memory.Named(extScheme + "-" + name), name: name}, nil
	})
}

type extStore struct {
	logstore.Store
	name string
	once sync.Once
}

func (s *extStore) Close() error {
	s.once.Do(func() {
		extCount.Lock()
		extCount.closed[s.name]++
		extCount.Unlock()
	})
	if strings.Contains(s.name, "fail-close") {
		return errCloseFailed
	}
	return s.Store.Close()
}

// externalTable makes a table in a memory store whose version 1 adds n
// data files under the root extScheme://name, by absolute URI (as a
// shallow clone does), ids 10*i to 10*i+9 in file i, and returns its
// snapshot and adds.
func externalTable(t *testing.T, name string, n int) (*snapshot.Snapshot, []*actions.Add) {
	t.Helper()
	src := memory.Named(extScheme + "-" + name)
	store := memory.New()
	newTable(t, store, actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 4}, idOnly, nil,
		map[string]string{"delta.enableChangeDataFeed": "true"})
	var acts []actions.Action
	var adds []*actions.Add
	for i := range n {
		key := fmt.Sprintf("part-%d.parquet", i)
		size := putParquet(t, src, key, idOnly, false, longs(int64(10*i), int64(10*i+10)))
		a := &actions.Add{Path: extScheme + "://" + name + "/" + key, Size: size, DataChange: true}
		adds = append(adds, a)
		acts = append(acts, actions.Action{Add: a})
	}
	return commitAndLoad(t, location.Trust(store, extScheme+"://"+name), 1, acts), adds
}

// scanGoroutines returns the stacks of goroutines running code of package
// scan: none may be left once a run has returned. A goroutine that has
// signalled its end may take a moment to exit, so a few looks are allowed
// before one counts as left behind.
func scanGoroutines(t *testing.T) string {
	t.Helper()
	var left []string
	for range 200 {
		var buf bytes.Buffer
		if err := pprof.Lookup("goroutine").WriteTo(&buf, 1); err != nil {
			t.Fatal(err)
		}
		left = left[:0]
		for g := range strings.SplitSeq(buf.String(), "\n\n") {
			if strings.Contains(g, "github.com/godelta/delta/scan.") {
				left = append(left, g)
			}
		}
		if len(left) == 0 {
			return ""
		}
		time.Sleep(time.Millisecond)
	}
	return strings.Join(left, "\n\n")
}

// TestScanClosesExternalStores checks that each run of a Scan or Changes
// opens the store of an external root once, however many of its files it
// reads at once, and closes it by the time the run returns, on every exit:
// the end, a loop stopped early, an error, a cancelled context. No
// goroutine of the run is left behind either.
func TestScanClosesExternalStores(t *testing.T) {
	// rows counts the rows of a scan of snap, or of its change data feed
	// from version 1; with cancel, the context is cancelled at the first
	// row.
	rows := func(ctx context.Context, snap *snapshot.Snapshot, opts scan.Options, changes, cancel bool) (int, error) {
		ctx, stop := context.WithCancel(ctx)
		defer stop()
		var seq iter.Seq2[scan.Row, error]
		if changes {
			c, err := scan.NewChanges(ctx, snap, scan.ChangeOptions{Start: 1, Concurrency: opts.Concurrency})
			if err != nil {
				return 0, err
			}
			seq = c.Rows(ctx)
		} else {
			s, err := scan.New(snap, opts)
			if err != nil {
				return 0, err
			}
			seq = s.Rows(ctx)
		}
		n := 0
		for _, err := range seq {
			if err != nil {
				return n, err
			}
			if n++; cancel {
				stop()
			}
		}
		return n, nil
	}
	tests := []struct {
		name string
		run  func(t *testing.T, ctx context.Context, snap *snapshot.Snapshot, opts scan.Options) (int, error)
		want int   // rows, when the run succeeds
		err  error // of the run
	}{
		{"all rows", func(t *testing.T, ctx context.Context, snap *snapshot.Snapshot, opts scan.Options) (int, error) {
			return rows(ctx, snap, opts, false, false)
		}, 80, nil},
		{"stopped after one batch", func(t *testing.T, ctx context.Context, snap *snapshot.Snapshot, opts scan.Options) (int, error) {
			s, err := scan.New(snap, opts)
			if err != nil {
				return 0, err
			}
			for b, err := range s.Batches(ctx) {
				return b.Len, err
			}
			return 0, nil
		}, 3, nil},
		{"cancelled", func(t *testing.T, ctx context.Context, snap *snapshot.Snapshot, opts scan.Options) (int, error) {
			return rows(ctx, snap, opts, false, true)
		}, 0, context.Canceled},
		{"a file missing", func(t *testing.T, ctx context.Context, snap *snapshot.Snapshot, opts scan.Options) (int, error) {
			if err := memory.Named(extScheme+"-"+t.Name()).Delete(ctx, "part-5.parquet"); err != nil {
				return 0, err
			}
			return rows(ctx, snap, opts, false, false)
		}, 0, deltaerr.ErrFileNotFound},
		{"change data feed", func(t *testing.T, ctx context.Context, snap *snapshot.Snapshot, opts scan.Options) (int, error) {
			return rows(ctx, snap, opts, true, false)
		}, 80, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := t.Name()
			snap, _ := externalTable(t, name, 8)
			opts := scan.Options{Concurrency: 4, BatchSize: 3}
			for run := 1; run <= 2; run++ {
				n, err := tt.run(t, context.Background(), snap, opts)
				switch {
				case tt.err == nil && err != nil, tt.err != nil && !errors.Is(err, tt.err):
					t.Fatalf("run %d: %v, want %v", run, err, tt.err)
				case tt.err == nil && n != tt.want:
					t.Fatalf("run %d: %d rows, want %d", run, n, tt.want)
				}
				if opened, closed := extCounts(name); opened != run || closed != run {
					t.Errorf("after run %d: the external root's store opened %d times and closed %d times, want %d and %d",
						run, opened, closed, run, run)
				}
				if left := scanGoroutines(t); left != "" {
					t.Errorf("after run %d, goroutines of the scan are left:\n%s", run, left)
				}
			}
		})
	}
}

// TestFileReaderClose checks that a FileReader opens an external root's
// store once for all its reads and closes it in Close, that a read after
// Close fails with logstore.ErrClosed, and that Close reports a store's
// failure to close, once.
func TestFileReaderClose(t *testing.T) {
	for _, name := range []string{"TestFileReaderClose", "TestFileReaderClose-fail-close"} {
		snap, adds := externalTable(t, name, 3)
		fr, err := scan.NewFileReader(snap, scan.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i, a := range adds {
			rows, _, err := readAll(t, fr, a)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 10 || rows[0] != fmt.Sprintf("5:%d", 10*i) {
				t.Fatalf("file %d: rows %v", i, rows)
			}
		}
		if opened, closed := extCounts(name); opened != 1 || closed != 0 {
			t.Fatalf("%s: before Close, opened %d times and closed %d times, want 1 and 0", name, opened, closed)
		}
		err = fr.Close()
		if strings.Contains(name, "fail-close") != errors.Is(err, errCloseFailed) {
			t.Errorf("%s: Close = %v", name, err)
		}
		if opened, closed := extCounts(name); opened != 1 || closed != 1 {
			t.Errorf("%s: after Close, opened %d times and closed %d times, want 1 and 1", name, opened, closed)
		}
		if err := fr.Close(); err != nil {
			t.Errorf("%s: second Close = %v, want nil", name, err)
		}
		if _, _, err := readAll(t, fr, adds[0]); !errors.Is(err, logstore.ErrClosed) {
			t.Errorf("%s: ReadFile after Close = %v, want ErrClosed", name, err)
		}
		if opened, _ := extCounts(name); opened != 1 {
			t.Errorf("%s: ReadFile after Close opened the store again", name)
		}
	}
}

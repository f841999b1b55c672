package txn_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/txn"
)

var errSkip = errors.New("already applied")

// TestConcurrentWriters: 8 goroutines each make 50 commits, alternating
// blind appends with exactly-once commits of an application id that two
// goroutines share, on a store where every 7th commit put lands and then
// reports an error. The log must come out contiguous, with every file added
// exactly once and every application version applied exactly once.
func TestConcurrentWriters(t *testing.T) {
	const goroutines, commits = 8, 50
	backends := []struct {
		name string
		new  func(t *testing.T) logstore.Store
	}{
		stores[0],
		{"local", func(t *testing.T) logstore.Store {
			s, err := local.New(t.TempDir(), local.WithoutSync())
			if err != nil {
				t.Fatal(err)
			}
			return s
		}},
	}
	for _, sc := range backends {
		t.Run(sc.name, func(t *testing.T) {
			ctx := context.Background()
			inner := sc.new(t)
			createTable(t, inner, tableSpec{})
			store := &faultStore{Store: inner, fail: func(n int) fault { return pick(n%7 == 3, failAfter) }}
			start := load(t, store)

			var wg sync.WaitGroup
			errs := make(chan error, goroutines)
			for g := range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs <- writer(ctx, start, g, commits)
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}

			// Contiguous versions; count every add and txn in the log.
			versions := commitVersions(t, inner)
			for i, v := range versions {
				if v != int64(i) {
					t.Fatalf("log has a gap: %v", versions)
				}
			}
			adds := map[string]int{}
			txns := map[string]int{}
			ids := map[string]bool{}
			for _, v := range versions {
				for _, a := range readCommit(t, inner, v) {
					switch {
					case a.Add != nil:
						adds[a.Add.Path]++
					case a.Txn != nil:
						txns[fmt.Sprintf("%s@%d", a.Txn.AppID, a.Txn.Version)]++
					case a.CommitInfo != nil && v > 0:
						if ids[a.CommitInfo.TxnID] {
							t.Errorf("txnId %s committed twice", a.CommitInfo.TxnID)
						}
						ids[a.CommitInfo.TxnID] = true
					}
				}
			}
			wantFiles := 2 + goroutines*commits/2 + goroutines/2*commits/2
			if len(adds) != wantFiles {
				t.Errorf("%d distinct files added, want %d", len(adds), wantFiles)
			}
			for p, n := range adds {
				if n != 1 {
					t.Errorf("file %s added %d times", p, n)
				}
			}
			for k, n := range txns {
				if n != 1 {
					t.Errorf("application version %s applied %d times", k, n)
				}
			}
			if len(txns) != goroutines/2*commits/2 {
				t.Errorf("%d application versions applied, want %d", len(txns), goroutines/2*commits/2)
			}
			final := load(t, inner)
			if n, err := final.NumFiles(t.Context()); n != int64(wantFiles) || err != nil {
				t.Errorf("final snapshot has %d files (%v), want %d", n, err, wantFiles)
			}
			for k := range goroutines / 2 {
				if v, _, _ := final.TxnVersion(t.Context(), fmt.Sprintf("app-%d", k)); v != commits-1 {
					t.Errorf("app-%d at version %d, want %d", k, v, commits-1)
				}
			}
			t.Logf("%d commits", len(versions))
		})
	}
}

// writer makes n commits for goroutine g: even ones blind appends, odd ones
// version i of application app-<g/2>, shared with one other goroutine.
func writer(ctx context.Context, snap *snapshot.Snapshot, g, n int) error {
	app := fmt.Sprintf("app-%d", g/2)
	for i := range n {
		if i%2 == 0 {
			s, err := snap.Update(ctx)
			if err != nil {
				return err
			}
			snap = s
			tx := txn.Begin(snap, txn.Options{})
			tx.Add(addFile(fmt.Sprintf("g%d-%d", g, i), "a", 1))
			if _, err := tx.Commit(ctx); err != nil {
				return fmt.Errorf("goroutine %d, append %d: %w", g, i, err)
			}
			continue
		}
		_, err := txn.Update(ctx, snap, txn.Options{Operation: "STREAMING UPDATE"}, func(tx *txn.Transaction) error {
			v, ok, err := tx.TxnVersion(ctx, app)
			if err != nil {
				return err
			}
			if ok && v >= int64(i) {
				return errSkip // the other goroutine applied it
			}
			tx.SetTransaction(app, int64(i))
			tx.Add(addFile(fmt.Sprintf("%s-%d", app, i), "b", 1))
			return nil
		})
		if err != nil && !errors.Is(err, errSkip) {
			return fmt.Errorf("goroutine %d, %s version %d: %w", g, app, i, err)
		}
	}
	return nil
}

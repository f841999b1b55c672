package catalogmanaged_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/catalogmanaged"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/txn"
)

// multiTables makes catalog-managed tables named by names in one Memory
// catalog, each on its own store, and returns the catalog and the stores.
func multiTables(t *testing.T, names ...string) (*catalogmanaged.Memory, map[string]logstore.Store) {
	t.Helper()
	ctx := context.Background()
	cat := catalogmanaged.NewMemory()
	stores := map[string]logstore.Store{}
	for _, n := range names {
		if err := cat.Manage(n, -1); err != nil {
			t.Fatal(err)
		}
		base := memory.New()
		t.Cleanup(func() { base.Close() })
		if _, err := delta.CreateStore(ctx, n, catalogmanaged.New(base, cat.Table(n)), itemSpec); err != nil {
			t.Fatal(err)
		}
		stores[n] = base
	}
	return cat, stores
}

// latest is the catalog's latest ratified version of table n.
func latest(t *testing.T, cat *catalogmanaged.Memory, n string) int64 {
	t.Helper()
	r, err := cat.Table(n).Commits(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r.Latest
}

func openItems(t *testing.T, cat *catalogmanaged.Memory, stores map[string]logstore.Store, n string) *delta.Table {
	t.Helper()
	tbl, err := delta.OpenStore(context.Background(), n, catalogmanaged.New(stores[n], cat.Table(n)))
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// appendWork is a table's part of a multi-table transaction that appends
// n items from id from.
func appendWork(from, n int) func(context.Context, *delta.Table) error {
	return func(ctx context.Context, tbl *delta.Table) error { return appendItems(ctx, tbl, from, n) }
}

// A multi-table transaction commits each of its tables once, and the
// catalog ratifies them together; a table outside it is untouched.
func TestMultiTxnCommits(t *testing.T) {
	ctx := context.Background()
	cat, stores := multiTables(t, "a", "b", "c")
	m := delta.NewMultiTableTxn(cat)
	m.TableStore("a", stores["a"], "a", cat.Table("a"), appendWork(0, 5))
	m.TableStore("b", stores["b"], "b", cat.Table("b"), appendWork(100, 5))
	if err := m.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	for n, want := range map[string]int64{"a": 1, "b": 1, "c": 0} {
		if got := latest(t, cat, n); got != want {
			t.Fatalf("table %s at version %d, want %d", n, got, want)
		}
	}
	if got := itemIDs(t, openItems(t, cat, stores, "a")); !slices.Equal(got, []int64{0, 1, 2, 3, 4}) {
		t.Fatalf("a: %v", got)
	}
	if got := itemIDs(t, openItems(t, cat, stores, "b")); !slices.Equal(got, []int64{100, 101, 102, 103, 104}) {
		t.Fatalf("b: %v", got)
	}
	// Both commits are published, as single-table commits are.
	for _, n := range []string{"a", "b"} {
		if _, err := stores[n].Stat(ctx, deltalog.CommitKey(1)); err != nil {
			t.Fatalf("%s: version 1 not published: %v", n, err)
		}
	}
	if err := m.Commit(ctx); err == nil {
		t.Fatal("a second Commit of the same transaction succeeded")
	}
}

// A table whose work fails before its commit aborts the transaction:
// nothing is ratified on any table, and the error says which table.
func TestMultiTxnAbort(t *testing.T) {
	ctx := context.Background()
	cat, stores := multiTables(t, "a", "b")
	boom := errors.New("boom")
	m := delta.NewMultiTableTxn(cat)
	m.TableStore("a", stores["a"], "a", cat.Table("a"), appendWork(0, 5))
	m.TableStore("b", stores["b"], "b", cat.Table("b"), func(context.Context, *delta.Table) error { return boom })
	err := m.Commit(ctx)
	if !errors.Is(err, boom) || !errors.Is(err, catalogmanaged.ErrMultiAborted) {
		t.Fatalf("got %v, want b's error and a's abort", err)
	}
	for _, n := range []string{"a", "b"} {
		if got := latest(t, cat, n); got != 0 {
			t.Fatalf("table %s at version %d after an aborted transaction", n, got)
		}
		if got := itemIDs(t, openItems(t, cat, stores, n)); len(got) != 0 {
			t.Fatalf("table %s has rows %v", n, got)
		}
	}
}

// A work that commits nothing (a DELETE that matched no row) leaves its
// table as it was; the others commit.
func TestMultiTxnNoCommit(t *testing.T) {
	ctx := context.Background()
	cat, stores := multiTables(t, "a", "b")
	m := delta.NewMultiTableTxn(cat)
	m.TableStore("a", stores["a"], "a", cat.Table("a"), appendWork(0, 3))
	m.TableStore("b", stores["b"], "b", cat.Table("b"), func(ctx context.Context, tbl *delta.Table) error {
		_, err := tbl.Delete(ctx, "id = 7", delta.DMLOptions{})
		return err
	})
	if err := m.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if a, b := latest(t, cat, "a"), latest(t, cat, "b"); a != 1 || b != 0 {
		t.Fatalf("versions a=%d b=%d, want 1 and 0", a, b)
	}
}

// A work that commits twice: the second commit is refused, certainly not
// written; the first stands with the other table's.
func TestMultiTxnCommitsOnce(t *testing.T) {
	ctx := context.Background()
	cat, stores := multiTables(t, "a", "b")
	m := delta.NewMultiTableTxn(cat)
	m.TableStore("a", stores["a"], "a", cat.Table("a"), func(ctx context.Context, tbl *delta.Table) error {
		if err := appendItems(ctx, tbl, 0, 1); err != nil {
			return err
		}
		return appendItems(ctx, tbl, 1, 1)
	})
	m.TableStore("b", stores["b"], "b", cat.Table("b"), appendWork(0, 1))
	err := m.Commit(ctx)
	if !errors.Is(err, catalogmanaged.ErrCommittedTwice) {
		t.Fatalf("got %v, want ErrCommittedTwice", err)
	}
	if a, b := latest(t, cat, "a"), latest(t, cat, "b"); a != 1 || b != 1 {
		t.Fatalf("versions a=%d b=%d, want 1 and 1", a, b)
	}
}

// A logical conflict on one table fails the whole transaction with the
// usual typed error: a DELETE of a's rows loses to another DELETE of the
// same file committed while the transaction waited for table b, and b's
// append is not ratified either.
func TestMultiTxnConflict(t *testing.T) {
	ctx := context.Background()
	cat, stores := multiTables(t, "a", "b")
	if err := appendItems(ctx, openItems(t, cat, stores, "a"), 0, 10); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	m := delta.NewMultiTableTxn(cat)
	m.TableStore("a", stores["a"], "a", cat.Table("a"), func(ctx context.Context, tbl *delta.Table) error {
		_, err := tbl.Delete(ctx, "id < 5", delta.DMLOptions{})
		return err
	})
	m.TableStore("b", stores["b"], "b", cat.Table("b"), func(ctx context.Context, tbl *delta.Table) error {
		<-release
		return appendItems(ctx, tbl, 0, 1)
	})
	done := make(chan error, 1)
	go func() { done <- m.Commit(ctx) }()

	// Wait for a's request to be held (the transaction waits for b), then
	// commit a conflicting DELETE of the same file to a directly.
	waitHeld(t, stores["a"])
	if _, err := openItems(t, cat, stores, "a").Delete(ctx, "id >= 5", delta.DMLOptions{}); err != nil {
		t.Fatal(err)
	}
	close(release)
	err := <-done
	var ce *txn.ConflictError
	if !errors.As(err, &ce) || !errors.Is(err, delta.ErrConflict) || !errors.Is(err, catalogmanaged.ErrMultiAborted) {
		t.Fatalf("got %v, want a's ConflictError and b's abort", err)
	}
	if b := latest(t, cat, "b"); b != 0 {
		t.Fatalf("b at version %d: its commit was ratified without a's", b)
	}
	if got := itemIDs(t, openItems(t, cat, stores, "a")); !slices.Equal(got, []int64{0, 1, 2, 3, 4}) {
		t.Fatalf("a: %v (only the direct DELETE landed)", got)
	}
}

// waitHeld waits until a staged commit of version 2 exists in store: the
// table's request is then held for the round.
func waitHeld(t *testing.T, store logstore.Store) {
	t.Helper()
	ctx := context.Background()
	for range 10000 {
		for obj, err := range store.List(ctx, deltalog.StagedDir, "") {
			if err != nil {
				t.Fatal(err)
			}
			if v, _, ok := deltalog.ParseStagedName(obj.Key); ok && v == 2 {
				return
			}
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("the table never staged its commit")
}

// flaky is a MultiCommitter whose first answer is lost: before the
// catalog ratifies (lostBefore) or after (lostAfter).
type flaky struct {
	catalogmanaged.MultiCommitter
	mu                    sync.Mutex
	lostBefore, lostAfter int
	calls                 int
}

var errLost = errors.New("connection reset")

func (f *flaky) CommitAll(ctx context.Context, cs []catalogmanaged.TableCommit) error {
	f.mu.Lock()
	f.calls++
	before, after := f.lostBefore > 0, f.lostAfter > 0 && f.lostBefore == 0
	if before {
		f.lostBefore--
	} else if after {
		f.lostAfter--
	}
	f.mu.Unlock()
	if before {
		return fmt.Errorf("%w (%w)", errLost, logstore.ErrOutcomeUnknown)
	}
	err := f.MultiCommitter.CommitAll(ctx, cs)
	if err == nil && after {
		return fmt.Errorf("%w (%w)", errLost, logstore.ErrOutcomeUnknown)
	}
	return err
}

// An answer lost before or after the catalog ratified: each table reads
// its version back from the catalog, and the transaction lands exactly
// once on every table.
func TestMultiTxnLostAnswer(t *testing.T) {
	for _, tc := range []struct {
		name              string
		before, after     int
		wantCalls         int
		wantA, wantB      int64
		wantRowsPerTables int
	}{
		{name: "lost before ratification", before: 2, wantCalls: 3, wantA: 1, wantB: 1, wantRowsPerTables: 4},
		{name: "lost after ratification", after: 1, wantCalls: 1, wantA: 1, wantB: 1, wantRowsPerTables: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			cat, stores := multiTables(t, "a", "b")
			f := &flaky{MultiCommitter: cat, lostBefore: tc.before, lostAfter: tc.after}
			m := delta.NewMultiTableTxn(f)
			m.TableStore("a", stores["a"], "a", cat.Table("a"), appendWork(0, 4))
			m.TableStore("b", stores["b"], "b", cat.Table("b"), appendWork(0, 4))
			if err := m.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if f.calls != tc.wantCalls {
				t.Fatalf("%d rounds at the catalog, want %d", f.calls, tc.wantCalls)
			}
			if a, b := latest(t, cat, "a"), latest(t, cat, "b"); a != tc.wantA || b != tc.wantB {
				t.Fatalf("versions a=%d b=%d", a, b)
			}
			for _, n := range []string{"a", "b"} {
				if got := itemIDs(t, openItems(t, cat, stores, n)); len(got) != tc.wantRowsPerTables {
					t.Fatalf("%s: rows %v", n, got)
				}
			}
		})
	}
}

// Transactions over overlapping sets of tables race: lost races rebase
// and retry in rounds, and every transaction lands on all its tables
// once.
func TestMultiTxnConcurrent(t *testing.T) {
	ctx := context.Background()
	names := []string{"a", "b", "c"}
	cat, stores := multiTables(t, names...)
	sets := [][]string{{"a", "b"}, {"b", "c"}, {"a", "c"}, {"a", "b", "c"}}
	const each = 4
	var wg sync.WaitGroup
	errs := make(chan error, len(sets)*each)
	for w, set := range sets {
		wg.Go(func() {
			for i := range each {
				id := (w*each + i) * 10
				m := delta.NewMultiTableTxn(cat)
				for _, n := range set {
					m.TableStore(n, stores[n], n, cat.Table(n), appendWork(id, 2))
				}
				if err := m.Commit(ctx); err != nil {
					errs <- fmt.Errorf("writer %d txn %d: %w", w, i, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, n := range names {
		var want []int64
		for w, set := range sets {
			if slices.Contains(set, n) {
				for i := range each {
					id := int64((w*each + i) * 10)
					want = append(want, id, id+1)
				}
			}
		}
		slices.Sort(want)
		if got := itemIDs(t, openItems(t, cat, stores, n)); !slices.Equal(got, want) {
			t.Fatalf("table %s: ids %v, want %v", n, got, want)
		}
		if v := latest(t, cat, n); v != int64(len(want)/2) {
			t.Fatalf("table %s at version %d, want %d (one per transaction)", n, v, len(want)/2)
		}
	}
}

// The catalog's CommitAll is all or none: a conflict on one table
// ratifies nothing on the others.
func TestMemoryCommitAll(t *testing.T) {
	ctx := context.Background()
	cat := catalogmanaged.NewMemory()
	for _, n := range []string{"a", "b"} {
		if err := cat.Manage(n, 0); err != nil {
			t.Fatal(err)
		}
	}
	staged := func(v int64, u string) catalogmanaged.Commit {
		return catalogmanaged.Commit{Version: v, Key: deltalog.StagedCommitKey(v, u)}
	}
	ok := []catalogmanaged.TableCommit{{Table: "a", Commit: staged(1, "00000000-0000-0000-0000-000000000001")}, {Table: "b", Commit: staged(1, "00000000-0000-0000-0000-000000000002")}}
	if err := cat.CommitAll(ctx, ok); err != nil {
		t.Fatal(err)
	}
	if err := cat.CommitAll(ctx, ok); err != nil {
		t.Fatalf("the same commits again: %v", err)
	}
	bad := []catalogmanaged.TableCommit{{Table: "a", Commit: staged(2, "00000000-0000-0000-0000-000000000003")}, {Table: "b", Commit: staged(1, "00000000-0000-0000-0000-000000000004")}}
	if err := cat.CommitAll(ctx, bad); !errors.Is(err, catalogmanaged.ErrConflict) {
		t.Fatalf("got %v, want ErrConflict", err)
	}
	for _, n := range []string{"a", "b"} {
		r, err := cat.Table(n).Commits(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r.Latest != 1 {
			t.Fatalf("table %s at version %d after a refused CommitAll", n, r.Latest)
		}
	}
	if err := cat.CommitAll(ctx, []catalogmanaged.TableCommit{{Table: "zz", Commit: staged(1, "00000000-0000-0000-0000-000000000005")}}); err == nil {
		t.Fatal("an unknown table was ratified")
	}
}

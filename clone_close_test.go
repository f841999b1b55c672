package delta_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/schema"
)

// countingScheme names memory stores whose logstore.Open is counted: the
// stores a reader opens for a shallow clone's source root.
const countingScheme = "counting"

// storeCount counts the stores logstore.Open made for countingScheme and
// how many of them were closed (a second Close of one is not counted).
var storeCount struct {
	sync.Mutex
	opened, closed int
}

func counts() (opened, closed int) {
	storeCount.Lock()
	defer storeCount.Unlock()
	return storeCount.opened, storeCount.closed
}

func init() {
	logstore.Register(countingScheme, func(_ context.Context, uri string) (logstore.Store, error) {
		name, ok := strings.CutPrefix(uri, countingScheme+"://")
		if !ok {
			return nil, fmt.Errorf("%q: %w", uri, logstore.ErrUnknownScheme)
		}
		storeCount.Lock()
		storeCount.opened++
		storeCount.Unlock()
		return &countedStore{Store: memory.Named(strings.TrimSuffix(name, "/")), name: name, count: true}, nil
	})
}

// countedStore is a named memory store under countingScheme's URI.
// Closes of the ones Open made are counted.
type countedStore struct {
	logstore.Store
	name  string
	count bool
	once  sync.Once
}

func (s *countedStore) URI() string { return countingScheme + "://" + s.name }

func (s *countedStore) Close() error {
	if s.count {
		s.once.Do(func() {
			storeCount.Lock()
			storeCount.closed++
			storeCount.Unlock()
		})
	}
	return s.Store.Close()
}

// TestCloneClosesSourceStores checks that every store opened for a shallow
// clone's source root is closed once the operation that opened it is done:
// a full scan, a scan stopped early, scans that fail (a cancelled context,
// a missing file), the change data feed, DELETE (deletion vectors and
// rewrite), UPDATE, MERGE, an overwrite with replaceWhere and OPTIMIZE
// (compaction and ZORDER BY), on a clone whose source has deletion vectors.
func TestCloneClosesSourceStores(t *testing.T) {
	ctx := context.Background()
	name := "TestCloneClosesSourceStores"
	srcStore := &countedStore{Store: memory.Named(name), name: name}
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.Long, Nullable: true},
		{Name: "p", Type: schema.String, Nullable: true},
	}}
	source, err := delta.CreateStore(ctx, srcStore.URI(), srcStore, delta.TableSpec{Schema: sch, PartitionColumns: []string{"p"},
		Properties: map[string]string{"delta.enableDeletionVectors": "true", "delta.enableChangeDataFeed": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	defer source.Close()
	row := func(id int64, p string) []schema.Value {
		return []schema.Value{schema.LongValue(id), schema.StringValue(p)}
	}
	for _, rows := range [][][]schema.Value{
		{row(1, "a"), row(2, "a"), row(3, "a")},
		{row(4, "a"), row(5, "b"), row(6, "b")},
		{row(7, "b"), row(8, "b")},
	} {
		if _, err := source.AppendRows(ctx, rows, delta.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// A deletion vector in the source, which the clone names by absolute
	// URI.
	if _, err := source.Delete(ctx, "id = 3", delta.DMLOptions{}); err != nil {
		t.Fatal(err)
	}
	snap, err := source.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// Each step must open a store of the source root (so that it is
	// tested) and close every store it opened by the time it returns.
	step := func(what string, fn func(clone *delta.Table) error) {
		t.Helper()
		target := fmt.Sprintf("memory://%s-%s", name, strings.ReplaceAll(what, " ", "-"))
		clone, _, err := source.CloneTo(ctx, snap, target, delta.TxnOptions{})
		if err != nil {
			t.Fatalf("%s: clone: %v", what, err)
		}
		defer clone.Close()
		o0, c0 := counts()
		if err := fn(clone); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		o1, c1 := counts()
		if o1 == o0 {
			t.Errorf("%s opened no store of the source root: the test does not reach it", what)
		}
		if o1-o0 != c1-c0 {
			t.Errorf("%s opened %d stores of the source root and closed %d", what, o1-o0, c1-c0)
		}
	}
	scanRows := func(ctx context.Context, clone *delta.Table, stopAfter int) ([]string, error) {
		snap, err := clone.Snapshot(ctx)
		if err != nil {
			return nil, err
		}
		sc, err := clone.Scan(snap, delta.ScanOptions{Concurrency: 2})
		if err != nil {
			return nil, err
		}
		var out []string
		for r, err := range sc.Rows(ctx) {
			if err != nil {
				return out, err
			}
			out = append(out, fmt.Sprint(r.Values()))
			if len(out) == stopAfter {
				break
			}
		}
		slices.Sort(out)
		return out, nil
	}
	wantAll := []string{"[1 a]", "[2 a]", "[4 a]", "[5 b]", "[6 b]", "[7 b]", "[8 b]"}
	expectRows := func(clone *delta.Table, want []string) error {
		got, err := scanRows(ctx, clone, -1)
		if err != nil {
			return err
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("rows %v, want %v", got, want)
		}
		return nil
	}

	step("scan", func(clone *delta.Table) error { return expectRows(clone, wantAll) })
	step("scan stopped early", func(clone *delta.Table) error {
		got, err := scanRows(ctx, clone, 1)
		if err == nil && len(got) != 1 {
			err = fmt.Errorf("%d rows, want 1", len(got))
		}
		return err
	})
	step("scan cancelled", func(clone *delta.Table) error {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		snap, err := clone.Snapshot(ctx)
		if err != nil {
			return err
		}
		sc, err := clone.Scan(snap, delta.ScanOptions{Concurrency: 2, BatchSize: 1})
		if err != nil {
			return err
		}
		for _, err := range sc.Rows(ctx) {
			if err != nil {
				if !errors.Is(err, context.Canceled) {
					return fmt.Errorf("scan after cancel: %w, want context.Canceled", err)
				}
				return nil
			}
			cancel()
		}
		return errors.New("a cancelled scan ended without an error")
	})
	step("scan of a missing file", func(clone *delta.Table) error {
		// Take away one source file for the scan, then put it back.
		key := ""
		for a, err := range snap.Files(ctx) {
			if err != nil {
				return err
			}
			if a.DeletionVector == nil {
				key = delta.CanonicalPath(a.Path)
			}
		}
		data, err := srcStore.Get(ctx, key)
		if err != nil {
			return err
		}
		if err := srcStore.Delete(ctx, key); err != nil {
			return err
		}
		defer func() {
			if err := srcStore.Put(ctx, key, data); err != nil {
				t.Error(err)
			}
		}()
		if _, err := scanRows(ctx, clone, -1); !errors.Is(err, delta.ErrFileNotFound) {
			return fmt.Errorf("scan with a source file missing: %v, want ErrFileNotFound", err)
		}
		return nil
	})
	step("change data feed", func(clone *delta.Table) error {
		ch, err := clone.Changes(ctx, delta.ChangeOptions{Start: 0})
		if err != nil {
			return err
		}
		n := 0
		for _, err := range ch.Rows(ctx) {
			if err != nil {
				return err
			}
			n++
		}
		if n != len(wantAll) {
			return fmt.Errorf("%d change rows, want %d", n, len(wantAll))
		}
		return nil
	})
	for _, cdf := range []bool{false, true} {
		step(fmt.Sprint("stream cdf=", cdf), func(clone *delta.Table) error {
			opts := delta.StreamOptions{ReadChangeFeed: cdf}
			src, err := clone.Stream(ctx, opts)
			if err != nil {
				return err
			}
			n := 0
			for {
				b, ok, err := src.TryNext(ctx)
				if err != nil {
					src.Close()
					return err
				}
				if !ok {
					break
				}
				for _, err := range b.Rows(ctx) {
					if err != nil {
						src.Close()
						return err
					}
					n++
				}
			}
			if err := src.Close(); err != nil {
				return err
			}
			if n != len(wantAll) {
				return fmt.Errorf("%d streamed rows, want %d", n, len(wantAll))
			}
			return nil
		})
	}
	step("DELETE with deletion vectors", func(clone *delta.Table) error {
		if _, err := clone.Delete(ctx, "id = 2", delta.DMLOptions{}); err != nil {
			return err
		}
		return expectRows(clone, []string{"[1 a]", "[4 a]", "[5 b]", "[6 b]", "[7 b]", "[8 b]"})
	})
	step("DELETE rewriting files", func(clone *delta.Table) error {
		if _, err := clone.Delete(ctx, "id = 2", delta.DMLOptions{Strategy: delta.StrategyCopyOnWrite}); err != nil {
			return err
		}
		return expectRows(clone, []string{"[1 a]", "[4 a]", "[5 b]", "[6 b]", "[7 b]", "[8 b]"})
	})
	step("UPDATE", func(clone *delta.Table) error {
		if _, err := clone.UpdateRows(ctx, "id = id * 10", "id = 4", delta.DMLOptions{Strategy: delta.StrategyCopyOnWrite}); err != nil {
			return err
		}
		return expectRows(clone, []string{"[1 a]", "[2 a]", "[40 a]", "[5 b]", "[6 b]", "[7 b]", "[8 b]"})
	})
	step("MERGE", func(clone *delta.Table) error {
		src := delta.MergeRows(sch, [][]schema.Value{row(1, "a"), row(9, "b")})
		if _, err := clone.Merge(src, "t.id = s.id").WhenNotMatchedInsertAll("").Execute(ctx); err != nil {
			return err
		}
		return expectRows(clone, append(slices.Clone(wantAll), "[9 b]"))
	})
	step("overwrite with replaceWhere", func(clone *delta.Table) error {
		where, err := delta.ParsePredicate("id >= 5")
		if err != nil {
			return err
		}
		if _, err := clone.OverwriteRows(ctx, [][]schema.Value{row(50, "b")}, delta.OverwriteOptions{ReplaceWhere: where}); err != nil {
			return err
		}
		return expectRows(clone, []string{"[1 a]", "[2 a]", "[4 a]", "[50 b]"})
	})
	step("OPTIMIZE", func(clone *delta.Table) error {
		res, err := clone.Optimize(ctx, delta.OptimizeOptions{})
		if err != nil {
			return err
		}
		if !res.Committed {
			return errors.New("OPTIMIZE committed nothing")
		}
		return expectRows(clone, wantAll)
	})
	step("OPTIMIZE ZORDER BY", func(clone *delta.Table) error {
		if _, err := clone.Optimize(ctx, delta.OptimizeOptions{ZOrderBy: []string{"id"}}); err != nil {
			return err
		}
		return expectRows(clone, wantAll)
	})
	if o, c := counts(); o != c {
		t.Errorf("in all, %d stores of the source root opened and %d closed", o, c)
	}
}

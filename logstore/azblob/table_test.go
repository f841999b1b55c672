package azblob_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/azblob"
	"github.com/godelta/delta/schema"
)

func ddl(t testing.TB, s string) *schema.StructType {
	t.Helper()
	st, err := schema.ParseDDL(s)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// scanIDs returns the "id" column of a full scan of the table's latest
// version.
func scanIDs(t *testing.T, tbl *delta.Table) []int64 {
	t.Helper()
	ctx := t.Context()
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := tbl.Scan(snap, delta.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for row, err := range sc.Rows(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		v, ok := row.Get("id")
		if !ok {
			t.Fatal("row without id")
		}
		ids = append(ids, v.Int64())
	}
	slices.Sort(ids)
	return ids
}

// A table on Azurite through the public API: 4 goroutines append 200
// commits, a checkpoint, and a scan that returns exactly the rows appended.
func TestDeltaTable(t *testing.T) {
	const writers, perWriter, rowsPerCommit = 4, 50, 3
	s := newStore(t, azblob.Options{})
	ctx := t.Context()
	name := "az://" + s.Container() + "/" + s.Prefix()
	tbl, err := delta.CreateStore(ctx, name, s, delta.TableSpec{
		Schema:           ddl(t, "id BIGINT NOT NULL, w STRING, p STRING"),
		PartitionColumns: []string{"p"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		versions []int64
		want     []int64
	)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				var rows [][]schema.Value
				var ids []int64
				for r := range rowsPerCommit {
					id := int64((w*perWriter+i)*rowsPerCommit + r)
					ids = append(ids, id)
					rows = append(rows, []schema.Value{schema.LongValue(id), schema.StringValue(fmt.Sprint(w)), schema.StringValue(fmt.Sprint(id % 3))})
				}
				v, err := tbl.AppendRows(ctx, rows, delta.WriteOptions{})
				if err != nil {
					t.Errorf("writer %d: append %d: %v", w, i, err)
					return
				}
				mu.Lock()
				versions = append(versions, v)
				want = append(want, ids...)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	slices.Sort(versions)
	for i, v := range versions {
		if v != int64(i+1) {
			t.Fatalf("commit versions = %v..., want 1..%d each once", versions[:min(len(versions), i+2)], writers*perWriter)
		}
	}
	cp, err := tbl.Checkpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cp != writers*perWriter {
		t.Errorf("Checkpoint at version %d, want %d", cp, writers*perWriter)
	}
	// A fresh handle reads from the checkpoint.
	tbl2, err := delta.OpenStore(ctx, name, s)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tbl2.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Version() != writers*perWriter || snap.Segment().Checkpoint == nil {
		t.Errorf("snapshot at %d, segment %+v; want version %d from a checkpoint", snap.Version(), snap.Segment(), writers*perWriter)
	}
	slices.Sort(want)
	if got := scanIDs(t, tbl2); !slices.Equal(got, want) {
		t.Errorf("scan returned %d ids, want the %d appended", len(got), len(want))
	}
}

// testdata is the corpus root.
func testdata(t *testing.T) string {
	if d := os.Getenv("GODELTA_TESTDATA"); d != "" {
		return d
	}
	d, err := filepath.Abs(filepath.Join("..", "..", "..", "shared", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(d); err != nil {
		t.Skipf("no corpus at %s", d)
	}
	return d
}

// upload puts every file under root into s, keyed by its path under root.
func upload(t *testing.T, s logstore.Store, root string) int {
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		return s.Put(t.Context(), filepath.ToSlash(rel), data)
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

type tableSummary struct {
	version, files, rows int64
	scanErr              error
}

func summarize(t *testing.T, tbl *delta.Table) tableSummary {
	ctx := t.Context()
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatalf("%s: %v", tbl.URI(), err)
	}
	sum := tableSummary{version: snap.Version(), files: snap.NumFiles()}
	sc, err := tbl.Scan(snap, delta.ScanOptions{})
	if err != nil {
		sum.scanErr = err
		return sum
	}
	for _, err := range sc.Rows(ctx) {
		if err != nil {
			sum.scanErr = err
			return sum
		}
		sum.rows++
	}
	return sum
}

// Corpus tables uploaded to Azurite read the same as from local disk.
func TestCorpusTables(t *testing.T) {
	root := testdata(t)
	for _, name := range []string{
		"golden/checkpoint/delta",
		"kernel-rs/table-with-dv-small",
		"golden/dv-with-columnmapping/delta",
		"kernel-rs/v2-checkpoints-parquet-with-last-checkpoint",
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(root, filepath.FromSlash(name))
			if _, err := os.Stat(dir); err != nil {
				t.Skip(err)
			}
			s := newStore(t, azblob.Options{PageSize: 5})
			n := upload(t, s, dir)
			local, err := delta.Open(t.Context(), dir)
			if err != nil {
				t.Fatal(err)
			}
			remote, err := delta.OpenStore(t.Context(), "az://"+s.Container()+"/"+s.Prefix(), s)
			if err != nil {
				t.Fatal(err)
			}
			want, got := summarize(t, local), summarize(t, remote)
			if got.version != want.version || got.files != want.files || got.rows != want.rows || (got.scanErr == nil) != (want.scanErr == nil) {
				t.Errorf("on Azurite: version %d, %d files, %d rows (scan error %v); on disk: version %d, %d files, %d rows (scan error %v)",
					got.version, got.files, got.rows, got.scanErr, want.version, want.files, want.rows, want.scanErr)
			}
			if want.scanErr != nil {
				// The corpus keeps only the log of some tables.
				t.Logf("scan fails on disk and on Azurite alike: %v", errors.Unwrap(want.scanErr))
			}
			t.Logf("%d objects: version %d, %d files, %d rows", n, got.version, got.files, got.rows)
		})
	}
}

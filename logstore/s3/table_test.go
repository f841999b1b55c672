package s3_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/godelta/delta"
	"github.com/godelta/delta/schema"
)

// TestDeltaTable creates a table on the server, appends to it from four
// goroutines at once (200 commits in all), checkpoints it, and reads back
// exactly the rows appended.
func TestDeltaTable(t *testing.T) {
	const writers, commits, rowsPerCommit = 4, 200, 3
	st := newStore(t)
	ctx := t.Context()
	sch, err := schema.ParseDDL("id BIGINT NOT NULL, w STRING")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := delta.CreateStore(ctx, "s3-table", st, delta.TableSpec{
		Schema:     sch,
		Properties: map[string]string{"delta.checkpointInterval": "50"},
	}); err != nil {
		t.Fatal(err)
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		versions []int64
	)
	for w := range writers {
		wg.Go(func() {
			// Each writer opens the table for itself, as separate
			// processes would.
			tbl, err := delta.OpenStore(ctx, "s3-table", st)
			if err != nil {
				t.Error(err)
				return
			}
			for c := range commits / writers {
				var rows [][]schema.Value
				for r := range rowsPerCommit {
					id := int64((w*commits/writers+c)*rowsPerCommit + r)
					rows = append(rows, []schema.Value{schema.LongValue(id), schema.StringValue(fmt.Sprint("w", w))})
				}
				v, err := tbl.AppendRows(ctx, rows, delta.WriteOptions{})
				if err != nil {
					t.Errorf("writer %d, commit %d: %v", w, c, err)
					return
				}
				mu.Lock()
				versions = append(versions, v)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	slices.Sort(versions)
	for i, v := range versions {
		if v != int64(i+1) {
			t.Fatalf("commit versions %v: want 1..%d, each once", versions, commits)
		}
	}
	tbl, err := delta.OpenStore(ctx, "s3-table", st)
	if err != nil {
		t.Fatal(err)
	}
	cv, err := tbl.Checkpoint(ctx)
	if err != nil || cv != commits {
		t.Fatalf("Checkpoint = %d, %v; want %d", cv, err, commits)
	}
	if _, err := st.Stat(ctx, "_delta_log/_last_checkpoint"); err != nil {
		t.Fatalf("no _last_checkpoint after Checkpoint: %v", err)
	}
	// Read through a fresh handle, so the checkpoint is what it starts from.
	tbl, err = delta.OpenStore(ctx, "s3-table", st)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Version() != commits || snap.NumFiles() != commits {
		t.Errorf("snapshot: version %d, %d files; want %d and %d", snap.Version(), snap.NumFiles(), commits, commits)
	}
	ids := scanIDs(t, tbl, snap)
	if len(ids) != commits*rowsPerCommit {
		t.Fatalf("scan returned %d rows, want %d", len(ids), commits*rowsPerCommit)
	}
	slices.Sort(ids)
	for i, id := range ids {
		if id != int64(i) {
			t.Fatalf("scan ids: position %d holds %d", i, id)
		}
	}
}

func scanIDs(t *testing.T, tbl *delta.Table, snap *delta.Snapshot) []int64 {
	t.Helper()
	s, err := tbl.Scan(snap, delta.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for row, err := range s.Rows(t.Context()) {
		if err != nil {
			t.Fatal(err)
		}
		v, ok := row.Get("id")
		if !ok {
			t.Fatal("row without id")
		}
		ids = append(ids, v.Int64())
	}
	return ids
}

// testdata is the shared corpus: GODELTA_TESTDATA, else ../shared/testdata
// beside the repository.
func testdata(t *testing.T) string {
	dir := os.Getenv("GODELTA_TESTDATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "testdata")
	}
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("no corpus at %s: %v", dir, err)
	}
	return dir
}

// TestCorpusTables uploads corpus tables to the server and reads them
// through the backend: the same version, files and rows as from disk.
func TestCorpusTables(t *testing.T) {
	root := testdata(t)
	for _, name := range []string{
		"golden/checkpoint/delta",
		"kernel-rs/table-with-dv-small",
		"golden/dv-with-columnmapping/delta",
		"kernel-rs/v2-checkpoints-parquet-with-last-checkpoint",
	} {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			dir := filepath.Join(root, filepath.FromSlash(name))
			st := newStore(t)
			n := 0
			err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				rel, err := filepath.Rel(dir, p)
				if err != nil {
					return err
				}
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				n++
				return st.Put(ctx, filepath.ToSlash(rel), data)
			})
			if err != nil {
				t.Fatal(err)
			}
			want := describe(t, ctx, func() (*delta.Table, error) { return delta.Open(ctx, dir) })
			got := describe(t, ctx, func() (*delta.Table, error) { return delta.OpenStore(ctx, name, st) })
			if got != want {
				t.Errorf("through S3: %+v; from disk: %+v", got, want)
			}
			t.Logf("%d objects; %+v", n, got)
		})
	}
}

// summary is what is compared between a table on disk and on the server.
// Some corpus tables hold placeholder data files; their scans must fail
// alike.
type summary struct {
	Version, Files, Rows int64
	ScanFails            bool
}

func describe(t *testing.T, ctx context.Context, open func() (*delta.Table, error)) summary {
	t.Helper()
	tbl, err := open()
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s, err := tbl.Scan(snap, delta.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sum := summary{Version: snap.Version(), Files: snap.NumFiles()}
	for _, err := range s.Rows(ctx) {
		if err != nil {
			t.Logf("scan: %v", err)
			sum.ScanFails = true
			break
		}
		sum.Rows++
	}
	return sum
}

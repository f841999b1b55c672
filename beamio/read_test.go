package beamio

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/godelta/delta"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/write"
)

// libraryRows returns the rows the library's in-process scan gives for
// table and opts, encoded as Row's coder encodes them.
func libraryRows(t *testing.T, table string, opts ReadOptions) []string {
	t.Helper()
	ctx := context.Background()
	tb, err := delta.Open(ctx, table)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	snap, err := tb.Snapshot(ctx)
	if opts.AtVersion {
		snap, err = tb.SnapshotAt(ctx, opts.Version)
	}
	if err != nil {
		t.Fatal(err)
	}
	so := scan.Options{Columns: opts.Columns}
	if opts.Predicate != "" {
		if so.Predicate, err = expr.Parse(opts.Predicate); err != nil {
			t.Fatal(err)
		}
	}
	sc, err := tb.Scan(snap, so)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for r, err := range sc.Rows(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		b, err := encodeRow(Row{Values: r.Values()})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

// TestReadCorpus reads corpus tables with deletion vectors and column
// mapping on Prism and compares the rows, as a multiset, with the rows
// the library's own scan returns.
func TestReadCorpus(t *testing.T) {
	dir := corpus(t)
	tests := []struct {
		name  string
		table string
		opts  ReadOptions
		want  int // rows expected, as a check on the comparison itself
	}{
		{"deletion vectors and column mapping, partitioned", "golden/dv-with-columnmapping/delta", ReadOptions{}, -1},
		{"deletion vectors", "kernel-rs/table-with-dv-small", ReadOptions{}, 8},
		{"deletion vectors, before the delete", "kernel-rs/table-with-dv-small", ReadOptions{AtVersion: true, Version: 0}, 10},
		{"column mapping by name, partitioned by timestamp_ntz", "golden/data-reader-timestamp_ntz-name-mode/delta", ReadOptions{}, -1},
		{"deletion vectors in a checkpoint", "delta-rs/table_with_deletion_logs", ReadOptions{}, -1},
		{"column mapping, a predicate and columns", "golden/dv-with-columnmapping/delta",
			ReadOptions{Columns: []string{"col2", "part"}, Predicate: "part = 1 AND col1 > 5"}, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			table := filepath.Join(dir, tc.table)
			want := libraryRows(t, table, tc.opts)
			if tc.want >= 0 && len(want) != tc.want {
				t.Fatalf("the library's scan gives %d rows, want %d", len(want), tc.want)
			}
			if len(want) == 0 {
				t.Fatalf("the library's scan gives no rows: nothing to compare")
			}
			p, s := beam.NewPipelineWithRoot()
			key := t.Name()
			beam.ParDo0(s, &collectFn{Key: key}, Read(s, table, tc.opts))
			if err := run(t, p); err != nil {
				t.Fatal(err)
			}
			got := collectedRows(key)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("the pipeline read %d rows, the library's scan %d; they differ", len(got), len(want))
			}
		})
	}
}

// TestReadSplitRowGroups reads a table whose files have many row groups
// and deletion vectors, one task per row group, and compares the rows
// with the library's scan.
func TestReadSplitRowGroups(t *testing.T) {
	ctx := context.Background()
	sch, err := schema.ParseDDL("id BIGINT NOT NULL, part STRING, v DOUBLE, name STRING")
	if err != nil {
		t.Fatal(err)
	}
	table := filepath.Join(t.TempDir(), "table")
	tb, err := delta.Create(ctx, table, delta.TableSpec{Schema: sch, PartitionColumns: []string{"part"},
		Properties: map[string]string{"delta.enableDeletionVectors": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	adds, err := write.Rows(ctx, snap, rowBatches(rowsOf(0, 20_000), 4), write.Options{RowGroupSize: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := write.AppendFiles(ctx, snap, adds, write.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Delete(ctx, "id < 700 OR (id > 9000 AND id < 9500)", delta.DMLOptions{}); err != nil {
		t.Fatal(err)
	}

	// The table is what the test needs: files of several row groups, with
	// deletion vectors.
	snap, err = tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fr, err := scan.NewFileReader(snap, scan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fr.Close()
	var withDV, maxGroups int
	for add, err := range snap.Files(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if add.DeletionVector != nil {
			withDV++
		}
		n, err := fr.RowGroups(ctx, add)
		if err != nil {
			t.Fatal(err)
		}
		maxGroups = max(maxGroups, n)
	}
	if withDV == 0 || maxGroups < 3 {
		t.Fatalf("%d files with deletion vectors, at most %d row groups a file: want some and at least 3", withDV, maxGroups)
	}

	var mu sync.Mutex
	parts := 0
	setHooks(t, testHooks{afterSplit: func(tb string, n int) error {
		mu.Lock()
		defer mu.Unlock()
		if tb == table {
			parts += n
		}
		return nil
	}})
	for _, opts := range []ReadOptions{
		{SplitFileSize: 1},
		{SplitFileSize: 1, Columns: []string{"name", "part"}, Predicate: "part = 'p1' AND id > 5000"},
	} {
		want := libraryRows(t, table, opts)
		p, s := beam.NewPipelineWithRoot()
		key := fmt.Sprint(t.Name(), opts)
		beam.ParDo0(s, &collectFn{Key: key}, Read(s, table, opts))
		if err := run(t, p); err != nil {
			t.Fatal(err)
		}
		got := collectedRows(key)
		slices.Sort(got)
		slices.Sort(want)
		if len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("%+v: the pipeline read %d rows, the library's scan %d", opts, len(got), len(want))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if parts < 3 {
		t.Errorf("the reads split files into %d parts, want at least 3", parts)
	}
}

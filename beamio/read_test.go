package beamio

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/godelta/delta"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/scan"
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

package beamio

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/godelta/delta"
	"github.com/godelta/delta/scan"
)

// TestReadChanges reads the change data feed of corpus tables on Prism
// and compares it, as a multiset of rows, with the library's change
// reader in process.
func TestReadChanges(t *testing.T) {
	dir := corpus(t)
	tests := []struct {
		table      string
		start, end int64 // end < 0: the latest
	}{
		{"cdf-table", 0, -1},
		{"cdf-table-non-partitioned", 0, -1},
		{"cdf-table-simple", 0, -1},
		{"cdf-table-update-ops", 0, -1},
		{"cdf-table-with-dv", 0, -1},
		{"cdf-table-delete-conditional-all-rows", 0, -1},
		{"cdf-table", 1, 2},
	}
	for _, tc := range tests {
		t.Run(tc.table, func(t *testing.T) {
			ctx := context.Background()
			table := filepath.Join(dir, "kernel-rs", tc.table)
			tb, err := delta.Open(ctx, table)
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			snap, err := tb.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			co := scan.ChangeOptions{Start: tc.start}
			if tc.end >= 0 {
				co.End = scan.UpTo(tc.end)
			}
			c, err := scan.NewChanges(ctx, snap, co)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for r, err := range c.Rows(ctx) {
				if err != nil {
					t.Fatal(err)
				}
				b, err := encodeRow(Row{Values: r.Values()})
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, string(b))
			}
			if len(want) == 0 {
				t.Fatal("the in-process feed is empty: a test of nothing")
			}
			p, s := beam.NewPipelineWithRoot()
			key := t.Name()
			beam.ParDo0(s, &collectFn{Key: key}, ReadChanges(s, table, tc.start, tc.end, ChangesOptions{}))
			if err := run(t, p); err != nil {
				t.Fatal(err)
			}
			got := slices.Clone(collectedRows(key))
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("%d rows from the pipeline, %d in process, or different rows", len(got), len(want))
			}
			t.Logf("%d change rows", len(got))
		})
	}
}

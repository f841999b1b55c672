package bench

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/godelta/delta"
	"github.com/godelta/delta/bench/mergedata"
	"github.com/godelta/delta/testutil"
)

var mergeRows = flag.Int64("merge-rows", 1_000_000, "target rows of BenchmarkMerge (issue 13 asks for 10,000,000)")

// BenchmarkMerge is the MERGE upsert of issue 13: 100,000 source rows,
// half matching target rows spread over the whole table, half new, into a
// table of -merge-rows rows, copy-on-write and with deletion vectors.
// Each iteration merges into a fresh copy of the table (the copy is not
// timed).
func BenchmarkMerge(b *testing.B) {
	ctx := context.Background()
	for _, dv := range []bool{false, true} {
		b.Run(fmt.Sprintf("rows=%d/dv=%v", *mergeRows, dv), func(b *testing.B) {
			base := b.TempDir()
			if err := mergedata.MergeTables(ctx, base, *mergeRows, 100_000, dv, 0); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				dir := filepath.Join(b.TempDir(), fmt.Sprint(i))
				if err := testutil.CopyTree(filepath.Join(base, "target"), dir); err != nil {
					b.Fatal(err)
				}
				t, err := delta.Open(ctx, dir)
				if err != nil {
					b.Fatal(err)
				}
				s, err := delta.Open(ctx, filepath.Join(base, "source"))
				if err != nil {
					b.Fatal(err)
				}
				snap, err := s.Snapshot(ctx)
				if err != nil {
					b.Fatal(err)
				}
				src, err := delta.MergeTable(ctx, snap, delta.ScanOptions{})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				res, err := t.Merge(src, "t.id = s.id").WhenMatchedUpdateAll("").WhenNotMatchedInsertAll("").Execute(ctx)
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if m := res.Merge; m.NumTargetRowsUpdated != 50_000 || m.NumTargetRowsInserted != 50_000 {
					b.Fatalf("metrics %+v", m)
				}
				t.Close()
				s.Close()
				b.StartTimer()
			}
		})
	}
}

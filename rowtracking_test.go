package delta

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"testing"

	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
)

// Issue 19 item 3, through the public API and under every column mapping
// mode: an overwrite with replaceWhere on a data column rewrites the
// files it touches, and the rows it copies keep the row id and row commit
// version that _metadata.row_id and _metadata.row_commit_version read;
// the new rows get fresh ids and the overwrite's version. Before the fix
// the copied rows got fresh ids and the new version too.
func TestRowTrackingOverwriteReplaceWhere(t *testing.T) {
	for _, mode := range []string{"none", "name", "id"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			sch := &schema.StructType{Fields: []schema.StructField{nf("id", schema.Long), nf("s", schema.String), nf("p", schema.Integer)}}
			tbl, err := Create(ctx, filepath.Join(t.TempDir(), "t"), TableSpec{Schema: sch, PartitionColumns: []string{"p"}, Properties: map[string]string{
				"delta.enableRowTracking":  "true",
				"delta.columnMapping.mode": mode,
			}})
			if err != nil {
				t.Fatal(err)
			}
			defer tbl.Close()
			// Versions 1 to 3, ids 0-5, 6-11, 12-17, over two partitions.
			type identity struct{ id, version int64 }
			want := map[string]identity{}
			next := int64(0)
			for v := int64(1); v <= 3; v++ {
				var rows [][]schema.Value
				for range 6 {
					rows = append(rows, []schema.Value{schema.LongValue(next), schema.StringValue(fmt.Sprint("r", next)), schema.IntegerValue(int32(next % 2))})
					want[fmt.Sprint("r", next)] = identity{-1, v} // row id: see below
					next++
				}
				if _, err := tbl.AppendRows(ctx, rows, WriteOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			identities := func() map[string]identity {
				t.Helper()
				snap, err := tbl.Snapshot(ctx)
				if err != nil {
					t.Fatal(err)
				}
				s, err := tbl.Scan(snap, ScanOptions{Columns: []string{"s", scan.MetadataRowID, scan.MetadataRowCommitVersion}})
				if err != nil {
					t.Fatal(err)
				}
				out := map[string]identity{}
				for row, err := range s.Rows(ctx) {
					if err != nil {
						t.Fatal(err)
					}
					v := row.Values()
					if v[1].IsNull() || v[2].IsNull() {
						t.Fatalf("row %s: no row id or version", v[0])
					}
					out[v[0].String()] = identity{v[1].Int64(), v[2].Int64()}
				}
				return out
			}
			// Each append's files get the next row ids, a file's rows in
			// order: ids 0 to 17, each once, with the append's version.
			got := identities()
			seen := map[int64]bool{}
			for k, g := range got {
				if w, ok := want[k]; !ok || g.version != w.version || g.id < 0 || g.id >= next || seen[g.id] {
					t.Fatalf("before the overwrite, row %s: %+v (want version %d, a row id in [0,%d) of its own)", k, g, w.version, next)
				}
				seen[g.id] = true
			}
			if len(got) != len(want) {
				t.Fatalf("%d rows, want %d", len(got), len(want))
			}
			want = got
			pred, err := expr.Parse("id >= 4 AND id < 14")
			if err != nil {
				t.Fatal(err)
			}
			res, err := tbl.OverwriteRows(ctx, [][]schema.Value{{schema.LongValue(4), schema.StringValue("new"), schema.IntegerValue(0)}},
				OverwriteOptions{ReplaceWhere: pred})
			if err != nil {
				t.Fatal(err)
			}
			for id := 4; id < 14; id++ {
				delete(want, fmt.Sprint("r", id))
			}
			got = identities()
			fresh := got["new"]
			delete(got, "new")
			if fresh.id < next || fresh.version != res.Version {
				t.Errorf("new row: %+v, want a row id of at least %d and version %d", fresh, next, res.Version)
			}
			if !maps.Equal(got, want) {
				t.Errorf("copied rows after the overwrite:\n%v\nwant them unchanged\n%v", got, want)
			}
			validateLog(t, tbl)
		})
	}
}

package delta_test

import (
	"context"
	"testing"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
)

// rowIdentities reads each row's stable row id and row commit version, by
// the row's id column.
func rowIdentities(t *testing.T, tbl *delta.Table) map[int64][2]int64 {
	t.Helper()
	ctx := context.Background()
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := tbl.Scan(snap, delta.ScanOptions{Columns: []string{"id", "_metadata.row_id", "_metadata.row_commit_version"}})
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64][2]int64{}
	for row, err := range sc.Rows(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		v := row.Values()
		if v[1].IsNull() || v[2].IsNull() {
			t.Fatalf("row %d has no row id or row commit version", v[0].Int64())
		}
		out[v[0].Int64()] = [2]int64{v[1].Int64(), v[2].Int64()}
	}
	return out
}

// OPTIMIZE moves rows without changing them: on a table with row
// tracking every row keeps its row id and its row commit version, through
// compaction and through the sorted rewrite of ZORDER BY, as the protocol
// says of copied rows.
func TestOptimizeKeepsRowIdentity(t *testing.T) {
	ctx := context.Background()
	tbl, err := delta.Create(ctx, t.TempDir(), delta.TableSpec{
		Schema: &schema.StructType{Fields: []schema.StructField{
			{Name: "id", Type: schema.Long, Nullable: true},
			{Name: "x", Type: schema.Long, Nullable: true},
		}},
		Properties: map[string]string{tableconfig.KeyEnableRowTracking: "true"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	for c := range int64(4) {
		var rows [][]schema.Value
		for i := range int64(25) {
			id := c*25 + i
			rows = append(rows, []schema.Value{schema.LongValue(id), schema.LongValue((id * 37) % 101)})
		}
		if _, err := tbl.AppendRows(ctx, rows, delta.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	before := rowIdentities(t, tbl)
	if len(before) != 100 {
		t.Fatalf("%d rows before, want 100", len(before))
	}
	for _, opts := range []delta.OptimizeOptions{{}, {ZOrderBy: []string{"x", "id"}}} {
		res, err := tbl.Optimize(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Committed {
			t.Fatalf("OPTIMIZE %+v committed nothing", opts.ZOrderBy)
		}
		after := rowIdentities(t, tbl)
		if len(after) != len(before) {
			t.Fatalf("OPTIMIZE %v: %d rows, want %d", opts.ZOrderBy, len(after), len(before))
		}
		for id, b := range before {
			if a := after[id]; a != b {
				t.Errorf("OPTIMIZE %v: row %d has row id and version %v, had %v", opts.ZOrderBy, id, a, b)
			}
		}
	}
}

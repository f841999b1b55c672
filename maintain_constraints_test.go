package delta_test

import (
	"context"
	"slices"
	"testing"
	"time"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/schema"
)

// VACUUM, RESTORE and shallow CLONE write no new row, so a table's CHECK
// constraint does not stop them (as it stops a raw transaction that stages
// files no writer checked).
func TestMaintenanceOnConstrainedTable(t *testing.T) {
	ctx := context.Background()
	tbl, err := delta.Create(ctx, t.TempDir(), delta.TableSpec{
		Schema:     &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long, Nullable: true}}},
		Properties: map[string]string{"delta.constraints.positive": "id > 0"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	for _, id := range []int64{1, 2} {
		if _, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(id)}}, delta.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tbl.Delete(ctx, "id = 1", delta.DMLOptions{}); err != nil {
		t.Fatalf("DELETE: %v", err)
	}
	if _, err := tbl.RestoreVersion(ctx, 2, delta.TxnOptions{}); err != nil {
		t.Fatalf("RESTORE: %v", err)
	}
	if got, want := sortedRows(t, tbl, -1), []string{"[1]", "[2]"}; !slices.Equal(got, want) {
		t.Fatalf("after RESTORE to version 2: %v, want %v", got, want)
	}
	later := time.Now().Add(time.Hour)
	res, err := tbl.Vacuum(ctx, delta.VacuumOptions{RetentionSet: true, Force: true, Now: func() time.Time { return later }})
	if err != nil {
		t.Fatalf("VACUUM: %v", err)
	}
	if res.StartVersion < 0 || res.EndVersion < 0 {
		t.Errorf("VACUUM committed no START/END: %+v", res)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	clone, _, err := tbl.CloneTo(ctx, snap, t.TempDir(), delta.TxnOptions{})
	if err != nil {
		t.Fatalf("CLONE: %v", err)
	}
	defer clone.Close()
	if got, want := sortedRows(t, clone, -1), []string{"[1]", "[2]"}; !slices.Equal(got, want) {
		t.Fatalf("clone: %v, want %v", got, want)
	}
	// The constraint still holds on the clone's writes.
	if _, err := clone.AppendRows(ctx, [][]schema.Value{{schema.LongValue(-1)}}, delta.WriteOptions{}); err == nil {
		t.Fatal("the clone took a row that breaks its CHECK constraint")
	}
}

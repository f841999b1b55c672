package vacuum_test

import (
	"context"
	"errors"
	"testing"
	"time"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/testutil/faultstore"
	"github.com/godelta/delta/vacuum"
)

// A delete that fails stops the run: what was deleted stays deleted, the
// error is returned, VACUUM END records FAILED, and a second run finishes
// the work. The table reads throughout.
func TestVacuumDeleteFault(t *testing.T) {
	ctx := context.Background()
	fs := faultstore.New(memory.New(), 1, faultstore.Rule{Ops: faultstore.OpDelete, Kind: faultstore.Before, Nth: 2, Times: 1})
	tbl, err := delta.CreateStore(ctx, "memory://vacuum-fault", fs, delta.TableSpec{
		Schema: &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long, Nullable: true}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range int64(3) {
		if _, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(i)}}, delta.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tbl.OverwriteRows(ctx, [][]schema.Value{{schema.LongValue(9)}}, delta.OverwriteOptions{}); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(8 * day)
	opts := vacuum.Options{Concurrency: 1, Now: func() time.Time { return later }}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res, err := vacuum.Vacuum(ctx, snap, opts)
	if !errors.Is(err, faultstore.ErrInjected) {
		t.Fatalf("err = %v, want the injected fault", err)
	}
	if len(res.Files) != 3 || res.Deleted != 1 || res.EndVersion < 0 {
		t.Fatalf("result %+v", res)
	}
	hist, err := tbl.History(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if ci := hist[0].Info; ci.Operation != vacuum.OperationEnd || ci.OperationParameters["status"] != "FAILED" {
		t.Fatalf("last commit %s %v, want VACUUM END FAILED", ci.Operation, ci.OperationParameters)
	}
	if ids, err := readIDs(ctx, tbl, res.EndVersion); err != nil || len(ids) != 1 || ids[0] != 9 {
		t.Fatalf("table reads %v (%v)", ids, err)
	}
	snap, _ = tbl.Snapshot(ctx)
	res, err = vacuum.Vacuum(ctx, snap, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 2 || res.Deleted != 2 {
		t.Fatalf("second run %+v, want the 2 files left", res)
	}
	if ids, err := readIDs(ctx, tbl, res.EndVersion); err != nil || len(ids) != 1 || ids[0] != 9 {
		t.Fatalf("table reads %v (%v)", ids, err)
	}
}

package dml_test

import (
	"context"
	"fmt"

	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/dml"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/txn"
	"github.com/godelta/delta/write"
)

// Delete and Update run on a snapshot and commit on top of it; the
// strategy is the table's (copy-on-write here: no deletion vectors).
func Example() {
	ctx := context.Background()
	store := memory.New()
	defer store.Close()
	sch, _ := schema.ParseDDL("id BIGINT NOT NULL, v STRING")
	p, m, _ := write.NewTable(write.TableSpec{Schema: sch})
	create := txn.BeginCreate(store, txn.Options{})
	create.SetProtocol(p)
	create.SetMetadata(m)
	if _, err := create.Commit(ctx); err != nil {
		fmt.Println(err)
		return
	}
	snap, _ := snapshot.Load(ctx, store, deltalog.Latest)
	b := write.Batch{Len: 4, Columns: [][]schema.Value{
		{schema.LongValue(1), schema.LongValue(2), schema.LongValue(3), schema.LongValue(4)},
		{schema.StringValue("a"), schema.StringValue("b"), schema.StringValue("c"), schema.StringValue("d")},
	}}
	if _, err := write.Append(ctx, snap, func(yield func(write.Batch, error) bool) { yield(b, nil) }, write.CommitOptions{}); err != nil {
		fmt.Println(err)
		return
	}

	snap, _ = snapshot.Load(ctx, store, deltalog.Latest)
	pred, _ := expr.Parse("id = 2")
	del, err := dml.Delete(ctx, snap, pred, dml.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(del.Strategy, "deleted", del.Metrics.NumDeletedRows, "copied", del.Metrics.NumCopiedRows)

	snap, _ = snapshot.Load(ctx, store, deltalog.Latest)
	set, _ := dml.ParseAssignments("v = concat(v, '!')")
	pred, _ = expr.Parse("id > 2")
	upd, err := dml.Update(ctx, snap, set, pred, dml.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	metrics := upd.Metrics.Map(dml.OpUpdate)
	fmt.Println("version", upd.Commit.Version, "numUpdatedRows", metrics["numUpdatedRows"], "numCopiedRows", metrics["numCopiedRows"])
	// Output:
	// copy-on-write deleted 1 copied 3
	// version 3 numUpdatedRows 2 numCopiedRows 1
}

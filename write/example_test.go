package write_test

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/tableconfig"
	"github.com/godelta/delta/txn"
	"github.com/godelta/delta/write"
)

// NewTable chooses the smallest protocol for the features a table uses; its
// actions are then committed as version 0 with txn.BeginCreate.
func ExampleNewTable() {
	ctx := context.Background()
	sch, err := schema.ParseDDL("id BIGINT NOT NULL, country STRING")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, props := range []map[string]string{
		nil,
		{tableconfig.KeyEnableChangeDataFeed: "true"},
		{tableconfig.KeyEnableDeletionVectors: "true"},
	} {
		p, _, err := write.NewTable(write.TableSpec{Schema: sch, PartitionColumns: []string{"country"}, Properties: props})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(p.MinReaderVersion, p.MinWriterVersion, p.ReaderFeatures, p.WriterFeatures)
	}

	p, m, _ := write.NewTable(write.TableSpec{Schema: sch, PartitionColumns: []string{"country"}})
	store := memory.New()
	defer store.Close()
	tx := txn.BeginCreate(store, txn.Options{EngineInfo: "example"})
	tx.SetProtocol(p)
	tx.SetMetadata(m)
	res, err := tx.Commit(ctx)
	fmt.Println("created version", res.Version, err)
	// Output:
	// 1 2 [] []
	// 1 4 [] []
	// 3 7 [deletionVectors] [appendOnly deletionVectors invariants]
	// created version 0 <nil>
}

// batches yields the rows given, column by column, in table schema order.
func batches(ids []int64, countries []string) iter.Seq2[write.Batch, error] {
	return func(yield func(write.Batch, error) bool) {
		b := write.Batch{Len: len(ids), Columns: make([][]schema.Value, 2)}
		for i := range ids {
			b.Columns[0] = append(b.Columns[0], schema.LongValue(ids[i]))
			b.Columns[1] = append(b.Columns[1], schema.StringValue(countries[i]))
		}
		yield(b, nil)
	}
}

// Append writes rows as Parquet files, one directory per partition value,
// and commits them with txn.Update. Running the post-commit work in
// res.PostCommit (checkpoints, log cleanup) is the caller's choice.
func ExampleAppend() {
	ctx := context.Background()
	store := memory.New()
	defer store.Close()
	sch, _ := schema.ParseDDL("id BIGINT NOT NULL, country STRING")
	p, m, _ := write.NewTable(write.TableSpec{Schema: sch, PartitionColumns: []string{"country"}})
	create := txn.BeginCreate(store, txn.Options{})
	create.SetProtocol(p)
	create.SetMetadata(m)
	if _, err := create.Commit(ctx); err != nil {
		fmt.Println(err)
		return
	}

	snap, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := write.Append(ctx, snap, batches([]int64{1, 2, 3}, []string{"FR", "DE", "FR"}), write.CommitOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("appended version", res.Version)

	snap, _ = snapshot.Load(ctx, store, deltalog.Latest)
	var files []string
	for add, err := range snap.Files(ctx) {
		if err != nil {
			fmt.Println(err)
			return
		}
		files = append(files, fmt.Sprint(add.PartitionValues, " ", add.DataChange))
	}
	slices.Sort(files)
	fmt.Println(strings.Join(files, "\n"))
	// Output:
	// appended version 1
	// map[country:DE] true
	// map[country:FR] true
}

// An identity column: Append gives each new row the next value after the
// column's high-water mark, and the same commit moves the mark.
func ExampleAppend_identity() {
	ctx := context.Background()
	sch, err := schema.ParseDDL("id BIGINT GENERATED ALWAYS AS IDENTITY (START WITH 10 INCREMENT BY 5), name STRING")
	if err != nil {
		fmt.Println(err)
		return
	}
	p, m, err := write.NewTable(write.TableSpec{Schema: sch})
	if err != nil {
		fmt.Println(err)
		return
	}
	store := memory.New()
	defer store.Close()
	tx := txn.BeginCreate(store, txn.Options{})
	tx.SetProtocol(p)
	tx.SetMetadata(m)
	if _, err := tx.Commit(ctx); err != nil {
		fmt.Println(err)
		return
	}
	snap, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		fmt.Println(err)
		return
	}
	rows := write.Batch{Len: 2, Columns: [][]schema.Value{
		{{}, {}}, // no id given: generated
		{schema.StringValue("a"), schema.StringValue("b")},
	}}
	one := func(yield func(write.Batch, error) bool) { yield(rows, nil) }
	res, err := write.Append(ctx, snap, one, write.CommitOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	after, _ := res.Snapshot(ctx)
	f, _ := after.Schema().Field("id")
	def, _, _ := f.Identity()
	fmt.Println("protocol writer", p.MinWriterVersion, "high-water mark", def.HighWaterMark)
	// Output:
	// protocol writer 6 high-water mark 15
}

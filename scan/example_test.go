package scan_test

import (
	"context"
	"fmt"
	"iter"

	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/txn"
	"github.com/godelta/delta/write"
)

// exampleTable creates a table partitioned by country in a memory store and
// appends three rows with package write.
func exampleTable(ctx context.Context) (logstore.Store, error) {
	return newExampleTable(ctx, "id BIGINT NOT NULL, name STRING, country STRING",
		write.TableSpec{PartitionColumns: []string{"country"}}, [][]schema.Value{
			{schema.LongValue(1), schema.LongValue(2), schema.LongValue(3)},
			{schema.StringValue("ada"), schema.StringValue("bob"), schema.StringValue("cyd")},
			{schema.StringValue("FR"), schema.StringValue("DE"), schema.StringValue("FR")},
		})
}

// newExampleTable creates a table of schema ddl (and spec's partitions and
// properties) in a memory store and appends cols, one slice per column.
func newExampleTable(ctx context.Context, ddl string, spec write.TableSpec, cols [][]schema.Value) (logstore.Store, error) {
	store := memory.New()
	sch, err := schema.ParseDDL(ddl)
	if err != nil {
		return nil, err
	}
	spec.Schema = sch
	p, m, err := write.NewTable(spec)
	if err != nil {
		return nil, err
	}
	create := txn.BeginCreate(store, txn.Options{})
	create.SetProtocol(p)
	create.SetMetadata(m)
	if _, err := create.Commit(ctx); err != nil {
		return nil, err
	}
	snap, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		return nil, err
	}
	rows := func(yield func(write.Batch, error) bool) {
		yield(write.Batch{Len: len(cols[0]), Columns: cols}, nil)
	}
	_, err = write.Append(ctx, snap, iter.Seq2[write.Batch, error](rows), write.CommitOptions{})
	return store, err
}

// A scan chooses columns and a predicate; files whose partition values rule
// the predicate out are never opened.
func ExampleScan_Rows() {
	ctx := context.Background()
	store, err := exampleTable(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	snap, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		fmt.Println(err)
		return
	}
	pred, err := expr.Parse("country = 'FR' AND id > 1")
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := scan.New(snap, scan.Options{Columns: []string{"name", "country"}, Predicate: pred})
	if err != nil {
		fmt.Println(err)
		return
	}
	for row, err := range s.Rows(ctx) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(row.Values())
	}
	m := s.Metrics()
	fmt.Println("files:", m.FilesTotal, "skipped on partition values:", m.FilesSkippedPart, "read:", m.FilesRead)
	// Output:
	// [cyd FR]
	// files: 2 skipped on partition values: 1 read: 1
}

// All reads rows into Go structs, matching fields to columns by name.
func ExampleAll() {
	ctx := context.Background()
	store, err := exampleTable(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	snap, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		fmt.Println(err)
		return
	}
	type person struct {
		ID   int64
		Name string
	}
	pred, _ := expr.Parse("country = 'DE'")
	s, err := scan.New(snap, scan.Options{Predicate: pred})
	if err != nil {
		fmt.Println(err)
		return
	}
	for p, err := range scan.All[person](ctx, s) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%+v\n", p)
	}
	// Output:
	// {ID:2 Name:bob}
}

// On a table with row tracking, a scan returns each row's stable row id
// and row commit version as the columns _metadata.row_id and
// _metadata.row_commit_version.
func ExampleMetadataRowID() {
	ctx := context.Background()
	store, err := newExampleTable(ctx, "id BIGINT NOT NULL, name STRING",
		write.TableSpec{Properties: map[string]string{"delta.enableRowTracking": "true"}}, [][]schema.Value{
			{schema.LongValue(1), schema.LongValue(2)},
			{schema.StringValue("ada"), schema.StringValue("bob")},
		})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	snap, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := scan.New(snap, scan.Options{Columns: []string{"name", scan.MetadataRowID, scan.MetadataRowCommitVersion}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for row, err := range s.Rows(ctx) {
		if err != nil {
			fmt.Println(err)
			return
		}
		v := row.Values()
		fmt.Printf("%s: row id %s, version %s\n", v[0], v[1], v[2])
	}
	// Output:
	// ada: row id 0, version 1
	// bob: row id 1, version 1
}

package deltaarrow_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/deltaarrow"
	"github.com/godelta/delta/schema"
)

// An Arrow program appends a record to a table and reads the rows back,
// with a predicate, as Arrow records.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "deltaarrow")
	defer os.RemoveAll(dir)
	sch, _ := schema.ParseDDL("id BIGINT NOT NULL, name STRING")
	t, err := delta.Create(ctx, dir, delta.TableSpec{Schema: sch})
	if err != nil {
		log.Fatal(err)
	}
	defer t.Close()

	as := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2, 3}, nil)
	b.Field(1).(*array.StringBuilder).AppendValues([]string{"a", "b", ""}, []bool{true, true, false})
	rec := b.NewRecordBatch()
	defer rec.Release()
	in, _ := array.NewRecordReader(as, []arrow.RecordBatch{rec})
	defer in.Release()
	if _, err := deltaarrow.Append(ctx, t, in, delta.WriteOptions{}); err != nil {
		log.Fatal(err)
	}

	snap, err := t.Snapshot(ctx)
	if err != nil {
		log.Fatal(err)
	}
	pred, _ := delta.ParsePredicate("id >= 2")
	r, err := deltaarrow.Scan(ctx, t, snap, delta.ScanOptions{Predicate: pred}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Release()
	fmt.Println(r.Schema())
	for r.Next() {
		fmt.Println(r.RecordBatch().Column(0), r.RecordBatch().Column(1))
	}
	if err := r.Err(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// schema:
	//   fields: 2
	//     - id: type=int64
	//     - name: type=utf8, nullable
	// [2 3] ["b" (null)]
}

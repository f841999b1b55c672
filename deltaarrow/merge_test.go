package deltaarrow_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/deltaarrow"
	"github.com/godelta/delta/schema"
)

// An upsert from Arrow records: matched rows updated, the others inserted.
func TestMergeSource(t *testing.T) {
	ctx := context.Background()
	sch, err := schema.ParseDDL("id BIGINT NOT NULL, v STRING")
	if err != nil {
		t.Fatal(err)
	}
	tb, err := delta.Create(ctx, t.TempDir(), delta.TableSpec{Schema: sch})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	var rows [][]schema.Value
	for i := range int64(3) {
		rows = append(rows, []schema.Value{schema.LongValue(i), schema.StringValue(fmt.Sprint("old", i))})
	}
	if _, err := tb.AppendRows(ctx, rows, delta.WriteOptions{}); err != nil {
		t.Fatal(err)
	}

	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	as := arrow.NewSchema([]arrow.Field{
		{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	bld := array.NewRecordBuilder(mem, as)
	defer bld.Release()
	for _, id := range []int64{1, 7} {
		bld.Field(0).(*array.StringBuilder).Append(fmt.Sprint("new", id))
		bld.Field(1).(*array.Int64Builder).Append(id)
	}
	rec := bld.NewRecordBatch()
	defer rec.Release()
	rr, err := array.NewRecordReader(as, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	src, err := deltaarrow.MergeSource(ctx, tb, rr)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tb.Merge(src, "t.id = s.id").WhenMatchedUpdateAll("").WhenNotMatchedInsertAll("").Execute(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Merge.NumTargetRowsUpdated != 1 || res.Merge.NumTargetRowsInserted != 1 {
		t.Errorf("metrics %+v, want 1 updated and 1 inserted", res.Merge)
	}
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := tb.Scan(snap, delta.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for row, err := range sc.Rows(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprint(row.Values()))
	}
	slices.Sort(got)
	want := []string{"[0 old0]", "[1 new1]", "[2 old2]", "[7 new7]"}
	if !slices.Equal(got, want) {
		t.Fatalf("after the merge: %v, want %v", got, want)
	}
}

package delta_test

import (
	"context"
	"fmt"
	"slices"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/schema"
)

// ExampleTable_Merge upserts a source into a table: matched rows are
// updated, a matched row the source marks is deleted, new rows inserted.
func ExampleTable_Merge() {
	ctx := context.Background()
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.Long},
		{Name: "name", Type: schema.String, Nullable: true},
	}}
	tbl, err := delta.Create(ctx, "memory://example-merge", delta.TableSpec{Schema: sch})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tbl.Close()
	row := func(id int64, name string) []schema.Value {
		return []schema.Value{schema.LongValue(id), schema.StringValue(name)}
	}
	if _, err := tbl.AppendRows(ctx, [][]schema.Value{row(1, "ann"), row(2, "bob"), row(3, "cy")}, delta.WriteOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	src := delta.MergeRows(sch, [][]schema.Value{row(2, "robert"), row(3, "DELETE"), row(4, "dee")})
	res, err := tbl.Merge(src, "t.id = s.id").
		WhenMatchedDelete("s.name = 'DELETE'").
		WhenMatchedUpdateAll("").
		WhenNotMatchedInsertAll("").
		Execute(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	m := res.Merge
	fmt.Println("inserted", m.NumTargetRowsInserted, "updated", m.NumTargetRowsUpdated, "deleted", m.NumTargetRowsDeleted)
	ids, err := exampleNames(ctx, tbl)
	fmt.Println(ids, err)
	// Output:
	// inserted 1 updated 1 deleted 1
	// [1:ann 2:robert 4:dee] <nil>
}

func exampleNames(ctx context.Context, tbl *delta.Table) ([]string, error) {
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	s, err := tbl.Scan(snap, delta.ScanOptions{})
	if err != nil {
		return nil, err
	}
	var out []string
	for r, err := range s.Rows(ctx) {
		if err != nil {
			return nil, err
		}
		v := r.Values()
		out = append(out, fmt.Sprintf("%s:%s", v[0], v[1]))
	}
	slices.Sort(out)
	return out, nil
}

package optimize_test

import (
	"context"
	"fmt"
	"os"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/optimize"
	"github.com/godelta/delta/schema"
)

// OPTIMIZE compacts the small files of each partition into files of the
// target size, in a commit that changes no data; run again, it has
// nothing to do.
func ExampleRun() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "example-optimize")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	tbl, err := delta.Create(ctx, dir, delta.TableSpec{Schema: &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.Long}, {Name: "x", Type: schema.Long}}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tbl.Close()
	for i := range 5 { // five appends: five small files
		rows := [][]schema.Value{{schema.LongValue(int64(i)), schema.LongValue(int64(10 * i))}}
		if _, err := tbl.AppendRows(ctx, rows, delta.WriteOptions{}); err != nil {
			fmt.Println(err)
			return
		}
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := optimize.Run(ctx, snap, optimize.Options{ZOrderBy: []string{"id", "x"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("committed:", res.Committed, "version", res.Commit.Version)
	fmt.Println("files removed:", res.Metrics.NumFilesRemoved, "added:", res.Metrics.NumFilesAdded)

	// Compaction has nothing left to do: one file, no deletion vector.
	res, err = tbl.Optimize(ctx, optimize.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("second run committed:", res.Committed)
	// Output:
	// committed: true version 6
	// files removed: 5 added: 1
	// second run committed: false
}

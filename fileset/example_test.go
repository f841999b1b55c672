package fileset_test

import (
	"context"
	"fmt"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/fileset"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/schema"
)

// Restore a table to its first version, and clone that version elsewhere.
func Example() {
	ctx := context.Background()
	tbl, err := delta.Create(ctx, "memory://fileset-example", delta.TableSpec{
		Schema: &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long}}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tbl.Close()
	for i := range int64(2) {
		if _, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(i)}}, delta.WriteOptions{}); err != nil {
			fmt.Println(err)
			return
		}
	}
	latest, _ := tbl.Snapshot(ctx)
	v1, _ := tbl.SnapshotAt(ctx, 1)
	res, err := fileset.Restore(ctx, latest, v1, fileset.RestoreOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("RESTORE committed version", res.Version, "with", res.NumOfFilesAfterRestore, "file")

	target := memory.New()
	cl, err := fileset.Clone(ctx, v1, target, fileset.CloneOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("CLONE committed version", cl.Commit.Version, "naming", cl.SourceNumOfFiles, "source file")
	// Output:
	// RESTORE committed version 3 with 1 file
	// CLONE committed version 0 naming 1 source file
}

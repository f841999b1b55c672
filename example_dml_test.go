package delta_test

import (
	"context"
	"fmt"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/schema"
)

// Delete and UpdateRows change rows in place. With deletion vectors on,
// the deleted and updated rows are marked in a vector and the data file
// stays; the metrics say so, named as Spark names them in the log.
func ExampleTable_Delete() {
	ctx := context.Background()
	sch, _ := schema.ParseDDL("id BIGINT NOT NULL, name STRING, score INT")
	tbl, err := delta.Create(ctx, "memory://example-dml", delta.TableSpec{
		Schema:     sch,
		Properties: map[string]string{"delta.enableDeletionVectors": "true"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tbl.Close()
	var rows [][]schema.Value
	for i := range int64(10) {
		rows = append(rows, []schema.Value{schema.LongValue(i), schema.StringValue(fmt.Sprint("n", i)), schema.IntegerValue(int32(i * 10))})
	}
	if _, err := tbl.AppendRows(ctx, rows, delta.WriteOptions{}); err != nil {
		fmt.Println(err)
		return
	}

	del, err := tbl.Delete(ctx, "score >= 70", delta.DMLOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("deleted", del.Metrics.NumDeletedRows, "rows with", del.Strategy,
		"- deletion vectors added:", del.Metrics.NumDeletionVectorsAdded)

	upd, err := tbl.UpdateRows(ctx, "name = upper(name), score = score + 1", "id < 3", delta.DMLOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("updated", upd.Metrics.NumUpdatedRows, "rows at version", upd.Commit.Version)
	ids, err := exampleIDs(ctx, tbl)
	fmt.Println(ids, err)
	// Output:
	// deleted 3 rows with merge-on-read - deletion vectors added: 1
	// updated 3 rows at version 3
	// [0 1 2 3 4 5 6] <nil>
}

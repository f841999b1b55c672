// Package mergedata writes the tables of the MERGE benchmark (issue 13).
package mergedata

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/godelta/delta"
	"github.com/godelta/delta/schema"
)

var mergeSchema = &schema.StructType{Fields: []schema.StructField{
	{Name: "id", Type: schema.Long},
	{Name: "name", Type: schema.String, Nullable: true},
	{Name: "n", Type: schema.Long, Nullable: true},
}}

// mergeBatches yields rows id(i), for i in [0, count), in batches of 64k.
func mergeBatches(count int64, id func(int64) int64, tag string) func(func(delta.RowBatch, error) bool) {
	return func(yield func(delta.RowBatch, error) bool) {
		const size = 1 << 16
		for start := int64(0); start < count; start += size {
			n := int(min(size, count-start))
			b := delta.RowBatch{Len: n, Columns: [][]schema.Value{make([]schema.Value, n), make([]schema.Value, n), make([]schema.Value, n)}}
			for i := range n {
				k := id(start + int64(i))
				b.Columns[0][i] = schema.LongValue(k)
				b.Columns[1][i] = schema.StringValue(fmt.Sprintf("%s-%d", tag, k))
				b.Columns[2][i] = schema.LongValue(k % 1000)
			}
			if !yield(b, nil) {
				return
			}
		}
	}
}

// MergeTables writes the two tables of the MERGE benchmark under dir:
// dir/target, rows rows (id 0..rows-1, name, n; files of the default
// target size, or fileSize when not 0; deletion vectors on with dv), and dir/source, src rows of
// which half match target ids spread evenly over the whole table (so every
// target file holds matches) and half are new ids.
func MergeTables(ctx context.Context, dir string, rows, src int64, dv bool, fileSize int64) error {
	props := map[string]string{}
	if dv {
		props["delta.enableDeletionVectors"] = "true"
	}
	target, err := delta.Create(ctx, filepath.Join(dir, "target"), delta.TableSpec{Schema: mergeSchema, Properties: props})
	if err != nil {
		return err
	}
	defer target.Close()
	if _, err := target.Append(ctx, mergeBatches(rows, func(i int64) int64 { return i }, "t"), delta.WriteOptions{TargetFileSize: fileSize}); err != nil {
		return err
	}
	source, err := delta.Create(ctx, filepath.Join(dir, "source"), delta.TableSpec{Schema: mergeSchema})
	if err != nil {
		return err
	}
	defer source.Close()
	half := src / 2
	step := max(1, rows/max(1, half))
	id := func(i int64) int64 {
		if i < half {
			return i * step // matched, spread over the whole table
		}
		return rows + i // new
	}
	if _, err := source.Append(ctx, mergeBatches(src, id, "s"), delta.WriteOptions{}); err != nil {
		return err
	}
	return nil
}

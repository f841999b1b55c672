package deltaarrow

import (
	"context"
	"slices"

	"github.com/apache/arrow-go/v18/arrow/array"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/schema"
)

// MergeSource reads the records of r as the source of a MERGE into t
// (delta.Table.Merge): its columns are bound to t's columns by name, as
// Append binds them, so the source has the table's schema, with null
// where the records lack a nullable column; a mismatch is a *SchemaError.
// The rows are read now: a MERGE holds its source in memory (see
// dml.MergeSpec), so the bound is the source's size. MergeSource does not
// release r.
func MergeSource(ctx context.Context, t *delta.Table, r array.RecordReader) (delta.MergeSource, error) {
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return delta.MergeSource{}, err
	}
	sch := snap.Schema()
	batches, err := Batches(sch, r)
	if err != nil {
		return delta.MergeSource{}, err
	}
	var rows [][]schema.Value
	for b, err := range batches {
		if err != nil {
			return delta.MergeSource{}, err
		}
		for i := range b.Len {
			row := make([]schema.Value, len(b.Columns))
			for j := range b.Columns {
				row[j] = b.Columns[j][i]
			}
			rows = append(rows, row)
		}
		if err := ctx.Err(); err != nil {
			return delta.MergeSource{}, err
		}
	}
	return delta.MergeRows(sch, slices.Clip(rows)), nil
}

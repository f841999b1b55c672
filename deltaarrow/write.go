package deltaarrow

import (
	"context"
	"iter"

	"github.com/apache/arrow-go/v18/arrow/array"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/schema"
)

// Append writes the records of r to t as a blind append: delta.Table.Append
// of Batches(t's schema, r). The records' schema is matched to the
// table's first; a mismatch is a *SchemaError and writes nothing. Append
// does not release r. To append one arrow.RecordBatch, wrap it with
// array.NewRecordReader.
func Append(ctx context.Context, t *delta.Table, r array.RecordReader, opts delta.WriteOptions) (delta.CommitResult, error) {
	batches, err := tableBatches(ctx, t, r)
	if err != nil {
		return delta.CommitResult{}, err
	}
	return t.Append(ctx, batches, opts)
}

// Overwrite replaces the rows of t (or those opts.ReplaceWhere matches)
// with the records of r: delta.Table.Overwrite of Batches. The records'
// schema is matched to the table's first; a mismatch is a *SchemaError and
// writes nothing. Overwrite does not release r.
func Overwrite(ctx context.Context, t *delta.Table, r array.RecordReader, opts delta.OverwriteOptions) (delta.CommitResult, error) {
	batches, err := tableBatches(ctx, t, r)
	if err != nil {
		return delta.CommitResult{}, err
	}
	return t.Overwrite(ctx, batches, opts)
}

// tableBatches is Batches of r for the latest schema of t.
func tableBatches(ctx context.Context, t *delta.Table, r array.RecordReader) (iter.Seq2[schema.Batch, error], error) {
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	return Batches(snap.Schema(), r)
}

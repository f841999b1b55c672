package deltaarrow

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow/array"

	delta "github.com/godelta/delta"
)

// Append writes the records of r to t as a blind append: delta.Table.Append
// of Batches(t's schema, r). The records' schema is matched to the
// table's first; a mismatch is a *SchemaError and writes nothing. Append
// does not release r.
func Append(ctx context.Context, t *delta.Table, r array.RecordReader, opts delta.WriteOptions) (delta.CommitResult, error) {
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return delta.CommitResult{}, err
	}
	batches, err := Batches(snap.Schema(), r)
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
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return delta.CommitResult{}, err
	}
	batches, err := Batches(snap.Schema(), r)
	if err != nil {
		return delta.CommitResult{}, err
	}
	return t.Overwrite(ctx, batches, opts)
}

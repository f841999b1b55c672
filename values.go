package delta

import (
	"context"
	"iter"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/schema/govalue"
	"github.com/godelta/delta/write"
)

// Errors of writing Go values and of adding files a program wrote itself.
var (
	// ErrNoColumn is returned by AppendStructs and OverwriteStructs for a
	// struct with an exported field that no column takes and that is not
	// tagged `parquet:"-"`.
	ErrNoColumn = govalue.ErrNoColumn
	// ErrValueMismatch is returned for a Go value that does not fit its
	// column: an integer out of the column's range, a decimal with more
	// digits or fraction digits than the column holds, a Go type that
	// cannot give the column's type.
	ErrValueMismatch = govalue.ErrMismatch
	// ErrFileSchema is matched by every *FileSchemaError.
	ErrFileSchema = write.ErrFileSchema
)

// FileSchemaError names the column of a data file given to FileStats that
// does not fit the table.
type FileSchemaError = write.FileSchemaError

// AppendStructs appends rows given as Go structs: Append of
// write.StructBatches(schema, rows). Each exported field of T goes to the
// column named by its `parquet:"name"` tag, else to the column whose name
// equals the field's ignoring case, the same binding scan.All reads with
// (see package govalue for the conversions of each type). A column with no
// field is null; a field with no column is ErrNoColumn unless tagged
// `parquet:"-"`; a value that does not fit its column is ErrValueMismatch;
// a null in a NOT NULL column is a *ConstraintError. For a slice, pass
// slices.Values(rows). rows is consumed once, a batch at a time.
//
// The batches are shaped by the schema of the snapshot the append is
// planned on (one load, as Append's); a schema change committed after it
// is a conflict, as for Append, never a write to the wrong columns.
func AppendStructs[T any](ctx context.Context, t *Table, rows iter.Seq[T], opts WriteOptions) (CommitResult, error) {
	snap, err := t.writableSnapshot(ctx)
	if err != nil {
		return CommitResult{}, err
	}
	return t.appendOn(ctx, snap, write.StructBatches(snap.Schema(), rows, 0), opts)
}

// OverwriteStructs is Overwrite of rows given as Go structs, mapped as
// AppendStructs maps them.
func OverwriteStructs[T any](ctx context.Context, t *Table, rows iter.Seq[T], opts OverwriteOptions) (CommitResult, error) {
	snap, err := t.writableSnapshot(ctx)
	if err != nil {
		return CommitResult{}, err
	}
	return t.overwriteOn(ctx, snap, write.StructBatches(snap.Schema(), rows, 0), opts)
}

// FileStats returns the add action of a Parquet file that the program
// wrote itself and put at path (a key relative to the table root, not
// URI-encoded) under the root of t, for Begin, Add and Commit: its Path
// (URI-encoded), Size, ModificationTime, DataChange and Stats, the
// statistics this library's writer would write for the same rows
// (numRecords, minValues, maxValues, nullCount, tightBounds; the table's
// delta.dataSkippingNumIndexedCols and delta.dataSkippingStatsColumns
// honoured). PartitionValues is empty: fill it in for a partitioned table.
// The file's schema is checked against the table's latest snapshot: a
// column that does not fit is a *FileSchemaError naming it; see
// write.FileAdd.
//
//	add, err := delta.FileStats(ctx, t, "part-0001.parquet")
//	tx, err := t.Begin(ctx, delta.TxnOptions{Operation: "WRITE"})
//	tx.Add(add)
//	version, err := tx.Commit(ctx)
func FileStats(ctx context.Context, t *Table, path string) (actions.Add, error) {
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return actions.Add{}, err
	}
	return write.FileAdd(ctx, snap, path)
}

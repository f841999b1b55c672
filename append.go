package delta

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/txn"
	"github.com/godelta/delta/write"
)

// RowBatch is a column-major run of logical rows in table schema order, as
// Append and Overwrite take them: schema.Batch, the type a scan yields too
// (Batch); see write.Batch.
type RowBatch = schema.Batch

// Errors of writing rows; see package write.
var (
	// ErrConstraint is matched by every *ConstraintError.
	ErrConstraint = write.ErrConstraint
	// ErrAppendOnly is returned by Overwrite, and by any commit that
	// removes data, on a table with delta.appendOnly=true. It is
	// txn.ErrAppendOnly and write.ErrAppendOnly.
	ErrAppendOnly = write.ErrAppendOnly
	// ErrNoRows is returned by Append and AppendRows when the input holds
	// no row (an empty or header-only file): nothing is written and no
	// version is committed. It is write.ErrNoRows.
	ErrNoRows = write.ErrNoRows
	// ErrAppVersionCommitted is returned by Append with WriteOptions.AppID
	// when the table already holds that application at AppVersion or a
	// later version: the batch was committed before, and nothing was
	// written now. It is write.ErrAppVersionCommitted.
	ErrAppVersionCommitted = write.ErrAppVersionCommitted
)

// ConstraintError names the constraint a row broke and the row.
type ConstraintError = write.ConstraintError

// WriteOptions tune Append and Overwrite. The zero value is usable.
type WriteOptions struct {
	// TargetFileSize is the size at which a data file is rolled; 0 means
	// write.DefaultTargetFileSize.
	TargetFileSize int64
	// Compression is the Parquet codec; empty means snappy.
	Compression string
	// Txn configures the commit. Operation defaults to "WRITE", and the
	// operation parameters to Spark's (mode, partitionBy, predicate).
	Txn TxnOptions
	// AppID and AppVersion, for Append, make the write one batch of an
	// exactly-once application (Spark's txnAppId and txnVersion): the
	// commit carries txn(AppID, AppVersion), and when the table already
	// holds AppID at AppVersion or later nothing is written and Append
	// returns ErrAppVersionCommitted. See write.AppTransaction.
	AppID      string
	AppVersion int64
	// MergeSchema, for Append, is the schema of the batches when it may
	// differ from the table's, as Spark's mergeSchema option: the rows'
	// new columns are added to the table (nullable) in the same commit as
	// the rows; see write.CommitOptions.MergeSchema.
	MergeSchema *schema.StructType
}

// OverwriteOptions tune Overwrite.
type OverwriteOptions struct {
	WriteOptions
	// ReplaceWhere, when set, limits the overwrite to the rows it matches:
	// every new row must satisfy it, and only the rows it matches are
	// removed. Nil replaces the whole table.
	ReplaceWhere expr.Expr
}

// Rows returns batches of one batch holding rows, given row by row in
// table schema order.
func Rows(rows [][]schema.Value) iter.Seq2[RowBatch, error] {
	return func(yield func(RowBatch, error) bool) {
		if len(rows) == 0 {
			return
		}
		n := len(rows[0])
		b := RowBatch{Len: len(rows), Columns: make([][]schema.Value, n)}
		for j := range n {
			b.Columns[j] = make([]schema.Value, len(rows))
		}
		for i, r := range rows {
			if len(r) != n {
				yield(RowBatch{}, fmt.Errorf("row %d has %d values, row 0 has %d: %w", i, len(r), n, write.ErrBatch))
				return
			}
			for j, v := range r {
				b.Columns[j][i] = v
			}
		}
		yield(b, nil)
	}
}

// Append writes the rows of batches as new data files and commits them as
// a blind append (operation WRITE, mode Append), and returns the commit's
// result, after the post-commit work it made due (see Table.PostCommit). Rows are checked before they are written (NOT NULL,
// invariants, CHECK constraints, generated columns): a violation is a
// *ConstraintError and commits nothing. Input without a single row
// commits nothing either and returns ErrNoRows. batches is consumed once: the
// files are written once, against the latest snapshot; if another writer
// commits first, the commit is retried on top of it (txn.Update), unless
// that writer changed the table's schema, properties or protocol, which
// is a conflict (errors.Is ErrConflict). A table whose protocol has a
// writer feature package txn does not support is refused with a
// *FeatureError before anything is written.
func (t *Table) Append(ctx context.Context, batches iter.Seq2[RowBatch, error], opts WriteOptions) (CommitResult, error) {
	snap, err := t.writableSnapshot(ctx)
	if err != nil {
		return CommitResult{}, err
	}
	return t.appendOn(ctx, snap, batches, opts)
}

// AppendOn is Append planned on snap, a snapshot of t the caller has
// loaded already (to shape its rows by snap.Schema(), say), so that the
// append loads no other: the write-support check runs on snap, the files
// are written for it, and the commit lands on top of it or, as for Append,
// of whatever was committed since. A snapshot older than the latest costs
// a conflict check against the commits in between, never a wrong write.
func (t *Table) AppendOn(ctx context.Context, snap *Snapshot, batches iter.Seq2[RowBatch, error], opts WriteOptions) (CommitResult, error) {
	if snap == nil {
		return CommitResult{}, fmt.Errorf("append to %s: a nil snapshot: %w", logstore.RedactURI(t.uri), ErrInvalidArgument)
	}
	if err := writable(snap); err != nil {
		return CommitResult{}, err
	}
	return t.appendOn(ctx, snap, batches, opts)
}

// appendOn is Append planned on snap, a writable snapshot of t.
func (t *Table) appendOn(ctx context.Context, snap *Snapshot, batches iter.Seq2[RowBatch, error], opts WriteOptions) (CommitResult, error) {
	res, err := write.Append(ctx, snap, batches, t.commitOptions(opts, nil))
	if err != nil {
		return CommitResult{}, err
	}
	t.PostCommit(ctx, &res)
	return res, nil
}

// AppendRows is Append of rows given row by row, in table schema order.
func (t *Table) AppendRows(ctx context.Context, rows [][]schema.Value, opts WriteOptions) (CommitResult, error) {
	return t.Append(ctx, Rows(rows), opts)
}

// Overwrite replaces rows of the table with the rows of batches in one
// commit (operation WRITE, mode Overwrite): every row when
// opts.ReplaceWhere is nil, else the rows it matches. Every new row must
// satisfy ReplaceWhere, else a *ConstraintError and nothing is committed.
// With a ReplaceWhere on partition columns only, the files of the matching
// partitions are removed; on data columns, the files that may hold a
// matching row are read, and those that do are removed and their other
// rows written again. The transaction records what it read (the whole
// table, or the predicate and the files), so that a concurrent commit that
// adds or removes rows in that range is a conflict; after a conflict with
// a concurrent change elsewhere the removals are planned again on the new
// version (the new rows are written once). An append-only table is
// ErrAppendOnly.
func (t *Table) Overwrite(ctx context.Context, batches iter.Seq2[RowBatch, error], opts OverwriteOptions) (CommitResult, error) {
	snap, err := t.writableSnapshot(ctx)
	if err != nil {
		return CommitResult{}, err
	}
	return t.overwriteOn(ctx, snap, batches, opts)
}

// overwriteOn is Overwrite planned on snap, a writable snapshot of t.
func (t *Table) overwriteOn(ctx context.Context, snap *Snapshot, batches iter.Seq2[RowBatch, error], opts OverwriteOptions) (CommitResult, error) {
	if opts.AppID != "" {
		return CommitResult{}, fmt.Errorf("overwrite of %s: AppID is for Append only: %w", logstore.RedactURI(t.uri), ErrInvalidArgument)
	}
	res, err := write.Overwrite(ctx, snap, batches, t.commitOptions(opts.WriteOptions, opts.ReplaceWhere))
	if errors.Is(err, ErrAppendOnly) {
		return CommitResult{}, fmt.Errorf("overwrite of %s: %w", logstore.RedactURI(t.uri), err)
	}
	if err != nil {
		return CommitResult{}, err
	}
	t.PostCommit(ctx, &res)
	return res, nil
}

// OverwriteRows is Overwrite of rows given row by row.
func (t *Table) OverwriteRows(ctx context.Context, rows [][]schema.Value, opts OverwriteOptions) (CommitResult, error) {
	return t.Overwrite(ctx, Rows(rows), opts)
}

// writableSnapshot loads the latest snapshot and checks that this library
// can write the table.
func (t *Table) writableSnapshot(ctx context.Context) (*Snapshot, error) {
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	if err := writable(snap); err != nil {
		return nil, err
	}
	return snap, nil
}

// writable checks that this library can write the table snap shows.
func writable(snap *Snapshot) error {
	p, m := snap.Protocol(), snap.Metadata()
	return txn.WriteSupportedChecked(&p, &m)
}

// commitOptions are the options of write.Append and write.Overwrite.
func (t *Table) commitOptions(opts WriteOptions, replaceWhere expr.Expr) write.CommitOptions {
	o := opts.Txn
	if o.EngineInfo == "" {
		o.EngineInfo = EngineInfo
	}
	return write.CommitOptions{
		Options: write.Options{TargetFileSize: opts.TargetFileSize, Compression: opts.Compression,
			Now: opts.Txn.Clock},
		Txn:          o,
		ReplaceWhere: replaceWhere,
		App:          write.AppTransaction{ID: opts.AppID, Version: opts.AppVersion},
		MergeSchema:  opts.MergeSchema,
	}
}

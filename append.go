package delta

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/internal/rowcheck"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/txn"
	"github.com/godelta/delta/write"
)

// RowBatch is a column-major run of logical rows in table schema order, as
// Append and Overwrite take them; see write.Batch.
type RowBatch = write.Batch

// Errors of writing rows; see package write.
var (
	// ErrConstraint is matched by every *ConstraintError.
	ErrConstraint = write.ErrConstraint
	// ErrAppendOnly is returned by Overwrite on a table with
	// delta.appendOnly=true.
	ErrAppendOnly = write.ErrAppendOnly
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
// *ConstraintError and commits nothing. batches is consumed once: the
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
	adds, err := write.Rows(ctx, snap, batches, t.rowOptions(opts, nil))
	if err != nil {
		return CommitResult{}, err
	}
	topts := txnOptions(opts.Txn, snap, "Append", nil)
	res, err := txn.Update(ctx, snap, topts, func(tx *txn.Transaction) error {
		if err := sameTable(snap, tx.Snapshot()); err != nil {
			return err
		}
		tx.Add(slices.Clone(adds)...)
		rowcheck.Mark(tx) // package write checked every row
		return nil
	})
	if err != nil {
		t.dropFiles(err, adds)
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
	if snap.Properties()[write.PropAppendOnly] == "true" {
		return CommitResult{}, fmt.Errorf("overwrite of %s: %w", logstore.RedactURI(t.uri), ErrAppendOnly)
	}
	pred := opts.ReplaceWhere
	// An overwrite that rewrites rows of a table with the change data feed
	// on writes change data: the rows it deletes and the rows it inserts.
	_, changeData, err := write.RewritesRows(snap, pred)
	if err != nil {
		return CommitResult{}, err
	}
	var (
		adds    []actions.Add
		inserts []actions.CDC
	)
	if changeData {
		adds, inserts, err = write.RowsWithChanges(ctx, snap, batches, t.rowOptions(opts.WriteOptions, pred))
	} else {
		adds, err = write.Rows(ctx, snap, batches, t.rowOptions(opts.WriteOptions, pred))
	}
	if err != nil {
		return CommitResult{}, err
	}
	var rewritten []actions.Add // files of the attempt that is running
	topts := txnOptions(opts.Txn, snap, "Overwrite", pred)
	res, err := txn.Update(ctx, snap, topts, func(tx *txn.Transaction) error {
		if len(rewritten) > 0 { // a previous attempt's rewrites: orphans now
			t.dropFiles(nil, rewritten)
			rewritten = nil
		}
		// sameTable also keeps changeData true to the table: the
		// configuration did not change.
		if err := sameTable(snap, tx.Snapshot()); err != nil {
			return err
		}
		r, err := write.Replace(ctx, tx.Snapshot(), pred, t.rowOptions(opts.WriteOptions, nil))
		if err != nil {
			return err
		}
		rewritten = append(r.Adds, cdcFiles(r.CDC)...)
		if pred == nil {
			tx.ReadWholeTable()
		} else {
			tx.ReadPredicate(pred)
			tx.ReadFiles(r.Read...)
		}
		tx.Remove(r.Removes...)
		tx.Add(slices.Clone(adds)...)
		tx.Add(slices.Clone(r.Adds)...)
		if changeData {
			tx.AddCDC(slices.Clone(inserts)...)
			tx.AddCDC(r.CDC...)
		}
		rowcheck.Mark(tx) // package write checked every row
		return nil
	})
	if err != nil {
		t.dropFiles(err, slices.Concat(adds, cdcFiles(inserts), rewritten))
		return CommitResult{}, err
	}
	t.PostCommit(ctx, &res)
	return res, nil
}

// cdcFiles returns the files of cdc actions as adds, for dropFiles.
func cdcFiles(cdcs []actions.CDC) []actions.Add {
	out := make([]actions.Add, len(cdcs))
	for i, c := range cdcs {
		out[i] = actions.Add{Path: c.Path}
	}
	return out
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
	p, m := snap.Protocol(), snap.Metadata()
	if err := txn.WriteSupportedChecked(&p, &m); err != nil {
		return nil, err
	}
	return snap, nil
}

func (t *Table) rowOptions(opts WriteOptions, require expr.Expr) write.Options {
	return write.Options{TargetFileSize: opts.TargetFileSize, Compression: opts.Compression, Require: require, Now: opts.Txn.Clock}
}

// dropFiles deletes data files that no commit names, best effort, unless
// err says the commit may have landed.
func (t *Table) dropFiles(err error, adds []actions.Add) {
	if errors.Is(err, txn.ErrCommitUnknown) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, a := range adds {
		_ = t.store.Delete(ctx, CanonicalPath(a.Path))
	}
}

// txnOptions fills in the operation and Spark's operation parameters.
func txnOptions(o TxnOptions, snap *Snapshot, mode string, pred expr.Expr) TxnOptions {
	if o.Operation == "" {
		o.Operation = "WRITE"
	}
	if o.OperationParameters == nil {
		parts, _ := json.Marshal(snap.Metadata().PartitionColumns)
		o.OperationParameters = map[string]any{"mode": mode, "partitionBy": string(parts)}
		if pred != nil {
			p, _ := json.Marshal([]string{pred.String()})
			o.OperationParameters["predicate"] = string(p)
		}
	}
	if o.EngineInfo == "" {
		o.EngineInfo = EngineInfo
	}
	return o
}

// sameTable fails, as a conflict, when the snapshot a transaction runs on
// has another protocol, schema, partitioning or configuration than the one
// the data files were written for.
func sameTable(wrote, now *snapshot.Snapshot) error {
	if wrote.Version() == now.Version() {
		return nil
	}
	a, b := wrote.Metadata(), now.Metadata()
	pa, pb := wrote.Protocol(), now.Protocol()
	if a.ID != b.ID || a.SchemaString != b.SchemaString || !slices.Equal(a.PartitionColumns, b.PartitionColumns) ||
		!maps.Equal(a.Configuration, b.Configuration) || pa.MinReaderVersion != pb.MinReaderVersion ||
		pa.MinWriterVersion != pb.MinWriterVersion || !slices.Equal(pa.ReaderFeatures, pb.ReaderFeatures) ||
		!slices.Equal(pa.WriterFeatures, pb.WriterFeatures) {
		return fmt.Errorf("the table's metadata or protocol changed at or before version %d, after the data files were written for version %d: %w",
			now.Version(), wrote.Version(), txn.ErrConflict)
	}
	return nil
}

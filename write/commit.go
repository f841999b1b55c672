package write

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/internal/rowcheck"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/txn"
)

// CommitOptions tune Append and Overwrite. The zero value is usable.
type CommitOptions struct {
	// Options tune the rows written. Its Require is set by Overwrite from
	// ReplaceWhere.
	Options
	// Txn configures the commit. Operation defaults to "WRITE", and the
	// operation parameters to Spark's (mode, partitionBy, predicate).
	Txn txn.Options
	// ReplaceWhere, for Overwrite, limits the overwrite to the rows it
	// matches: every new row must satisfy it, and only the rows it matches
	// are removed. Nil replaces the whole table.
	ReplaceWhere expr.Expr
	// App, when its ID is set, makes an Append an exactly-once write of
	// that application: see AppTransaction.
	App AppTransaction
	// MergeSchema, for Append, is the schema of the batches when it may
	// differ from the table's (Spark's mergeSchema): batches hold its
	// columns in its order; columns the table lacks are added to it
	// (nullable, at the end of their struct, with column ids under column
	// mapping), in the same commit as the rows; table columns the batches
	// lack are written null; a column of another type is
	// ErrSchemaMismatch, unless the table has type widening on and the
	// rows' type widens the column's, which then widens as Spark's
	// mergeSchema widens it. See MergeSchemas.
	MergeSchema *schema.StructType
}

// AppTransaction names one batch of an application that writes each batch
// exactly once (a streaming producer). Append stages txn(ID, Version) in
// the same commit as the batch's files, so that the batch and the record
// that it was written land together or not at all. Before writing, and
// again inside every attempt of the commit (with txn.Transaction.TxnVersion,
// which makes a concurrent commit for the same ID a conflict, retried on the
// new snapshot), Append asks the table for the application's last version:
// when it is Version or later, the batch was committed before and Append
// returns ErrAppVersionCommitted, having committed nothing.
//
// Versions of an application must increase; a txn older than the table's
// delta.setTransactionRetentionDuration counts as absent (see
// snapshot.TxnVersion).
type AppTransaction struct {
	// ID identifies the application; empty means none.
	ID string
	// Version is the batch's version, at least 0.
	Version int64
}

// committed reports whether the application already committed app.Version
// in the table tx reads; it records the read in tx.
func (app AppTransaction) committed(ctx context.Context, tx *txn.Transaction) (bool, error) {
	v, ok, err := tx.TxnVersion(ctx, app.ID)
	if err != nil {
		return false, err
	}
	return ok && v >= app.Version, nil
}

// Append writes the rows of batches as new data files of the table snap
// shows, and commits them as a blind append (operation WRITE, mode Append)
// on top of snap or of whatever was committed since (txn.Update), returning
// its result (the caller runs the post-commit work). batches is consumed once: the files are written once.
// A concurrent commit that changed the table's schema, properties or
// protocol is a conflict (txn.ErrConflict). On failure the files written
// are deleted, unless the commit's outcome is unknown. Batches without a
// single row commit nothing and return ErrNoRows.
func Append(ctx context.Context, snap *snapshot.Snapshot, batches iter.Seq2[Batch, error], opts CommitOptions) (txn.CommitResult, error) {
	app := opts.App
	if app.ID != "" {
		if app.Version < 0 {
			return txn.CommitResult{}, fmt.Errorf("write: application %q version %d is negative: %w", app.ID, app.Version, deltaerr.ErrInvalidArgument)
		}
		v, ok, err := snap.TxnVersion(ctx, app.ID)
		if err != nil {
			return txn.CommitResult{}, err
		}
		if ok && v >= app.Version {
			return txn.CommitResult{}, fmt.Errorf("application %q version %d: %w", app.ID, app.Version, ErrAppVersionCommitted)
		}
	}
	var merged mergedAppend
	rowOpts := opts.Options
	if opts.MergeSchema != nil {
		var err error
		if merged, err = planMergedAppend(snap, batches, opts); err != nil {
			return txn.CommitResult{}, err
		}
		batches, rowOpts = merged.batches, merged.opts
	}
	written, err := writeRows(ctx, snap, batches, rowOpts, false)
	if err != nil {
		return txn.CommitResult{}, err
	}
	if len(written.adds) == 0 {
		return txn.CommitResult{}, ErrNoRows
	}
	res, err := commitAppend(ctx, snap, &written, rowOpts, opts, merged)
	if err != nil {
		dropFiles(snap, err, written.adds)
		return txn.CommitResult{}, err
	}
	return res, nil
}

// AppendFiles is the commit half of Append, for a writer that writes its
// data files in one place and commits them in another (a distributed
// write: workers call Rows, one step commits what they all wrote). It
// commits adds as a blind append on top of snap, the snapshot the files
// were written for, or of whatever was committed since, exactly as Append
// does: the same operation, metrics and conflict rules (a concurrent
// change of schema, properties or protocol is a conflict), and with
// opts.App the same exactly-once rule, checked inside every attempt of the
// commit (ErrAppVersionCommitted when the application's version is
// already in the table). Only opts.Txn and opts.App are used;
// MergeSchema is refused (deltaerr.ErrInvalidArgument), and no adds is
// ErrNoRows. A table with an identity column is refused
// (deltaerr.ErrUnsupportedFeature): writers that each called Rows would
// each have allocated values from the same high-water mark.
//
// The caller vouches that every add was returned by Rows for a snapshot
// of this table with snap's metadata: a commit cannot see rows, so the
// constraints, invariants and generated columns Rows checked are taken as
// checked. Unlike Append, AppendFiles never deletes a file, on any error:
// the adds may already be committed by an earlier call (a committer that
// ran again after its commit landed), and the caller decides what is an
// orphan. The caller runs the post-commit work (txn.PostCommit).
func AppendFiles(ctx context.Context, snap *snapshot.Snapshot, adds []actions.Add, opts CommitOptions) (txn.CommitResult, error) {
	if opts.MergeSchema != nil {
		return txn.CommitResult{}, fmt.Errorf("write: AppendFiles cannot merge schemas: %w", deltaerr.ErrInvalidArgument)
	}
	app := opts.App
	if app.ID != "" && app.Version < 0 {
		return txn.CommitResult{}, fmt.Errorf("write: application %q version %d is negative: %w", app.ID, app.Version, deltaerr.ErrInvalidArgument)
	}
	for i := range snap.Schema().Fields {
		if f := &snap.Schema().Fields[i]; f.IsIdentity() {
			return txn.CommitResult{}, &deltaerr.FeatureError{Feature: "identity column " + f.Name + " in files written by separate writers (AppendFiles)", Op: "write"}
		}
	}
	if len(adds) == 0 {
		return txn.CommitResult{}, ErrNoRows
	}
	written := rowsOut{adds: adds}
	return commitAppend(ctx, snap, &written, opts.Options, opts, mergedAppend{})
}

// commitAppend commits the files of written, written for snap, as Append
// does, with the schema changes of merged; it deletes nothing but the
// files of rows it writes again (rowsOut.current).
func commitAppend(ctx context.Context, snap *snapshot.Snapshot, written *rowsOut, rowOpts Options, opts CommitOptions, merged mergedAppend) (txn.CommitResult, error) {
	app := opts.App
	topts := txnOptions(opts.Txn, snap, "Append", nil, opts.MergeSchema != nil)
	topts.IdentityOnlyMetadata = !merged.evolved // the marks, if any
	if topts.OperationMetrics == nil {
		topts.OperationMetrics = writeMetrics(topts.Operation, nil, written.adds, nil, 0)
	}
	return txn.Update(ctx, snap, topts, func(tx *txn.Transaction) error {
		if err := sameTable(snap, tx.Snapshot()); err != nil {
			return err
		}
		if err := written.current(ctx, tx.Snapshot(), rowOpts); err != nil {
			return err
		}
		if err := stageMetadata(tx, merged, snap, written.marks); err != nil {
			return err
		}
		if app.ID != "" {
			done, err := app.committed(ctx, tx)
			if err != nil {
				return err
			}
			if done {
				return fmt.Errorf("application %q version %d: %w", app.ID, app.Version, ErrAppVersionCommitted)
			}
			tx.SetTransaction(app.ID, app.Version)
		}
		tx.Add(slices.Clone(written.adds)...)
		if opts.Txn.OperationMetrics == nil { // the files of this attempt
			tx.SetOperationMetrics(writeMetrics(topts.Operation, nil, written.adds, nil, 0))
		}
		rowcheck.Mark(tx) // Rows checked every row
		return nil
	})
}

// current makes the rows of o fit the table now shows: when their
// identity values were allocated from other high-water marks (a
// concurrent writer allocated values too, after the rows were written),
// it writes them again with values allocated from now's marks
// (reallocate), so that no two commits ever hold the same value. The
// conflict checks of txn make the winner's marks visible here: its
// metaData action conflicts, and txn.Update runs the attempt again on
// the new version.
func (o *rowsOut) current(ctx context.Context, now *snapshot.Snapshot, opts Options) error {
	if !o.stale(now) {
		return nil
	}
	n, err := o.reallocate(ctx, now, opts)
	if err != nil {
		return err
	}
	*o = n
	return nil
}

// stageMetadata stages the metadata an append or overwrite commits: the
// evolved one of a merged schema (and its protocol), and the high-water
// marks of the identity values the rows got, moved forward from those of
// the snapshot the commit lands on.
func stageMetadata(tx *txn.Transaction, merged mergedAppend, snap *snapshot.Snapshot, marks HighWaterMarks) error {
	now := tx.Snapshot()
	m := now.Metadata()
	changed := false
	if merged.evolved {
		// The new columns land in the same commit as the rows.
		if !SameProtocol(snap.Protocol(), merged.protocol) {
			tx.SetProtocol(merged.protocol)
		}
		// A concurrent commit may have moved the marks (sameTable
		// allows it): never lower them.
		var err error
		if m, _, err = withHighWaterMarks(merged.metadata, currentMarks(now)); err != nil {
			return err
		}
		changed = true
	}
	m, moved, err := withHighWaterMarks(m, marks)
	if err != nil {
		return err
	}
	if changed || moved {
		tx.SetMetadata(m)
	}
	return nil
}

// Overwrite replaces rows of the table snap shows with the rows of batches
// in one commit (operation WRITE, mode Overwrite): every row when
// opts.ReplaceWhere is nil, else the rows it matches (see Replace). Every
// new row must satisfy ReplaceWhere, else a *ConstraintError and nothing is
// committed. The transaction records what it read (the whole table, or the
// predicate and the files), so that a concurrent commit that adds or
// removes rows in that range is a conflict; after a conflict with a
// concurrent change elsewhere the removals are planned again on the new
// version (the new rows are written once). On a table with the change data
// feed on, an overwrite that rewrites rows writes the change data of the
// rows it deletes and inserts. An append-only table is ErrAppendOnly.
func Overwrite(ctx context.Context, snap *snapshot.Snapshot, batches iter.Seq2[Batch, error], opts CommitOptions) (txn.CommitResult, error) {
	if snap.Config().AppendOnly() {
		return txn.CommitResult{}, ErrAppendOnly
	}
	pred := opts.ReplaceWhere
	// An overwrite that rewrites rows of a table with the change data feed
	// on writes change data: the rows it deletes and the rows it inserts.
	_, changeData, err := RewritesRows(snap, pred)
	if err != nil {
		return txn.CommitResult{}, err
	}
	rowOpts := opts.Options
	rowOpts.Require = pred
	written, err := writeRows(ctx, snap, batches, rowOpts, changeData)
	if err != nil {
		return txn.CommitResult{}, err
	}
	var rewritten []actions.Add // files of the attempt that is running
	topts := txnOptions(opts.Txn, snap, "Overwrite", pred, false)
	topts.IdentityOnlyMetadata = true // the marks, if any
	res, err := txn.Update(ctx, snap, topts, func(tx *txn.Transaction) error {
		if len(rewritten) > 0 { // a previous attempt's rewrites: orphans now
			dropFiles(snap, nil, rewritten)
			rewritten = nil
		}
		// sameTable also keeps changeData true to the table: the
		// configuration did not change.
		if err := sameTable(snap, tx.Snapshot()); err != nil {
			return err
		}
		if err := written.current(ctx, tx.Snapshot(), rowOpts); err != nil {
			return err
		}
		if err := stageMetadata(tx, mergedAppend{}, snap, written.marks); err != nil {
			return err
		}
		adds, inserts := written.adds, written.cdcs
		r, err := replace(ctx, tx.Snapshot(), pred, opts.Options)
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
		if opts.Txn.OperationMetrics == nil {
			tx.SetOperationMetrics(writeMetrics(topts.Operation, pred, adds, &r, len(inserts)))
		}
		rowcheck.Mark(tx) // Rows and Rewrite checked every row
		return nil
	})
	if err != nil {
		dropFiles(snap, err, slices.Concat(written.adds, cdcFiles(written.cdcs), rewritten))
		return txn.CommitResult{}, err
	}
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

// dropFiles deletes data files of snap's table that no commit names, best
// effort, unless err says the commit may have landed.
func dropFiles(snap *snapshot.Snapshot, err error, adds []actions.Add) {
	if errors.Is(err, txn.ErrCommitUnknown) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, a := range adds {
		if key, err := snap.Location().Key(a.Path); err == nil {
			_ = snap.Store().Delete(ctx, key)
		}
	}
}

// txnOptions fills in the operation and Spark's operation parameters
// (DeltaOperations.Write.parameters): mode, partitionBy, the replaceWhere
// predicate as its text (Spark records options.replaceWhere as given, not
// as a list), canMergeSchema when the schema may be merged.
func txnOptions(o txn.Options, snap *snapshot.Snapshot, mode string, pred expr.Expr, canMergeSchema bool) txn.Options {
	// An overwrite copies rows only through Rewrite (replaceWhere), which
	// keeps their identities.
	o.RowTrackingPreserved = true
	if o.Operation == "" {
		o.Operation = "WRITE"
	}
	if o.OperationParameters == nil {
		parts, _ := actions.EncodeJSON(snap.Metadata().PartitionColumns)
		o.OperationParameters = map[string]any{"mode": mode, "partitionBy": string(parts)}
		if pred != nil {
			o.OperationParameters["predicate"] = pred.String()
		}
		if canMergeSchema {
			o.OperationParameters["canMergeSchema"] = true
		}
	}
	return o
}

// writeMetrics are the operationMetrics Spark records for op, a write of
// adds (and, for an overwrite, of the rewrite r with changeFiles change
// data files of the new rows), or nil for an operation whose metrics are
// not known here. WRITE: DeltaOperationMetrics.WRITE (numFiles,
// numOutputBytes, numOutputRows, counting the rows a replaceWhere copies);
// an overwrite adds OVERWRITE_REMOVES (numRemovedFiles, numRemovedBytes),
// a replaceWhere has WRITE_REPLACE_WHERE, filtered as Write.transformMetrics
// does: no row counts where they are not known. STREAMING UPDATE:
// DeltaOperationMetrics.STREAMING_UPDATE. Values are decimal strings.
func writeMetrics(op string, pred expr.Expr, adds []actions.Add, r *Rewritten, changeFiles int) map[string]any {
	var files, bytes, rows, removed, removedBytes int64
	rowsKnown := true
	count := func(as []actions.Add) {
		for _, a := range as {
			files++
			bytes += a.Size
			n, ok := numRecords(a.Stats)
			rows += n
			rowsKnown = rowsKnown && ok
		}
	}
	count(adds)
	if r != nil {
		count(r.Adds)
		for _, rm := range r.Removes {
			removed++
			if rm.Size != nil {
				removedBytes += *rm.Size
			}
		}
	}
	d := func(n int64) string { return fmt.Sprint(n) }
	var m map[string]any
	switch op {
	case "WRITE":
		m = map[string]any{"numFiles": d(files), "numOutputBytes": d(bytes), "numOutputRows": d(rows)}
		if r != nil {
			m["numRemovedFiles"], m["numRemovedBytes"] = d(removed), d(removedBytes)
		}
		if r != nil && pred != nil {
			m["numAddedChangeFiles"] = d(int64(changeFiles + len(r.CDC)))
			m["numDeletedRows"], m["numCopiedRows"] = d(r.Dropped), d(r.Copied)
			for _, rm := range r.Removes {
				if _, ok := numRecords(rm.Stats); !ok {
					rowsKnown = false
				}
			}
			if r.Dropped == 0 && removed != 0 {
				delete(m, "numDeletedRows")
				delete(m, "numCopiedRows")
			}
			if !rowsKnown || rows == 0 {
				delete(m, "numDeletedRows")
				delete(m, "numCopiedRows")
				delete(m, "numOutputRows")
			}
		} else if !rowsKnown {
			delete(m, "numOutputRows")
		}
	case "STREAMING UPDATE":
		m = map[string]any{"numAddedFiles": d(files), "numRemovedFiles": d(removed), "numOutputBytes": d(bytes), "numOutputRows": d(rows)}
		if !rowsKnown {
			delete(m, "numOutputRows")
		}
	}
	return m
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
	// Identity high-water marks move with every write that allocates
	// values: such a commit changes nothing the files were written for
	// (rows that got values are allocated them again, see
	// rowsOut.current).
	if a.ID != b.ID || !schema.SameButHighWaterMarks(a.SchemaString, b.SchemaString) || !slices.Equal(a.PartitionColumns, b.PartitionColumns) ||
		!maps.Equal(a.Configuration, b.Configuration) || pa.MinReaderVersion != pb.MinReaderVersion ||
		pa.MinWriterVersion != pb.MinWriterVersion || !slices.Equal(pa.ReaderFeatures, pb.ReaderFeatures) ||
		!slices.Equal(pa.WriterFeatures, pb.WriterFeatures) {
		return fmt.Errorf("write: the table's metadata or protocol changed at or before version %d, after the data files were written for version %d: %w",
			now.Version(), wrote.Version(), txn.ErrConflict)
	}
	return nil
}

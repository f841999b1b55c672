package delta

import (
	"context"

	"github.com/godelta/delta/txn"
)

// Committing to a table; see package txn.
type (
	// Transaction stages actions against one snapshot and commits them as
	// the next version, checking for conflicts with concurrent writers.
	Transaction = txn.Transaction
	// TxnOptions configure a transaction: isolation level, operation name
	// and parameters for commitInfo, retries.
	TxnOptions = txn.Options
	// ConflictError says which concurrent commit a transaction conflicted
	// with, and how.
	ConflictError = txn.ConflictError
)

// What a commit returns; see package txn.
type (
	// CommitResult is what a landed commit returns: its version,
	// timestamp, attempts, and the post-commit work it made due.
	CommitResult = txn.CommitResult
	// PostCommitWork is the maintenance a commit made due (a checkpoint,
	// then log cleanup), and, once it ran, how it went.
	PostCommitWork = txn.PostCommitWork
)

// ErrConflict is matched by every *ConflictError.
var ErrConflict = txn.ErrConflict

// Begin starts a transaction on the table's latest version. It is the
// lower-level write path for programs that write their own Parquet files:
// put the files under the table root, stage add actions for them (with
// stats), Commit, then run the post-commit work with PostCommit.
//
//	tx, err := t.Begin(ctx, delta.TxnOptions{Operation: "WRITE"})
//	tx.Add(actions.Add{Path: "part-0001.parquet", Size: n, DataChange: true, Stats: stats})
//	res, err := tx.Commit(ctx)
//	t.PostCommit(ctx, &res) // the checkpoint due every delta.checkpointInterval versions
//
// A table that uses invariants, CHECK constraints or generated columns is
// refused (a *FeatureError): a transaction cannot see the rows of the
// files it stages; Append and Overwrite check them.
func (t *Table) Begin(ctx context.Context, opts TxnOptions) (*Transaction, error) {
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	if err := txn.WriteSupported(new(snap.Protocol()), new(snap.Metadata())); err != nil {
		return nil, err
	}
	return txn.Begin(snap, opts), nil
}

// Update runs fn in a transaction on the latest version and commits it;
// after a conflict it loads the newer version and runs fn again, so fn may
// run more than once and must stage everything anew each time. It returns
// the commit's result after running the post-commit work (PostCommit).
func (t *Table) Update(ctx context.Context, opts TxnOptions, fn func(*Transaction) error) (CommitResult, error) {
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return CommitResult{}, err
	}
	res, err := txn.Update(ctx, snap, opts, fn)
	if err != nil {
		return CommitResult{}, err
	}
	t.PostCommit(ctx, &res)
	return res, nil
}

// PostCommit runs the post-commit chain of a commit to the table (see
// txn.PostCommit) and records in res.PostCommit how it went: after every
// commit the version checksum _delta_log/<v>.crc (package checksum);
// every delta.checkpointInterval versions (default 10) a checkpoint, then the
// deletion of the log files older than delta.logRetentionDuration that no
// retained version needs (unless delta.enableExpiredLogCleanup is false);
// on a table with delta.autoOptimize.autoCompact on, after a commit that
// wrote rows, an OPTIMIZE of the partitions it wrote once they hold
// enough small files (see package optimize, res.PostCommit.AutoCompacted);
// on a table with UniForm Iceberg on, the Iceberg metadata of the new
// version (see SyncIceberg). Every entry point that commits (Append,
// Overwrite, Update, DML, OPTIMIZE, RESTORE, CLONE, ALTER, streams,
// VACUUM) runs the same chain; a program that commits a transaction of
// Begin calls it after Commit. A failure is logged and left in
// res.PostCommit: the commit stands.
func (t *Table) PostCommit(ctx context.Context, res *CommitResult) {
	txn.PostCommit(ctx, res)
}

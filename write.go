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

// ErrConflict is matched by every *ConflictError.
var ErrConflict = txn.ErrConflict

// Begin starts a transaction on the table's latest version. It is the
// lower-level write path for programs that write their own Parquet files:
// put the files under the table root, stage add actions for them (with
// stats), and Commit.
//
//	tx, err := t.Begin(ctx, delta.TxnOptions{Operation: "WRITE"})
//	tx.Add(actions.Add{Path: "part-0001.parquet", Size: n, DataChange: true, Stats: stats})
//	version, err := tx.Commit(ctx)
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
// run more than once and must stage everything anew each time.
func (t *Table) Update(ctx context.Context, opts TxnOptions, fn func(*Transaction) error) (int64, error) {
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return 0, err
	}
	return txn.Update(ctx, snap, opts, fn)
}

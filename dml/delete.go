package dml

import (
	"context"
	"time"

	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/write"
)

// Delete deletes the rows of the table snap shows that pred matches
// (TRUE; nil deletes every row) and commits, as SQL DELETE FROM t WHERE
// pred: operation DELETE, operationParameters {"predicate": "[...]"},
// Spark's DELETE metrics. Files whose partition values alone make pred
// true are removed without being read; the others that may hold a
// matching row (after partition and statistics skipping) are rewritten
// with the table's strategy (see the package doc). A table with the
// change data feed on gets the deleted rows as delete change data.
//
// Nothing matched: nothing is committed (Result.Committed false).
// Errors: ErrInvalid for a predicate naming no column of the table,
// write.ErrAppendOnly, a *txn.ConflictError, and storage errors.
func Delete(ctx context.Context, snap *snapshot.Snapshot, pred expr.Expr, opts Options) (Result, error) {
	if err := checkPredicate(snap.Schema(), pred); err != nil {
		return Result{}, err
	}
	start := time.Now()
	op := deleteOp(pred)
	op.Plan = func(ctx context.Context, snap *snapshot.Snapshot, s Strategy) (*Plan, error) {
		j, err := planDelete(ctx, snap, pred, opts, op, s, start)
		if err != nil {
			return nil, err
		}
		return j.whole(ctx)
	}
	return Run(ctx, snap, op, opts)
}

// rewrites reports whether a DELETE by pred reads rows (pred names a data
// column), rather than removing whole files.
func rewrites(snap *snapshot.Snapshot, pred expr.Expr) bool {
	r, _, err := write.RewritesRows(snap, pred)
	return r || err != nil
}

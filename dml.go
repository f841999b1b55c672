package delta

import (
	"context"
	"fmt"

	"github.com/godelta/delta/dml"
	"github.com/godelta/delta/expr"
)

// Changing rows in place; see package dml.
type (
	// DMLOptions tune Delete and UpdateRows: the strategy (the table's
	// by default), the files written, the commit, and whether to plan
	// again after a conflict.
	DMLOptions = dml.Options
	// DMLResult is what a DELETE or UPDATE did: whether it committed,
	// the commit, its metrics and the strategy used.
	DMLResult = dml.Result
	// DMLMetrics are the figures Spark records for DML in
	// commitInfo.operationMetrics.
	DMLMetrics = dml.Metrics
	// Assignment is one "column = value" of an UPDATE.
	Assignment = dml.Assignment
	// DMLStrategy is how DML removes rows from files: copy-on-write, or
	// merge-on-read with deletion vectors.
	DMLStrategy = dml.Strategy
)

// DML strategies: the table's (delta.enableDeletionVectors), or forced.
const (
	StrategyAuto        = dml.Auto
	StrategyCopyOnWrite = dml.CopyOnWrite
	StrategyMergeOnRead = dml.MergeOnRead
)

// ParseAssignments parses an UPDATE's SET clause, "c = expr[, d = expr]".
func ParseAssignments(text string) ([]Assignment, error) { return dml.ParseAssignments(text) }

// Delete deletes the rows where matches (SQL DELETE FROM t WHERE where)
// and commits, then runs the post-commit work. where is a predicate in
// the expression language (see ParsePredicate); "" deletes every row. The
// table's strategy applies: with delta.enableDeletionVectors the rows are
// marked in deletion vectors, else the files holding them are rewritten
// without them. See dml.Delete for the details and errors; a conflict with
// a concurrent writer is a *ConflictError (errors.Is ErrConflict).
func (t *Table) Delete(ctx context.Context, where string, opts DMLOptions) (DMLResult, error) {
	pred, err := parseWhere(where)
	if err != nil {
		return DMLResult{}, err
	}
	return t.DeleteExpr(ctx, pred, opts)
}

// DeleteExpr is Delete with a parsed predicate; nil deletes every row.
func (t *Table) DeleteExpr(ctx context.Context, pred expr.Expr, opts DMLOptions) (DMLResult, error) {
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return DMLResult{}, err
	}
	res, err := dml.Delete(ctx, snap, pred, t.dmlOptions(opts))
	return t.afterDML(ctx, res, err)
}

// UpdateRows sets columns in the rows where matches (SQL UPDATE t SET set
// WHERE where) and commits, then runs the post-commit work. set is
// "c = expr[, d = expr]"; where is a predicate, "" for every row. Values
// are computed from the row before the update, with SQL null semantics,
// and cast to their column's type; constraints and generated columns are
// enforced on every row written. See dml.Update.
//
// It is not named Update: Table.Update is the transaction runner (a
// function staging actions, retried on conflict), a different thing.
func (t *Table) UpdateRows(ctx context.Context, set, where string, opts DMLOptions) (DMLResult, error) {
	as, err := dml.ParseAssignments(set)
	if err != nil {
		return DMLResult{}, err
	}
	pred, err := parseWhere(where)
	if err != nil {
		return DMLResult{}, err
	}
	return t.UpdateRowsExpr(ctx, as, pred, opts)
}

// UpdateRowsExpr is UpdateRows with parsed assignments and predicate; a
// nil predicate updates every row.
func (t *Table) UpdateRowsExpr(ctx context.Context, set []Assignment, pred expr.Expr, opts DMLOptions) (DMLResult, error) {
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return DMLResult{}, err
	}
	res, err := dml.Update(ctx, snap, set, pred, t.dmlOptions(opts))
	return t.afterDML(ctx, res, err)
}

// parseWhere parses a predicate; "" is nil, every row.
func parseWhere(where string) (expr.Expr, error) {
	if where == "" {
		return nil, nil
	}
	pred, err := expr.Parse(where)
	if err != nil {
		return nil, fmt.Errorf("where %q: %w", where, err)
	}
	return pred, nil
}

// dmlOptions fills in the engine.
func (t *Table) dmlOptions(opts DMLOptions) DMLOptions {
	if opts.Txn.EngineInfo == "" {
		opts.Txn.EngineInfo = EngineInfo
	}
	return opts
}

// afterDML runs the post-commit work of a DML commit.
func (t *Table) afterDML(ctx context.Context, res DMLResult, err error) (DMLResult, error) {
	if err != nil {
		return DMLResult{}, err
	}
	if res.Committed {
		t.PostCommit(ctx, &res.Commit)
	}
	return res, nil
}

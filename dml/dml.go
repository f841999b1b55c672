package dml

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/internal/dv"
	"github.com/godelta/delta/internal/rowcheck"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/txn"
	"github.com/godelta/delta/write"
)

// ErrInvalid is matched by errors of DML input: a predicate or an
// assignment that names no column of the table, an assignment that does
// not parse or sets a column twice, a value that cannot be cast to its
// column's type. It matches deltaerr.ErrInvalidArgument; its text is not
// repeated in messages that say what was wrong (deltaerr.Mark).
var ErrInvalid = deltaerr.Mark(errors.New("invalid operation"), deltaerr.ErrInvalidArgument)

// Strategy is how an operation removes rows from the files it touches.
type Strategy uint8

// The strategies.
const (
	// Auto is the table's choice, as Spark makes it: MergeOnRead when
	// tableconfig.Config.DeletionVectors (delta.enableDeletionVectors on a
	// protocol that supports them), else CopyOnWrite.
	Auto Strategy = iota
	// CopyOnWrite rewrites each touched file without the deleted rows.
	CopyOnWrite
	// MergeOnRead marks deleted rows in the file's deletion vector.
	MergeOnRead
)

func (s Strategy) String() string {
	switch s {
	case CopyOnWrite:
		return "copy-on-write"
	case MergeOnRead:
		return "merge-on-read"
	}
	return "auto"
}

// strategyFor resolves s for the table snap shows: Auto becomes the
// table's choice; MergeOnRead on a table whose protocol does not support
// deletion vectors is refused by the rewrite (write.ErrDVMode).
func strategyFor(snap *snapshot.Snapshot, s Strategy) Strategy {
	if s != Auto {
		return s
	}
	if snap.Config().DeletionVectors() {
		return MergeOnRead
	}
	return CopyOnWrite
}

// Options tune a DML operation. The zero value is usable.
type Options struct {
	// Options tune the files written (size, compression).
	write.Options
	// Strategy overrides the table's choice of strategy; Auto keeps it.
	Strategy Strategy
	// InlineDVMax is write.RewriteOptions.InlineDVMax.
	InlineDVMax int
	// Txn configures the commit (isolation level, engine info, user
	// metadata, retries). Its Operation and OperationParameters are
	// the operation's, as Spark writes them, unless set.
	Txn txn.Options
	// ConflictRetries is how many times an operation that meets a
	// conflict is planned again on the table's new version and tried
	// again. 0, the default, returns the conflict, as Spark does.
	ConflictRetries int
}

// Metrics are the figures of a DML operation, as Spark records them in
// commitInfo.operationMetrics (see Map for the names).
type Metrics struct {
	// Rows: deleted, updated, and copied (kept rows that a copy-on-write
	// rewrite wrote again).
	NumDeletedRows, NumUpdatedRows, NumCopiedRows int64
	// NumAddedFiles are the new data files; NumRemovedFiles the files
	// gone from the table (a file re-added under a new deletion vector is
	// neither). The bytes are theirs.
	NumAddedFiles, NumRemovedFiles, NumAddedBytes, NumRemovedBytes int64
	// NumAddedChangeFiles are the change-data files, of ChangeFileBytes.
	NumAddedChangeFiles, ChangeFileBytes int64
	// Deletion vectors (see write.Rewritten): added to files that had
	// none, updated, removed with their file. DVBytes is the size of the
	// deletion vector file written.
	NumDeletionVectorsAdded, NumDeletionVectorsUpdated, NumDeletionVectorsRemoved, DVBytes int64
	// Times, in milliseconds: the whole operation, finding the files
	// (scanning), and rewriting them.
	ExecutionTimeMs, ScanTimeMs, RewriteTimeMs int64
	// NumFilesRead is the number of candidate files read.
	NumFilesRead int64
}

// Map returns the metrics as commitInfo.operationMetrics holds them for
// operation op ("DELETE", "UPDATE"): Spark's names, every value a decimal
// string, as Spark writes them.
func (m *Metrics) Map(op string) map[string]any {
	out := map[string]any{
		"numRemovedFiles":           m.NumRemovedFiles,
		"numRemovedBytes":           m.NumRemovedBytes,
		"numCopiedRows":             m.NumCopiedRows,
		"numDeletionVectorsAdded":   m.NumDeletionVectorsAdded,
		"numDeletionVectorsRemoved": m.NumDeletionVectorsRemoved,
		"numDeletionVectorsUpdated": m.NumDeletionVectorsUpdated,
		"numAddedChangeFiles":       m.NumAddedChangeFiles,
		"executionTimeMs":           m.ExecutionTimeMs,
		"scanTimeMs":                m.ScanTimeMs,
		"rewriteTimeMs":             m.RewriteTimeMs,
		"numAddedFiles":             m.NumAddedFiles,
		"numAddedBytes":             m.NumAddedBytes,
	}
	switch op {
	case OpDelete:
		out["numDeletedRows"] = m.NumDeletedRows
	case OpUpdate:
		// DeltaOperationMetrics.UPDATE has no numTouchedRows and no
		// changeFileBytes: Spark's transformMetrics filters them out.
		out["numUpdatedRows"] = m.NumUpdatedRows
	default:
		out["numDeletedRows"] = m.NumDeletedRows
		out["numUpdatedRows"] = m.NumUpdatedRows
	}
	for k, v := range out {
		out[k] = strconv.FormatInt(v.(int64), 10)
	}
	return out
}

// Operation names, as commitInfo.operation records them.
const (
	OpDelete = "DELETE"
	OpUpdate = "UPDATE"
)

// Result is what a DML operation did.
type Result struct {
	// Committed is false when the operation changed nothing (no row
	// matched): then nothing was committed, as Spark commits nothing.
	Committed bool
	// Commit is the commit's result; its post-commit work is the
	// caller's (txn.PostCommit).
	Commit txn.CommitResult
	// Metrics are the operation's figures, as committed.
	Metrics Metrics
	// Strategy is the strategy used.
	Strategy Strategy
}

// Plan is what one attempt of an operation stages: the rewrite's actions,
// files written besides (MERGE's inserted rows), and what was read.
type Plan struct {
	write.Rewritten
	// Adds and CDC are new files written outside the rewrite.
	Adds []actions.Add
	CDC  []actions.CDC
	// ReadPredicate is the predicate the operation read by; nil with
	// ReadWholeTable.
	ReadPredicate  expr.Expr
	ReadWholeTable bool
	// ScanTime is the time taken to find the candidate files; the rest
	// of the plan's time counts as rewriting.
	ScanTime time.Duration
	// Protocol and Metadata, when not nil, are staged with the files: the
	// operation evolved the table's schema and wrote its rows under the
	// new one (MERGE with schema evolution).
	Protocol *actions.Protocol
	Metadata *actions.Metadata
}

// Operation is a DML operation for Run.
type Operation struct {
	// Name is commitInfo.operation ("DELETE").
	Name string
	// Parameters are commitInfo.operationParameters, as Spark writes
	// them for the operation.
	Parameters map[string]any
	// Plan rewrites the files of snap the operation changes and returns
	// what to stage. It runs once per attempt, on the attempt's snapshot,
	// with the strategy resolved for it; it must write nothing it does not
	// return (Run deletes what a failed attempt returned).
	Plan func(ctx context.Context, snap *snapshot.Snapshot, s Strategy) (*Plan, error)
	// Metrics, when set, names the metrics for commitInfo; nil means
	// Metrics.Map(Name).
	Metrics func(*Metrics) map[string]any
	// InsertOnly marks an operation that only adds rows (a MERGE with
	// only NOT MATCHED clauses): an append-only table takes it.
	InsertOnly bool
}

// Run runs op on the table snap shows and commits it: the pipeline of the
// package doc. It refuses an append-only table (write.ErrAppendOnly) and
// one this library cannot write before writing anything.
func Run(ctx context.Context, snap *snapshot.Snapshot, op Operation, opts Options) (Result, error) {
	start := time.Now()
	for attempt := 0; ; attempt++ {
		if err := checkWritable(snap, op); err != nil {
			return Result{}, err
		}
		strategy := strategyFor(snap, opts.Strategy)
		planStart := time.Now()
		plan, err := op.Plan(ctx, snap, strategy)
		if err != nil {
			return Result{}, err
		}
		res, err := commitPlan(ctx, snap, op, opts, plan, strategy, start, planStart)
		if err == nil || !errors.Is(err, txn.ErrConflict) || attempt >= opts.ConflictRetries {
			return res, err
		}
		if snap, err = snap.Update(ctx); err != nil {
			return Result{}, err
		}
	}
}

// checkWritable refuses, before anything is written, an operation on an
// append-only table (but an insert-only one) and a table this library
// cannot write.
func checkWritable(snap *snapshot.Snapshot, op Operation) error {
	if snap.Config().AppendOnly() && !op.InsertOnly {
		return write.ErrAppendOnly
	}
	p, m := snap.Protocol(), snap.Metadata()
	return txn.WriteSupportedChecked(&p, &m)
}

// commitPlan is step 3 of the package doc, shared by Run and
// Job.Commit: it stages what plan holds in one transaction on snap, with
// op's name, parameters and metrics and the read set of the plan, and
// commits. A plan that changes nothing commits nothing (Committed
// false). On error nothing is committed and the files the plan wrote are
// deleted, unless the commit's outcome is unknown.
func commitPlan(ctx context.Context, snap *snapshot.Snapshot, op Operation, opts Options, plan *Plan, strategy Strategy, start, planStart time.Time) (Result, error) {
	res := Result{Strategy: strategy, Metrics: metricsOf(plan, start, planStart)}
	if len(plan.Removes) == 0 && len(plan.Adds) == 0 && len(plan.Rewritten.Adds) == 0 {
		return res, nil
	}
	topts := opts.Txn
	if topts.Operation == "" {
		topts.Operation = op.Name
	}
	if topts.OperationParameters == nil {
		topts.OperationParameters = op.Parameters
	}
	topts.RowTrackingPreserved = true                 // write.Rewrite keeps row identities
	topts.IdentityOnlyMetadata = plan.Metadata == nil // the metadata staged, if any, is the marks
	tx := txn.Begin(snap, topts)
	if plan.ReadWholeTable || plan.ReadPredicate == nil {
		tx.ReadWholeTable()
	} else {
		tx.ReadPredicate(plan.ReadPredicate)
	}
	if plan.Protocol != nil {
		tx.SetProtocol(*plan.Protocol)
	}
	if plan.Metadata != nil {
		tx.SetMetadata(*plan.Metadata)
	}
	tx.ReadFiles(plan.Read...)
	tx.Remove(plan.Removes...)
	tx.Add(plan.DVAdds...)
	tx.Add(plan.Rewritten.Adds...)
	tx.Add(plan.Adds...)
	tx.AddCDC(plan.Rewritten.CDC...)
	tx.AddCDC(plan.CDC...)
	// Identity values the inserted rows got, in the same commit.
	if err := write.StageHighWaterMarks(tx, plan.HighWaterMarks); err != nil {
		dropWritten(snap, err, plan)
		return Result{}, err
	}
	rowcheck.Mark(tx) // every row written went through the row writer
	res.Metrics.ExecutionTimeMs = time.Since(start).Milliseconds()
	if op.Metrics != nil {
		tx.SetOperationMetrics(op.Metrics(&res.Metrics))
	} else {
		tx.SetOperationMetrics(res.Metrics.Map(op.Name))
	}
	var err error
	if res.Commit, err = tx.Commit(ctx); err != nil {
		dropWritten(snap, err, plan)
		return Result{}, err
	}
	res.Committed = true
	return res, nil
}

// metricsOf computes the metrics of a plan.
func metricsOf(p *Plan, start, planStart time.Time) Metrics {
	r := &p.Rewritten
	m := Metrics{
		NumDeletedRows: r.Dropped, NumUpdatedRows: r.Updated, NumCopiedRows: r.Copied,
		NumDeletionVectorsAdded: r.DVsAdded, NumDeletionVectorsUpdated: r.DVsUpdated,
		NumDeletionVectorsRemoved: r.DVsRemoved, DVBytes: r.DVBytes,
		NumFilesRead: int64(len(r.Read)),
	}
	readded := map[string]bool{}
	for _, a := range r.DVAdds {
		readded[snapshot.CanonicalPath(a.Path)] = true
	}
	for _, rm := range r.Removes {
		if readded[snapshot.CanonicalPath(rm.Path)] {
			continue
		}
		m.NumRemovedFiles++
		if rm.Size != nil {
			m.NumRemovedBytes += *rm.Size
		}
	}
	for _, a := range slices.Concat(r.Adds, p.Adds) {
		m.NumAddedFiles++
		m.NumAddedBytes += a.Size
	}
	for _, c := range slices.Concat(r.CDC, p.CDC) {
		m.NumAddedChangeFiles++
		m.ChangeFileBytes += c.Size
	}
	m.ScanTimeMs = p.ScanTime.Milliseconds()
	m.RewriteTimeMs = max(0, (time.Since(planStart) - p.ScanTime).Milliseconds())
	return m
}

// dropWritten deletes, best effort, the files a failed attempt wrote:
// new data and change-data files and deletion vector files, never the
// files re-added under a new vector; nothing when err says the commit may
// have landed.
func dropWritten(snap *snapshot.Snapshot, err error, p *Plan) {
	if errors.Is(err, txn.ErrCommitUnknown) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	keys := map[string]bool{}
	for _, a := range slices.Concat(p.Rewritten.Adds, p.Adds) {
		keys[snapshot.CanonicalPath(a.Path)] = true
	}
	for _, c := range slices.Concat(p.Rewritten.CDC, p.CDC) {
		keys[snapshot.CanonicalPath(c.Path)] = true
	}
	for _, a := range p.DVAdds {
		if d := a.DeletionVector; d != nil && d.StorageType == dv.StorageRelative {
			if k, err := dv.RelativePath(d); err == nil {
				keys[k] = true
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		_ = snap.Store().Delete(ctx, k)
	}
}

// Candidates returns the files of snap that may hold a row pred matches,
// after partition pruning and statistics skipping (all files when pred is
// nil), for an operation to read.
func Candidates(ctx context.Context, snap *snapshot.Snapshot, pred expr.Expr) ([]*actions.Add, error) {
	s, err := scan.New(snap, scan.Options{Predicate: pred})
	if err != nil {
		return nil, err
	}
	var out []*actions.Add
	for f, err := range s.Files(ctx) {
		if err != nil {
			return nil, err
		}
		out = append(out, f.Add)
	}
	return out, nil
}

// checkColumns returns ErrInvalid when e names a column that is not in
// the table's schema (dotted names reach into structs).
func checkColumns(sch *schema.StructType, e expr.Expr, what string) error {
	if e == nil {
		return nil
	}
	for _, c := range expr.Columns(e) {
		if _, _, ok := expr.FieldPath(sch, c); !ok {
			return fmt.Errorf("%w: %s %s: column %q is not in the table", ErrInvalid, what, e, c)
		}
	}
	return nil
}

// checkPredicate returns an error for a DML predicate that names a column
// the table lacks (ErrInvalid) or that can never be TRUE by its form, such
// as a non-boolean condition (expr.ErrNotPredicate); nil is every row.
func checkPredicate(sch *schema.StructType, pred expr.Expr) error {
	if pred == nil {
		return nil
	}
	if err := checkColumns(sch, pred, "predicate"); err != nil {
		return err
	}
	return expr.CheckPredicate(pred, func(c string) (schema.DataType, bool) {
		_, t, ok := expr.FieldPath(sch, c)
		return t, ok
	})
}

// predicateParam is Spark's operationParameters "predicate": a JSON array
// of the predicate's text, as a string.
func predicateParam(pred expr.Expr) string {
	texts := []string{}
	if pred != nil {
		texts = append(texts, pred.String())
	}
	b, _ := actions.EncodeJSON(texts)
	return string(b)
}

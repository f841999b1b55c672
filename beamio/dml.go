package beamio

import (
	"context"
	"fmt"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/godelta/delta"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/dml"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/txn"
	"github.com/godelta/delta/write"
)

// DMLOptions tune Delete and Update; the zero value is usable.
type DMLOptions struct {
	// TargetFileSize is the size at which a written data file is closed,
	// and the size of the candidate files a worker task rewrites (a
	// group: files of one partition, packed up to it). 0: the table's
	// delta.targetFileSize, else write.DefaultTargetFileSize.
	TargetFileSize int64
	// TrustRoots are the roots, besides the table's, a shallow clone's
	// files may be read from (delta.OpenOptions.TrustRoots).
	TrustRoots []string
}

// DMLResult is what the committing step of Delete and Update emits, once.
type DMLResult struct {
	// Committed is false when no row matched: then nothing was
	// committed, as Spark commits nothing.
	Committed bool
	// Version is the commit's table version (when Committed).
	Version int64
	// Operation is commitInfo.operation: "DELETE" or "UPDATE".
	Operation string
	// Metrics are the operation's figures, as commitInfo.operationMetrics
	// records them (dml.Metrics.Map).
	Metrics dml.Metrics
	// Groups is the number of groups of candidate files planned; Tasks
	// the number of worker tasks that rewrote one.
	Groups, Tasks int
}

// dmlSpec is a DML operation as it travels to the workers: its text, so
// that each worker plans it again on the planned version.
type dmlSpec struct {
	Op        string // dml.OpDelete or dml.OpUpdate
	Predicate string
	Set       string
	Opts      DMLOptions
}

// dmlPlan is what the planning step decides, given to every later step
// as a side input.
type dmlPlan struct {
	SnapshotVersion int64
	Groups          int
}

func init() {
	register.DoFn3x1[context.Context, []byte, func(dmlPlan), error](&planDMLFn{})
	register.DoFn4x1[context.Context, []byte, dmlPlan, func(int), error](&dmlTasksFn{})
	register.DoFn4x1[context.Context, int, dmlPlan, func([]byte), error](&rewriteDMLFn{})
	register.DoFn2x0[dmlPlan, func([]byte)](&dmlMarkerFn{})
	register.DoFn5x1[context.Context, int, func(*[]byte) bool, dmlPlan, func(DMLResult), error](&commitDMLFn{})
	register.Emitter1[dmlPlan]()
	register.Emitter1[DMLResult]()
}

// Delete runs DELETE FROM table WHERE predicate (predicate in the text
// form of package expr; "" deletes every row) on the latest version of the
// Delta table at table, as a pipeline, and returns a PCollection holding
// one DMLResult. It does what dml.Delete (delta.Table.Delete) does in one
// process, with the same code, split in three steps (dml.Job):
//
//  1. One step plans it, once (dml.PlanDelete): the checks (predicate,
//     append-only table, protocol), the files removed whole by their
//     partition values without being read, and the candidate files that
//     may hold a matching row (partition pruning and statistics
//     skipping), cut into groups of one partition up to the target file
//     size.
//  2. Each group is one worker task (dml.Job.RewriteGroup): its files are
//     read by the library's file reader (deletion vectors applied, column
//     mapping, partition values), and each file in which a row matches is
//     rewritten by the rewrite core without the matching rows (removed,
//     its other rows written to new files, change data when the table has
//     the change data feed on); a file in which no row matches is not
//     rewritten.
//  3. One step commits everything in ONE commit (dml.Job.Commit, the
//     commit step of dml.Delete): the same removes, adds and change data
//     files, the same commitInfo (operation DELETE, the predicate,
//     Spark's metrics) and the same conflict checks: a concurrent commit
//     that removed a file read here, or added one the predicate may
//     match, fails the commit with *txn.ConflictError (errors.Is
//     txn.ErrConflict), and the files this commit would have added are
//     deleted. Then the post-commit hooks run.
//
// Copy-on-write only: a table with delta.enableDeletionVectors, on which
// the in-process DELETE marks rows in deletion vectors, is rewritten here
// too. Spark does the same when its deletion vectors for DML are turned
// off (spark.databricks.delta.delete.deletionVectors.persistent=false),
// and its readers expect either; the rows are the same, and the deletion
// vectors the table already has are applied when its files are read and
// go away with the files rewritten. Refusing such tables would refuse
// every table Databricks creates today. Merge-on-read in a pipeline would
// put a deletion vector file per task for a gain that matters for small
// deletes, which need no pipeline.
//
// Errors fail the step that meets them, and with it the pipeline: the
// library's typed errors (dml.ErrInvalid, write.ErrAppendOnly, a
// *txn.ConflictError). Files written by a failed task or run are never
// committed (VACUUM removes them). dml.Options.ConflictRetries has no
// counterpart: a conflict ends the pipeline, whose rerun plans again. A
// committer run again after its commit landed (a runner's retry) meets
// that commit as a conflict (it removed the files read): the pipeline
// fails, and the table holds the one commit.
func Delete(s beam.Scope, table string, predicate string, opts DMLOptions) beam.PCollection {
	return runDML(s.Scope("delta.Delete"), table, dmlSpec{Op: dml.OpDelete, Predicate: predicate, Opts: opts})
}

// Update runs UPDATE table SET set WHERE predicate (set is "c = expr[, d
// = expr]", predicate in the text form of package expr, "" for every row)
// on the latest version of the Delta table at table, as a pipeline, and
// returns a PCollection holding one DMLResult. It is dml.Update
// (delta.Table.UpdateRows) in the three steps Delete describes (plan once
// with dml.PlanUpdate, a group of candidate files per worker task through
// the rewrite core, one commit with operation UPDATE): values computed
// from the row before the update and converted to their column's type,
// generated columns computed again, NOT NULL, CHECK constraints and
// invariants checked on every row written, update_preimage and
// update_postimage change data when the table has the change data feed
// on. Copy-on-write only, for the reasons Delete gives.
func Update(s beam.Scope, table string, set string, predicate string, opts DMLOptions) beam.PCollection {
	return runDML(s.Scope("delta.Update"), table, dmlSpec{Op: dml.OpUpdate, Predicate: predicate, Set: set, Opts: opts})
}

func runDML(s beam.Scope, table string, spec dmlSpec) beam.PCollection {
	plan := beam.ParDo(s, &planDMLFn{Table: table, Spec: spec}, beam.Impulse(s))
	tasks := beam.ParDo(s, &dmlTasksFn{}, beam.Impulse(s), beam.SideInput{Input: plan})
	tasks = beam.Reshuffle(s, tasks)
	parts := beam.ParDo(s, &rewriteDMLFn{Table: table, Spec: spec}, tasks, beam.SideInput{Input: plan})
	marker := beam.ParDo(s, &dmlMarkerFn{}, plan)
	all := beam.GroupByKey(s, beam.AddFixedKey(s, beam.Flatten(s, parts, marker)))
	return beam.ParDo(s, &commitDMLFn{Table: table, Spec: spec}, all, beam.SideInput{Input: plan})
}

// plan plans the operation on snap: always copy-on-write (see Delete).
func (sp dmlSpec) plan(ctx context.Context, snap *delta.Snapshot) (*dml.Job, error) {
	opts := dml.Options{
		Options:  write.Options{TargetFileSize: sp.Opts.TargetFileSize},
		Strategy: dml.CopyOnWrite,
		Txn:      txn.Options{EngineInfo: EngineInfo},
	}
	var pred expr.Expr
	if sp.Predicate != "" {
		p, err := expr.Parse(sp.Predicate)
		if err != nil {
			return nil, fmt.Errorf("beamio: %s predicate %q: %w", sp.Op, sp.Predicate, err)
		}
		pred = p
	}
	switch sp.Op {
	case dml.OpDelete:
		return dml.PlanDelete(ctx, snap, pred, opts)
	case dml.OpUpdate:
		set, err := dml.ParseAssignments(sp.Set)
		if err != nil {
			return nil, fmt.Errorf("beamio: UPDATE SET %q: %w", sp.Set, err)
		}
		return dml.PlanUpdate(ctx, snap, set, pred, opts)
	}
	return nil, fmt.Errorf("beamio: unknown DML operation %q: %w", sp.Op, deltaerr.ErrInvalidArgument)
}

// dmlState is what a step keeps between bundles: the table, and the job
// planned on the version it last worked on.
type dmlState struct {
	table *delta.Table
	job   *dml.Job
}

// jobAt returns the job planned on the table at version, made on first
// use. A job is a function of the snapshot and the operation, so every
// worker plans the one the planning step planned (the committer checks
// it).
func (st *dmlState) jobAt(ctx context.Context, table string, spec dmlSpec, version int64) (*dml.Job, error) {
	if st.job != nil && st.job.Snapshot().Version() == version {
		return st.job, nil
	}
	if st.table == nil {
		t, err := openTable(ctx, table, spec.Opts.TrustRoots)
		if err != nil {
			return nil, err
		}
		st.table = t
	}
	snap, err := st.table.SnapshotAt(ctx, version)
	if err != nil {
		return nil, err
	}
	j, err := spec.plan(ctx, snap)
	if err != nil {
		return nil, err
	}
	st.job = j
	return j, nil
}

func (st *dmlState) close() error {
	if st.table == nil {
		return nil
	}
	err := st.table.Close()
	st.table, st.job = nil, nil
	return err
}

// planDMLFn is step 1.
type planDMLFn struct {
	Table string
	Spec  dmlSpec
}

func (f *planDMLFn) ProcessElement(ctx context.Context, _ []byte, emit func(dmlPlan)) error {
	var st dmlState
	defer st.close()
	t, err := openTable(ctx, f.Table, f.Spec.Opts.TrustRoots)
	if err != nil {
		return err
	}
	snap, err := t.Snapshot(ctx)
	t.Close()
	if err != nil {
		return err
	}
	j, err := st.jobAt(ctx, f.Table, f.Spec, snap.Version())
	if err != nil {
		return err
	}
	emit(dmlPlan{SnapshotVersion: snap.Version(), Groups: j.Groups()})
	return nil
}

// dmlTasksFn makes a task per group of the plan.
type dmlTasksFn struct{}

func (f *dmlTasksFn) ProcessElement(_ context.Context, _ []byte, p dmlPlan, emit func(int)) error {
	for g := range p.Groups {
		emit(g)
	}
	return nil
}

// rewriteDMLFn is step 2: one group per task, through the rewrite core.
type rewriteDMLFn struct {
	Table string
	Spec  dmlSpec
	st    dmlState
}

func (f *rewriteDMLFn) ProcessElement(ctx context.Context, group int, p dmlPlan, emit func([]byte)) error {
	j, err := f.st.jobAt(ctx, f.Table, f.Spec, p.SnapshotVersion)
	if err != nil {
		return err
	}
	r, err := j.RewriteGroup(ctx, group)
	if err != nil {
		return err
	}
	data, err := encodePart(r)
	if err != nil {
		// Its data files and its change data files, as a merge task's.
		discardParts(j.Snapshot(), err, []write.Rewritten{r})
		return err
	}
	emit(data)
	return nil
}

// Teardown closes the table.
func (f *rewriteDMLFn) Teardown() error { return f.st.close() }

// dmlMarkerFn emits the empty element that makes the committer run.
type dmlMarkerFn struct{}

func (dmlMarkerFn) ProcessElement(_ dmlPlan, emit func([]byte)) { emit(nil) }

// commitDMLFn is step 3: one commit of every part.
type commitDMLFn struct {
	Table string
	Spec  dmlSpec
}

func (f *commitDMLFn) ProcessElement(ctx context.Context, _ int, encoded func(*[]byte) bool, p dmlPlan, emit func(DMLResult)) error {
	var parts []write.Rewritten
	var data []byte
	for encoded(&data) {
		if len(data) == 0 {
			continue // the marker
		}
		r, err := decodePart(data)
		if err != nil {
			return err
		}
		parts = append(parts, r)
	}
	var st dmlState
	defer st.close()
	j, err := st.jobAt(ctx, f.Table, f.Spec, p.SnapshotVersion)
	if err == nil {
		if h := dmlHook(func(h *dmlTestHooks) func(string) error { return h.beforeCommit }); h != nil {
			err = h(f.Table)
		}
	}
	if err != nil {
		if st.job != nil {
			discardParts(st.job.Snapshot(), err, parts)
		}
		return err
	}
	r, err := j.Commit(ctx, parts)
	if err := afterDMLCommit(ctx, st.table, f.Table, r, err); err != nil {
		return err
	}
	emit(DMLResult{Committed: r.Committed, Version: r.Commit.Version, Operation: j.Operation(),
		Metrics: r.Metrics, Groups: p.Groups, Tasks: len(parts)})
	return nil
}

// afterDMLCommit ends the commit step of Delete, Update and Merge: it
// tells the tests' committed hook the outcome, then, when the commit
// landed, runs the table's post-commit chain.
func afterDMLCommit(ctx context.Context, t *delta.Table, table string, r dml.Result, err error) error {
	dmlHooks.Lock()
	seen := dmlHooks.h.committed
	dmlHooks.Unlock()
	if seen != nil {
		seen(table, err)
	}
	if err != nil {
		return err
	}
	if r.Committed {
		t.PostCommit(ctx, &r.Commit)
	}
	return nil
}

// dmlTestHooks let the tests fail or interleave a step of Delete and
// Update in-process (Prism's loopback workers share the test's memory).
// They are nil outside tests.
type dmlTestHooks struct {
	// beforeCommit runs in the committer before it commits: a
	// concurrent writer commits there.
	beforeCommit func(table string) error
	// committed sees the error of the commit (nil when it landed), with
	// its type, which the runner's report of a failed step does not keep.
	committed func(table string, err error)
}

var dmlHooks struct {
	sync.Mutex
	h dmlTestHooks
}

func dmlHook(pick func(*dmlTestHooks) func(string) error) func(string) error {
	dmlHooks.Lock()
	defer dmlHooks.Unlock()
	return pick(&dmlHooks.h)
}

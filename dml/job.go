package dml

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/write"
)

// Job is a DELETE or UPDATE split into the three steps of the package
// doc, so that an engine can run the rewrites elsewhere: the Beam IO
// (module beamio) plans on one worker (PlanDelete, PlanUpdate), rewrites
// one group of candidate files per worker task (RewriteGroup) and commits
// on one worker (Commit). Delete and Update are the same steps in one
// process: they plan a Job on each attempt's snapshot, rewrite all its
// candidate files in one call (Rewrite), and commit it through the same
// commit step, so the two paths stage the same actions with the same
// commitInfo and the same conflict checks.
//
// A Job is a function of its snapshot and arguments: planning the same
// snapshot with the same arguments on another worker gives the same
// candidate files in the same groups, which is how an engine's workers
// agree on a group by its index without shipping the plan. Commit checks
// it (the files the parts read must be the plan's candidates).
//
// A Job is safe for concurrent use: RewriteGroup may run for several
// groups at once.
type Job struct {
	snap     *snapshot.Snapshot
	op       Operation // Name and Parameters; Plan is not used
	opts     Options
	strategy Strategy
	pred     expr.Expr
	set      []Assignment      // UPDATE; nil for a DELETE
	del      *write.DeletePlan // DELETE
	files    []*actions.Add    // the candidate files, in scan order
	groups   [][]*actions.Add
	scanTime time.Duration
	start    time.Time
}

// PlanDelete plans a DELETE of the rows of snap that pred matches (TRUE;
// nil: every row), as Delete does on each attempt: the checks first
// (ErrInvalid, expr.ErrNotPredicate, write.ErrAppendOnly, a table this
// library cannot write), then the files removed whole by their partition
// values and the candidate files to read (partition pruning and
// statistics skipping). It reads the log, no data file, and writes
// nothing. opts.Strategy resolves as in Delete (Auto: the table's).
func PlanDelete(ctx context.Context, snap *snapshot.Snapshot, pred expr.Expr, opts Options) (*Job, error) {
	if err := checkPredicate(snap.Schema(), pred); err != nil {
		return nil, err
	}
	return planDelete(ctx, snap, pred, opts, deleteOp(pred), strategyFor(snap, opts.Strategy), time.Now())
}

func deleteOp(pred expr.Expr) Operation {
	return Operation{Name: OpDelete, Parameters: map[string]any{"predicate": predicateParam(pred)}}
}

func planDelete(ctx context.Context, snap *snapshot.Snapshot, pred expr.Expr, opts Options, op Operation, s Strategy, start time.Time) (*Job, error) {
	if err := checkWritable(snap, op); err != nil {
		return nil, err
	}
	j := &Job{snap: snap, op: op, opts: opts, strategy: s, pred: pred, start: start}
	planStart := time.Now()
	p, err := write.PlanDelete(ctx, snap, pred, opts.Options)
	if err != nil {
		return nil, err
	}
	j.del, j.files = p, p.Files
	// The time to find the files (skipping); the rest is the rewrite's.
	// A DELETE that removes whole files by their partition values spends
	// all of it finding them, as Spark counts it.
	j.scanTime = p.Whole.FindTime
	if !rewrites(snap, pred) {
		j.scanTime = time.Since(planStart)
	}
	j.groups = groupFiles(snap, j.files, opts.TargetFileSize)
	return j, nil
}

// PlanUpdate plans an UPDATE of the rows of snap that pred matches (TRUE;
// nil: every row) with set, as Update does on each attempt: the checks
// first (ErrInvalid, expr.ErrNotPredicate, write.ErrAppendOnly, a table
// this library cannot write), then the candidate files (partition
// pruning and statistics skipping). It reads the log, no data file, and
// writes nothing.
func PlanUpdate(ctx context.Context, snap *snapshot.Snapshot, set []Assignment, pred expr.Expr, opts Options) (*Job, error) {
	sch := snap.Schema()
	if _, err := resolve(sch, set); err != nil {
		return nil, err
	}
	if err := checkPredicate(sch, pred); err != nil {
		return nil, err
	}
	return planUpdate(ctx, snap, set, pred, opts, updateOp(pred), strategyFor(snap, opts.Strategy), time.Now())
}

func updateOp(pred expr.Expr) Operation {
	return Operation{Name: OpUpdate, Parameters: map[string]any{"predicate": predicateParam(pred)}}
}

func planUpdate(ctx context.Context, snap *snapshot.Snapshot, set []Assignment, pred expr.Expr, opts Options, op Operation, s Strategy, start time.Time) (*Job, error) {
	if err := checkWritable(snap, op); err != nil {
		return nil, err
	}
	if _, err := resolve(snap.Schema(), set); err != nil { // the attempt's schema: the table may have changed
		return nil, err
	}
	j := &Job{snap: snap, op: op, opts: opts, strategy: s, pred: pred, set: set, start: start}
	planStart := time.Now()
	files, err := Candidates(ctx, snap, pred)
	if err != nil {
		return nil, err
	}
	j.scanTime = time.Since(planStart)
	j.files = files
	j.groups = groupFiles(snap, files, opts.TargetFileSize)
	return j, nil
}

// groupFiles cuts the candidate files into groups, the unit of work of an
// engine's task: the files of one partition (in scan order), packed up to
// the target file size (target, else the table's delta.targetFileSize,
// else write.DefaultTargetFileSize), so that a group writes about one
// file of each partition it touches, as the in-process rewrite of the
// same files would.
func groupFiles(snap *snapshot.Snapshot, files []*actions.Add, target int64) [][]*actions.Add {
	if target <= 0 {
		if n, ok := snap.Config().TargetFileSize(); ok {
			target = n
		} else {
			target = write.DefaultTargetFileSize
		}
	}
	parts := snap.Metadata().PartitionColumns
	type open struct {
		group int
		size  int64
	}
	byPart := map[string]*open{}
	var groups [][]*actions.Add
	for _, a := range files {
		key := ""
		for _, c := range parts {
			v, ok := a.PartitionValues[c]
			key += fmt.Sprintf("%t%q,", ok, v)
		}
		o := byPart[key]
		if o == nil || (o.size > 0 && o.size+a.Size > target) {
			o = &open{group: len(groups)}
			byPart[key] = o
			groups = append(groups, nil)
		}
		groups[o.group] = append(groups[o.group], a)
		o.size += a.Size
	}
	return groups
}

// Snapshot is the snapshot the job was planned on.
func (j *Job) Snapshot() *snapshot.Snapshot { return j.snap }

// Operation is commitInfo.operation of the job: OpDelete or OpUpdate.
func (j *Job) Operation() string { return j.op.Name }

// Strategy is the strategy the job's rewrites use.
func (j *Job) Strategy() Strategy { return j.strategy }

// Files are the candidate files: those the rewrites read, each rewritten
// when a row in it changes. Files removed whole by a DELETE (by their
// partition values) are not among them: they are the plan's, and Commit
// stages them.
func (j *Job) Files() []*actions.Add { return j.files }

// Groups is the number of groups of candidate files: 0 when no file need
// be read.
func (j *Job) Groups() int { return len(j.groups) }

// Group returns the files of group i.
func (j *Job) Group(i int) []*actions.Add { return j.groups[i] }

// RewriteGroup rewrites the files of group i (Rewrite).
func (j *Job) RewriteGroup(ctx context.Context, i int) (write.Rewritten, error) {
	if i < 0 || i >= len(j.groups) {
		return write.Rewritten{}, fmt.Errorf("dml: group %d of a job of %d: %w", i, len(j.groups), deltaerr.ErrInvalidArgument)
	}
	return j.Rewrite(ctx, j.groups[i])
}

// Rewrite rewrites files, candidate files of the job, with the rewrite
// core (write.Rewrite, reading with the one file reader: deletion
// vectors, column mapping, partition values): a file in which a row
// changes is removed and its other rows written again, with the
// operation's change data when the table has the change data feed on;
// a file in which no row changes is read but not rewritten. It commits
// nothing; on error it leaves no file. Calls may run at once.
func (j *Job) Rewrite(ctx context.Context, files []*actions.Add) (write.Rewritten, error) {
	ropts := write.RewriteOptions{
		Options: j.opts.Options, DeletionVectors: j.strategy == MergeOnRead, InlineDVMax: j.opts.InlineDVMax,
	}
	if j.set == nil {
		return j.del.Rewrite(ctx, files, ropts)
	}
	return write.Rewrite(ctx, j.snap, files, UpdateRows(j.snap.Schema(), j.set, j.pred), ropts)
}

// whole rewrites all of j's candidate files in one call and stages the
// result: the plan of the in-process DELETE and UPDATE.
func (j *Job) whole(ctx context.Context) (*Plan, error) {
	r, err := j.Rewrite(ctx, j.files)
	if err != nil {
		return nil, err
	}
	return j.stage([]write.Rewritten{r}), nil
}

// stage gathers what the parts rewrote, and what the plan removes whole,
// into the Plan to commit.
func (j *Job) stage(parts []write.Rewritten) *Plan {
	var r write.Rewritten
	if j.del != nil {
		r = cloneRewritten(j.del.Whole)
	}
	r = sumRewritten(r, parts)
	return &Plan{Rewritten: r, ReadPredicate: j.pred, ReadWholeTable: j.pred == nil, ScanTime: j.scanTime}
}

// sumRewritten adds the actions and counts of parts to r.
func sumRewritten(r write.Rewritten, parts []write.Rewritten) write.Rewritten {
	for _, p := range parts {
		r.Removes = append(r.Removes, p.Removes...)
		r.Adds = append(r.Adds, p.Adds...)
		r.CDC = append(r.CDC, p.CDC...)
		r.Read = append(r.Read, p.Read...)
		r.DVAdds = append(r.DVAdds, p.DVAdds...)
		r.Dropped += p.Dropped
		r.Updated += p.Updated
		r.Copied += p.Copied
		r.Inserted += p.Inserted
		r.DVsAdded += p.DVsAdded
		r.DVsUpdated += p.DVsUpdated
		r.DVsRemoved += p.DVsRemoved
		r.DVBytes += p.DVBytes
		r.Rows += p.Rows
	}
	return r
}

func firstRead(r write.Rewritten) string {
	if len(r.Read) == 0 {
		return ""
	}
	return r.Read[0]
}

// cloneRewritten copies the slices of r, so that staging appends to no
// slice of the plan's.
func cloneRewritten(r write.Rewritten) write.Rewritten {
	r.Removes = slices.Clone(r.Removes)
	r.Adds = slices.Clone(r.Adds)
	r.CDC = slices.Clone(r.CDC)
	r.Read = slices.Clone(r.Read)
	r.DVAdds = slices.Clone(r.DVAdds)
	return r
}

// Commit commits the rewrites of the groups, and the files the plan
// removes whole, in one transaction, as Delete and Update do (the same
// commit step): operation DELETE or UPDATE, operationParameters
// {"predicate": ...}, Spark's metrics, and the read set (the predicate,
// or the whole table; the files read) from which package txn raises the
// usual conflicts. parts are the groups' Rewritten, in any order; together
// they must have read exactly the job's candidate files (else
// deltaerr.ErrInvalidArgument: parts of another plan), and carry no
// inserted rows. Nothing changed: nothing is committed (Committed false).
//
// A conflict is returned (*txn.ConflictError, errors.Is txn.ErrConflict):
// Options.ConflictRetries does not apply, since the rewrites were of the
// planned snapshot. On any error nothing is committed and the files the
// parts wrote are deleted, unless the commit's outcome is unknown
// (txn.ErrCommitUnknown). The commit runs no post-commit hooks: the
// caller runs them (delta.Table.PostCommit).
func (j *Job) Commit(ctx context.Context, parts []write.Rewritten) (Result, error) {
	// The parts in an order that does not depend on their arrival: by the
	// first file each read (the groups are disjoint).
	parts = slices.Clone(parts)
	slices.SortStableFunc(parts, func(a, b write.Rewritten) int {
		return strings.Compare(firstRead(a), firstRead(b))
	})
	plan := j.stage(parts)
	var read []string
	for _, p := range parts {
		read = append(read, p.Read...)
		if p.Inserted > 0 || p.HighWaterMarks != nil {
			err := fmt.Errorf("dml: a part of a %s inserted rows: %w", j.op.Name, deltaerr.ErrInvalidArgument)
			dropWritten(j.snap, err, plan)
			return Result{}, err
		}
	}
	want := make([]string, len(j.files))
	for i, a := range j.files {
		want[i] = a.Path
	}
	slices.Sort(want)
	slices.Sort(read)
	if !slices.Equal(read, want) {
		err := fmt.Errorf("dml: the parts read %d files, the plan has %d candidates: %w", len(read), len(want), deltaerr.ErrInvalidArgument)
		dropWritten(j.snap, err, plan)
		return Result{}, err
	}
	return commitPlan(ctx, j.snap, j.op, j.opts, plan, j.strategy, j.start, j.start)
}

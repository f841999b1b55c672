package dml

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/write"
)

// ErrMergeSourceTooLarge is PlanMerge's error for a source whose rows do
// not fit MergeSpec.MemoryBudget: a MergeJob holds its source in memory
// on every worker (a broadcast hash join), and does not spill it as the
// in-process Merge does. It matches ErrInvalid.
var ErrMergeSourceTooLarge = deltaerr.Mark(errors.New("merge: the source is larger than the memory budget of a merge job"), ErrInvalid)

// MergeJob is a MERGE split into steps, as Job splits a DELETE or an
// UPDATE, so that an engine can run the rewrites elsewhere (the Beam IO,
// module beamio):
//
//  1. PlanMerge loads the source (in memory, within the budget), checks
//     the merge, and finds the candidate target files (the same skipping
//     as Merge), cut into groups of one partition up to the target file
//     size.
//  2. RewriteGroup rewrites one group's files by the MATCHED and NOT
//     MATCHED BY SOURCE clauses, WITHOUT inserting: it returns which
//     source rows some target row of its files matched, and the per-file
//     counts the metrics are made of. A target row two source rows match
//     fails it (ErrMultipleMatch), as in Merge: the match is a property
//     of the row.
//  3. Insert, run once, takes the union of the source rows every group
//     matched and writes the rows the NOT MATCHED clauses insert (they
//     depend on the matches in ALL target files).
//  4. Commit commits the groups' parts and the inserts in one
//     transaction through the commit step of every DML operation:
//     operation MERGE, Spark's operationParameters (predicate, matched,
//     not matched and not matched by source predicates) and metrics, and
//     the read set from which package txn raises the usual conflicts.
//
// The in-process Merge is a MergeJob too: it plans a job on each
// attempt's snapshot and rewrites all its candidate files in one call
// that writes the inserts into the same files as the updated rows (as
// Spark does), with the source spilled when it is larger than the budget;
// then it commits through the same commit step. So the two paths apply
// the same clauses to the same rows with the same code, and differ only
// in how the written rows are cut into files: a job's inserts are files
// of their own, and each group writes its own files.
//
// A MergeJob is a function of its snapshot, its source rows (in order)
// and its spec: planning them again on another worker gives the same
// candidate files in the same groups, and numbers the source rows the
// same, which is how workers agree on a group by its index and on a
// source row by its number. SourceDigest lets an engine check that its
// workers read the same source. RewriteGroup may run for several groups
// at once.
type MergeJob struct {
	ms        *mergeSetup
	snap      *snapshot.Snapshot // the attempt's, committed on
	asnap     *snapshot.Snapshot // snap under the evolved schema, rewritten
	opts      Options
	strategy  Strategy
	files     []*actions.Add
	groups    [][]*actions.Add
	readPred  expr.Expr
	before    int64 // the table's files
	scanTime  time.Duration
	start     time.Time
	planStart time.Time
}

// PlanMerge plans a merge of src into the table snap shows, as Merge does
// on each attempt: spec checked (ErrMergeClause, ErrMergeColumn, ...), the
// source read into memory (ErrMergeSourceTooLarge past
// spec.MemoryBudget), the table checked (write.ErrAppendOnly unless the
// merge only inserts, a table this library cannot write), and the
// candidate target files found and grouped. It reads the source and the
// log, no target data file, and writes nothing. The job holds the source
// until Close.
func PlanMerge(ctx context.Context, snap *snapshot.Snapshot, src Source, spec MergeSpec, opts Options) (*MergeJob, error) {
	start := time.Now()
	ms, err := setupMerge(snap, src, spec, false)
	if err != nil {
		return nil, err
	}
	if err := checkWritable(snap, ms.operation()); err != nil {
		ms.m.close()
		return nil, err
	}
	j, err := ms.planJob(ctx, snap, strategyFor(snap, opts.Strategy), opts, start)
	if err != nil {
		ms.m.close()
		return nil, err
	}
	return j, nil
}

// planJob finds the candidate files of the merge on snap and groups them.
func (ms *mergeSetup) planJob(ctx context.Context, snap *snapshot.Snapshot, s Strategy, opts Options, start time.Time) (*MergeJob, error) {
	asnap, err := ms.attempt(snap)
	if err != nil {
		return nil, err
	}
	j := &MergeJob{ms: ms, snap: snap, asnap: asnap, opts: opts, strategy: s, start: start, planStart: time.Now()}
	m := ms.m
	m.snap = asnap
	j.readPred = m.filePredicate()
	if j.files, j.before, err = m.candidates(ctx, j.readPred); err != nil {
		return nil, err
	}
	j.scanTime = time.Since(j.planStart)
	j.groups = groupFiles(asnap, j.files, opts.TargetFileSize)
	return j, nil
}

// newPlan is the plan of an attempt before its rewrite: what it read by.
func (j *MergeJob) newPlan() *Plan {
	return &Plan{ReadPredicate: j.readPred, ReadWholeTable: j.readPred == nil, ScanTime: j.scanTime}
}

// baseMetrics are the metrics known once the job is planned.
func (j *MergeJob) baseMetrics() MergeMetrics {
	return MergeMetrics{
		NumSourceRows:                j.ms.m.nSource,
		MaterializeSourceTimeMs:      j.ms.sourceTime.Milliseconds(),
		NumTargetFilesBeforeSkipping: j.before,
		NumTargetFilesAfterSkipping:  int64(len(j.files)),
	}
}

// Close releases the source. The job may not be used after.
func (j *MergeJob) Close() { j.ms.m.close() }

// Snapshot is the snapshot the job was planned on.
func (j *MergeJob) Snapshot() *snapshot.Snapshot { return j.snap }

// Strategy is the strategy the job's rewrites use.
func (j *MergeJob) Strategy() Strategy { return j.strategy }

// Files are the candidate target files, in scan order.
func (j *MergeJob) Files() []*actions.Add { return j.files }

// Groups is the number of groups of candidate files.
func (j *MergeJob) Groups() int { return len(j.groups) }

// Group returns the files of group i.
func (j *MergeJob) Group(i int) []*actions.Add { return j.groups[i] }

// SourceRows is the number of source rows.
func (j *MergeJob) SourceRows() int64 { return j.ms.m.nSource }

// SourceDigest is a SHA-256 of the source rows, in order (each value in
// schema.AppendBinary's form): workers that planned the same job read
// the same source when their digests agree.
func (j *MergeJob) SourceDigest() [32]byte {
	h := sha256.New()
	var buf []byte
	for _, row := range j.ms.m.rows {
		buf = buf[:0]
		for _, v := range row {
			buf = schema.AppendBinary(buf, v)
		}
		h.Write(buf)
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// MergeFileCounts are the target rows of one file a merge read, by fate.
type MergeFileCounts struct {
	MatchedUpdated, MatchedDeleted                       int64
	NotMatchedBySourceUpdated, NotMatchedBySourceDeleted int64
	Kept                                                 int64
}

// MergePart is what RewriteGroup did to one group of files.
type MergePart struct {
	// Rewritten are the group's removes, adds and change data, and the
	// files it read; no inserted row.
	write.Rewritten
	// Matched are the numbers (in source order, from 0) of the source
	// rows some target row of the group matched, ascending.
	Matched []int64
	// Counts are the rows of each file read, by fate, by path.
	Counts map[string]MergeFileCounts
}

// fork returns a merger over the job's plan and source, with state of its
// own (matches, counts), for one step of the job.
func (j *MergeJob) fork() *merger {
	m := j.ms.m
	return &merger{
		plan: m.plan, snap: j.asnap, nSource: m.nSource,
		rows: m.rows, index: m.index, intIndex: m.intIndex,
		keyMin: m.keyMin, keyMax: m.keyMax, keyVals: m.keyVals, noKeys: m.noKeys,
		srcMatched: make([]bool, len(m.rows)), counts: map[string]*fileCounts{},
	}
}

// RewriteGroup rewrites the files of group i by the MATCHED and NOT
// MATCHED BY SOURCE clauses, inserting nothing (Insert does), with the
// rewrite core: a file in which a row changes is rewritten (copy-on-write)
// or gets a deletion vector (merge-on-read), a file in which none does
// is read only. A merge with no such clause only reads the files, to find
// the matches. It commits nothing; on error it leaves no file. Calls may
// run at once.
func (j *MergeJob) RewriteGroup(ctx context.Context, i int) (MergePart, error) {
	if i < 0 || i >= len(j.groups) {
		return MergePart{}, fmt.Errorf("dml: group %d of a merge job of %d: %w", i, len(j.groups), deltaerr.ErrInvalidArgument)
	}
	files := j.groups[i]
	g := j.fork()
	var part MergePart
	if len(g.matched)+len(g.bySrc) > 0 {
		r, err := write.Rewrite(ctx, j.asnap, files, g.rowFunc, write.RewriteOptions{
			Options: j.opts.Options, DeletionVectors: j.strategy == MergeOnRead, InlineDVMax: j.opts.InlineDVMax,
		})
		if err != nil {
			return MergePart{}, err
		}
		part.Rewritten = r
	} else {
		if err := g.findMatches(ctx, files); err != nil {
			return MergePart{}, err
		}
		for _, f := range files {
			part.Read = append(part.Read, f.Path)
		}
	}
	for k, ok := range g.srcMatched {
		if ok {
			part.Matched = append(part.Matched, int64(k))
		}
	}
	part.Counts = make(map[string]MergeFileCounts, len(g.counts))
	for path, c := range g.counts {
		part.Counts[path] = MergeFileCounts{
			MatchedUpdated: c.matchedUpd, MatchedDeleted: c.matchedDel,
			NotMatchedBySourceUpdated: c.srcUpd, NotMatchedBySourceDeleted: c.srcDel, Kept: c.kept,
		}
	}
	return part, nil
}

// Insert writes the rows the NOT MATCHED clauses insert: the source rows
// no target row matched, matched being the union of the groups' Matched
// (in any order, repeats allowed). It runs once, after every group. The
// rows go through the row writer (constraints, generated and identity
// columns), with insert change data when the table has the change data
// feed on. Nothing to insert: an empty Rewritten. It commits nothing.
func (j *MergeJob) Insert(ctx context.Context, matched []int64) (write.Rewritten, error) {
	g := j.fork()
	for _, k := range matched {
		if k < 0 || k >= int64(len(g.srcMatched)) {
			return write.Rewritten{}, fmt.Errorf("dml: source row %d of a merge of %d: %w", k, len(g.srcMatched), deltaerr.ErrInvalidArgument)
		}
		g.srcMatched[k] = true
	}
	return g.writeInserts(ctx, j.asnap, j.opts)
}

// Commit commits the groups' parts and the inserts (Insert's result) in
// one transaction, as Merge does (the same commit step): operation
// MERGE, Spark's operationParameters and metrics, and the read set (the
// predicate the candidate files were found by, or the whole table; the
// files read) from which package txn raises the usual conflicts. parts
// may come in any order; together they must have read exactly the job's
// candidate files and inserted nothing (else deltaerr.ErrInvalidArgument).
// A merge that changed nothing commits nothing (Committed false).
//
// A conflict is returned (*txn.ConflictError, errors.Is txn.ErrConflict):
// Options.ConflictRetries does not apply. On any error nothing is
// committed and the files the parts and the inserts wrote are deleted,
// unless the commit's outcome is unknown (txn.ErrCommitUnknown). The
// commit runs no post-commit hooks: the caller runs them.
func (j *MergeJob) Commit(ctx context.Context, parts []MergePart, inserted write.Rewritten) (MergeResult, error) {
	parts = slices.Clone(parts)
	slices.SortStableFunc(parts, func(a, b MergePart) int {
		return strings.Compare(firstRead(a.Rewritten), firstRead(b.Rewritten))
	})
	plan := j.newPlan()
	rw := make([]write.Rewritten, len(parts))
	for i, p := range parts {
		rw[i] = p.Rewritten
	}
	plan.Rewritten = sumRewritten(write.Rewritten{}, rw)
	plan.Adds, plan.CDC, plan.HighWaterMarks = inserted.Adds, inserted.CDC, inserted.HighWaterMarks
	plan.Protocol, plan.Metadata = j.ms.ep, j.ms.em
	fail := func(err error) (MergeResult, error) {
		dropWritten(j.snap, err, plan)
		return MergeResult{}, err
	}
	var read []string
	g := j.fork()
	for _, p := range parts {
		read = append(read, p.Read...)
		if p.Inserted > 0 || p.HighWaterMarks != nil {
			return fail(fmt.Errorf("dml: a part of a MERGE inserted rows: %w", deltaerr.ErrInvalidArgument))
		}
		for path, c := range p.Counts {
			g.counts[path] = &fileCounts{matchedUpd: c.MatchedUpdated, matchedDel: c.MatchedDeleted,
				srcUpd: c.NotMatchedBySourceUpdated, srcDel: c.NotMatchedBySourceDeleted, kept: c.Kept}
		}
	}
	if len(inserted.Removes)+len(inserted.Read)+len(inserted.DVAdds) > 0 {
		return fail(fmt.Errorf("dml: the inserts of a MERGE rewrote files: %w", deltaerr.ErrInvalidArgument))
	}
	want := make([]string, len(j.files))
	for i, a := range j.files {
		want[i] = a.Path
	}
	slices.Sort(want)
	slices.Sort(read)
	if !slices.Equal(read, want) {
		return fail(fmt.Errorf("dml: the parts read %d files, the merge has %d candidates: %w", len(read), len(want), deltaerr.ErrInvalidArgument))
	}
	mm := j.baseMetrics()
	g.fillMetrics(&mm, plan.Rewritten, j.strategy == MergeOnRead)
	mm.NumTargetRowsInserted = inserted.Inserted
	mm.NumOutputRows = mm.NumTargetRowsInserted + mm.NumTargetRowsUpdated + mm.NumTargetRowsCopied
	op := j.ms.operation()
	op.Metrics = func(g *Metrics) map[string]any {
		mm.fromRun(g)
		return mm.Map()
	}
	if err := checkWritable(j.snap, op); err != nil {
		return fail(err)
	}
	r, err := commitPlan(ctx, j.snap, op, j.opts, plan, j.strategy, j.start, j.planStart)
	if err != nil {
		return MergeResult{}, err
	}
	mm.fromRun(&r.Metrics)
	return MergeResult{Result: r, Merge: mm}, nil
}

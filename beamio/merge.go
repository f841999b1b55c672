package beamio

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/godelta/delta"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/dml"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/txn"
	"github.com/godelta/delta/write"
)

// MergeClause is one WHEN clause of Merge, in text: Condition (package
// expr's form; "" for none), and the action: Delete, or the assignments
// Set ("c = expr[, d = expr]", over target columns) of an UPDATE or an
// INSERT, or All (UPDATE SET * or INSERT *).
type MergeClause struct {
	Condition string
	Delete    bool
	Set       string
	All       bool
}

// MergeOptions are a MERGE INTO for Merge: the source, the join
// condition and the WHEN clauses, each list applied in order, as
// dml.MergeSpec describes them (the target is t and the source s unless
// TargetAlias and SourceAlias say otherwise).
type MergeOptions struct {
	// Source is the location of the Delta table merged in (a path or a
	// URI, as Read takes). Every worker reads it, at one version.
	Source string
	// SourceVersion, when not nil, is the version of Source read; nil
	// reads its latest version, which the planning step pins for every
	// worker.
	SourceVersion *int64
	// On pairs target rows with source rows ("t.id = s.id").
	On                       string
	TargetAlias, SourceAlias string
	// Matched are WHEN MATCHED clauses (Delete, Set or All: UPDATE),
	// NotMatched WHEN NOT MATCHED clauses (Set or All: INSERT),
	// NotMatchedBySource WHEN NOT MATCHED BY SOURCE clauses (Delete or
	// Set).
	Matched, NotMatched, NotMatchedBySource []MergeClause
	// MemoryBudget bounds the bytes of source rows a worker holds
	// (dml.MergeSpec.MemoryBudget; 0: dml.DefaultMergeMemory). A larger
	// source fails the planning step with dml.ErrMergeSourceTooLarge.
	MemoryBudget int64
	// TargetFileSize and TrustRoots are DMLOptions'.
	TargetFileSize int64
	TrustRoots     []string
}

// MergeResult is what the committing step of Merge emits, once.
type MergeResult struct {
	// Committed is false when the merge changed nothing: then nothing
	// was committed.
	Committed bool
	// Version is the commit's table version (when Committed).
	Version int64
	// SourceVersion is the version of the source read.
	SourceVersion int64
	// Metrics are the merge's figures, as commitInfo.operationMetrics
	// records them (dml.MergeMetrics.Map).
	Metrics dml.MergeMetrics
	// Groups is the number of groups of candidate files planned; Tasks
	// the number of worker tasks that rewrote one.
	Groups, Tasks int
}

// mergePlan is what the planning step decides, given to every later step
// as a side input: the versions of the table and the source, and the
// digest of the source rows every worker must read.
type mergePlan struct {
	SnapshotVersion int64
	SourceVersion   int64
	Groups          int
	SourceRows      int64
	SourceDigest    []byte
}

func init() {
	register.DoFn3x1[context.Context, []byte, func(mergePlan), error](&planMergeFn{})
	register.DoFn4x1[context.Context, []byte, mergePlan, func(int), error](&mergeTasksFn{})
	register.DoFn4x1[context.Context, int, mergePlan, func([]byte), error](&rewriteMergeFn{})
	register.DoFn2x0[mergePlan, func([]byte)](&mergeMarkerFn{})
	register.DoFn5x1[context.Context, int, func(*[]byte) bool, mergePlan, func(MergeResult), error](&commitMergeFn{})
	register.Emitter1[mergePlan]()
	register.Emitter1[MergeResult]()
}

// Merge runs MERGE INTO table USING the Delta table opts.Source ON
// opts.On with opts' WHEN clauses on the latest version of the Delta
// table at table, as a pipeline, and returns a PCollection holding one
// MergeResult. It does what dml.Merge (delta.Table.Merge) does in one
// process, with the same code, in the steps of dml.MergeJob:
//
//  1. One step plans it, once (dml.PlanMerge): the source read at one
//     version (pinned here when opts.SourceVersion is nil), the clauses
//     checked, the candidate target files found by the same skipping
//     (the source's key ranges, target-only conditions) and cut into
//     groups of one partition up to the target file size.
//  2. Each group is one worker task (dml.MergeJob.RewriteGroup): the
//     worker reads the source at the planned version into memory (its
//     rows' digest must be the planner's, else the step fails with
//     deltaerr.ErrCorrupt), joins it with the group's files, and rewrites
//     the files in which a MATCHED or NOT MATCHED BY SOURCE clause
//     changes a row; it sends which source rows matched and the per-file
//     counts. A target row two source rows match fails the task with
//     dml.ErrMultipleMatch, as in process.
//  3. One step writes the inserts (dml.MergeJob.Insert: the source rows
//     no group matched, by the NOT MATCHED clauses) and commits
//     everything in ONE commit (dml.MergeJob.Commit, the commit step of
//     dml.Merge): operation MERGE, its predicates, Spark's metrics, and
//     the same conflict checks (a *txn.ConflictError fails the step, and
//     the files written are deleted). Then the post-commit hooks run.
//
// The source is a Delta table because every worker must read the same
// rows in the same order (a source row is known by its number in the
// matches the groups send): a table at a version is that, a PCollection
// is not. Its rows are held in memory on each worker, as Spark broadcasts
// a merge's source; a source over opts.MemoryBudget is refused
// (dml.ErrMergeSourceTooLarge) rather than spilled as in process.
//
// Copy-on-write only, for the reasons Delete gives. The rows of the table
// after the merge are those of the in-process merge; the files differ:
// each group writes its own, and the inserts go to files of their own
// (in process they share the files of the updated rows), so
// numTargetFilesAdded, numTargetBytesAdded and numTargetChangeFilesAdded
// may differ. Errors fail the pipeline, typed as in process; a
// committer run again after its commit landed meets it as a conflict.
func Merge(s beam.Scope, table string, opts MergeOptions) beam.PCollection {
	s = s.Scope("delta.Merge")
	plan := beam.ParDo(s, &planMergeFn{Table: table, Opts: opts}, beam.Impulse(s))
	tasks := beam.ParDo(s, &mergeTasksFn{}, beam.Impulse(s), beam.SideInput{Input: plan})
	tasks = beam.Reshuffle(s, tasks)
	parts := beam.ParDo(s, &rewriteMergeFn{Table: table, Opts: opts}, tasks, beam.SideInput{Input: plan})
	marker := beam.ParDo(s, &mergeMarkerFn{}, plan)
	all := beam.GroupByKey(s, beam.AddFixedKey(s, beam.Flatten(s, parts, marker)))
	return beam.ParDo(s, &commitMergeFn{Table: table, Opts: opts}, all, beam.SideInput{Input: plan})
}

// spec is the dml.MergeSpec of opts.
func (o MergeOptions) spec() (dml.MergeSpec, error) {
	sp := dml.MergeSpec{TargetAlias: o.TargetAlias, SourceAlias: o.SourceAlias, MemoryBudget: o.MemoryBudget}
	on, err := expr.Parse(o.On)
	if err != nil {
		return sp, fmt.Errorf("beamio: MERGE ON %q: %w", o.On, err)
	}
	sp.On = on
	lists := []struct {
		in     []MergeClause
		out    *[]dml.Clause
		insert bool
	}{{o.Matched, &sp.Matched, false}, {o.NotMatched, &sp.NotMatched, true}, {o.NotMatchedBySource, &sp.NotMatchedBySource, false}}
	for _, l := range lists {
		for _, c := range l.in {
			dc := dml.Clause{All: c.All, Action: dml.ActionUpdate}
			switch {
			case l.insert:
				dc.Action = dml.ActionInsert
			case c.Delete:
				dc.Action = dml.ActionDelete
			}
			if c.Condition != "" {
				if dc.Condition, err = expr.Parse(c.Condition); err != nil {
					return sp, fmt.Errorf("beamio: MERGE clause condition %q: %w", c.Condition, err)
				}
			}
			if c.Set != "" {
				if dc.Set, err = dml.ParseAssignments(c.Set); err != nil {
					return sp, fmt.Errorf("beamio: MERGE clause %q: %w", c.Set, err)
				}
			}
			*l.out = append(*l.out, dc)
		}
	}
	return sp, nil
}

// mergeState is what a step keeps between bundles: the table, and the
// job planned on the versions it last worked on.
type mergeState struct {
	table        *delta.Table
	job          *dml.MergeJob
	version, src int64
}

// jobAt returns the job planned on the table at version with the source
// at src, made on first use; digest, when not nil, must be the source's.
func (st *mergeState) jobAt(ctx context.Context, table string, opts MergeOptions, version, src int64, digest []byte) (*dml.MergeJob, error) {
	if st.job != nil && st.version == version && st.src == src {
		return st.job, nil
	}
	if st.job != nil {
		st.job.Close()
		st.job = nil
	}
	if st.table == nil {
		t, err := openTable(ctx, table, opts.TrustRoots)
		if err != nil {
			return nil, err
		}
		st.table = t
	}
	snap, err := st.table.SnapshotAt(ctx, version)
	if err != nil {
		return nil, err
	}
	spec, err := opts.spec()
	if err != nil {
		return nil, err
	}
	srcT, err := openTable(ctx, opts.Source, opts.TrustRoots)
	if err != nil {
		return nil, fmt.Errorf("beamio: the merge source: %w", err)
	}
	defer srcT.Close()
	srcSnap, err := srcT.SnapshotAt(ctx, src)
	if err != nil {
		return nil, fmt.Errorf("beamio: the merge source: %w", err)
	}
	source, err := dml.TableSource(ctx, srcSnap, scan.Options{})
	if err != nil {
		return nil, err
	}
	j, err := dml.PlanMerge(ctx, snap, source, spec, dml.Options{
		Options:  write.Options{TargetFileSize: opts.TargetFileSize},
		Strategy: dml.CopyOnWrite,
		Txn:      txn.Options{EngineInfo: EngineInfo},
	})
	if err != nil {
		return nil, err
	}
	if d := j.SourceDigest(); digest != nil && !slices.Equal(d[:], digest) {
		j.Close()
		return nil, fmt.Errorf("beamio: the merge source %s at version %d read here is not the rows the plan read: %w", opts.Source, src, deltaerr.ErrCorrupt)
	}
	st.job, st.version, st.src = j, version, src
	return j, nil
}

func (st *mergeState) close() error {
	if st.job != nil {
		st.job.Close()
	}
	st.job = nil
	if st.table == nil {
		return nil
	}
	err := st.table.Close()
	st.table = nil
	return err
}

// planMergeFn is step 1.
type planMergeFn struct {
	Table string
	Opts  MergeOptions
}

func (f *planMergeFn) ProcessElement(ctx context.Context, _ []byte, emit func(mergePlan)) error {
	var st mergeState
	defer st.close()
	if f.Opts.Source == "" {
		return fmt.Errorf("beamio: a merge without a source: %w", dml.ErrMergeClause)
	}
	t, err := openTable(ctx, f.Table, f.Opts.TrustRoots)
	if err != nil {
		return err
	}
	snap, err := t.Snapshot(ctx)
	t.Close()
	if err != nil {
		return err
	}
	src := int64(0)
	if f.Opts.SourceVersion != nil {
		src = *f.Opts.SourceVersion
	} else {
		st, err := openTable(ctx, f.Opts.Source, f.Opts.TrustRoots)
		if err != nil {
			return fmt.Errorf("beamio: the merge source: %w", err)
		}
		ss, err := st.Snapshot(ctx)
		st.Close()
		if err != nil {
			return fmt.Errorf("beamio: the merge source: %w", err)
		}
		src = ss.Version()
	}
	j, err := st.jobAt(ctx, f.Table, f.Opts, snap.Version(), src, nil)
	if err != nil {
		return err
	}
	d := j.SourceDigest()
	emit(mergePlan{SnapshotVersion: snap.Version(), SourceVersion: src, Groups: j.Groups(), SourceRows: j.SourceRows(), SourceDigest: d[:]})
	return nil
}

// mergeTasksFn makes a task per group of the plan.
type mergeTasksFn struct{}

func (f *mergeTasksFn) ProcessElement(_ context.Context, _ []byte, p mergePlan, emit func(int)) error {
	for g := range p.Groups {
		emit(g)
	}
	return nil
}

// mergePartMsg is a worker's part of the merge, as it travels to the
// committer: its rewrite (as a DML part), the source rows it matched,
// and its per-file counts.
type mergePartMsg struct {
	Rewrite []byte
	Matched []int64
	Counts  map[string]dml.MergeFileCounts
}

// rewriteMergeFn is step 2: one group per task.
type rewriteMergeFn struct {
	Table string
	Opts  MergeOptions
	st    mergeState
}

func (f *rewriteMergeFn) ProcessElement(ctx context.Context, group int, p mergePlan, emit func([]byte)) error {
	j, err := f.st.jobAt(ctx, f.Table, f.Opts, p.SnapshotVersion, p.SourceVersion, p.SourceDigest)
	if err != nil {
		return err
	}
	part, err := j.RewriteGroup(ctx, group)
	if err != nil {
		return err
	}
	rw, err := encodePart(part.Rewritten)
	if err == nil {
		var data []byte
		if data, err = json.Marshal(mergePartMsg{Rewrite: rw, Matched: part.Matched, Counts: part.Counts}); err == nil {
			emit(data)
			return nil
		}
	}
	discardParts(j.Snapshot(), err, []write.Rewritten{part.Rewritten})
	return err
}

// Teardown closes the table and the job.
func (f *rewriteMergeFn) Teardown() error { return f.st.close() }

// mergeMarkerFn emits the empty element that makes the committer run.
type mergeMarkerFn struct{}

func (mergeMarkerFn) ProcessElement(_ mergePlan, emit func([]byte)) { emit(nil) }

func decodeMergePart(b []byte) (dml.MergePart, error) {
	var m mergePartMsg
	if err := json.Unmarshal(b, &m); err != nil {
		return dml.MergePart{}, fmt.Errorf("beamio: a part of a merge: %v: %w", err, deltaerr.ErrCorrupt)
	}
	r, err := decodePart(m.Rewrite)
	if err != nil {
		return dml.MergePart{}, err
	}
	return dml.MergePart{Rewritten: r, Matched: m.Matched, Counts: m.Counts}, nil
}

// commitMergeFn is step 3: the inserts, then one commit of every part.
type commitMergeFn struct {
	Table string
	Opts  MergeOptions
}

func (f *commitMergeFn) ProcessElement(ctx context.Context, _ int, encoded func(*[]byte) bool, p mergePlan, emit func(MergeResult)) error {
	var parts []dml.MergePart
	var matched []int64
	var data []byte
	for encoded(&data) {
		if len(data) == 0 {
			continue // the marker
		}
		part, err := decodeMergePart(data)
		if err != nil {
			return err
		}
		parts = append(parts, part)
		matched = append(matched, part.Matched...)
	}
	var st mergeState
	defer st.close()
	j, err := st.jobAt(ctx, f.Table, f.Opts, p.SnapshotVersion, p.SourceVersion, p.SourceDigest)
	var ins write.Rewritten
	if err == nil {
		ins, err = j.Insert(ctx, matched)
	}
	if err == nil {
		if h := dmlHook(func(h *dmlTestHooks) func(string) error { return h.beforeCommit }); h != nil {
			err = h(f.Table)
		}
	}
	if err != nil {
		if j != nil {
			rw := make([]write.Rewritten, 0, len(parts)+1)
			for _, part := range parts {
				rw = append(rw, part.Rewritten)
			}
			discardParts(j.Snapshot(), err, append(rw, ins))
		}
		return err
	}
	r, err := j.Commit(ctx, parts, ins)
	if err := afterDMLCommit(ctx, st.table, f.Table, r.Result, err); err != nil {
		return err
	}
	emit(MergeResult{Committed: r.Committed, Version: r.Commit.Version, SourceVersion: p.SourceVersion,
		Metrics: r.Merge, Groups: p.Groups, Tasks: len(parts)})
	return nil
}

package beamio

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/godelta/delta"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/dml"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
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

// MergeOptions are a MERGE INTO for Merge and MergeRows: the source, the
// join condition and the WHEN clauses, each list applied in order, as
// dml.MergeSpec describes them (the target is t and the source s unless
// TargetAlias and SourceAlias say otherwise).
type MergeOptions struct {
	// Source is the location of the Delta table Merge merges in (a path
	// or a URI, as Read takes). Every worker reads it, at one version.
	// MergeRows takes its rows from a PCollection instead: Source must be
	// empty there.
	Source string
	// SourceVersion, when not nil, is the version of Source read; nil
	// reads its latest version, which the planning step pins for every
	// worker.
	SourceVersion *int64
	// SourceSchema is the schema of the rows of MergeRows (a value per
	// field, in order; each row is checked against it, see MergeRows), in
	// DDL ("id BIGINT NOT NULL, name STRING", as schema.ParseDDL reads it)
	// or as schema JSON (what schema.StructType's String gives). It is
	// required there, and must be empty for Merge, whose source has the
	// schema of its table. (Text, as the rest of the options: a DoFn's
	// fields travel to the workers as data.)
	SourceSchema string
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
	// SourceVersion is the version of the source table read (Merge), or
	// -1 (MergeRows).
	SourceVersion int64
	// Metrics are the merge's figures, as commitInfo.operationMetrics
	// records them (dml.MergeMetrics.Map).
	Metrics dml.MergeMetrics
	// Groups is the number of groups of candidate files planned; Tasks
	// the number of worker tasks that rewrote one.
	Groups, Tasks int
}

// mergePlan is what the planning step decides, given to every later step
// as a side input: the versions of the table and the source (-1 for rows
// of a PCollection), and the digest of the source rows every worker must
// read.
type mergePlan struct {
	SnapshotVersion int64
	SourceVersion   int64
	Groups          int
	SourceRows      int64
	SourceDigest    []byte
}

func init() {
	register.DoFn4x1[context.Context, []byte, func(*[]byte) bool, func(mergePlan), error](&planMergeFn{})
	register.DoFn4x1[context.Context, []byte, mergePlan, func(int), error](&mergeTasksFn{})
	register.DoFn5x1[context.Context, int, mergePlan, func(*[]byte) bool, func([]byte), error](&rewriteMergeFn{})
	register.DoFn2x0[mergePlan, func([]byte)](&mergeMarkerFn{})
	register.DoFn6x1[context.Context, int, func(*[]byte) bool, mergePlan, func(*[]byte) bool, func(MergeResult), error](&commitMergeFn{})
	register.DoFn1x2[Row, []byte, error](&encodeRowFn{})
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
// Every worker must read the same source rows in the same order (a
// source row is known by its number in the matches the groups send): a
// table at a version is that. MergeRows merges the rows of a PCollection
// instead, through the same steps. The rows are held in memory on each
// worker, as Spark broadcasts a merge's source; a source over
// opts.MemoryBudget is refused (dml.ErrMergeSourceTooLarge) rather than
// spilled as in process.
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
	// The steps take the rows of a PCollection source as a side input;
	// a table source has none.
	return merge(s, table, opts, false, beam.CreateList(s, [][]byte{}))
}

// MergeRows runs MERGE INTO table USING the rows of source ON opts.On
// with opts' WHEN clauses, as a pipeline, and returns a PCollection
// holding one MergeResult (SourceVersion -1). source is a PCollection of
// Row, its values in the order of the fields of opts.SourceSchema (which
// names the source's columns for the clauses, as a source table's schema
// does); opts.Source must be empty. It is Merge, the same steps and the
// same code, but for how the source rows are obtained:
//
//   - the rows reach the planning step and every worker as a side input
//     (encoded as Row's coder encodes them), all of them on each worker,
//     as a broadcast; their encoded bytes count against opts.MemoryBudget
//     as they arrive (past it dml.ErrMergeSourceTooLarge, as past the
//     budget of the rows held);
//   - each worker sorts them by their encoding, so that all number them
//     alike whatever order the runner delivers them in (a PCollection has
//     none); the digest of the sorted rows must be the planner's, else
//     the step fails with deltaerr.ErrCorrupt, as for a table;
//   - each row is checked against opts.SourceSchema as it is read
//     (dml.SeqSource): a row of another length is write.ErrBatch, a value
//     of another type, or a null where the schema says NOT NULL,
//     dml.ErrMergeSourceValue; the planning step fails on the first.
//
// Rows that are equal are one row twice, as in any source: two source
// rows that match one target row fail the merge with
// dml.ErrMultipleMatch. An empty PCollection is an empty source (the NOT
// MATCHED BY SOURCE clauses still apply). source must be bounded: the
// merge is one statement over all its rows, so rows in windows are taken
// into the global window first (the rows of every window, merged once).
// The result's rows, commitInfo and change data are those of
// delta.Table.Merge with the same rows (delta.MergeRows), up to the
// files, as Merge says.
func MergeRows(s beam.Scope, table string, source beam.PCollection, opts MergeOptions) beam.PCollection {
	s = s.Scope("delta.MergeRows")
	if ws := source.WindowingStrategy(); ws != nil && ws.Fn != nil && ws.Fn.Kind != window.GlobalWindows {
		// The steps run in the global window (an impulse); a side input
		// in other windows would show them none of its rows.
		source = beam.WindowInto(s, window.NewGlobalWindows(), source)
	}
	return merge(s, table, opts, true, beam.ParDo(s, encodeRowFn{}, source))
}

// merge builds the steps of Merge and MergeRows: rows is the encoded
// source rows of MergeRows (fromRows), empty for Merge.
func merge(s beam.Scope, table string, opts MergeOptions, fromRows bool, rows beam.PCollection) beam.PCollection {
	src := beam.SideInput{Input: rows}
	plan := beam.ParDo(s, &planMergeFn{Table: table, Opts: opts, FromRows: fromRows}, beam.Impulse(s), src)
	tasks := beam.ParDo(s, &mergeTasksFn{}, beam.Impulse(s), beam.SideInput{Input: plan})
	tasks = beam.Reshuffle(s, tasks)
	parts := beam.ParDo(s, &rewriteMergeFn{Table: table, Opts: opts}, tasks, beam.SideInput{Input: plan}, src)
	marker := beam.ParDo(s, &mergeMarkerFn{}, plan)
	all := beam.GroupByKey(s, beam.AddFixedKey(s, beam.Flatten(s, parts, marker)))
	return beam.ParDo(s, &commitMergeFn{Table: table, Opts: opts}, all, beam.SideInput{Input: plan}, src)
}

// encodeRowFn encodes a source row of MergeRows for the side input.
type encodeRowFn struct{}

func (encodeRowFn) ProcessElement(r Row) ([]byte, error) { return encodeRow(r) }

// rowsSource is the merge source of the encoded rows next yields: held as
// they come (their bytes within budget), sorted by their encoding so that
// every worker numbers them alike, and decoded as the merge reads them,
// each checked against sch by dml.SeqSource.
func rowsSource(sch *schema.StructType, next func(*[]byte) bool, budget int64) (dml.Source, error) {
	if budget <= 0 {
		budget = dml.DefaultMergeMemory
	}
	// The encoded rows are smaller than the rows the merge holds
	// (dml's count is some 40 bytes a value), so a source refused here
	// would be refused by the merge too.
	var rows [][]byte
	var held int64
	var b []byte
	for next(&b) {
		if held += int64(len(b)); held > budget {
			return dml.Source{}, fmt.Errorf("beamio: %w: more than %d bytes of encoded source rows", dml.ErrMergeSourceTooLarge, budget)
		}
		rows = append(rows, bytes.Clone(b))
	}
	slices.SortFunc(rows, bytes.Compare)
	return dml.SeqSource(sch, func(yield func([]schema.Value, error) bool) {
		for _, r := range rows {
			row, err := decodeOwnedRow(r)
			if !yield(row.Values, err) || err != nil {
				return
			}
		}
	}), nil
}

// sourceSchema parses o.SourceSchema, DDL or schema JSON; a malformed one
// is dml.ErrMergeClause.
func (o MergeOptions) sourceSchema() (*schema.StructType, error) {
	text := strings.TrimSpace(o.SourceSchema)
	parse := schema.ParseDDL
	if strings.HasPrefix(text, "{") {
		parse = schema.Parse
	}
	sch, err := parse(text)
	if err != nil {
		return nil, fmt.Errorf("beamio: the SourceSchema of MergeRows: %v: %w", err, dml.ErrMergeClause)
	}
	return sch, nil
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
// at src (the table opts.Source at that version, or the rows of
// MergeRows, which next yields), made on first use; digest, when not nil,
// must be the source's. The two sources differ in how their rows are
// obtained, nothing else.
func (st *mergeState) jobAt(ctx context.Context, table string, opts MergeOptions, version, src int64, next func(*[]byte) bool, digest []byte) (*dml.MergeJob, error) {
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
	var source dml.Source
	what := "rows"
	if opts.Source != "" {
		what = fmt.Sprintf("%s at version %d", opts.Source, src)
		srcT, err := openTable(ctx, opts.Source, opts.TrustRoots)
		if err != nil {
			return nil, fmt.Errorf("beamio: the merge source: %w", err)
		}
		defer srcT.Close()
		srcSnap, err := srcT.SnapshotAt(ctx, src)
		if err != nil {
			return nil, fmt.Errorf("beamio: the merge source: %w", err)
		}
		if source, err = dml.TableSource(ctx, srcSnap, scan.Options{}); err != nil {
			return nil, err
		}
	} else {
		sch, err := opts.sourceSchema()
		if err != nil {
			return nil, err
		}
		if source, err = rowsSource(sch, next, opts.MemoryBudget); err != nil {
			return nil, err
		}
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
		return nil, fmt.Errorf("beamio: the merge source %s read here is not the rows the plan read: %w", what, deltaerr.ErrCorrupt)
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

// planMergeFn is step 1. FromRows says the source is the rows of
// MergeRows, else the table of Merge; the later steps follow the plan.
type planMergeFn struct {
	Table    string
	Opts     MergeOptions
	FromRows bool
}

func (f *planMergeFn) ProcessElement(ctx context.Context, _ []byte, rows func(*[]byte) bool, emit func(mergePlan)) error {
	var st mergeState
	defer st.close()
	switch {
	case f.FromRows && f.Opts.Source != "":
		return fmt.Errorf("beamio: MergeRows with a source table %q: %w", f.Opts.Source, dml.ErrMergeClause)
	case f.FromRows && strings.TrimSpace(f.Opts.SourceSchema) == "":
		return fmt.Errorf("beamio: MergeRows without a SourceSchema: %w", dml.ErrMergeClause)
	case !f.FromRows && f.Opts.Source == "":
		return fmt.Errorf("beamio: a merge without a source: %w", dml.ErrMergeClause)
	case !f.FromRows && f.Opts.SourceSchema != "":
		return fmt.Errorf("beamio: Merge of a source table with a SourceSchema (for MergeRows): %w", dml.ErrMergeClause)
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
	switch {
	case f.FromRows:
		src = -1
	case f.Opts.SourceVersion != nil:
		src = *f.Opts.SourceVersion
	default:
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
	j, err := st.jobAt(ctx, f.Table, f.Opts, snap.Version(), src, rows, nil)
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

func (f *rewriteMergeFn) ProcessElement(ctx context.Context, group int, p mergePlan, rows func(*[]byte) bool, emit func([]byte)) error {
	j, err := f.st.jobAt(ctx, f.Table, f.Opts, p.SnapshotVersion, p.SourceVersion, rows, p.SourceDigest)
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

func (f *commitMergeFn) ProcessElement(ctx context.Context, _ int, encoded func(*[]byte) bool, p mergePlan, rows func(*[]byte) bool, emit func(MergeResult)) error {
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
	j, err := st.jobAt(ctx, f.Table, f.Opts, p.SnapshotVersion, p.SourceVersion, rows, p.SourceDigest)
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

package beamio

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/godelta/delta"
	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/optimize"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/txn"
	"github.com/godelta/delta/write"
	"github.com/godelta/delta/zorder"
)

// OptimizeOptions choose what Optimize does; the zero value compacts every
// partition. They are optimize.Options', in a form that travels to the
// workers.
type OptimizeOptions struct {
	// Where, in the text form of package expr, limits OPTIMIZE to the
	// partitions it may match; it may name partition columns only
	// (optimize.ErrPredicate).
	Where string
	// ZOrderBy or HilbertBy (at most one) rewrite along a space-filling
	// curve of these data columns.
	ZOrderBy, HilbertBy []string
	// TargetSize, MinFileSize, MaxDeletedRowsRatio and Ranges are
	// optimize.Options': 0 takes their defaults.
	TargetSize          int64
	MinFileSize         int64
	MaxDeletedRowsRatio float64
	Ranges              int
	// SortMemory bounds the rows a group rewritten by the rewrite core's
	// sorted rewrite stages in memory (see below); 0: its default.
	SortMemory int64
}

// OptimizeResult is what the committing step of Optimize emits, once.
type OptimizeResult struct {
	// Committed is false when there was nothing to rewrite.
	Committed bool
	// Version is the commit's table version (when Committed).
	Version int64
	// FilesAdded and FilesRemoved count the data files; Rows the rows
	// written.
	FilesAdded, FilesRemoved, Rows int64
	// Groups is the number of groups (bins) rewritten; Tasks the number of
	// worker tasks that wrote files (a group per task, or a key range per
	// task for a range-partitioned curve).
	Groups, Tasks int
}

// optPlan is what the planning step of Optimize decides, given to every
// later step as a side input.
type optPlan struct {
	SnapshotVersion int64
	Groups          int
	// Shuffle: a curve rewrite, range-partitioned across workers; else one
	// group per task.
	Shuffle bool
	// Ranges and Files are, when Shuffle, the number of key ranges and
	// of files of each group.
	Ranges, Files []int
}

// optTask is a group to rewrite (File -1), or, when the plan shuffles,
// one file of a group to read.
type optTask struct {
	Group, File int
}

// sampleAcc is a uniform sample (reservoir) of the rows of a group: N rows
// seen, Rows (each encoded as a Row) kept.
type sampleAcc struct {
	N    int64
	Rows [][]byte
}

func init() {
	register.DoFn3x1[context.Context, []byte, func(optPlan), error](&planOptimizeFn{})
	register.DoFn4x1[context.Context, []byte, optPlan, func(optTask), error](&optTasksFn{})
	register.DoFn4x1[context.Context, optTask, optPlan, func([]byte), error](&rewriteGroupFn{})
	register.DoFn4x1[context.Context, optTask, optPlan, func(int, Row), error](&readGroupFileFn{})
	register.Combiner3[sampleAcc, Row, []byte](&sampleFn{})
	register.DoFn6x1[context.Context, int, Row, optPlan, func(*int, *[]byte) bool, func(int, Row), error](&rangeFn{})
	register.DoFn6x1[context.Context, int, func(*Row) bool, optPlan, func(*int, *[]byte) bool, func([]byte), error](&writeRangeFn{})
	register.DoFn5x1[context.Context, int, func(*[]byte) bool, optPlan, func(OptimizeResult), error](&commitOptimizeFn{})
	register.DoFn2x0[optPlan, func([]byte)](&optMarkerFn{})
	register.Emitter1[optPlan]()
	register.Emitter1[optTask]()
	register.Emitter1[OptimizeResult]()
	register.Iter2[int, []byte]()
}

// Optimize runs OPTIMIZE (compaction, ZORDER BY, HILBERT BY, or the
// clustering of a clustered table) on the latest version of the Delta table
// at table, as a pipeline, and returns a PCollection holding one
// OptimizeResult. It does what delta.Table.Optimize does in one process,
// with the work spread over the workers:
//
//  1. One step plans it, once, with package optimize's planner
//     (optimize.NewPlan: partition pruning by Where, bin-packing of small
//     files and of files with many deleted rows; a curve takes every file
//     of a partition as one group).
//  2. Compaction: each group is one worker task, rewritten by the
//     library's rewrite core (optimize.Plan.RewriteGroup, write.Rewrite:
//     deletion vectors applied, row ids kept, statistics written).
//     Curves: the rows are range-partitioned by their curve key across
//     workers. Workers read the group's files, one file per task, with
//     the library's file reader; one uniform sample of each group's rows
//     (a combine of per-worker reservoirs) gives the curve's column
//     ranges, exactly as the in-process OPTIMIZE cuts them from its
//     sample (optimize.Plan.CurveKey), and cuts the key space into
//     ranges of equal row counts, about one target-size file each; each
//     row goes to its key range, and each range is sorted by one worker
//     and written with the row writer (write.Rows, dataChange false). A
//     curve rewrite of a table with row tracking or identity columns,
//     whose rows must keep their identities through the rewrite core, is
//     rewritten one group per task instead (the core's external sort).
//  3. One step commits everything in ONE commit through the commit
//     pipeline (optimize.Plan.Commit): the same removes and adds
//     (dataChange false), the same commitInfo operation, parameters and
//     metrics, and the same conflict checks as the in-process OPTIMIZE: a
//     concurrent commit that removed a file read here fails the commit
//     with *txn.ConflictError (errors.Is txn.ErrConflict), and the files
//     this commit would have added are deleted. Then the post-commit
//     hooks run, as after every commit of the library.
//
// A range of a curve rewrite is sorted in the memory of its worker: the
// ranges are sized to one target file each (TargetSize), so that is what a
// worker holds. Files written by a failed task or run are never committed
// (VACUUM removes them).
func Optimize(s beam.Scope, table string, opts OptimizeOptions) beam.PCollection {
	s = s.Scope("delta.Optimize")
	plan := beam.ParDo(s, &planOptimizeFn{Table: table, Opts: opts}, beam.Impulse(s))
	tasks := beam.ParDo(s, &optTasksFn{}, beam.Impulse(s), beam.SideInput{Input: plan})
	tasks = beam.Reshuffle(s, tasks)
	// Compaction (and curves that stay in the core): one group per task.
	parts := beam.ParDo(s, &rewriteGroupFn{Table: table, Opts: opts}, tasks, beam.SideInput{Input: plan})
	// Curves: read, sample, range-partition, sort and write.
	rows := beam.ParDo(s, &readGroupFileFn{Table: table, Opts: opts}, tasks, beam.SideInput{Input: plan})
	samples := beam.CombinePerKey(s, &sampleFn{}, rows)
	ranged := beam.ParDo(s, &rangeFn{Table: table, Opts: opts}, rows, beam.SideInput{Input: plan}, beam.SideInput{Input: samples})
	written := beam.ParDo(s, &writeRangeFn{Table: table, Opts: opts}, beam.GroupByKey(s, ranged),
		beam.SideInput{Input: plan}, beam.SideInput{Input: samples})
	marker := beam.ParDo(s, &optMarkerFn{}, plan)
	all := beam.GroupByKey(s, beam.AddFixedKey(s, beam.Flatten(s, parts, written, marker)))
	return beam.ParDo(s, &commitOptimizeFn{Table: table, Opts: opts}, all, beam.SideInput{Input: plan})
}

// libOptions are the optimize.Options of o.
func (o OptimizeOptions) libOptions() (optimize.Options, error) {
	lo := optimize.Options{
		ZOrderBy: o.ZOrderBy, HilbertBy: o.HilbertBy,
		TargetSize: o.TargetSize, MinFileSize: o.MinFileSize,
		MaxDeletedRowsRatio: o.MaxDeletedRowsRatio, Ranges: o.Ranges,
		SortMemory: o.SortMemory,
		Txn:        txn.Options{EngineInfo: EngineInfo},
	}
	if o.Where != "" {
		w, err := expr.Parse(o.Where)
		if err != nil {
			return lo, fmt.Errorf("beamio: OPTIMIZE predicate %q: %w", o.Where, err)
		}
		lo.Where = w
	}
	return lo, nil
}

// optState is what a step of Optimize keeps between bundles: the table,
// and the plan of the version it last worked on.
type optState struct {
	table *delta.Table
	snap  *delta.Snapshot
	plan  *optimize.Plan
}

// planAt returns the plan of the table at version, made on first use. The
// plan is a function of the snapshot and the options, so every worker
// makes the one the planning step made (the committer checks it).
func (st *optState) planAt(ctx context.Context, table string, opts OptimizeOptions, version int64) (*optimize.Plan, error) {
	if st.plan != nil && st.snap.Version() == version {
		return st.plan, nil
	}
	if st.table == nil {
		t, err := openTable(ctx, table, nil)
		if err != nil {
			return nil, err
		}
		st.table = t
	}
	snap, err := st.table.SnapshotAt(ctx, version)
	if err != nil {
		return nil, err
	}
	lo, err := opts.libOptions()
	if err != nil {
		return nil, err
	}
	pl, err := optimize.NewPlan(ctx, snap, lo)
	if err != nil {
		return nil, err
	}
	st.snap, st.plan = snap, pl
	return pl, nil
}

func (st *optState) close() error {
	if st.table == nil {
		return nil
	}
	err := st.table.Close()
	st.table, st.snap, st.plan = nil, nil, nil
	return err
}

// planOptimizeFn is step 1 of Optimize.
type planOptimizeFn struct {
	Table string
	Opts  OptimizeOptions
	st    optState
}

func (f *planOptimizeFn) ProcessElement(ctx context.Context, _ []byte, emit func(optPlan)) error {
	defer f.st.close()
	t, err := openTable(ctx, f.Table, nil)
	if err != nil {
		return err
	}
	snap, err := t.Snapshot(ctx)
	t.Close()
	if err != nil {
		return err
	}
	p, m := snap.Protocol(), snap.Metadata()
	if err := txn.WriteSupportedChecked(&p, &m); err != nil {
		return err
	}
	pl, err := f.st.planAt(ctx, f.Table, f.Opts, snap.Version())
	if err != nil {
		return err
	}
	out := optPlan{SnapshotVersion: snap.Version(), Groups: pl.Groups()}
	if _, _, ok := pl.Curve(); ok && shuffleSafe(snap) {
		out.Shuffle = true
		target := pl.Options().TargetSize
		for i := range out.Groups {
			files, size := pl.Group(i)
			out.Ranges = append(out.Ranges, int(min(maxRanges, max(1, (size+target-1)/target))))
			out.Files = append(out.Files, len(files))
		}
	}
	emit(out)
	return nil
}

// shuffleSafe says whether the rows of a curve rewrite may go through
// the row writer outside the rewrite core: not when the table tracks row
// ids or has identity columns, whose values the core keeps.
func shuffleSafe(snap *delta.Snapshot) bool {
	if snap.Config().RowTracking() {
		return false
	}
	for i := range snap.Schema().Fields {
		if snap.Schema().Fields[i].IsIdentity() {
			return false
		}
	}
	return true
}

// optTasksFn makes the tasks of the plan: a task per group, or per file of
// a group when the plan shuffles.
type optTasksFn struct{}

func (f *optTasksFn) ProcessElement(ctx context.Context, _ []byte, p optPlan, emit func(optTask)) error {
	for g := range p.Groups {
		if !p.Shuffle {
			emit(optTask{Group: g, File: -1})
			continue
		}
		for i := range p.Files[g] {
			emit(optTask{Group: g, File: i})
		}
	}
	return nil
}

// rewriteGroupFn is step 2 of a compaction: one group per task, through
// the rewrite core.
type rewriteGroupFn struct {
	Table string
	Opts  OptimizeOptions
	st    optState
}

func (f *rewriteGroupFn) ProcessElement(ctx context.Context, t optTask, p optPlan, emit func([]byte)) error {
	if p.Shuffle {
		return nil
	}
	pl, err := f.st.planAt(ctx, f.Table, f.Opts, p.SnapshotVersion)
	if err != nil {
		return err
	}
	r, err := pl.RewriteGroup(ctx, t.Group)
	if err != nil {
		return err
	}
	data, err := encodePart(r)
	if err != nil {
		write.Discard(f.st.snap, err, r.Adds)
		return err
	}
	emit(data)
	return nil
}

// Teardown closes the table.
func (f *rewriteGroupFn) Teardown() error { return f.st.close() }

// readGroupFileFn reads a file of a group of a shuffled curve rewrite
// with the library's file reader (deletion vectors applied), its rows
// keyed by group.
type readGroupFileFn struct {
	Table string
	Opts  OptimizeOptions
	st    optState
	fr    *scan.FileReader
}

func (f *readGroupFileFn) ProcessElement(ctx context.Context, t optTask, p optPlan, emit func(int, Row)) error {
	if !p.Shuffle {
		return nil
	}
	pl, err := f.st.planAt(ctx, f.Table, f.Opts, p.SnapshotVersion)
	if err != nil {
		return err
	}
	if f.fr == nil {
		if f.fr, err = scan.NewFileReader(f.st.snap, scan.Options{}); err != nil {
			return err
		}
	}
	files, _ := pl.Group(t.Group)
	if t.File < 0 || t.File >= len(files) {
		return fmt.Errorf("beamio: file %d of OPTIMIZE group %d of %d files: %w", t.File, t.Group, len(files), deltaerr.ErrInvalidArgument)
	}
	return f.fr.ReadFile(ctx, files[t.File], func(b *scan.FileBatch) error {
		for i := range b.Len {
			emit(t.Group, Row{Values: b.Row(i)})
		}
		return nil
	})
}

// Teardown closes the reader and the table.
func (f *readGroupFileFn) Teardown() error {
	if f.fr != nil {
		_ = f.fr.Close()
		f.fr = nil
	}
	return f.st.close()
}

// sampleFn samples the rows of each group uniformly: a reservoir per
// worker, merged into one uniform sample of zorder.DefaultSampleSize rows,
// the size of the in-process OPTIMIZE's reservoirs.
type sampleFn struct{}

func (sampleFn) CreateAccumulator() sampleAcc { return sampleAcc{} }

func (sampleFn) AddInput(a sampleAcc, r Row) (sampleAcc, error) {
	a.N++
	if len(a.Rows) < zorder.DefaultSampleSize {
		b, err := encodeRow(r)
		if err != nil {
			return a, err
		}
		a.Rows = append(a.Rows, b)
		return a, nil
	}
	if j := rand.Int64N(a.N); j < int64(len(a.Rows)) {
		b, err := encodeRow(r)
		if err != nil {
			return a, err
		}
		a.Rows[j] = b
	}
	return a, nil
}

// MergeAccumulators merges two uniform samples into one of the union: the
// number taken from each side is drawn as a draw without replacement from
// the two populations would take it, and that many of each side's
// sample, chosen at random, are kept.
func (sampleFn) MergeAccumulators(a, b sampleAcc) sampleAcc {
	return mergeSamples(a, b, zorder.DefaultSampleSize)
}

func mergeSamples(a, b sampleAcc, k int) sampleAcc {
	if a.N == 0 {
		return b
	}
	if b.N == 0 {
		return a
	}
	na, nb := a.N, b.N
	var ca, cb int
	for range min(int64(k), na+nb) {
		if rand.Int64N(na+nb) < na {
			ca++
			na--
		} else {
			cb++
			nb--
		}
	}
	// ca <= min(a.N, k) = len(a.Rows), and so for b.
	out := sampleAcc{N: a.N + b.N, Rows: make([][]byte, 0, ca+cb)}
	out.Rows = append(out.Rows, randomSubset(a.Rows, ca)...)
	out.Rows = append(out.Rows, randomSubset(b.Rows, cb)...)
	return out
}

// randomSubset returns n elements of xs chosen uniformly at random.
func randomSubset(xs [][]byte, n int) [][]byte {
	xs = slices.Clone(xs)
	for i := range n {
		j := i + rand.IntN(len(xs)-i)
		xs[i], xs[j] = xs[j], xs[i]
	}
	return xs[:n]
}

// ExtractOutput encodes the sample: a count of rows, then each row's
// length and bytes.
func (sampleFn) ExtractOutput(a sampleAcc) []byte {
	b := binary.AppendUvarint(nil, uint64(len(a.Rows)))
	for _, r := range a.Rows {
		b = binary.AppendUvarint(b, uint64(len(r)))
		b = append(b, r...)
	}
	return b
}

// decodeSample decodes what ExtractOutput wrote.
func decodeSample(b []byte) ([]Row, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, fmt.Errorf("%w: a sample's count", ErrBadRow)
	}
	b = b[k:]
	rows := make([]Row, 0, n)
	for range n {
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(len(b)-k) {
			return nil, fmt.Errorf("%w: a sampled row's length", ErrBadRow)
		}
		r, err := decodeRow(b[k : k+int(l)])
		if err != nil {
			return nil, err
		}
		rows = append(rows, r)
		b = b[k+int(l):]
	}
	return rows, nil
}

// groupKey is the key of a group's curve: the row key, and the split
// points that cut the key space into the group's ranges.
type groupKey struct {
	key    write.RowKey
	splits [][]uint64
}

// rangeState builds the curve keys of the groups from the samples, once
// per worker.
type rangeState struct {
	st   optState
	keys map[int]*groupKey
}

func (rs *rangeState) keyOf(ctx context.Context, table string, opts OptimizeOptions, p optPlan, group int, samples func(*int, *[]byte) bool) (*groupKey, error) {
	if gk, ok := rs.keys[group]; ok {
		return gk, nil
	}
	pl, err := rs.st.planAt(ctx, table, opts, p.SnapshotVersion)
	if err != nil {
		return nil, err
	}
	if rs.keys == nil {
		rs.keys = map[int]*groupKey{}
	}
	var g int
	var data []byte
	for samples(&g, &data) {
		if _, done := rs.keys[g]; done {
			continue
		}
		rows, err := decodeSample(data)
		if err != nil {
			return nil, err
		}
		curve := make([][]schema.Value, len(rows))
		for i, r := range rows {
			curve[i] = pl.CurveValues(nil, r.Values)
		}
		key, err := pl.CurveKey(curve)
		if err != nil {
			return nil, err
		}
		// The keys of the sampled rows, sorted: the split points are those
		// at each range's share of the sample.
		keys := make([][]uint64, len(rows))
		for i, r := range rows {
			keys[i] = make([]uint64, key.Words)
			if err := key.Key(keys[i], r.Values); err != nil {
				return nil, err
			}
		}
		slices.SortFunc(keys, slices.Compare)
		n := 1
		if g < len(p.Ranges) {
			n = p.Ranges[g]
		}
		gk := &groupKey{key: key}
		for i := 1; i < n && len(keys) > 0; i++ {
			gk.splits = append(gk.splits, keys[i*len(keys)/n])
		}
		rs.keys[g] = gk
	}
	gk, ok := rs.keys[group]
	if !ok {
		return nil, fmt.Errorf("beamio: no sample of OPTIMIZE group %d: %w", group, deltaerr.ErrInvalidArgument)
	}
	return gk, nil
}

// rangeOf is the range of a key: the number of split points at or below
// it.
func (gk *groupKey) rangeOf(key []uint64) int {
	i, _ := slices.BinarySearchFunc(gk.splits, key, func(s, k []uint64) int {
		if slices.Compare(s, k) <= 0 {
			return -1
		}
		return 1
	})
	return i
}

// rangeBatchRows is the batch size a range writer hands the row writer:
// small, because a file closes at the target size only between batches,
// and a range holds about one target-size file.
const rangeBatchRows = 256

// maxRanges bounds the ranges of a group, so that (group, range) fits one
// key.
const maxRanges = 1 << 20

// rangeFn keys each row of a shuffled curve rewrite by its key range.
type rangeFn struct {
	Table string
	Opts  OptimizeOptions
	rs    rangeState
	buf   []uint64
}

func (f *rangeFn) ProcessElement(ctx context.Context, group int, r Row, p optPlan, samples func(*int, *[]byte) bool, emit func(int, Row)) error {
	gk, err := f.rs.keyOf(ctx, f.Table, f.Opts, p, group, samples)
	if err != nil {
		return err
	}
	if len(f.buf) != gk.key.Words {
		f.buf = make([]uint64, gk.key.Words)
	}
	if err := gk.key.Key(f.buf, r.Values); err != nil {
		return err
	}
	emit(group*maxRanges+gk.rangeOf(f.buf), r)
	return nil
}

// Teardown closes the table.
func (f *rangeFn) Teardown() error { return f.rs.st.close() }

// writeRangeFn sorts one key range of a group by the curve key and writes
// it with the row writer.
type writeRangeFn struct {
	Table string
	Opts  OptimizeOptions
	rs    rangeState
}

func (f *writeRangeFn) ProcessElement(ctx context.Context, key int, rows func(*Row) bool, p optPlan, samples func(*int, *[]byte) bool, emit func([]byte)) error {
	group := key / maxRanges
	gk, err := f.rs.keyOf(ctx, f.Table, f.Opts, p, group, samples)
	if err != nil {
		return err
	}
	pl := f.rs.st.plan
	type keyed struct {
		key []uint64
		row []schema.Value
	}
	var all []keyed
	var r Row
	for rows(&r) {
		k := make([]uint64, gk.key.Words)
		if err := gk.key.Key(k, r.Values); err != nil {
			return err
		}
		all = append(all, keyed{k, r.Values})
	}
	slices.SortStableFunc(all, func(a, b keyed) int { return slices.Compare(a.key, b.key) })
	ncol := len(f.rs.st.snap.Schema().Fields)
	i := 0
	next := func(r *Row) bool {
		if i == len(all) {
			return false
		}
		r.Values = all[i].row
		all[i].row = nil
		i++
		return true
	}
	adds, err := write.Rows(ctx, f.rs.st.snap, rowBatchesOf(next, ncol, rangeBatchRows), write.Options{
		TargetFileSize: pl.Options().TargetSize})
	if err != nil {
		return err
	}
	for j := range adds {
		adds[j].DataChange = false
	}
	pl.MarkClustered(adds)
	data, err := encodePart(write.Rewritten{Adds: adds, Rows: int64(len(all))})
	if err != nil {
		write.Discard(f.rs.st.snap, err, adds)
		return err
	}
	emit(data)
	return nil
}

// Teardown closes the table.
func (f *writeRangeFn) Teardown() error { return f.rs.st.close() }

// optMarkerFn emits the empty element that makes the committer run.
type optMarkerFn struct{}

func (optMarkerFn) ProcessElement(_ optPlan, emit func([]byte)) { emit(nil) }

// commitOptimizeFn is step 3 of Optimize: one commit of every part.
type commitOptimizeFn struct {
	Table string
	Opts  OptimizeOptions
}

func (f *commitOptimizeFn) ProcessElement(ctx context.Context, _ int, encoded func(*[]byte) bool, p optPlan, emit func(OptimizeResult)) error {
	var parts []write.Rewritten
	var data []byte
	tasks := 0
	for encoded(&data) {
		if len(data) == 0 {
			continue // the marker
		}
		r, err := decodePart(data)
		if err != nil {
			return err
		}
		parts = append(parts, r)
		tasks++
	}
	res := OptimizeResult{Groups: p.Groups, Tasks: tasks}
	var st optState
	defer st.close()
	pl, err := st.planAt(ctx, f.Table, f.Opts, p.SnapshotVersion)
	if err != nil {
		discardParts(st.snap, err, parts)
		return err
	}
	if p.Shuffle {
		for g := range p.Groups {
			rms, read := pl.GroupRemoves(g)
			parts = append(parts, write.Rewritten{Removes: rms, Read: read})
		}
	}
	if pl.Groups() == 0 {
		emit(res)
		return nil
	}
	if h := hook(func(h *testHooks) func(string, int) error { return h.beforeOptimizeCommit }); h != nil {
		if err := h(f.Table, pl.Groups()); err != nil {
			discardParts(st.snap, err, parts)
			return err
		}
	}
	r, err := pl.Commit(ctx, parts)
	hooksMu.Lock()
	seen := hooks.optimizeCommitted
	hooksMu.Unlock()
	if seen != nil {
		seen(f.Table, err)
	}
	if err != nil {
		return err
	}
	st.table.PostCommit(ctx, &r.Commit)
	res.Committed, res.Version = r.Committed, r.Commit.Version
	res.FilesAdded, res.FilesRemoved, res.Rows = r.Metrics.NumFilesAdded, r.Metrics.NumFilesRemoved, r.Metrics.NumRowsWritten
	emit(res)
	return nil
}

// discardParts deletes the files the parts added (data and change
// data), after err.
func discardParts(snap *delta.Snapshot, err error, parts []write.Rewritten) {
	if snap == nil {
		return
	}
	var adds []actions.Add
	for _, r := range parts {
		adds = append(adds, r.Adds...)
		for _, c := range r.CDC {
			adds = append(adds, actions.Add{Path: c.Path})
		}
	}
	write.Discard(snap, err, adds)
}

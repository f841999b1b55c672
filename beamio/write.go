package beamio

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window/trigger"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/typex"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/godelta/delta"
	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/txn"
	"github.com/godelta/delta/write"
)

// DefaultShards is WriteOptions.Shards when it is 0.
const DefaultShards = 8

// WriteOptions tune Write. WriteID is required.
type WriteOptions struct {
	// WriteID names the write for exactly-once delivery: it is the
	// application id of the txn action the commit carries (PROTOCOL.md
	// "Transaction Identifiers"). Give a pipeline that is run again after
	// a failure the same WriteID and Version, so that its commit lands
	// only if the failed run's did not.
	WriteID string
	// Version is the txn version of this write, at least 0. Successive
	// writes of one WriteID must give increasing versions (a batch
	// number, a day): a write whose Version the table already holds for
	// WriteID, or a later one, commits nothing. A windowed input does not
	// use it: each window's version is its end (see Write).
	Version int64
	// Shards is how many writer tasks the rows are spread over (each
	// writes its own files); 0 means DefaultShards.
	Shards int
	// TargetFileSize and Compression are write.Options': the size at which
	// a writer starts a new file (0: write.DefaultTargetFileSize), and the
	// Parquet codec (empty: snappy).
	TargetFileSize int64
	Compression    string
}

// WriteResult is what the committing step of Write emits, once.
type WriteResult struct {
	// Committed says whether this run's files were committed. It is false
	// when the table already held WriteID at Version or later (an
	// earlier run, or an earlier attempt of this commit, landed): this
	// run's files are then left uncommitted, for VACUUM.
	Committed bool
	// Version is the table version of the commit (when Committed).
	Version int64
	// Files and Rows count the data files and rows this run wrote.
	Files, Rows int64
	// TxnVersion is the txn version the result is for: WriteOptions.Version,
	// or, for a windowed input, the window's (see Write).
	TxnVersion int64
}

// writePlan is what the planning step of Write decides, given to every
// writer and to the committer: the table version the files are written
// for, and whether the write was committed before (then nothing is
// written).
type writePlan struct {
	SnapshotVersion int64
	Done            bool
	// AppVersion is the table's txn version of WriteID when the plan was
	// made, and HasApp whether it holds one: writers of a windowed input
	// compare their window's version with it.
	AppVersion int64
	HasApp     bool
}

func init() {
	register.DoFn3x1[context.Context, []byte, func(writePlan), error](&planWriteFn{})
	register.DoFn2x0[Row, func(int, Row)](&shardFn{})
	register.DoFn5x1[context.Context, int, func(*Row) bool, writePlan, func([]byte), error](&writeFilesFn{})
	register.DoFn5x1[context.Context, int, func(*[]byte) bool, writePlan, func(WriteResult), error](&commitFn{})
	register.DoFn2x0[writePlan, func([]byte)](&markerFn{})
	register.DoFn6x1[context.Context, beam.Window, int, func(*Row) bool, writePlan, func([]byte), error](&writeWindowFn{})
	register.DoFn5x1[beam.Window, int, func(*[]byte) bool, writePlan, func(int, windowAdds), error](&gatherWindowFn{})
	register.DoFn5x1[state.Provider, timers.Provider, int, windowAdds, func(WriteResult), error](&commitWindowsFn{})
	register.Emitter2[int, windowAdds]()
	beam.RegisterType(reflect.TypeFor[windowAdds]())
	register.Emitter1[writePlan]()
	register.Emitter2[int, Row]()
	register.Emitter1[[]byte]()
	register.Emitter1[WriteResult]()
	register.Iter1[Row]()
	register.Iter1[[]byte]()
}

// Write appends rows (a PCollection of Row, values in the table schema's
// order, partition columns included) to the existing Delta table at table,
// exactly once, and returns a PCollection holding one WriteResult.
//
// How it runs:
//
//  1. One step plans the write: it loads the latest snapshot, checks that
//     the library can write the table, and asks whether the table already
//     holds WriteID at Version or later (then every later step does
//     nothing: a pipeline run again after its commit landed writes no
//     file).
//  2. Rows are spread over Shards keys and grouped; each group is written
//     by one worker with the library's row writer (write.Rows): NOT NULL,
//     invariants, CHECK constraints and generated columns are checked
//     row by row, rows are split into partition directories, files get
//     their statistics, and go straight into the table's store. The
//     worker emits the add actions of its files; nothing is committed.
//  3. One committing step gathers every add and commits them in one
//     commit through the library's commit pipeline (write.AppendFiles: a
//     blind append with the txn action (WriteID, Version), conflict checks
//     and retries), then runs the post-commit hooks (checksum, checkpoint,
//     auto compaction, UniForm) as every commit of the library does.
//
// Exactly once: a writer bundle that fails and is retried writes new files
// under new names, and only the adds of the attempt that succeeded reach
// the committer (the runner's contract for bundle outputs); the failed
// attempt's files are never named by a commit and are left for VACUUM. The
// commit carries the txn action, and write.AppendFiles checks the table's
// version of WriteID inside every attempt of the commit, so a committer
// run again (retried after dying between its put and its acknowledgment)
// or a whole pipeline run again with the same WriteID and Version commits
// nothing (WriteResult.Committed is false). A commit whose outcome is
// unknown (txn.ErrCommitUnknown) fails the step; its retry resolves it the
// same way.
//
// Errors (a row that breaks a constraint, a table that cannot be written,
// a conflicting change of schema) fail the step that meets them, and with
// it the pipeline. Rows holding no row commit nothing (the result says
// Committed false).
//
// Windows: rows in the global window (the default) are committed once, as
// above. Rows in fixed or sliding windows (beam.WindowInto, event times)
// are committed once per window, when the watermark passes the window's
// end, with txn(WriteID, the window's end in milliseconds since the
// epoch); the result holds one WriteResult per window (a row in sliding
// windows is in several windows, and is written once in each). Writers
// write one window's rows per group; one committer keeps the windows it
// receives (state) and, at each window's end (an event-time timer),
// commits every window kept that has ended, in the order of their ends. The version
// must grow with that order because a txn action is a high-water mark:
// the table keeps only the application's largest version, and
// write.AppendFiles commits nothing at or below it. So a window whose
// version is not above the table's:
//
//   - was committed before when a commit of the log carries
//     txn(WriteID, its version): a rerun of the pipeline, or a committer
//     run again. Nothing is written or committed (Committed false).
//   - otherwise is late (its window closed after a later one was
//     committed, or a new run of the WriteID brings older events): the
//     step fails with ErrWindowNotAfter. Its rows are never dropped
//     silently; give such data another WriteID, or write it in the global
//     window with a Version of its own.
//
// Merging windows (sessions), triggers other than the default and an
// allowed lateness are refused (deltaerr.ErrInvalidArgument, when the
// pipeline runs): a window's version must be a function of the window,
// and each window must reach the committer once, in one pane. Rows behind
// the watermark are then dropped by the runner before Write sees them,
// as Beam does for any window without allowed lateness.
func Write(s beam.Scope, table string, rows beam.PCollection, opts WriteOptions) beam.PCollection {
	s = s.Scope("delta.Write")
	if ws := rows.WindowingStrategy(); ws != nil && ws.Fn != nil && ws.Fn.Kind != window.GlobalWindows {
		return writeWindowed(s, table, rows, opts, ws)
	}
	plan := beam.ParDo(s, &planWriteFn{Table: table, Opts: opts}, beam.Impulse(s))
	shards := opts.Shards
	if shards <= 0 {
		shards = DefaultShards
	}
	keyed := beam.ParDo(s, &shardFn{Shards: shards}, rows)
	grouped := beam.GroupByKey(s, keyed)
	adds := beam.ParDo(s, &writeFilesFn{Table: table, Opts: opts}, grouped, beam.SideInput{Input: plan})
	// Every add goes to one key, with an empty marker so that the
	// committer runs once even when no writer wrote a file.
	marker := beam.ParDo(s, markerFn{}, plan)
	all := beam.GroupByKey(s, beam.AddFixedKey(s, beam.Flatten(s, adds, marker)))
	return beam.ParDo(s, &commitFn{Table: table, Opts: opts}, all, beam.SideInput{Input: plan})
}

// checkWriteOptions refuses options Write cannot honour.
func checkWriteOptions(o WriteOptions) error {
	if strings.TrimSpace(o.WriteID) == "" {
		return fmt.Errorf("beamio: WriteOptions.WriteID is required: %w", deltaerr.ErrInvalidArgument)
	}
	if o.Version < 0 {
		return fmt.Errorf("beamio: WriteOptions.Version %d is negative: %w", o.Version, deltaerr.ErrInvalidArgument)
	}
	return nil
}

// planWriteFn is step 1 of Write.
type planWriteFn struct {
	Table string
	Opts  WriteOptions
	// Refuse, when not empty, is why Write cannot honour the windowing of
	// its input (see checkWindowing): the plan fails with it.
	Refuse string
}

func (f *planWriteFn) ProcessElement(ctx context.Context, _ []byte, emit func(writePlan)) error {
	if err := checkWriteOptions(f.Opts); err != nil {
		return err
	}
	if f.Refuse != "" {
		return fmt.Errorf("beamio: Write of a windowed input: %s: %w", f.Refuse, deltaerr.ErrInvalidArgument)
	}
	t, err := openTable(ctx, f.Table, nil)
	if err != nil {
		return err
	}
	defer t.Close()
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return err
	}
	p, m := snap.Protocol(), snap.Metadata()
	if err := txn.WriteSupportedChecked(&p, &m); err != nil {
		return err
	}
	v, ok, err := snap.TxnVersion(ctx, f.Opts.WriteID)
	if err != nil {
		return err
	}
	emit(writePlan{SnapshotVersion: snap.Version(), Done: ok && v >= f.Opts.Version, AppVersion: v, HasApp: ok})
	return nil
}

// shardFn keys rows round-robin by shard.
type shardFn struct {
	Shards int
	next   int
}

func (f *shardFn) ProcessElement(r Row, emit func(int, Row)) {
	emit(f.next, r)
	f.next = (f.next + 1) % f.Shards
}

// batchRows is the number of rows a writer hands the row writer at once.
const batchRows = 4096

// writeFilesFn is step 2 of Write: it writes one shard's rows as data
// files and emits their add actions, each encoded as in a commit.
type writeFilesFn struct {
	Table string
	Opts  WriteOptions

	table *delta.Table
	snap  *delta.Snapshot
}

// openTable returns the table, kept between bundles.
func (f *writeFilesFn) openTable(ctx context.Context) (*delta.Table, error) {
	if f.table == nil {
		t, err := openTable(ctx, f.Table, nil)
		if err != nil {
			return nil, err
		}
		f.table = t
	}
	return f.table, nil
}

// snapshotAt returns the snapshot at version, kept between bundles.
func (f *writeFilesFn) snapshotAt(ctx context.Context, version int64) (*delta.Snapshot, error) {
	if f.snap != nil && f.snap.Version() == version {
		return f.snap, nil
	}
	if _, err := f.openTable(ctx); err != nil {
		return nil, err
	}
	snap, err := f.table.SnapshotAt(ctx, version)
	if err != nil {
		return nil, err
	}
	f.snap = snap
	return snap, nil
}

func (f *writeFilesFn) ProcessElement(ctx context.Context, shard int, rows func(*Row) bool, plan writePlan, emit func([]byte)) error {
	if plan.Done {
		return nil
	}
	snap, err := f.snapshotAt(ctx, plan.SnapshotVersion)
	if err != nil {
		return err
	}
	ncol := len(snap.Schema().Fields)
	adds, err := write.Rows(ctx, snap, rowBatches(rows, ncol), write.Options{
		TargetFileSize: f.Opts.TargetFileSize, Compression: f.Opts.Compression})
	if err != nil {
		return err
	}
	if h := hook(func(h *testHooks) func(string, int) error { return h.afterFiles }); h != nil {
		if err := h(f.Opts.WriteID, shard); err != nil {
			return err
		}
	}
	for i := range adds {
		data, err := actions.EncodeCommit([]actions.Action{{Add: &adds[i]}})
		if err != nil {
			return err
		}
		emit(data)
	}
	return nil
}

// Teardown closes the table.
func (f *writeFilesFn) Teardown() error {
	if f.table == nil {
		return nil
	}
	err := f.table.Close()
	f.table, f.snap = nil, nil
	return err
}

// rowBatches turns the rows of a group into batches of up to batchRows
// rows of ncol columns. A row of another width is write.ErrBatch.
func rowBatches(rows func(*Row) bool, ncol int) iter.Seq2[write.Batch, error] {
	return rowBatchesOf(rows, ncol, batchRows)
}

// rowBatchesOf is rowBatches with batches of up to size rows.
func rowBatchesOf(rows func(*Row) bool, ncol, size int) iter.Seq2[write.Batch, error] {
	return func(yield func(write.Batch, error) bool) {
		newBatch := func() write.Batch {
			b := write.Batch{Columns: make([][]schema.Value, ncol)}
			for j := range b.Columns {
				b.Columns[j] = make([]schema.Value, 0, size)
			}
			return b
		}
		b := newBatch()
		var r Row
		for rows(&r) {
			if len(r.Values) != ncol {
				yield(write.Batch{}, fmt.Errorf("beamio: a row of %d values for a table of %d columns: %w", len(r.Values), ncol, write.ErrBatch))
				return
			}
			for j, v := range r.Values {
				b.Columns[j] = append(b.Columns[j], v)
			}
			b.Len++
			if b.Len == size {
				if !yield(b, nil) {
					return
				}
				b = newBatch()
			}
		}
		if b.Len > 0 {
			yield(b, nil)
		}
	}
}

// markerFn emits the empty element that makes the committer run.
type markerFn struct{}

func (markerFn) ProcessElement(_ writePlan, emit func([]byte)) { emit(nil) }

// commitFn is step 3 of Write: one commit of every add.
type commitFn struct {
	Table string
	Opts  WriteOptions
}

func (f *commitFn) ProcessElement(ctx context.Context, _ int, encoded func(*[]byte) bool, plan writePlan, emit func(WriteResult)) error {
	var adds []actions.Add
	var data []byte
	for encoded(&data) {
		if len(data) == 0 {
			continue // the marker
		}
		acts, err := actions.DecodeCommit("add of a writer", data)
		if err != nil {
			return err
		}
		for _, a := range acts {
			if a.Add == nil {
				return fmt.Errorf("beamio: a writer sent a %s action, not an add: %w", actionKind(a), deltaerr.ErrCorrupt)
			}
			adds = append(adds, *a.Add)
		}
	}
	// The order of the adds in the commit does not depend on the order
	// the runner delivers them in.
	slices.SortFunc(adds, func(a, b actions.Add) int { return strings.Compare(a.Path, b.Path) })
	res := WriteResult{Files: int64(len(adds)), Rows: countRows(adds), TxnVersion: f.Opts.Version}
	if plan.Done || len(adds) == 0 {
		emit(res)
		return nil
	}
	t, err := openTable(ctx, f.Table, nil)
	if err != nil {
		return err
	}
	defer t.Close()
	snap, err := t.SnapshotAt(ctx, plan.SnapshotVersion)
	if err != nil {
		return err
	}
	cr, err := write.AppendFiles(ctx, snap, adds, write.CommitOptions{
		App: write.AppTransaction{ID: f.Opts.WriteID, Version: f.Opts.Version},
		Txn: delta.TxnOptions{EngineInfo: EngineInfo},
	})
	switch {
	case errors.Is(err, write.ErrAppVersionCommitted):
		emit(res) // an earlier attempt or run committed this write
		return nil
	case err != nil:
		return err
	}
	t.PostCommit(ctx, &cr)
	if h := hook(func(h *testHooks) func(string, int) error { return h.afterCommit }); h != nil {
		if err := h(f.Opts.WriteID, int(cr.Version)); err != nil {
			return err
		}
	}
	res.Committed, res.Version = true, cr.Version
	emit(res)
	return nil
}

// ErrWindowNotAfter is the error of a window of a windowed Write whose txn
// version (its end) is not above the version the table holds for WriteID,
// and which the table's log does not show committed: a window that closed
// after a later one was committed (late data, a rerun over older events).
// Its rows are not committed, and the step fails rather than drop them.
var ErrWindowNotAfter = errors.New("beamio: window's txn version is not above the write's committed version")

// checkWindowing says why Write cannot honour ws, or "" when it can: the
// version of a window must be a function of the window alone, and each
// window must reach the committer once. Merging windows (sessions) are cut
// differently by every writer's group; a trigger other than the default
// fires a window more than once, at times no rerun reproduces; allowed
// lateness fires late panes of a window after its commit, with its
// version, which the committer would take for a rerun.
func checkWindowing(ws *window.WindowingStrategy) string {
	switch ws.Fn.Kind {
	case window.FixedWindows, window.SlidingWindows:
	default:
		return fmt.Sprintf("windows of kind %s are not supported (fixed or sliding windows, or the global window)", ws.Fn.Kind)
	}
	if ws.AllowedLateness > 0 {
		return fmt.Sprintf("an allowed lateness (%d ms) is not supported: a late pane would bring a second commit of a window", ws.AllowedLateness)
	}
	switch ws.Trigger.(type) {
	case nil, trigger.DefaultTrigger, *trigger.DefaultTrigger:
		return ""
	}
	return fmt.Sprintf("trigger %v is not supported: a window must fire once, when the watermark passes its end", ws.Trigger)
}

// windowVersion is the txn version of the rows of window w: the end of
// the window in milliseconds since the epoch. It is a function of the
// window alone, so a rerun gives the same, and it increases with the
// order in which the watermark closes windows, as the high-water mark
// of a txn asks.
func windowVersion(w typex.Window) (int64, error) {
	iw, ok := w.(window.IntervalWindow)
	if !ok {
		return 0, fmt.Errorf("beamio: Write of a windowed input: window %v is not an interval window: %w", w, deltaerr.ErrInvalidArgument)
	}
	v := mtime.Time(iw.End).Milliseconds()
	if v < 0 {
		return 0, fmt.Errorf("beamio: Write of a windowed input: window %v ends before 1970, its txn version would be negative: %w", w, deltaerr.ErrInvalidArgument)
	}
	return v, nil
}

// writeWindowed is Write of an input in fixed or sliding windows: the
// rows of each window are written as in Write, and committed once per
// window, windows in the order of their ends, each with the txn action
// (WriteID, the window's end in ms).
func writeWindowed(s beam.Scope, table string, rows beam.PCollection, opts WriteOptions, ws *window.WindowingStrategy) beam.PCollection {
	plan := beam.ParDo(s, &planWriteFn{Table: table, Opts: opts, Refuse: checkWindowing(ws)}, beam.Impulse(s))
	shards := opts.Shards
	if shards <= 0 {
		shards = DefaultShards
	}
	// Groups are per shard and window: a writer writes one window's rows.
	grouped := beam.GroupByKey(s, beam.ParDo(s, &shardFn{Shards: shards}, rows))
	adds := beam.ParDo(s, &writeWindowFn{writeFilesFn: writeFilesFn{Table: table, Opts: opts}}, grouped, beam.SideInput{Input: plan})
	// One element per window, with every add of the window, emitted
	// when the watermark passes the window's end.
	perWindow := beam.ParDo(s, gatherWindowFn{}, beam.GroupByKey(s, beam.AddFixedKey(s, adds)), beam.SideInput{Input: plan})
	// One committer sees them all, in the global window, and commits them
	// in the order of their ends (commitWindowsFn).
	global := beam.WindowInto(s, window.NewGlobalWindows(), perWindow)
	return beam.ParDo(s, &commitWindowsFn{Table: table, Opts: opts,
		Pending: state.MakeBagState[windowAdds]("pending"), Due: timers.InEventTime("due")}, global)
}

// writeWindowFn is step 2 of a windowed Write: writeFilesFn for the rows
// of one shard in one window. It emits the adds' encoding, and an empty
// element, so that the window reaches the committer even when nothing is
// written.
type writeWindowFn struct {
	writeFilesFn
	// committed caches committedTxn's answers by version.
	committed map[int64]bool
}

func (f *writeWindowFn) ProcessElement(ctx context.Context, w beam.Window, shard int, rows func(*Row) bool, plan writePlan, emit func([]byte)) error {
	version, err := windowVersion(w)
	if err != nil {
		return err
	}
	if plan.HasApp && version <= plan.AppVersion {
		// A rerun over a window an earlier run committed writes nothing;
		// a window that was not committed cannot be any more.
		done, ok := f.committed[version]
		if !ok {
			t, err := f.openTable(ctx)
			if err != nil {
				return err
			}
			if done, err = committedTxn(ctx, t, plan.SnapshotVersion, f.Opts.WriteID, version); err != nil {
				return err
			}
			if f.committed == nil {
				f.committed = map[int64]bool{}
			}
			f.committed[version] = done
		}
		if done {
			emit(nil)
			return nil
		}
		return fmt.Errorf("window %v: version %d, the table holds %d for %q: %w", w, version, plan.AppVersion, f.Opts.WriteID, ErrWindowNotAfter)
	}
	emit(nil)
	plan.Done = false // Done is about WriteOptions.Version, which a windowed write does not use
	return f.writeFilesFn.ProcessElement(ctx, shard, rows, plan, emit)
}

// committedTxn reports whether a commit of the table's log, from version
// latest down, carries txn(appID, version). It reads commits back from
// latest until it meets a txn of appID at version (true) or below it
// (false: versions of an application increase from commit to commit).
// When the commits that would tell are gone from the log (log cleanup),
// it cannot tell, and says so with ErrWindowNotAfter.
func committedTxn(ctx context.Context, t *delta.Table, latest int64, appID string, version int64) (bool, error) {
	for v := latest; v >= 0; v-- {
		data, err := t.Store().Get(ctx, deltalog.CommitKey(v))
		if errors.Is(err, logstore.ErrNotFound) {
			return false, fmt.Errorf("the log no longer holds commit %d, which would tell whether txn %q version %d was committed: %w", v, appID, version, ErrWindowNotAfter)
		}
		if err != nil {
			return false, err
		}
		found, at := false, int64(0)
		err = actions.EachAction(deltalog.CommitKey(v), data, func(a *actions.Action) error {
			if a.Txn != nil && a.Txn.AppID == appID {
				found, at = true, a.Txn.Version
			}
			return nil
		})
		if err != nil {
			return false, err
		}
		if found && at <= version {
			return at == version, nil
		}
	}
	return false, nil
}

// windowAdds is what a windowed Write commits for one window.
type windowAdds struct {
	// Version is the window's txn version, Due its maximum timestamp (ms
	// since the epoch), when the watermark passing it closes the window.
	Version, Due int64
	// SnapshotVersion is the table version the files were written for.
	SnapshotVersion int64
	// Adds are the window's add actions, encoded as in a commit.
	Adds []byte
}

// gatherWindowFn gathers the adds of one window into one windowAdds.
type gatherWindowFn struct{}

func (gatherWindowFn) ProcessElement(w beam.Window, _ int, encoded func(*[]byte) bool, plan writePlan, emit func(int, windowAdds)) error {
	version, err := windowVersion(w)
	if err != nil {
		return err
	}
	wa := windowAdds{Version: version, Due: int64(w.MaxTimestamp()), SnapshotVersion: plan.SnapshotVersion}
	var data []byte
	for encoded(&data) {
		wa.Adds = append(wa.Adds, data...)
	}
	emit(0, wa)
	return nil
}

// commitWindowsFn is step 3 of a windowed Write. It keeps the windows it
// receives, and when the watermark passes the end of one (its timer), it
// commits every window kept that ended by then, in the order of their
// ends, one commit each: so the txn versions it commits increase, however
// the runner delivers the windows, and a window the runner closes late is
// refused (ErrWindowNotAfter) rather than skipped.
type commitWindowsFn struct {
	Table string
	Opts  WriteOptions

	Pending state.Bag[windowAdds]
	Due     timers.EventTime
}

// ProcessElement keeps wa until the watermark passes its end. It emits
// nothing; emit is there because Beam asks OnTimer and ProcessElement to
// have the same emitters.
func (f *commitWindowsFn) ProcessElement(sp state.Provider, tp timers.Provider, _ int, wa windowAdds, _ func(WriteResult)) error {
	if err := f.Pending.Add(sp, wa); err != nil {
		return err
	}
	f.Due.Set(tp, mtime.Time(wa.Due).ToTime(), timers.WithTag(fmt.Sprint(wa.Version)))
	return nil
}

func (f *commitWindowsFn) OnTimer(ctx context.Context, ts beam.EventTime, sp state.Provider, _ timers.Provider, _ int, _ timers.Context, emit func(WriteResult)) error {
	kept, _, err := f.Pending.Read(sp)
	if err != nil {
		return err
	}
	var due, later []windowAdds
	for _, wa := range kept {
		if wa.Due <= int64(ts) {
			due = append(due, wa)
		} else {
			later = append(later, wa)
		}
	}
	if len(due) == 0 {
		return nil
	}
	slices.SortFunc(due, func(a, b windowAdds) int { return cmp.Compare(a.Version, b.Version) })
	t, err := openTable(ctx, f.Table, nil)
	if err != nil {
		return err
	}
	defer t.Close()
	for _, wa := range due {
		res, err := f.commitWindow(ctx, t, wa)
		if err != nil {
			return err
		}
		emit(res)
	}
	if err := f.Pending.Clear(sp); err != nil {
		return err
	}
	for _, wa := range later {
		if err := f.Pending.Add(sp, wa); err != nil {
			return err
		}
	}
	return nil
}

// commitWindow commits the adds of one window with txn(WriteID, its
// version), as commitFn does for the whole input.
func (f *commitWindowsFn) commitWindow(ctx context.Context, t *delta.Table, wa windowAdds) (WriteResult, error) {
	var adds []actions.Add
	if len(wa.Adds) > 0 {
		acts, err := actions.DecodeCommit("adds of a window", wa.Adds)
		if err != nil {
			return WriteResult{}, err
		}
		for _, a := range acts {
			if a.Add == nil {
				return WriteResult{}, fmt.Errorf("beamio: a writer sent a %s action, not an add: %w", actionKind(a), deltaerr.ErrCorrupt)
			}
			adds = append(adds, *a.Add)
		}
	}
	slices.SortFunc(adds, func(a, b actions.Add) int { return strings.Compare(a.Path, b.Path) })
	res := WriteResult{Files: int64(len(adds)), Rows: countRows(adds), TxnVersion: wa.Version}
	if len(adds) == 0 {
		return res, nil // its writers found it committed
	}
	snap, err := t.SnapshotAt(ctx, wa.SnapshotVersion)
	if err != nil {
		return WriteResult{}, err
	}
	cr, err := write.AppendFiles(ctx, snap, adds, write.CommitOptions{
		App: write.AppTransaction{ID: f.Opts.WriteID, Version: wa.Version},
		Txn: delta.TxnOptions{EngineInfo: EngineInfo},
	})
	if errors.Is(err, write.ErrAppVersionCommitted) {
		// This window's commit landed before (a committer run again), or
		// a later window's did and this one is late.
		latest, lerr := t.Snapshot(ctx)
		if lerr != nil {
			return WriteResult{}, lerr
		}
		done, lerr := committedTxn(ctx, t, latest.Version(), f.Opts.WriteID, wa.Version)
		if lerr != nil {
			return WriteResult{}, lerr
		}
		if done {
			return res, nil
		}
		return WriteResult{}, fmt.Errorf("window ending %v: version %d: %w", mtime.FromMilliseconds(wa.Version).ToTime().UTC(), wa.Version, ErrWindowNotAfter)
	}
	if err != nil {
		return WriteResult{}, err
	}
	t.PostCommit(ctx, &cr)
	if h := hook(func(h *testHooks) func(string, int) error { return h.afterCommit }); h != nil {
		if err := h(f.Opts.WriteID, int(cr.Version)); err != nil {
			return WriteResult{}, err
		}
	}
	res.Committed, res.Version = true, cr.Version
	return res, nil
}

// EngineInfo is the commitInfo.engineInfo of Write's commits.
var EngineInfo = delta.EngineInfo + " beamio"

// countRows sums numRecords of the adds' statistics.
func countRows(adds []actions.Add) int64 {
	var n int64
	for _, a := range adds {
		var st struct {
			NumRecords int64 `json:"numRecords"`
		}
		if json.Unmarshal([]byte(a.Stats), &st) == nil {
			n += st.NumRecords
		}
	}
	return n
}

// actionKind names the kind of a, for errors.
func actionKind(a actions.Action) string {
	switch {
	case a.Remove != nil:
		return "remove"
	case a.Metadata != nil:
		return "metaData"
	case a.Protocol != nil:
		return "protocol"
	}
	return "non-add"
}

// testHooks let the tests of this package fail a step at a chosen point,
// in-process (the Prism runner's loopback workers share the test's
// memory). They are nil outside tests.
type testHooks struct {
	// afterFiles runs after a writer wrote its shard's files, before it
	// emits their adds.
	afterFiles func(writeID string, shard int) error
	// afterCommit runs after the commit landed and its hooks ran, before
	// the committer emits its result: an error then is a committer that
	// dies between its put and its acknowledgment.
	afterCommit func(writeID string, version int) error
	// afterSplit runs when Read split a file of the table into parts.
	afterSplit func(table string, parts int) error
	// beforeOptimizeCommit runs in Optimize's committer before it
	// commits a plan of groups: a concurrent writer commits there.
	beforeOptimizeCommit func(table string, groups int) error
	// optimizeCommitted sees the error of Optimize's commit (nil when it
	// landed), with its type, which the runner's report of a failed
	// step does not keep.
	optimizeCommitted func(table string, err error)
}

var (
	hooksMu sync.Mutex
	hooks   testHooks
)

func hook(pick func(*testHooks) func(string, int) error) func(string, int) error {
	hooksMu.Lock()
	defer hooksMu.Unlock()
	return pick(&hooks)
}

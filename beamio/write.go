package beamio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/godelta/delta"
	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
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
	// number, a day, a window's sequence): a write whose Version the table
	// already holds for WriteID, or a later one, commits nothing.
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
}

// writePlan is what the planning step of Write decides, given to every
// writer and to the committer: the table version the files are written
// for, and whether the write was committed before (then nothing is
// written).
type writePlan struct {
	SnapshotVersion int64
	Done            bool
}

func init() {
	register.DoFn3x1[context.Context, []byte, func(writePlan), error](&planWriteFn{})
	register.DoFn2x0[Row, func(int, Row)](&shardFn{})
	register.DoFn5x1[context.Context, int, func(*Row) bool, writePlan, func([]byte), error](&writeFilesFn{})
	register.DoFn5x1[context.Context, int, func(*[]byte) bool, writePlan, func(WriteResult), error](&commitFn{})
	register.DoFn2x0[writePlan, func([]byte)](&markerFn{})
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
func Write(s beam.Scope, table string, rows beam.PCollection, opts WriteOptions) beam.PCollection {
	s = s.Scope("delta.Write")
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
}

func (f *planWriteFn) ProcessElement(ctx context.Context, _ []byte, emit func(writePlan)) error {
	if err := checkWriteOptions(f.Opts); err != nil {
		return err
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
	emit(writePlan{SnapshotVersion: snap.Version(), Done: ok && v >= f.Opts.Version})
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

// snapshotAt returns the snapshot at version, kept between bundles.
func (f *writeFilesFn) snapshotAt(ctx context.Context, version int64) (*delta.Snapshot, error) {
	if f.snap != nil && f.snap.Version() == version {
		return f.snap, nil
	}
	if f.table == nil {
		t, err := openTable(ctx, f.Table, nil)
		if err != nil {
			return nil, err
		}
		f.table = t
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
	res := WriteResult{Files: int64(len(adds)), Rows: countRows(adds)}
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

package txn

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/checkpoint"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/internal/checksum/crcwriter"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/tableconfig"
)

// DefaultCheckpointInterval is how many commits apart checkpoints are
// due when the table does not set delta.checkpointInterval.
const DefaultCheckpointInterval = tableconfig.DefaultCheckpointInterval

// CommitResult is what Commit returns once the commit file is in the log:
// the commit has landed, and nothing that happens afterwards (PostCommit
// included) can undo it.
type CommitResult struct {
	// Version is the version the commit landed at.
	Version int64
	// Timestamp is the commit's time as its commitInfo records it: the
	// in-commit timestamp when the table has them, else the writer's
	// clock at the attempt that landed.
	Timestamp time.Time
	// Attempts is the number of attempts Commit made: 1 when the first
	// put won, more after lost races or ambiguous puts.
	Attempts int
	// PostCommit is the table maintenance the commit made due, and, once
	// PostCommit has run, how it went.
	PostCommit PostCommitWork

	// What PostCommit needs: the store, and the table configuration in
	// force at Version (the conflict checks make sure no winner changed
	// it).
	store logstore.Store
	cfg   *tableconfig.Config
	clock func() time.Time
	log   *slog.Logger

	// What Snapshot builds the post-commit snapshot from: the snapshot
	// the transaction read (nil for a new table) and the commit file as
	// written (nil when the commit was found in the log after an
	// ambiguous put).
	read *snapshot.Snapshot
	data []byte
	post *snapshot.Snapshot // built by Snapshot, once

	// What the commit was, for the hooks that ask (auto compaction).
	op      string
	engine  string
	written []map[string]string
}

// EngineInfo returns the commit's commitInfo.engineInfo: what the
// commits a post-commit hook makes on its behalf (auto compaction) record
// too.
func (r *CommitResult) EngineInfo() string { return r.engine }

// Operation returns the commit's commitInfo.operation ("WRITE",
// "OPTIMIZE", "MERGE", ...): what post-commit hooks that depend on the
// kind of commit (auto compaction skips its own OPTIMIZE) ask.
func (r *CommitResult) Operation() string { return r.op }

// PartitionsWritten returns the distinct partition values of the data
// files the commit wrote: its adds with dataChange=true and no deletion
// vector (a file added again with a new deletion vector, as a DELETE
// does, holds no new rows; an OPTIMIZE's adds change no data). One map
// per partition, empty for an unpartitioned table; nil when the commit
// wrote no data file. It is Spark's partitionsAddedToOpt, which its auto
// compaction compacts. The maps are shared: callers must not change them.
func (r *CommitResult) PartitionsWritten() []map[string]string { return r.written }

// Snapshot returns the table at Version: the post-commit snapshot. When
// the commit landed right on top of the snapshot the transaction read, it
// is built from that snapshot and the actions written, without reading
// the log (snapshot.Committed); otherwise (winners in between, a new
// table, a commit confirmed after an ambiguous put) the log is read from
// the read snapshot on (Update), or loaded. It is built once and shared
// by the post-commit hooks and the caller.
func (r *CommitResult) Snapshot(ctx context.Context) (*snapshot.Snapshot, error) {
	if r.post != nil {
		return r.post, nil
	}
	if r.store == nil {
		return nil, fmt.Errorf("txn: the snapshot of a zero CommitResult: %w", deltaerr.ErrInvalidArgument)
	}
	var (
		snap *snapshot.Snapshot
		err  error
	)
	switch {
	case r.read != nil && r.data != nil && r.Version == r.read.Version()+1:
		var acts []actions.Action
		if acts, err = actions.DecodeCommitReader(deltalog.CommitKey(r.Version), bytes.NewReader(r.data)); err == nil {
			snap, err = r.read.Committed(r.Version, r.Timestamp.UnixMilli(), acts)
		}
	case r.read != nil:
		snap, err = r.read.Update(ctx)
		if err == nil && snap.Version() != r.Version {
			snap, err = snapshot.Load(ctx, r.store, r.Version)
		}
	default:
		snap, err = snapshot.Load(ctx, r.store, r.Version)
	}
	if err != nil {
		return nil, fmt.Errorf("the table at version %d after the commit: %w", r.Version, err)
	}
	r.post = snap
	return snap, nil
}

// Config returns the table configuration in force at Version (nil for a
// zero CommitResult): what post-commit work outside this package (the
// Iceberg metadata of UniForm tables) asks whether it is due.
func (r *CommitResult) Config() *tableconfig.Config { return r.cfg }

// PostCommitWork is the maintenance a landed commit makes due, and how
// the post-commit hooks went. Commit only says what is due; the caller
// runs it with PostCommit, at a time of its choosing, or not at all
// (readers never need it: a table without checkpoints is read from its
// commits).
type PostCommitWork struct {
	// Checkpoint is true when a checkpoint of Version is due: Version is a
	// positive multiple of the table's delta.checkpointInterval (default
	// DefaultCheckpointInterval), and Options.NoCheckpoint was not set.
	// Log cleanup follows a checkpoint, unless the table sets
	// delta.enableExpiredLogCleanup=false.
	Checkpoint bool

	// Ran is true once PostCommit ran the hooks.
	Ran bool
	// Checkpointed is true when PostCommit wrote the checkpoint.
	Checkpointed bool
	// LogFilesDeleted is the number of expired log files the cleanup
	// after the checkpoint deleted.
	LogFilesDeleted int
	// AutoCompacted is the version of the OPTIMIZE commit auto
	// compaction made after this commit (delta.autoOptimize.autoCompact;
	// package optimize's hook), 0 when it made none.
	AutoCompacted int64
	// Failed are the hooks that failed (or panicked), in the order they
	// ran; Err joins their errors. Neither undoes the commit: a table with
	// a missing checkpoint is read from its commits, the next checkpoint
	// covers this one, and the next commit's Iceberg conversion catches
	// up.
	Failed []HookFailure
	Err    error
}

// HookFailure is a post-commit hook that failed.
type HookFailure struct {
	Hook string
	Err  error
}

// Hook is work that runs after every landed commit, in the order of the
// chain (see RegisterHook). Run returns an error to report; it never
// changes the commit's outcome.
type Hook struct {
	// Name names the hook in logs and in PostCommitWork.Failed.
	Name string
	// Order places the hook in the chain: lower runs first. The built-in
	// hooks use the Order* constants; others pick a value between them.
	Order int
	// Run does the work for res, whose Snapshot is the table at
	// res.Version. It is called on every commit and decides itself
	// whether work is due (res.Config, res.PostCommit).
	Run func(ctx context.Context, res *CommitResult) error
}

// The order of the built-in hooks, and of the ones packages register.
const (
	OrderChecksum   = 100 // the version checksum (<v>.crc)
	OrderCheckpoint = 200 // the checkpoint due, then log cleanup
	OrderCompaction = 300 // auto-compaction
	OrderIceberg    = 400 // UniForm Iceberg metadata (package iceberg)
	OrderPublish    = 500 // publication to a catalog
)

var (
	hooksMu sync.RWMutex
	hooks   = []Hook{
		{Name: "checksum", Order: OrderChecksum, Run: checksumHook},
		{Name: "checkpoint", Order: OrderCheckpoint, Run: checkpointHook},
	}
)

// RegisterHook adds h to the chain every PostCommit runs, in Order.
// Packages that add post-commit work call it from an init function (as
// package iceberg does for UniForm), so that every commit of every entry
// point runs it once the package is linked: callers never list the work
// themselves. It panics on a hook without a name or Run, or a name
// registered twice.
func RegisterHook(h Hook) {
	hooksMu.Lock()
	defer hooksMu.Unlock()
	if h.Name == "" || h.Run == nil {
		panic("txn: RegisterHook of a hook without a name or Run")
	}
	for _, o := range hooks {
		if o.Name == h.Name {
			panic("txn: RegisterHook called twice for " + h.Name)
		}
	}
	hooks = append(hooks, h)
	slices.SortStableFunc(hooks, func(a, b Hook) int { return cmp.Compare(a.Order, b.Order) })
}

// chain returns the registered hooks, in order.
func chain() []Hook {
	hooksMu.RLock()
	defer hooksMu.RUnlock()
	return slices.Clone(hooks)
}

// PostCommit runs the post-commit chain for res, once: every registered
// hook in order (the version checksum <v>.crc; the checkpoint due, then
// the cleanup of expired log files; auto compaction, package optimize's;
// the Iceberg conversion of a UniForm table; whatever else is registered).
// A hook's failure or panic is recorded in res.PostCommit
// and logged as a warning, and the next hook runs: it is not the
// commit's, and the commit stands whatever PostCommit does. A second call
// does nothing.
func PostCommit(ctx context.Context, res *CommitResult) {
	w := &res.PostCommit
	if w.Ran || res.store == nil {
		return
	}
	w.Ran = true
	log := res.log
	if log == nil {
		log = slog.Default()
	}
	for _, h := range chain() {
		if err := runHook(ctx, h, res); err != nil {
			w.Failed = append(w.Failed, HookFailure{Hook: h.Name, Err: err})
			w.Err = errors.Join(w.Err, err)
			log.WarnContext(ctx, "txn: post-commit work failed; the commit stands", "hook", h.Name, "version", res.Version, "err", err)
		}
	}
}

// runHook runs h, turning a panic into an error.
func runHook(ctx context.Context, h Hook, res *CommitResult) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s after the commit of version %d panicked: %v", h.Name, res.Version, p)
		}
	}()
	return h.Run(ctx, res)
}

// checksumHook writes the version checksum of res.Version
// (<v>.crc), as Spark's ChecksumHook does after every commit: derived
// from the previous version's checksum and the actions committed when it
// can be, else from the post-commit snapshot (package crcwriter).
func checksumHook(ctx context.Context, res *CommitResult) error {
	committed, err := res.committed(ctx)
	if err == nil {
		err = crcwriter.WriteAfterCommitFrom(ctx, res.store, res.read, res.Version, committed, res.Snapshot)
	}
	if err != nil {
		return fmt.Errorf("version checksum of version %d after the commit: %w", res.Version, err)
	}
	return nil
}

// committed returns the actions of the commit at res.Version: decoded
// from the commit file as written, or read back from the log when the
// commit was found there after an ambiguous put.
func (r *CommitResult) committed(ctx context.Context) ([]actions.Action, error) {
	key := deltalog.CommitKey(r.Version)
	if r.data != nil {
		return actions.DecodeCommitReader(key, bytes.NewReader(r.data))
	}
	return actions.DecodeCommitReader(key, logstore.NewWindowReader(ctx, r.store, key, 0))
}

// checkpointHook writes the checkpoint res makes due, then, as Spark
// does, deletes the expired log files, unless the table says no.
func checkpointHook(ctx context.Context, res *CommitResult) error {
	w := &res.PostCommit
	if !w.Checkpoint {
		return nil
	}
	snap, err := res.Snapshot(ctx)
	if err == nil {
		_, err = checkpoint.Write(ctx, res.store, snap, checkpoint.WriteOptions{})
	}
	if err != nil {
		return fmt.Errorf("checkpoint of version %d after the commit: %w", res.Version, err)
	}
	w.Checkpointed = true
	if !res.cfg.ExpiredLogCleanup() {
		return nil
	}
	p := snap.Protocol()
	cleaned, err := deltalog.Cleanup(ctx, res.store, CleanupOptions(res.store, res.cfg, &p, res.clock))
	w.LogFilesDeleted = len(cleaned.Deleted)
	if err != nil {
		return fmt.Errorf("log cleanup after the checkpoint of version %d: %w", res.Version, err)
	}
	return nil
}

// CleanupOptions are the options of the log cleanup of a table in store
// with configuration cfg and protocol p: its log retention, checkpoint
// verification, and, for V2 checkpoints, their sidecars and classic
// copies. now is the clock (nil: time.Now). Both the cleanup after a
// checkpoint and an explicit one (the facade's CleanupLog) use them.
func CleanupOptions(store logstore.Store, cfg *tableconfig.Config, p *actions.Protocol, now func() time.Time) deltalog.CleanupOptions {
	opts := deltalog.CleanupOptions{Retention: cfg.LogRetention(), Verify: checkpoint.Verify(store), Now: now,
		ProtectedBefore: cfg.CheckpointProtectedBefore()}
	if tableconfig.HasWriterFeature(p, actions.FeatureV2Checkpoint) {
		// Only V2 checkpoints have sidecars: on other tables
		// _delta_log/_sidecars is not the table's, and is not touched.
		opts.SidecarRefs = checkpoint.SidecarRefs(store)
		// A classic-named copy of a UUID-named checkpoint, so that
		// clients without V2 checkpoints fail cleanly (as Spark does).
		opts.ClassicCopy = checkpoint.ClassicCopy(store)
	}
	return opts
}

// postCommitDue says what maintenance a commit at version makes due, for a
// table with configuration cfg.
func postCommitDue(cfg *tableconfig.Config, version int64, opts Options) PostCommitWork {
	if opts.NoCheckpoint || version <= 0 {
		return PostCommitWork{}
	}
	return PostCommitWork{Checkpoint: version%cfg.CheckpointInterval() == 0}
}

package txn

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/checkpoint"
	"github.com/godelta/delta/deltalog"
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
}

// PostCommitWork is the maintenance a landed commit makes due. Commit
// only says what is due; the caller runs it with PostCommit, at a time of
// its choosing, or not at all (readers never need it: a table without
// checkpoints is read from its commits).
type PostCommitWork struct {
	// Checkpoint is true when a checkpoint of Version is due: Version is a
	// positive multiple of the table's delta.checkpointInterval (default
	// DefaultCheckpointInterval), and Options.NoCheckpoint was not set.
	// Log cleanup follows a checkpoint, unless the table sets
	// delta.enableExpiredLogCleanup=false.
	Checkpoint bool

	// Ran is true once PostCommit ran the work due.
	Ran bool
	// Checkpointed is true when PostCommit wrote the checkpoint.
	Checkpointed bool
	// LogFilesDeleted is the number of expired log files the cleanup
	// after the checkpoint deleted.
	LogFilesDeleted int
	// Err is the failure of the checkpoint or of the log cleanup, if any.
	// It never undoes the commit: a table with a missing checkpoint is
	// read from its commits, and the next checkpoint covers this one.
	Err error
}

// PostCommit runs the maintenance res says is due (a checkpoint of its
// version, then the cleanup of expired log files) and records the outcome
// in res.PostCommit, logging a failure as a warning. It does nothing for a
// result with no work due or whose work already ran. A failure is not the
// commit's: the commit stands whatever PostCommit does.
//
// The checkpoint is of the table at res.Version, loaded anew; the cleanup
// deletes the log files older than delta.logRetentionDuration (default 30
// days) that no retained version needs (see deltalog.Cleanup).
func PostCommit(ctx context.Context, res *CommitResult) {
	w := &res.PostCommit
	if w.Ran || !w.Checkpoint || res.store == nil {
		return
	}
	w.Ran = true
	log := res.log
	if log == nil {
		log = slog.Default()
	}
	snap, err := snapshot.Load(ctx, res.store, res.Version)
	if err == nil {
		_, err = checkpoint.Write(ctx, res.store, snap, checkpoint.WriteOptions{})
	}
	if err != nil {
		w.Err = fmt.Errorf("checkpoint of version %d after the commit: %w", res.Version, err)
		log.WarnContext(ctx, "txn: the checkpoint after the commit failed; the commit stands", "version", res.Version, "err", err)
		return
	}
	w.Checkpointed = true
	// Then, as Spark does, the expired log goes, unless the table says no.
	if !res.cfg.ExpiredLogCleanup() {
		return
	}
	opts := deltalog.CleanupOptions{Retention: res.cfg.LogRetention(), Verify: checkpoint.Verify(res.store), Now: res.clock}
	if p := snap.Protocol(); p.HasWriterFeature(actions.FeatureV2Checkpoint) {
		opts.SidecarRefs = checkpoint.SidecarRefs(res.store) // only V2 checkpoints have sidecars
		opts.ClassicCopy = checkpoint.ClassicCopy(res.store) // for clients that know only classic names
	}
	cleaned, err := deltalog.Cleanup(ctx, res.store, opts)
	w.LogFilesDeleted = len(cleaned.Deleted)
	if err != nil {
		w.Err = fmt.Errorf("log cleanup after the checkpoint of version %d: %w", res.Version, err)
		log.WarnContext(ctx, "txn: log cleanup after the checkpoint failed", "version", res.Version, "err", err)
	}
}

// postCommitDue says what maintenance a commit at version makes due, for a
// table with configuration cfg.
func postCommitDue(cfg *tableconfig.Config, version int64, opts Options) PostCommitWork {
	if opts.NoCheckpoint || version <= 0 {
		return PostCommitWork{}
	}
	return PostCommitWork{Checkpoint: version%cfg.CheckpointInterval() == 0}
}

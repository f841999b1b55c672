package delta

import (
	"context"

	"github.com/godelta/delta/checkpoint"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/txn"
)

// CleanupResult says what CleanupLog deleted.
type CleanupResult = deltalog.CleanupResult

// Checkpoint writes a checkpoint of the table's latest version (classic,
// or V2 when the table has the v2Checkpoint feature) and then updates
// _last_checkpoint. It returns the version checkpointed.
//
// A checkpoint is a write: a table whose writer version or writer
// features this library does not support is refused, with the
// *FeatureError (errors.Is ErrUnsupportedFeature) Append gives, and
// nothing is written.
func (t *Table) Checkpoint(ctx context.Context) (int64, error) {
	snap, err := t.writableSnapshot(ctx) // a checkpoint and a cleanup change the log: Append's check
	if err != nil {
		return 0, err
	}
	if _, err := checkpoint.Write(ctx, t.store, snap, checkpoint.WriteOptions{}); err != nil {
		return 0, err
	}
	return snap.Version(), nil
}

// CleanupLog deletes the log files older than the table's
// delta.logRetentionDuration (default 30 days) that no retained version
// needs: time travel to any version committed after the cut-off keeps
// working. With dryRun it only reports what it would delete. A table
// this library cannot write is refused as by Checkpoint, dry run or not.
func (t *Table) CleanupLog(ctx context.Context, dryRun bool) (CleanupResult, error) {
	snap, err := t.writableSnapshot(ctx) // a checkpoint and a cleanup change the log: Append's check
	if err != nil {
		return CleanupResult{}, err
	}
	if err := snap.Config().CheckMaintenance("log cleanup"); err != nil {
		return CleanupResult{}, err
	}
	p := snap.Protocol()
	opts := txn.CleanupOptions(t.store, snap.Config(), &p, nil)
	opts.DryRun = dryRun
	return deltalog.Cleanup(ctx, t.store, opts)
}

package delta

import (
	"context"
	"time"

	"github.com/godelta/delta/fileset"
)

// RestoreResult says what a restore committed; see fileset.RestoreResult.
type RestoreResult = fileset.RestoreResult

// ErrMissingFiles is the kind of the error a restore returns when files of
// the version to restore are gone (vacuumed).
var ErrMissingFiles = fileset.ErrMissingFiles

// RestoreVersion commits a RESTORE that makes the table's live files, and
// its metaData, those of version (older than the latest), as Spark's
// RESTORE TABLE ... TO VERSION AS OF does; see fileset.Restore.
func (t *Table) RestoreVersion(ctx context.Context, version int64, opts TxnOptions) (RestoreResult, error) {
	target, err := t.SnapshotAt(ctx, version)
	if err != nil {
		return RestoreResult{Version: -1, Restored: version}, err
	}
	return t.restore(ctx, target, time.Time{}, opts)
}

// RestoreTimestamp is RestoreVersion of the newest version committed at or
// before ts (see SnapshotAtTimestamp); ts is recorded in the commit.
func (t *Table) RestoreTimestamp(ctx context.Context, ts time.Time, opts TxnOptions) (RestoreResult, error) {
	target, err := t.SnapshotAtTimestamp(ctx, ts)
	if err != nil {
		return RestoreResult{Version: -1, Restored: -1}, err
	}
	return t.restore(ctx, target, ts, opts)
}

func (t *Table) restore(ctx context.Context, target *Snapshot, ts time.Time, opts TxnOptions) (RestoreResult, error) {
	latest, err := t.writableSnapshot(ctx)
	if err != nil {
		return RestoreResult{Version: -1, Restored: target.Version()}, err
	}
	if opts.EngineInfo == "" {
		opts.EngineInfo = EngineInfo
	}
	res, err := fileset.Restore(ctx, latest, target, fileset.RestoreOptions{Timestamp: ts, Txn: opts})
	if err != nil {
		return res, err
	}
	t.PostCommit(ctx, &res.Commit)
	return res, nil
}

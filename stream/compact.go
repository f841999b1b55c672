package stream

import (
	"cmp"
	"context"

	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/optimize"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/txn"
	"github.com/godelta/delta/write"
)

// CompactOptions configure Compact. The zero value is usable.
type CompactOptions struct {
	// TargetFileSize is the size of the files written, and files smaller
	// than it are the ones merged; 0 means write.DefaultTargetFileSize
	// (small files for a stream, rather than OPTIMIZE's 1 GiB).
	TargetFileSize int64
	// Txn configures the commit (isolation, engine info, logger); the
	// operation is OPTIMIZE with auto=true.
	Txn txn.Options
}

// CompactResult says what Compact did.
type CompactResult struct {
	// Removed and Added count the files; both are 0 when there was
	// nothing worth merging, and nothing was committed.
	Removed, Added int
	// Commit is the commit's result, when Removed > 0.
	Commit txn.CommitResult
}

// Compact merges the small files of the table in store, partition by
// partition, into files of about opts.TargetFileSize, and commits the
// change with dataChange=false as an automatic OPTIMIZE (package
// optimize's bin-packing, the one compaction): the rows stay the same, so
// the commit never conflicts with concurrent appends, and a Source passes
// over it. A concurrent commit that removed a file it merged (a DELETE,
// another compaction) is a *txn.ConflictError: nothing is committed, and
// the files it wrote are deleted; call it again later.
func Compact(ctx context.Context, store logstore.Store, opts CompactOptions) (CompactResult, error) {
	snap, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		return CompactResult{}, err
	}
	res, err := optimize.Run(ctx, snap, optimize.Options{
		TargetSize: cmp.Or(opts.TargetFileSize, write.DefaultTargetFileSize),
		Auto:       true, Txn: opts.Txn,
	})
	if err != nil || !res.Committed {
		return CompactResult{}, err
	}
	txn.PostCommit(ctx, &res.Commit)
	return CompactResult{Removed: int(res.Metrics.NumFilesRemoved), Added: int(res.Metrics.NumFilesAdded), Commit: res.Commit}, nil
}

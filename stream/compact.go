package stream

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/internal/rowcheck"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/txn"
	"github.com/godelta/delta/write"
)

// CompactOptions configure Compact. The zero value is usable.
type CompactOptions struct {
	// TargetFileSize is the size of the files written, and files smaller
	// than it are the ones merged; 0 means write.DefaultTargetFileSize.
	TargetFileSize int64
	// MinFiles is the fewest small files of one partition worth merging;
	// 0 means 2.
	MinFiles int
	// MaxFiles bounds the files merged by one call (the oldest first);
	// 0 means no bound.
	MaxFiles int
	// TableURI is as in write.Options.
	TableURI string
	// Txn configures the commit; Operation defaults to "OPTIMIZE".
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
// change with dataChange=false as an OPTIMIZE: the rows stay the same, so
// the commit runs at snapshot isolation and never conflicts with
// concurrent appends, and a Source passes over it. A concurrent commit
// that removed a file it merged (a DELETE, another compaction) is a
// *txn.ConflictError: nothing is committed, and the files it wrote are
// deleted; call it again later.
//
// It is the streaming sink's compaction, and the one place to point at
// package optimize's bin-packing once that is merged: it rewrites through
// write.Rewrite with Copy and NoDataChange, as OPTIMIZE does.
func Compact(ctx context.Context, store logstore.Store, opts CompactOptions) (CompactResult, error) {
	if opts.TargetFileSize <= 0 {
		opts.TargetFileSize = write.DefaultTargetFileSize
	}
	if opts.MinFiles <= 0 {
		opts.MinFiles = 2
	}
	snap, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		return CompactResult{}, err
	}
	files, err := smallFiles(ctx, snap, opts)
	if err != nil || len(files) == 0 {
		return CompactResult{}, err
	}
	keep := func(*actions.Add, int64, []schema.Value) (write.Verdict, []schema.Value, error) {
		return write.Keep, nil, nil
	}
	r, err := write.Rewrite(ctx, snap, files, keep, write.RewriteOptions{
		Options: write.Options{TargetFileSize: opts.TargetFileSize, TableURI: opts.TableURI}, NoDataChange: true, Copy: true})
	if err != nil {
		return CompactResult{}, err
	}
	topts := opts.Txn
	if topts.Operation == "" {
		topts.Operation = "OPTIMIZE"
		if topts.OperationParameters == nil {
			topts.OperationParameters = map[string]any{"predicate": "[]", "auto": true, "clusterBy": "[]", "zOrderBy": "[]", "batchId": "0"}
		}
	}
	tx := txn.Begin(snap, topts)
	tx.ReadFiles(r.Read...)
	tx.Remove(r.Removes...)
	tx.Add(r.Adds...)
	rowcheck.Mark(tx) // Rewrite checked every row it wrote
	res, err := tx.Commit(ctx)
	if err != nil {
		if !errors.Is(err, txn.ErrCommitUnknown) {
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			for _, a := range r.Adds {
				_ = store.Delete(dctx, snapshot.CanonicalPath(a.Path))
			}
			cancel()
		}
		return CompactResult{}, err
	}
	txn.PostCommit(ctx, &res)
	return CompactResult{Removed: len(r.Removes), Added: len(r.Adds), Commit: res}, nil
}

// smallFiles picks the files to merge: those under the target size, in
// partitions holding at least MinFiles of them, oldest first.
func smallFiles(ctx context.Context, snap *snapshot.Snapshot, opts CompactOptions) ([]*actions.Add, error) {
	groups := map[string][]*actions.Add{}
	for a, err := range snap.Files(ctx) {
		if err != nil {
			return nil, err
		}
		if a.Size >= opts.TargetFileSize {
			continue
		}
		k := partitionKey(a)
		groups[k] = append(groups[k], a)
	}
	var out []*actions.Add
	for _, k := range slices.Sorted(maps.Keys(groups)) {
		g := groups[k]
		if len(g) < opts.MinFiles {
			continue
		}
		slices.SortFunc(g, func(a, b *actions.Add) int {
			return cmp.Or(cmp.Compare(a.ModificationTime, b.ModificationTime), strings.Compare(a.Path, b.Path))
		})
		if opts.MaxFiles > 0 && len(out)+len(g) > opts.MaxFiles {
			g = g[:opts.MaxFiles-len(out)]
			if len(g) < opts.MinFiles {
				break
			}
		}
		out = append(out, g...)
		if opts.MaxFiles > 0 && len(out) >= opts.MaxFiles {
			break
		}
	}
	return out, nil
}

// partitionKey identifies a file's partition: its partition values, by
// the keys the log uses (physical names under column mapping).
func partitionKey(a *actions.Add) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(a.PartitionValues)) {
		v := a.PartitionValues[k]
		fmt.Fprintf(&b, "%q=%q,", k, v)
	}
	return b.String()
}

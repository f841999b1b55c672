package optimize

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/txn"
)

// Spark's session defaults of auto compaction
// (spark.databricks.delta.autoCompact.*). Spark has them as session
// settings, not table properties; this library keeps them as constants.
const (
	// AutoCompactMaxFileSize is the size of the files auto compaction
	// writes and the most a bin holds (autoCompact.maxFileSize, 128 MiB).
	// delta.targetFileSize does not change it, as in Spark.
	AutoCompactMaxFileSize = 128 << 20
	// AutoCompactMinFileSize: files smaller than it are the ones auto
	// compaction rewrites, and the ones it counts against
	// AutoCompactMinNumFiles (autoCompact.minFileSize, which defaults to
	// half of maxFileSize).
	AutoCompactMinFileSize = AutoCompactMaxFileSize / 2
	// AutoCompactMinNumFiles is the number of small files a partition the
	// commit wrote must hold for auto compaction to compact it
	// (autoCompact.minNumFiles, 50).
	AutoCompactMinNumFiles = 50
	// AutoCompactMaxPartitions bounds the partitions one auto compaction
	// compacts (autoCompact.maxNumModifiedPartitions, 128): those with the
	// most small files.
	AutoCompactMaxPartitions = 128
)

// HookAutoCompact names the auto compaction hook in the post-commit chain
// (txn.PostCommitWork.Failed).
const HookAutoCompact = "auto compaction"

// The post-commit hook of auto compaction: every entry point that
// commits and runs the chain (the delta facade, the CLI, stream sinks,
// DML) compacts once this package is linked; package dml links it.
func init() {
	txn.RegisterHook(txn.Hook{Name: HookAutoCompact, Order: txn.OrderCompaction, Run: autoCompactAfterCommit})
}

// noAutoCompact are the operations whose adds are not rows a writer just
// wrote, after which Spark does not compact (it compacts after the commits
// that wrote data files, OPTIMIZE's own excepted): their files were
// written before, and are only registered again.
var noAutoCompact = map[string]bool{
	"OPTIMIZE": true,
	"RESTORE":  true,
	"CLONE":    true,
	"CONVERT":  true,
}

// autoLimits are the thresholds of one auto compaction: the constants,
// lowered by tests.
type autoLimits struct {
	maxFileSize, minFileSize int64
	minNumFiles              int
	maxPartitions            int
}

var defaultAutoLimits = autoLimits{AutoCompactMaxFileSize, AutoCompactMinFileSize, AutoCompactMinNumFiles, AutoCompactMaxPartitions}

// autoCompactAfterCommit is Spark's AutoCompact hook, after a commit to a
// table whose delta.autoOptimize.autoCompact is on.
func autoCompactAfterCommit(ctx context.Context, res *txn.CommitResult) error {
	return autoCompact(ctx, res, defaultAutoLimits)
}

// autoCompact compacts the small files of the partitions res wrote, when
// auto compaction is on and one of them holds lim.minNumFiles files
// smaller than lim.minFileSize. It is an OPTIMIZE (Run) of those
// partitions, with Spark's auto compaction sizes, recorded with
// operationParameters.auto true; then the compaction's own post-commit
// chain runs, in which this hook does nothing (the commit is an
// OPTIMIZE). Its errors are the hook's: the commit that triggered it
// stands.
func autoCompact(ctx context.Context, res *txn.CommitResult, lim autoLimits) error {
	cfg := res.Config()
	if cfg == nil {
		return nil
	}
	on, err := cfg.AutoCompact()
	if err != nil {
		return fmt.Errorf("optimize: auto compaction after version %d: %w", res.Version, err)
	}
	written := res.PartitionsWritten()
	op := res.Operation()
	// A catalog-managed table's layout changes are the catalog's to
	// permit: auto compaction stays off there (Run refuses too).
	if !on || len(written) == 0 || noAutoCompact[op] || strings.HasPrefix(op, "REORG") || cfg.CatalogManaged() {
		return nil
	}
	snap, err := res.Snapshot(ctx)
	if err != nil {
		return fmt.Errorf("optimize: auto compaction after version %d: %w", res.Version, err)
	}
	parts, err := autoCompactPartitions(ctx, snap, written, lim)
	if err != nil {
		return fmt.Errorf("optimize: auto compaction after version %d: %w", res.Version, err)
	}
	if len(parts) == 0 {
		return nil
	}
	where, err := partitionsPredicate(snap, parts)
	if err != nil {
		return fmt.Errorf("optimize: auto compaction after version %d: %w", res.Version, err)
	}
	r, err := Run(ctx, snap, Options{
		Where:       where,
		TargetSize:  lim.maxFileSize,
		MinFileSize: lim.minFileSize,
		Auto:        true,
		Txn:         txn.Options{EngineInfo: res.EngineInfo()},
	})
	if err != nil {
		return fmt.Errorf("optimize: auto compaction after version %d: %w", res.Version, err)
	}
	if !r.Committed {
		return nil
	}
	res.PostCommit.AutoCompacted = r.Commit.Version
	txn.PostCommit(ctx, &r.Commit)
	if err := r.Commit.PostCommit.Err; err != nil {
		return fmt.Errorf("optimize: auto compaction committed version %d; its post-commit work failed: %w", r.Commit.Version, err)
	}
	return nil
}

// autoCompactPartitions returns the partitions of written (as their
// partition values) that hold at least lim.minNumFiles live files smaller
// than lim.minFileSize in snap, at most lim.maxPartitions of them, those
// with the most small files first.
//
// Spark decides from counts it keeps in the driver's memory (files added
// minus removed since the driver started, and a partition compacted once
// per driver whatever its count); this library keeps no state between
// commits, so it counts the small files the snapshot holds.
func autoCompactPartitions(ctx context.Context, snap *snapshot.Snapshot, written []map[string]string, lim autoLimits) ([]map[string]string, error) {
	count := make(map[string]int, len(written))
	byKey := make(map[string]map[string]string, len(written))
	for _, pv := range written {
		k := partKey(pv)
		count[k], byKey[k] = 0, pv
	}
	// When every written partition has reached the threshold and they are
	// not more than lim.maxPartitions, more counting changes nothing: all
	// of them are compacted. So a table full of small files stops early.
	pending := len(count)
	for a, err := range snap.Files(ctx) {
		if err != nil {
			return nil, err
		}
		if a.Size >= lim.minFileSize {
			continue
		}
		k := partKey(a.PartitionValues)
		n, ok := count[k]
		if !ok {
			continue
		}
		count[k] = n + 1
		if n+1 == lim.minNumFiles {
			if pending--; pending == 0 && len(count) <= lim.maxPartitions {
				break
			}
		}
	}
	var keys []string
	for k, n := range count {
		if n >= lim.minNumFiles {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b string) int {
		if count[a] != count[b] {
			return count[b] - count[a]
		}
		return strings.Compare(a, b)
	})
	if len(keys) > lim.maxPartitions {
		keys = keys[:lim.maxPartitions]
	}
	out := make([]map[string]string, len(keys))
	for i, k := range keys {
		out[i] = byKey[k]
	}
	return out, nil
}

// partitionsPredicate is the predicate that selects exactly the
// partitions parts, as Spark's auto compaction builds it: per partition,
// each partition column equal to its value read as the column's type (IS
// NULL for a null value), the partitions ORed. Nil for an unpartitioned
// table: the whole table is its one partition.
func partitionsPredicate(snap *snapshot.Snapshot, parts []map[string]string) (expr.Expr, error) {
	cols := snap.Metadata().PartitionColumns
	if len(cols) == 0 {
		return nil, nil
	}
	mode := snap.Config().ColumnMappingMode()
	sch := snap.Schema()
	phys := make([]string, len(cols))
	for i, c := range cols {
		f, ok := sch.Field(c)
		if !ok {
			f, ok = sch.FieldFold(c)
		}
		if !ok {
			return nil, errPartitionColumn(c)
		}
		phys[i] = f.PhysicalName(mode)
	}
	var anyOf expr.Or
	for _, pv := range parts {
		var all expr.And
		for i, c := range cols {
			v, ok := pv[phys[i]]
			col := expr.Column{Name: c}
			if !ok || v == "" {
				all.Terms = append(all.Terms, expr.IsNull{Value: col})
				continue
			}
			all.Terms = append(all.Terms, expr.Compare{Op: expr.Eq, Left: col,
				Right: expr.Literal{Value: schema.StringValue(v), Text: v, IsText: true}})
		}
		if len(all.Terms) == 1 {
			anyOf.Terms = append(anyOf.Terms, all.Terms[0])
		} else {
			anyOf.Terms = append(anyOf.Terms, all)
		}
	}
	if len(anyOf.Terms) == 1 {
		return anyOf.Terms[0], nil
	}
	return anyOf, nil
}

// errPartitionColumn is a partition column missing from the schema,
// which snapshot loading refuses: a bug if it happens here.
func errPartitionColumn(c string) error {
	return errors.New("optimize: partition column " + c + " is not in the schema")
}

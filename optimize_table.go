package delta

import (
	"context"

	"github.com/godelta/delta/optimize"
)

// OptimizeOptions tune Optimize: see optimize.Options.
type OptimizeOptions = optimize.Options

// OptimizeResult is what Optimize did: see optimize.Result.
type OptimizeResult = optimize.Result

// Optimize runs OPTIMIZE on the latest version of the table (package
// optimize): compaction of small files, ZORDER BY or HILBERT BY when opts
// name columns, the incremental clustering of a clustered table. It
// commits remove and add actions with dataChange=false, so concurrent
// appends are not conflicts, and runs the post-commit work. When there is
// nothing to rewrite it commits nothing (OptimizeResult.Committed false).
func (t *Table) Optimize(ctx context.Context, opts OptimizeOptions) (OptimizeResult, error) {
	snap, err := t.writableSnapshot(ctx)
	if err != nil {
		return OptimizeResult{}, err
	}
	if opts.Txn.EngineInfo == "" {
		opts.Txn.EngineInfo = EngineInfo
	}
	res, err := optimize.Run(ctx, snap, opts)
	if err != nil {
		return res, err
	}
	if res.Committed {
		t.PostCommit(ctx, &res.Commit)
	}
	return res, nil
}

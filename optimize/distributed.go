package optimize

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/write"
	"github.com/godelta/delta/zorder"
)

// Plan is an OPTIMIZE split into its three steps (see the package doc), so
// that an engine can run the rewrites elsewhere: the Beam IO (module
// beamio) plans on one worker, rewrites one group per worker task and
// commits on one worker. Run is the same three steps in one process.
//
// A Plan is a function of its snapshot and options: planning the same
// snapshot with the same options on another worker gives the same groups
// in the same order, which is how an engine's workers agree on a group by
// its index without shipping the plan. Commit checks it (the files the
// parts read must be the plan's).
type Plan struct {
	snap  *snapshot.Snapshot
	opts  Options // defaults resolved
	p     *plan
	start time.Time
	idx   [][]int // where each curve column sits in a row (pick)
}

// NewPlan plans an OPTIMIZE of the table snap shows, with the checks Run
// makes first (maintenance allowed, Where on partition columns, options).
func NewPlan(ctx context.Context, snap *snapshot.Snapshot, opts Options) (*Plan, error) {
	start := time.Now()
	op := "OPTIMIZE"
	if opts.Purge {
		op = OperationReorg
	}
	if err := snap.Config().CheckMaintenance(op); err != nil {
		return nil, err
	}
	if err := checkWhere(snap, opts.Where); err != nil {
		return nil, err
	}
	p, err := makePlan(ctx, snap, &opts)
	if err != nil {
		return nil, err
	}
	pl := &Plan{snap: snap, opts: opts, p: p, start: start}
	if p.curve != nil {
		pl.idx = pl.curveSort().idx
	}
	return pl, nil
}

// Options are the options of the plan, defaults resolved (TargetSize,
// MinFileSize, MaxDeletedRowsRatio).
func (pl *Plan) Options() Options { return pl.opts }

// Groups is the number of groups (bins) to rewrite: 0 when there is
// nothing to do.
func (pl *Plan) Groups() int { return len(pl.p.bins) }

// Group returns the files of group i and their total size.
func (pl *Plan) Group(i int) ([]*actions.Add, int64) {
	b := pl.p.bins[i]
	return b.files, b.size
}

// Curve returns the curve of a curve-ordered OPTIMIZE (ZORDER BY, HILBERT
// BY, clustering) and its columns; false for a compaction.
func (pl *Plan) Curve() (zorder.Curve, []write.LayoutColumn, bool) {
	if pl.p.curve == nil {
		return 0, nil, false
	}
	return *pl.p.curve, pl.p.cols, true
}

// Clustering reports whether the plan clusters a clustered table: the
// files written must then carry clusteringProvider (see MarkClustered).
func (pl *Plan) Clustering() bool { return pl.p.cluster }

// RewriteGroup rewrites group i with the rewrite core as Run does: every
// row kept, dataChange false, sorted along the curve (sampled from the
// group's rows) when the plan has one; adds marked as clustered when the
// plan clusters. It commits nothing; on error it leaves no file.
func (pl *Plan) RewriteGroup(ctx context.Context, i int) (write.Rewritten, error) {
	if i < 0 || i >= len(pl.p.bins) {
		return write.Rewritten{}, fmt.Errorf("optimize: group %d of a plan of %d: %w", i, len(pl.p.bins), deltaerr.ErrInvalidArgument)
	}
	r, err := rewriteBin(ctx, pl.snap, &pl.opts, pl.p, pl.p.bins[i], func(*actions.Add) {})
	if err != nil {
		return r, err
	}
	pl.MarkClustered(r.Adds)
	return r, nil
}

// MarkClustered sets clusteringProvider on adds when the plan clusters.
func (pl *Plan) MarkClustered(adds []actions.Add) {
	if !pl.p.cluster {
		return
	}
	for i := range adds {
		adds[i].ClusteringProvider = actions.ClusteringProviderLiquid
	}
}

// GroupRemoves returns the remove actions (dataChange false, at the
// commit's clock) and the paths read of group i, for an engine that wrote
// the group's rows itself (a range-partitioned curve rewrite) rather than
// with RewriteGroup.
func (pl *Plan) GroupRemoves(i int) ([]actions.Remove, []string) {
	now := time.Now()
	if pl.opts.Txn.Clock != nil {
		now = pl.opts.Txn.Clock()
	}
	var rms []actions.Remove
	var read []string
	for _, a := range pl.p.bins[i].files {
		rms = append(rms, actions.RemoveOf(a, now.UnixMilli(), false))
		read = append(read, a.Path)
	}
	return rms, read
}

// Commit commits the rewrites of every group in one transaction, as Run
// does: the same operation, operationParameters and operationMetrics in
// commitInfo, the same conflict checks (the files read, the predicate),
// row tracking preserved. parts are the groups' Rewritten, in any order;
// together they must have read exactly the plan's files (else
// deltaerr.ErrInvalidArgument: parts of another plan). On error nothing is
// committed and the files the parts added are deleted (unless the
// commit's outcome is unknown: txn.ErrCommitUnknown).
//
// Rows of a range-partitioned rewrite may come in parts of their own,
// with adds and no removes; the parts' removes must still name every file
// of the plan once.
//
// The commit runs no post-commit hooks: the caller runs them
// (delta.Table.PostCommit), as the facade does after Run.
func (pl *Plan) Commit(ctx context.Context, parts []write.Rewritten) (Result, error) {
	var res Result
	opts, p, snap := pl.opts, pl.p, pl.snap
	m := &res.Metrics
	m.StartTimeMs = pl.start.UnixMilli()
	m.TotalConsideredFiles = p.considered
	m.TotalFilesSkipped = p.skipped
	m.NumTableColumns = int64(len(snap.Schema().Fields))
	var removes []actions.Remove
	var adds []actions.Add
	var read []string
	for _, r := range parts {
		adds = append(adds, r.Adds...)
		removes = append(removes, r.Removes...)
		read = append(read, r.Read...)
		m.NumRowsWritten += r.Rows
		m.SortRuns += int64(r.SortRuns)
	}
	fail := func(err error) (Result, error) {
		write.Discard(snap, err, adds)
		return Result{}, err
	}
	var want []string
	for _, b := range p.bins {
		for _, f := range b.files {
			want = append(want, f.Path)
		}
	}
	slices.Sort(want)
	got := slices.Sorted(slices.Values(read))
	if !slices.Equal(got, want) || len(removes) != len(want) {
		return fail(fmt.Errorf("optimize: the parts read %d files and remove %d, the plan has %d: %w", len(got), len(removes), len(want), deltaerr.ErrInvalidArgument))
	}
	if len(p.bins) == 0 {
		m.EndTimeMs = time.Now().UnixMilli()
		return res, nil
	}
	// The adds in an order that does not depend on the parts' order.
	slices.SortFunc(adds, func(a, b actions.Add) int { return cmp.Compare(a.Path, b.Path) })
	return commitRewrite(ctx, snap, &opts, p, res, adds, removes, read, fail)
}

// CurveValues appends to dst the values of the curve columns of row, a
// row of the table in schema order: what an engine samples to cut the
// curve's ranges (CurveKey). Nil without a curve.
func (pl *Plan) CurveValues(dst, row []schema.Value) []schema.Value {
	if pl.p.curve == nil {
		return dst
	}
	for _, idx := range pl.idx {
		dst = append(dst, pick(row, idx))
	}
	return dst
}

// CurveKey returns the curve key of table rows from a uniform sample of
// their curve values (CurveValues of sampled rows): each column is cut
// into Options.Ranges ranges of equal frequency from its non-null sampled
// values, as Run cuts them from the reservoirs it fills while reading;
// the key is then a row's position along the curve. The same sample gives
// the same key on every worker.
func (pl *Plan) CurveKey(sample [][]schema.Value) (write.RowKey, error) {
	if pl.p.curve == nil {
		return write.RowKey{}, fmt.Errorf("optimize: a compaction has no curve key: %w", deltaerr.ErrInvalidArgument)
	}
	cs := pl.curveSort()
	for _, vals := range sample {
		if len(vals) != len(cs.samplers) {
			return write.RowKey{}, fmt.Errorf("optimize: a sample of %d values for %d curve columns: %w", len(vals), len(cs.samplers), deltaerr.ErrInvalidArgument)
		}
		for i, v := range vals {
			cs.samplers[i].Add(v)
		}
	}
	return cs.Prepare()
}

// curveSort is a fresh sort key of the plan's curve, large enough to keep
// a whole sample.
func (pl *Plan) curveSort() *curveSort {
	return newCurveSort(pl.snap, &pl.opts, *pl.p.curve, pl.p.cols)
}

package optimize

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/internal/rowcheck"
	"github.com/godelta/delta/internal/statsjson"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/txn"
	"github.com/godelta/delta/write"
	"github.com/godelta/delta/zorder"
)

// DefaultTargetSize is the target file size when neither Options.TargetSize
// nor delta.targetFileSize gives one: 1 GiB, Spark's
// spark.databricks.delta.optimize.maxFileSize.
const DefaultTargetSize = 1 << 30

// DefaultMaxDeletedRowsRatio is Options.MaxDeletedRowsRatio when it is 0:
// Spark's spark.databricks.delta.optimize.maxDeletedRowsRatio.
const DefaultMaxDeletedRowsRatio = 0.05

// Errors of Run, each also deltaerr.ErrInvalidArgument.
var (
	// ErrPredicate is a Where that names a column that is not a partition
	// column: OPTIMIZE rewrites whole files, as Spark it only takes
	// partition predicates.
	ErrPredicate = fmt.Errorf("optimize: the predicate must name partition columns only: %w", deltaerr.ErrInvalidArgument)
	// ErrOptions is a contradictory call: ZOrderBy with HilbertBy, or a
	// curve on a clustered table (whose layout is its clustering columns).
	ErrOptions = fmt.Errorf("optimize: invalid options: %w", deltaerr.ErrInvalidArgument)
	// ErrPartitionColumn is a ZORDER/HILBERT BY column that is a partition
	// column (write.ErrPartitionColumn).
	ErrPartitionColumn = write.ErrPartitionColumn
	// ErrNoStats is a ZORDER/HILBERT BY column without min/max statistics
	// (write.ErrNoStats).
	ErrNoStats = write.ErrNoStats
)

// Options tune Run. The zero value compacts every partition.
type Options struct {
	// Where limits OPTIMIZE to the partitions it may match; it may name
	// partition columns only (ErrPredicate). Nil: every partition.
	Where expr.Expr
	// TargetSize is the size of the files written, and the most a bin of
	// small files holds; 0 means delta.targetFileSize, else
	// DefaultTargetSize.
	TargetSize int64
	// MinFileSize: files at least this large are left alone by
	// compaction (unless their deletion vectors call for a rewrite);
	// 0 means the target size, as Spark's minFileSize defaults to
	// maxFileSize.
	MinFileSize int64
	// MaxDeletedRowsRatio: a file whose deletion vector removes more than
	// this share of its rows is rewritten, whatever its size (the
	// deletion vector purged); 0 means DefaultMaxDeletedRowsRatio.
	MaxDeletedRowsRatio float64
	// ZOrderBy rewrites the files of each partition ordered along the
	// Z-order curve of these columns; HilbertBy along the Hilbert curve.
	// At most one of them. Columns must be data columns with statistics.
	ZOrderBy, HilbertBy []string
	// SortMemory bounds the rows a curve-ordered rewrite sorts in memory;
	// past it sorted runs spill to SortDir (see write.RewriteOptions).
	SortMemory int64
	SortDir    string
	// Ranges is the number of range ids per curve column; 0 means
	// zorder.DefaultRanges.
	Ranges int
	// Progress, when set, is called as the rewrite goes, after each file
	// read (its rows written, or staged for a sorted rewrite).
	Progress func(Progress)
	// Purge rewrites every file that has a deletion vector, and only
	// those, whatever their size, so that no row a vector deletes is left
	// in storage: Spark's REORG TABLE ... APPLY (PURGE), recorded as
	// operation REORG. Not with ZOrderBy or HilbertBy (ErrOptions); on a
	// clustered table the files are compacted, not clustered.
	Purge bool
	// Auto marks the run as an automatic compaction (a streaming sink's),
	// recorded as operationParameters.auto, as Spark's auto compaction
	// records it.
	Auto bool
	// Txn configures the commit; Operation and parameters are set here.
	Txn txn.Options
	// Logger receives progress records at debug level; nil means
	// slog.Default().
	Logger *slog.Logger
}

// Progress is how far a Run is.
type Progress struct {
	// FilesDone and BytesDone of FilesTotal and BytesTotal files chosen
	// for rewriting have been rewritten.
	FilesDone, FilesTotal int64
	BytesDone, BytesTotal int64
}

// Result is what Run did.
type Result struct {
	// Committed is false when there was nothing to do: no commit was made.
	Committed bool
	// Commit is the commit's result when Committed.
	Commit txn.CommitResult
	// Metrics are the operation's metrics, named as Spark's
	// OptimizeMetrics names them.
	Metrics Metrics
}

// Metrics of an OPTIMIZE, named as Delta Spark's OptimizeMetrics (the
// result of the OPTIMIZE command); commitInfo.operationMetrics records the
// subset Spark records there (see commitMetrics).
type Metrics struct {
	NumFilesAdded          int64            `json:"numFilesAdded"`
	NumFilesRemoved        int64            `json:"numFilesRemoved"`
	FilesAdded             FileSizeMetrics  `json:"filesAdded"`
	FilesRemoved           FileSizeMetrics  `json:"filesRemoved"`
	PartitionsOptimized    int64            `json:"partitionsOptimized"`
	ZOrderStats            *ZOrderStats     `json:"zOrderStats,omitempty"`
	ClusteringStats        *ClusteringStats `json:"clusteringStats,omitempty"`
	NumBins                int64            `json:"numBins"`
	NumBatches             int64            `json:"numBatches"`
	TotalConsideredFiles   int64            `json:"totalConsideredFiles"`
	TotalFilesSkipped      int64            `json:"totalFilesSkipped"`
	PreserveInsertionOrder bool             `json:"preserveInsertionOrder"`
	StartTimeMs            int64            `json:"startTimeMs"`
	EndTimeMs              int64            `json:"endTimeMs"`
	DeletionVectorStats    DVStats          `json:"deletionVectorStats"`
	NumTableColumns        int64            `json:"numTableColumns"`
	NumRowsWritten         int64            `json:"numRowsWritten"`
	// SortRuns is the number of sorted runs curve-ordered rewrites
	// spilled to disk (0: they sorted in memory). Not a Spark metric.
	SortRuns int64 `json:"sortRuns"`
}

// FileSizeMetrics are Spark's FileSizeMetrics: sizes in bytes.
type FileSizeMetrics struct {
	Min        *int64  `json:"min,omitempty"`
	Max        *int64  `json:"max,omitempty"`
	Avg        float64 `json:"avg"`
	TotalFiles int64   `json:"totalFiles"`
	TotalSize  int64   `json:"totalSize"`
}

func (m *FileSizeMetrics) add(size int64) {
	if m.TotalFiles == 0 {
		m.Min, m.Max = new(size), new(size)
	} else {
		*m.Min, *m.Max = min(*m.Min, size), max(*m.Max, size)
	}
	m.TotalFiles++
	m.TotalSize += size
	m.Avg = float64(m.TotalSize) / float64(m.TotalFiles)
}

// ZOrderStats summarise a curve-ordered OPTIMIZE, after Spark's
// ZOrderStats: the strategy (here the curve: "zorder" or "hilbert"), the
// files merged and the number of output groups (one per partition).
type ZOrderStats struct {
	StrategyName   string         `json:"strategyName"`
	Columns        []string       `json:"columns"`
	MergedFiles    ZOrderFileStat `json:"mergedFiles"`
	NumOutputCubes int64          `json:"numOutputCubes"`
}

// ZOrderFileStat is Spark's ZOrderFileStats: a count and a size.
type ZOrderFileStat struct {
	Num  int64 `json:"num"`
	Size int64 `json:"size"`
}

// ClusteringStats summarise a clustering OPTIMIZE.
type ClusteringStats struct {
	Columns               []string `json:"clusteringColumns"`
	InputClusteredFiles   int64    `json:"numInputClusteredFiles"`
	InputUnclusteredFiles int64    `json:"numInputUnclusteredFiles"`
	OutputFiles           int64    `json:"numOutputFiles"`
}

// DVStats are Spark's DeletionVectorStats.
type DVStats struct {
	NumDeletionVectorsRemoved    int64 `json:"numDeletionVectorsRemoved"`
	NumDeletionVectorRowsRemoved int64 `json:"numDeletionVectorRowsRemoved"`
}

// plan is the work of one Run: groups of files, each rewritten by one
// write.Rewrite call.
type plan struct {
	bins                []bin
	curve               *zorder.Curve
	cols                []write.LayoutColumn // curve columns
	cluster             bool                 // clustering the table (clusteringProvider on the adds)
	considered, skipped int64
	parts               map[string]bool // partitions with a bin
}

// bin is a group of files of one partition rewritten together.
type bin struct {
	part  string
	files []*actions.Add
	size  int64
}

// Run runs OPTIMIZE on the table snap shows: see the package doc. It
// returns Result.Committed false, with no error, when there was nothing to
// rewrite. On error nothing is committed and the files written are deleted
// (unless the commit's outcome is unknown: txn.ErrCommitUnknown).
func Run(ctx context.Context, snap *snapshot.Snapshot, opts Options) (Result, error) {
	start := time.Now()
	var res Result
	log := cmp.Or(opts.Logger, slog.Default())
	op := "OPTIMIZE"
	if opts.Purge {
		op = "REORG"
	}
	if err := snap.Config().CheckMaintenance(op); err != nil {
		return res, err
	}
	if err := checkWhere(snap, opts.Where); err != nil {
		return res, err
	}
	p, err := makePlan(ctx, snap, &opts)
	if err != nil {
		return res, err
	}
	m := &res.Metrics
	m.StartTimeMs = start.UnixMilli()
	m.TotalConsideredFiles = p.considered
	m.TotalFilesSkipped = p.skipped
	m.NumTableColumns = int64(len(snap.Schema().Fields))
	if len(p.bins) == 0 {
		m.EndTimeMs = time.Now().UnixMilli()
		log.Debug("optimize: nothing to do", "considered", p.considered)
		return res, nil
	}
	var prog Progress
	for _, b := range p.bins {
		prog.FilesTotal += int64(len(b.files))
		prog.BytesTotal += b.size
	}
	var removes []actions.Remove
	var adds []actions.Add
	var read []string
	fail := func(err error) (Result, error) {
		write.Discard(snap, err, adds)
		return Result{}, err
	}
	done := func(a *actions.Add) {
		prog.FilesDone++
		prog.BytesDone += a.Size
		if opts.Progress != nil {
			opts.Progress(prog)
		}
	}
	for _, b := range p.bins {
		r, err := rewriteBin(ctx, snap, &opts, p, b, done)
		if err != nil {
			return fail(err)
		}
		if p.cluster {
			for i := range r.Adds {
				r.Adds[i].ClusteringProvider = actions.ClusteringProviderLiquid
			}
		}
		adds = append(adds, r.Adds...)
		removes = append(removes, r.Removes...)
		read = append(read, r.Read...)
		m.NumRowsWritten += r.Rows
		m.SortRuns += int64(r.SortRuns)
		log.Debug("optimize: bin rewritten", "partition", b.part, "files", len(b.files), "added", len(r.Adds))
	}
	return commitRewrite(ctx, snap, &opts, p, res, adds, removes, read, fail)
}

// commitRewrite is the commit step of an OPTIMIZE, in process (Run) or
// distributed (Plan.Commit): the metrics of what the rewrite removed and
// added, the operation and its parameters as Spark records them, and one
// commit that read the files it rewrote, so that a concurrent commit
// removing one of them (a DELETE) fails it (check 6 of txn). fail
// discards the added files on an error.
func commitRewrite(ctx context.Context, snap *snapshot.Snapshot, opts *Options, p *plan, res Result,
	adds []actions.Add, removes []actions.Remove, read []string, fail func(error) (Result, error)) (Result, error) {
	m := &res.Metrics
	log := cmp.Or(opts.Logger, slog.Default())
	for _, r := range removes {
		m.FilesRemoved.add(*r.Size)
		if r.DeletionVector != nil {
			m.DeletionVectorStats.NumDeletionVectorsRemoved++
			m.DeletionVectorStats.NumDeletionVectorRowsRemoved += r.DeletionVector.Cardinality
		}
	}
	for _, a := range adds {
		m.FilesAdded.add(a.Size)
	}
	m.NumFilesAdded, m.NumFilesRemoved = m.FilesAdded.TotalFiles, m.FilesRemoved.TotalFiles
	m.NumBins = int64(len(p.bins))
	m.NumBatches = 1
	m.PartitionsOptimized = int64(len(p.parts))
	names := make([]string, len(p.cols))
	for i, c := range p.cols {
		names[i] = c.Name()
	}
	switch {
	case p.cluster:
		m.ClusteringStats = &ClusteringStats{Columns: names, InputUnclusteredFiles: m.NumFilesRemoved, OutputFiles: m.NumFilesAdded}
	case p.curve != nil:
		m.ZOrderStats = &ZOrderStats{StrategyName: p.curve.String(), Columns: names,
			MergedFiles: ZOrderFileStat{Num: m.NumFilesRemoved, Size: m.FilesRemoved.TotalSize}, NumOutputCubes: m.PartitionsOptimized}
	}

	topts := opts.Txn
	topts.Operation = "OPTIMIZE"
	topts.OperationParameters = operationParameters(*opts, p, names)
	if opts.Purge {
		topts.Operation = OperationReorg
	}
	topts.OperationMetrics = commitMetrics(m, adds)
	if topts.Logger == nil {
		topts.Logger = opts.Logger
	}
	topts.RowTrackingPreserved = true // write.Rewrite keeps row identities
	tx := txn.Begin(snap, topts)
	if opts.Where != nil {
		tx.ReadPredicate(opts.Where)
	}
	// A concurrent commit that removes a file read here (a DELETE) makes
	// this rewrite wrong: check 6 of txn.
	tx.ReadFiles(read...)
	tx.Remove(removes...)
	tx.Add(adds...)
	rowcheck.Mark(tx) // the rows went through the row writer
	cres, err := tx.Commit(ctx)
	if err != nil {
		return fail(err)
	}
	m.EndTimeMs = time.Now().UnixMilli()
	log.Debug("optimize: committed", "version", cres.Version, "added", len(adds), "removed", len(removes))
	res.Committed = true
	res.Commit = cres
	return res, nil
}

// rewriteBin rewrites the files of one bin with the rewrite core: every
// row kept, dataChange false, in curve order when the plan has a curve.
func rewriteBin(ctx context.Context, snap *snapshot.Snapshot, opts *Options, p *plan, b bin, done func(*actions.Add)) (write.Rewritten, error) {
	ropts := write.RewriteOptions{
		FileDone:     done,
		Options:      write.Options{TargetFileSize: opts.TargetSize, Now: opts.Txn.Clock}, // the commit's clock, for the removes' deletionTimestamp too
		NoDataChange: true,
		Copy:         true,
		SortMemory:   opts.SortMemory,
		SortDir:      opts.SortDir,
	}
	if p.curve != nil {
		ropts.SortKey = newCurveSort(snap, opts, *p.curve, p.cols)
	}
	keep := func(*actions.Add, int64, []schema.Value) (write.Verdict, []schema.Value, error) {
		return write.Keep, nil, nil
	}
	return write.Rewrite(ctx, snap, b.files, keep, ropts)
}

// OperationReorg is the commitInfo operation of a purge (Options.Purge),
// Spark's REORG_OPERATION_NAME.
const OperationReorg = "REORG"

// operationParameters are Spark's OPTIMIZE parameters
// (DeltaOperations.Optimize): predicate, zOrderBy and clusterBy as JSON
// lists, auto; isFull (false: clustering here is incremental) with
// clustering columns only. Spark has no key for a Hilbert rewrite of an
// unclustered table: it records no curve columns.
func operationParameters(opts Options, p *plan, names []string) map[string]any {
	list := func(xs []string) string {
		if xs == nil {
			xs = []string{}
		}
		b, _ := json.Marshal(xs)
		return string(b)
	}
	var pred []string
	if opts.Where != nil {
		pred = []string{opts.Where.String()}
	}
	if opts.Purge {
		// DeltaOperations.Reorg: OptimizeOrReorg's predicate, and applyPurge.
		return map[string]any{"predicate": list(pred), "applyPurge": true}
	}
	params := map[string]any{"predicate": list(pred), "zOrderBy": "[]", "clusterBy": "[]", "auto": opts.Auto}
	switch {
	case p.cluster:
		params["clusterBy"] = list(names)
		params["isFull"] = false
	case p.curve != nil && *p.curve == zorder.Morton:
		params["zOrderBy"] = list(names)
	}
	return params
}

// commitMetrics are the operationMetrics Spark's OPTIMIZE records in
// commitInfo: counts and sizes as strings, the size percentiles of the
// files added.
func commitMetrics(m *Metrics, adds []actions.Add) map[string]any {
	sizes := make([]int64, len(adds))
	for i, a := range adds {
		sizes[i] = a.Size
	}
	slices.Sort(sizes)
	pct := func(q int) int64 {
		if len(sizes) == 0 {
			return 0
		}
		return sizes[len(sizes)*q/4]
	}
	s := func(n int64) string { return fmt.Sprint(n) }
	out := map[string]any{
		"numRemovedFiles":           s(m.NumFilesRemoved),
		"numRemovedBytes":           s(m.FilesRemoved.TotalSize),
		"numAddedFiles":             s(m.NumFilesAdded),
		"numAddedBytes":             s(m.FilesAdded.TotalSize),
		"numDeletionVectorsRemoved": s(m.DeletionVectorStats.NumDeletionVectorsRemoved),
	}
	if len(sizes) > 0 {
		out["minFileSize"] = s(sizes[0])
		out["p25FileSize"] = s(pct(1))
		out["p50FileSize"] = s(pct(2))
		out["p75FileSize"] = s(pct(3))
		out["maxFileSize"] = s(sizes[len(sizes)-1])
	}
	return out
}

// checkWhere refuses a predicate on anything but partition columns.
func checkWhere(snap *snapshot.Snapshot, where expr.Expr) error {
	if where == nil {
		return nil
	}
	parts := snap.Metadata().PartitionColumns
	for _, c := range expr.Columns(where) {
		top, _, _ := strings.Cut(c, ".")
		if !slices.ContainsFunc(parts, func(p string) bool { return strings.EqualFold(p, top) }) {
			return fmt.Errorf("%w: %s is not a partition column (partition columns: %v)", ErrPredicate, c, parts)
		}
	}
	sch := snap.Schema()
	return expr.CheckPredicate(where, func(col string) (schema.DataType, bool) {
		f, ok := sch.Field(col)
		if !ok {
			f, ok = sch.FieldFold(col)
		}
		if !ok {
			return nil, false
		}
		return f.Type, true
	})
}

// partKey is a canonical key of a file's partition.
func partKey(pv map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(pv)) {
		fmt.Fprintf(&b, "%q=%q/", k, pv[k])
	}
	return b.String()
}

// deletedRatio is the share of a file's rows its deletion vector removes
// (0 without one or without numRecords in its stats).
func deletedRatio(a *actions.Add) float64 {
	if a.DeletionVector == nil {
		return 0
	}
	n, ok, err := statsjson.NumRecords(a.Stats)
	if err != nil || !ok || n == 0 {
		return 1 // unknown: rewrite, the safe side for a DV purge
	}
	return float64(a.DeletionVector.Cardinality) / float64(n)
}

// errNoTarget guards a TargetSize that resolved to nothing (a bug).
var errNoTarget = errors.New("optimize: no target size")

package optimize

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/write"
	"github.com/godelta/delta/zorder"
)

// makePlan chooses the files to rewrite and groups them into bins, and
// resolves the defaults of opts.
func makePlan(ctx context.Context, snap *snapshot.Snapshot, opts *Options) (*plan, error) {
	cfg := snap.Config()
	if opts.TargetSize <= 0 {
		if n, ok := cfg.TargetFileSize(); ok {
			opts.TargetSize = n
		} else {
			opts.TargetSize = DefaultTargetSize
		}
	}
	if opts.TargetSize <= 0 {
		return nil, errNoTarget
	}
	if opts.MinFileSize <= 0 {
		opts.MinFileSize = opts.TargetSize
	}
	if opts.MaxDeletedRowsRatio <= 0 {
		opts.MaxDeletedRowsRatio = DefaultMaxDeletedRowsRatio
	}
	p := &plan{parts: map[string]bool{}}
	if len(opts.ZOrderBy) > 0 && len(opts.HilbertBy) > 0 {
		return nil, fmt.Errorf("%w: ZORDER BY and HILBERT BY together", ErrOptions)
	}
	if opts.Purge && (len(opts.ZOrderBy) > 0 || len(opts.HilbertBy) > 0) {
		return nil, fmt.Errorf("%w: a purge (REORG ... APPLY (PURGE)) with ZORDER BY or HILBERT BY", ErrOptions)
	}
	var names []string
	switch {
	case len(opts.ZOrderBy) > 0:
		p.curve, names = new(zorder.Morton), opts.ZOrderBy
	case len(opts.HilbertBy) > 0:
		p.curve, names = new(zorder.Hilbert), opts.HilbertBy
	}
	clusterCols, clustered, err := ClusteringColumns(ctx, snap)
	if err != nil {
		return nil, err
	}
	if opts.Purge {
		clustered = false // a purge compacts; it does not cluster
	}
	if clustered && p.curve != nil {
		return nil, fmt.Errorf("%w: the table is clustered (by %v): OPTIMIZE clusters it; ZORDER BY and HILBERT BY do not apply", ErrOptions, clusterCols)
	}
	if clustered && len(clusterCols) > 0 {
		p.cluster = true
		p.curve, names = new(zorder.Hilbert), clusterCols
	}
	if p.curve != nil {
		if p.cols, err = write.LayoutColumns(snap.Schema(), snap.Metadata().PartitionColumns, cfg, names); err != nil {
			return nil, err
		}
	}

	files := snap.Files(ctx)
	if opts.Where != nil {
		if files, err = snap.FilesWhere(ctx, opts.Where); err != nil {
			return nil, err
		}
	}
	byPart := map[string][]*actions.Add{}
	var order []string
	for a, err := range files {
		if err != nil {
			return nil, err
		}
		k := partKey(a.PartitionValues)
		if _, ok := byPart[k]; !ok {
			order = append(order, k)
		}
		byPart[k] = append(byPart[k], a)
		p.considered++
	}
	chosen := int64(0)
	for _, k := range order {
		fs := byPart[k]
		var bins []bin
		switch {
		case opts.Purge:
			bins = purgeBins(k, fs, opts)
		case p.cluster:
			bins = clusterBins(k, fs)
		case p.curve != nil:
			bins = []bin{newBin(k, fs)}
		default:
			bins = compactionBins(k, fs, opts)
		}
		for _, b := range bins {
			p.bins = append(p.bins, b)
			p.parts[k] = true
			chosen += int64(len(b.files))
		}
	}
	p.skipped = p.considered - chosen
	return p, nil
}

func newBin(part string, files []*actions.Add) bin {
	b := bin{part: part, files: files}
	for _, f := range files {
		b.size += f.Size
	}
	return b
}

// compactionBins bin-packs the files of one partition, as Spark's
// OPTIMIZE does: the candidates are the files smaller than MinFileSize and
// those whose deletion vector removes more than MaxDeletedRowsRatio of
// their rows; sorted by size, they fill bins of at most TargetSize bytes
// (a candidate larger than that is a bin of its own). A bin is kept when
// rewriting it reduces the file count (two files or more) or purges a
// deletion vector (one file with one).
func compactionBins(part string, files []*actions.Add, opts *Options) []bin {
	var cand []*actions.Add
	for _, f := range files {
		if f.Size < opts.MinFileSize || deletedRatio(f) > opts.MaxDeletedRowsRatio {
			cand = append(cand, f)
		}
	}
	return packBins(part, cand, opts.TargetSize)
}

// purgeBins bin-packs the files of one partition that have a deletion
// vector, as Spark's REORG ... APPLY (PURGE) chooses them: each bin holds
// at least one, so every bin is kept.
func purgeBins(part string, files []*actions.Add, opts *Options) []bin {
	var cand []*actions.Add
	for _, f := range files {
		if f.DeletionVector != nil {
			cand = append(cand, f)
		}
	}
	return packBins(part, cand, opts.TargetSize)
}

// packBins sorts cand by size and fills bins of at most target bytes (a
// file larger than that is a bin of its own), and keeps a bin when
// rewriting it reduces the file count (two files or more) or purges a
// deletion vector (one file with one).
func packBins(part string, cand []*actions.Add, target int64) []bin {
	slices.SortStableFunc(cand, func(a, b *actions.Add) int {
		if c := a.Size - b.Size; c != 0 {
			if c < 0 {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Path, b.Path)
	})
	var bins []bin
	var cur bin
	for _, f := range cand {
		if len(cur.files) > 0 && cur.size+f.Size > target {
			bins = append(bins, cur)
			cur = bin{}
		}
		cur.part = part
		cur.files = append(cur.files, f)
		cur.size += f.Size
	}
	if len(cur.files) > 0 {
		bins = append(bins, cur)
	}
	out := bins[:0]
	for _, b := range bins {
		if len(b.files) > 1 || b.files[0].DeletionVector != nil {
			out = append(out, b)
		}
	}
	return out
}

// clusterBins picks the files of a clustered table's partition that
// clustering has not clustered yet (no clusteringProvider), as one bin:
// incremental clustering leaves clustered files alone.
func clusterBins(part string, files []*actions.Add) []bin {
	var un []*actions.Add
	for _, f := range files {
		if f.ClusteringProvider == "" {
			un = append(un, f)
		}
	}
	if len(un) == 0 {
		return nil
	}
	return []bin{newBin(part, un)}
}

// ClusteringColumns returns the clustering columns of a clustered table
// (logical names, dotted for nested fields), and whether the table is
// clustered: its protocol supports the clustering writer feature (domain
// delta.clustering), or liquid, the Databricks preview (domain
// delta.liquid). A clustered table may have no clustering columns
// (CLUSTER BY NONE).
func ClusteringColumns(ctx context.Context, snap *snapshot.Snapshot) ([]string, bool, error) {
	domain := actions.DomainClustering
	switch cfg := snap.Config(); {
	case cfg.IsFeatureSupported(actions.FeatureClustering):
	case cfg.IsFeatureSupported(actions.FeatureLiquidPreview):
		domain = actions.DomainLiquidPreview
	default:
		return nil, false, nil
	}
	raw, ok, err := snap.DomainMetadata(ctx, domain)
	if err != nil {
		return nil, true, err
	}
	if !ok {
		return nil, true, nil
	}
	cc, err := actions.ParseClustering(raw)
	if err != nil {
		return nil, true, err
	}
	mode := snap.Config().ColumnMappingMode()
	var out []string
	for _, phys := range cc.Columns {
		logical, ok := logicalPath(snap.Schema(), mode, phys)
		if !ok {
			return nil, true, &deltaerr.CorruptError{Path: "domainMetadata " + domain,
				Reason: fmt.Sprintf("clustering column %v is not in the schema", phys)}
		}
		out = append(out, write.QuoteColumn(logical))
	}
	return out, true, nil
}

// logicalPath maps a physical path to the logical one.
func logicalPath(st *schema.StructType, mode schema.ColumnMappingMode, phys []string) ([]string, bool) {
	var out []string
	for i, p := range phys {
		var found *schema.StructField
		for j := range st.Fields {
			if st.Fields[j].PhysicalName(mode) == p {
				found = &st.Fields[j]
				break
			}
		}
		if found == nil {
			return nil, false
		}
		out = append(out, found.Name)
		if i < len(phys)-1 {
			next, ok := found.Type.(*schema.StructType)
			if !ok {
				return nil, false
			}
			st = next
		}
	}
	return out, true
}

// curveSort orders the rows of a curve rewrite: it samples the curve
// columns of the rows as Rewrite stages them (the one read of the files),
// cuts each column into ranges of equal frequency from its sample once
// every row is staged, and gives each row its key along the curve.
type curveSort struct {
	curve    zorder.Curve
	cols     []write.LayoutColumn
	ranges   int
	idx      [][]int // where each column sits in a row (pick)
	tops     []int   // the top-level columns the key reads
	flat     []int   // when every column is top-level, its index in a row
	samplers []*zorder.Sampler
}

// newCurveSort returns the sort key of the curve over cols, columns of
// snap's schema.
func newCurveSort(snap *snapshot.Snapshot, opts *Options, curve zorder.Curve, cols []write.LayoutColumn) *curveSort {
	sch := snap.Schema()
	c := &curveSort{curve: curve, cols: cols, ranges: opts.Ranges, idx: make([][]int, len(cols)), samplers: make([]*zorder.Sampler, len(cols))}
	// Where each column sits in a row in table schema order: the
	// top-level index, then field indexes inside structs.
	for i, col := range cols {
		st := sch
		for _, name := range col.Logical {
			j := slices.IndexFunc(st.Fields, func(f schema.StructField) bool { return f.Name == name })
			c.idx[i] = append(c.idx[i], j)
			if next, ok := st.Fields[j].Type.(*schema.StructType); ok {
				st = next
			}
		}
		if !slices.Contains(c.tops, c.idx[i][0]) {
			c.tops = append(c.tops, c.idx[i][0])
		}
		c.samplers[i] = zorder.NewSampler(0, uint64(i)+1)
	}
	for _, idx := range c.idx {
		if len(idx) != 1 {
			c.flat = nil
			break
		}
		c.flat = append(c.flat, idx[0])
	}
	return c
}

// Observe samples the curve columns of a row.
func (c *curveSort) Observe(row []schema.Value) error {
	if c.flat != nil {
		for i, s := range c.samplers {
			s.Add(row[c.flat[i]])
		}
		return nil
	}
	for i, s := range c.samplers {
		s.Add(pick(row, c.idx[i]))
	}
	return nil
}

// ObservedColumns returns the top-level columns Observe reads: the
// sorted rewrite may then sample on a goroutine of its own
// (write.ColumnObserver).
func (c *curveSort) ObservedColumns() []int { return c.tops }

// Prepare cuts the ranges from the samples and returns the curve key.
func (c *curveSort) Prepare() (write.RowKey, error) {
	ranges := make([]*zorder.Ranges, len(c.cols))
	for i, s := range c.samplers {
		var err error
		if ranges[i], err = zorder.NewRanges(s.Values(), c.ranges); err != nil {
			return write.RowKey{}, fmt.Errorf("optimize: column %s: %w", c.cols[i].Name(), err)
		}
		c.samplers[i] = nil
	}
	keyer, err := zorder.NewKeyer(c.curve, ranges)
	if err != nil {
		return write.RowKey{}, err
	}
	if flat := c.flat; flat != nil {
		// Top-level columns are read where they are in the row.
		return write.RowKey{Words: keyer.Words(), Columns: c.tops, Key: func(dst []uint64, row []schema.Value) error {
			return keyer.KeyRowWords(dst, row, flat)
		}}, nil
	}
	vals := make([]schema.Value, len(c.cols))
	return write.RowKey{Words: keyer.Words(), Columns: c.tops, Key: func(dst []uint64, row []schema.Value) error {
		for i := range vals {
			vals[i] = pick(row, c.idx[i])
		}
		return keyer.KeyWords(dst, vals)
	}}, nil
}

// pick returns the value at the index path idx of row: a top-level
// column, then fields of structs (null when a struct on the way is null).
func pick(row []schema.Value, idx []int) schema.Value {
	v := row[idx[0]]
	for _, j := range idx[1:] {
		if v.IsNull() {
			return v
		}
		fs := v.Fields()
		if j >= len(fs) {
			return schema.Value{}
		}
		v = fs[j]
	}
	return v
}

package bench

// The Delta paper's data-skipping experiment (issue 15): a table of
// uniformly random sourceIP and destIP (32-bit) and sourcePort and destPort
// (16-bit) laid out in 100 files of equal size, after (a) a global sort on
// (sourceIP, sourcePort, destIP, destPort), (b) Z-order on the four, (c)
// Hilbert on the four. For point filters on each column, and range filters
// of 1% selectivity, the fraction of files min/max statistics skip,
// averaged over random filter values.
//
//	go test ./bench/ -run TestSkippingExperiment -skipping -v
//
// Two ways to reach the layouts are measured. "exact": the rows ordered by
// the layout's key (zorder.Keyer over ranges cut from a sample, the code
// OPTIMIZE uses) and cut into exactly 100 files of equal row count, as the
// paper's 100 objects. "optimize": 100 files of random rows, then OPTIMIZE
// ZORDER BY / HILBERT BY with a target size of a hundredth of the data, the
// library's real path (its file count is then about, not exactly, 100).

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/optimize"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/write"
	"github.com/godelta/delta/zorder"
)

var (
	skipping        = flag.Bool("skipping", false, "run the paper's data-skipping experiment (issue 15)")
	skippingRows    = flag.Int("skipping-rows", 2000, "rows per file in the skipping experiment")
	skippingFilters = flag.Int("skipping-filters", 200, "random filter values per column")
)

const skippingFiles = 100

var netColumns = []string{"sourceIP", "sourcePort", "destIP", "destPort"}

func netSchema() *schema.StructType {
	return &schema.StructType{Fields: []schema.StructField{
		{Name: "sourceIP", Type: schema.Long, Nullable: false},
		{Name: "sourcePort", Type: schema.Integer, Nullable: false},
		{Name: "destIP", Type: schema.Long, Nullable: false},
		{Name: "destPort", Type: schema.Integer, Nullable: false},
	}}
}

// netDomain is each column's domain size: 2^32 for addresses, 2^16 for
// ports.
var netDomain = []int64{1 << 32, 1 << 16, 1 << 32, 1 << 16}

func netRows(n int, seed uint64) [][]int64 {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	rows := make([][]int64, n)
	for i := range rows {
		rows[i] = []int64{rng.Int64N(1 << 32), rng.Int64N(1 << 16), rng.Int64N(1 << 32), rng.Int64N(1 << 16)}
	}
	return rows
}

func netValues(r []int64) []schema.Value {
	return []schema.Value{schema.LongValue(r[0]), schema.IntegerValue(int32(r[1])), schema.LongValue(r[2]), schema.IntegerValue(int32(r[3]))}
}

// writeChunks writes rows as files of per rows each, in order, and commits
// them in one commit.
func writeChunks(t *testing.T, tbl *delta.Table, rows [][]int64, per int) {
	ctx := context.Background()
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var adds []actions.Add
	for i := 0; i < len(rows); i += per {
		chunk := rows[i:min(i+per, len(rows))]
		b := schema.Batch{Len: len(chunk), Columns: make([][]schema.Value, 4)}
		for _, r := range chunk {
			for j, v := range netValues(r) {
				b.Columns[j] = append(b.Columns[j], v)
			}
		}
		a, err := write.Rows(ctx, snap, func(yield func(schema.Batch, error) bool) { yield(b, nil) }, write.Options{TargetFileSize: 1 << 40})
		if err != nil {
			t.Fatal(err)
		}
		adds = append(adds, a...)
	}
	tx, err := tbl.Begin(ctx, delta.TxnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tx.Add(adds...)
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

// curveOrder sorts rows along the curve of the four columns, keyed as
// OPTIMIZE keys them.
func curveOrder(t *testing.T, rows [][]int64, curve zorder.Curve) {
	ranges := make([]*zorder.Ranges, 4)
	for c := range 4 {
		s := zorder.NewSampler(0, uint64(c)+1)
		for _, r := range rows {
			s.Add(netValues(r)[c])
		}
		var err error
		if ranges[c], err = zorder.NewRanges(s.Values(), 0); err != nil {
			t.Fatal(err)
		}
	}
	k, err := zorder.NewKeyer(curve, ranges)
	if err != nil {
		t.Fatal(err)
	}
	keys := make(map[*[]int64]string, len(rows))
	for i := range rows {
		key, err := k.Key(nil, netValues(rows[i]))
		if err != nil {
			t.Fatal(err)
		}
		keys[&rows[i]] = string(key)
	}
	idx := make([]int, len(rows))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return strings.Compare(keys[&rows[a]], keys[&rows[b]]) })
	sorted := make([][]int64, len(rows))
	for i, j := range idx {
		sorted[i] = rows[j]
	}
	copy(rows, sorted)
}

// skipFractions measures, per column, the mean fraction of files skipped
// by point filters (values of random rows) and by range filters of 1% of
// the column's domain.
func skipFractions(t *testing.T, snap *snapshot.Snapshot, rows [][]int64, filters int) (point, rng []float64, files int) {
	ctx := context.Background()
	var stats []*expr.Stats
	for a, err := range snap.Files(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		st, err := expr.ParseStats(a.Stats, snap.Schema(), snap.Config().ColumnMappingMode())
		if err != nil {
			t.Fatal(err)
		}
		stats = append(stats, st)
	}
	r := rand.New(rand.NewPCG(42, 43))
	frac := func(e expr.Expr) float64 {
		skipped := 0
		for _, st := range stats {
			if !st.MightMatch(e) {
				skipped++
			}
		}
		return float64(skipped) / float64(len(stats))
	}
	point, rng = make([]float64, 4), make([]float64, 4)
	for c, col := range netColumns {
		for range filters {
			v := rows[r.IntN(len(rows))][c]
			e, err := expr.Parse(fmt.Sprintf("%s = %d", col, v))
			if err != nil {
				t.Fatal(err)
			}
			point[c] += frac(e)
			width := netDomain[c] / 100
			lo := r.Int64N(netDomain[c] - width)
			e, err = expr.Parse(fmt.Sprintf("%s >= %d AND %s < %d", col, lo, col, lo+width))
			if err != nil {
				t.Fatal(err)
			}
			rng[c] += frac(e)
		}
		point[c] /= float64(filters)
		rng[c] /= float64(filters)
	}
	return point, rng, len(stats)
}

func TestSkippingExperiment(t *testing.T) {
	if !*skipping {
		t.Skip("the skipping experiment runs with -skipping")
	}
	ctx := context.Background()
	per := *skippingRows
	base := netRows(skippingFiles*per, 7)
	type layout struct {
		name  string
		order func(rows [][]int64)
		opt   *optimize.Options
	}
	layouts := []layout{
		{name: "unsorted (random)", order: func([][]int64) {}},
		{name: "(a) global sort", order: func(rows [][]int64) {
			slices.SortStableFunc(rows, func(a, b []int64) int {
				return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]), cmp.Compare(a[2], b[2]), cmp.Compare(a[3], b[3]))
			})
		}},
		{name: "(b) Z-order, exact", order: func(rows [][]int64) { curveOrder(t, rows, zorder.Morton) }},
		{name: "(c) Hilbert, exact", order: func(rows [][]int64) { curveOrder(t, rows, zorder.Hilbert) }},
		{name: "(b) Z-order, OPTIMIZE", order: func([][]int64) {}, opt: &optimize.Options{ZOrderBy: netColumns}},
		{name: "(c) Hilbert, OPTIMIZE", order: func([][]int64) {}, opt: &optimize.Options{HilbertBy: netColumns}},
	}
	var out strings.Builder
	fmt.Fprintf(&out, "%d rows, %d per file; %d filter values per column\n\n", len(base), per, *skippingFilters)
	fmt.Fprintf(&out, "| layout | files | point: sourceIP | sourcePort | destIP | destPort | avg | min || range 1%%: sourceIP | sourcePort | destIP | destPort | avg | min |\n")
	fmt.Fprintf(&out, "|---|---|---|---|---|---|---|---||---|---|---|---|---|---|\n")
	for _, l := range layouts {
		rows := slices.Clone(base)
		l.order(rows)
		tbl, err := delta.Create(ctx, filepath.Join(t.TempDir(), "t"), delta.TableSpec{Schema: netSchema()})
		if err != nil {
			t.Fatal(err)
		}
		writeChunks(t, tbl, rows, per)
		if l.opt != nil {
			snap, _ := tbl.Snapshot(ctx)
			total, _ := snap.SizeInBytes(ctx)
			o := *l.opt
			o.TargetSize = total / skippingFiles
			if _, err := tbl.Optimize(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		snap, err := tbl.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		point, rng, files := skipFractions(t, snap, rows, *skippingFilters)
		row := func(xs []float64) string {
			var parts []string
			sum, lo := 0.0, 1.0
			for _, x := range xs {
				parts = append(parts, fmt.Sprintf("%.1f%%", 100*x))
				sum += x
				lo = min(lo, x)
			}
			return strings.Join(parts, " | ") + fmt.Sprintf(" | **%.1f%%** | %.1f%%", 100*sum/4, 100*lo)
		}
		fmt.Fprintf(&out, "| %s | %d | %s || %s |\n", l.name, files, row(point), row(rng))
		tbl.Close()
	}
	t.Log("\n" + out.String())
}

package tablecheck

import (
	"context"
	"errors"
	"math"
	"strings"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/internal/datafile"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
)

// deepChecker compares data files' footers with the log's stats.
type deepChecker struct {
	stats *expr.StatsDecoder // the project's one stats decoder
	// cols are the leaf columns outside arrays and maps whose footer
	// statistics are compared: logical name (as expr.Stats takes it),
	// physical path (as the footer names it) and type.
	cols []deepColumn
}

type deepColumn struct {
	logical  string
	physical string // footer path, joined by "\x00"
	typ      schema.PrimitiveType
}

func newDeepChecker(snap *snapshot.Snapshot) (*deepChecker, error) {
	mode := snap.Config().ColumnMappingMode()
	logical := snap.Schema()
	d := &deepChecker{stats: expr.NewStatsDecoder(logical, mode, nil)}
	var walk func(st *schema.StructType, lprefix, pprefix []string)
	walk = func(st *schema.StructType, lprefix, pprefix []string) {
		for i := range st.Fields {
			f := &st.Fields[i]
			if strings.Contains(f.Name, ".") {
				continue // not nameable in the dotted form expr.Stats takes
			}
			l := append(append([]string(nil), lprefix...), f.Name)
			p := append(append([]string(nil), pprefix...), f.PhysicalName(mode))
			switch t := f.Type.(type) {
			case *schema.StructType:
				walk(t, l, p)
			case schema.PrimitiveType:
				d.cols = append(d.cols, deepColumn{strings.Join(l, "."), strings.Join(p, "\x00"), t})
			}
		}
	}
	walk(logical, nil, nil)
	return d, nil
}

// check opens the footer of a data file and compares it with the file's
// stats in the log.
func (d *deepChecker) check(ctx context.Context, c *checker, store logstore.Store, key string, v int64, a *actions.Add) error {
	c.rep.Checked["footers"]++
	f, err := datafile.OpenObject(ctx, store, key, a.Size)
	if err != nil {
		if ctx.Err() != nil || !errors.Is(err, deltaerr.ErrCorrupt) {
			return err
		}
		c.report(KindFooter, v, a.Path, "the Parquet footer cannot be read: %v", err)
		return nil
	}
	if a.Stats == "" {
		return nil
	}
	st, err := d.stats.Decode(a.Stats)
	if err != nil {
		c.report(KindStats, v, a.Path, "the stats of the log cannot be decoded: %v", err)
		return nil
	}
	if n, ok := st.NumRecords(); ok && n != f.NumRows() {
		c.report(KindFooter, v, a.Path, "the footer counts %d rows, the log's numRecords is %d", f.NumRows(), n)
	}
	footer := map[string]datafile.FooterColumn{}
	for _, fc := range f.FooterColumns() {
		footer[strings.Join(fc.Path, "\x00")] = fc
	}
	// Null counts are exact only for a file's rows as written: a file with
	// a deletion vector may carry wide stats (tightBounds false).
	exactNulls := a.DeletionVector == nil && st.TightBounds()
	for _, col := range d.cols {
		fc, ok := footer[col.physical]
		if !ok {
			continue
		}
		if n, ok := st.NullCount(col.logical); ok && exactNulls && fc.HasNullCount && n != fc.NullCount {
			c.report(KindStats, v, a.Path, "column %s: the footer counts %d nulls, the log's nullCount is %d", col.logical, fc.NullCount, n)
		}
		if !fc.HasBounds || !boundsComparable(col.typ) {
			continue
		}
		if lo, ok := st.Min(col.logical); ok && !lo.IsNull() && above(lo, col.typ, fc, true) {
			c.report(KindStats, v, a.Path, "column %s: the log's minValues %s is above the footer's minimum %s", col.logical, lo, footerBound(fc, true))
		}
		if hi, ok := st.Max(col.logical); ok && !hi.IsNull() && above(hi, col.typ, fc, false) {
			c.report(KindStats, v, a.Path, "column %s: the log's maxValues %s is below the footer's maximum %s", col.logical, hi, footerBound(fc, false))
		}
	}
	return nil
}

// boundsComparable reports whether the footer bounds of a column of type t are
// decoded (datafile.FooterColumns) and comparable with the log's.
// Timestamps are left out: their unit depends on annotations, and the log
// truncates them to milliseconds.
func boundsComparable(t schema.PrimitiveType) bool {
	switch t {
	case schema.Byte, schema.Short, schema.Integer, schema.Long, schema.Date, schema.Float, schema.Double:
		return true
	}
	return false
}

// above reports whether the log's bound lies outside the footer's: a
// minimum above the footer's minimum (min true), or a maximum below the
// footer's maximum.
func above(logged schema.Value, t schema.PrimitiveType, fc datafile.FooterColumn, min bool) bool {
	if t != schema.Float && t != schema.Double {
		if !fc.IsInt {
			return false // a widened column's older files: not compared
		}
		x := logged.Int64()
		if min {
			return x > fc.MinInt
		}
		return x < fc.MaxInt
	}
	x := logged.Float64()
	if fc.Float32 {
		x = float64(float32(x)) // as the footer holds it
	}
	if math.IsNaN(x) {
		return false
	}
	if min {
		return x > fc.MinReal
	}
	return x < fc.MaxReal
}

func footerBound(fc datafile.FooterColumn, min bool) schema.Value {
	switch {
	case fc.IsInt && min:
		return schema.LongValue(fc.MinInt)
	case fc.IsInt:
		return schema.LongValue(fc.MaxInt)
	case min:
		return schema.DoubleValue(fc.MinReal)
	}
	return schema.DoubleValue(fc.MaxReal)
}

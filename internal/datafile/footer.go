package datafile

import (
	"encoding/binary"
	"math"
	"slices"

	"github.com/parquet-go/parquet-go/format"
)

// FooterColumn is what a file's footer says of one leaf column, over all of
// its row groups: for the table check, which compares it with the log's
// stats. Only the null count and the bounds of fixed-width numeric
// physical types are decoded; other bounds are left out.
type FooterColumn struct {
	// Path is the column's path in the Parquet schema (physical names; a
	// list or map column has its repeated groups in it).
	Path []string
	// HasNullCount is set when every row group records statistics for the
	// column; NullCount is then their sum of null counts.
	HasNullCount bool
	NullCount    int64
	// HasBounds is set when every row group records min_value and
	// max_value for an INT32, INT64, FLOAT or DOUBLE column; Min and Max
	// are then the bounds over all row groups, as float64 (exact for
	// integers of up to 53 bits) and, for the integer types, as int64.
	HasBounds bool
	// IsInt is set for INT32 and INT64 columns, Float32 for FLOAT ones
	// (whose bounds a reader compares after rounding to float32).
	IsInt, Float32   bool
	MinInt, MaxInt   int64
	MinReal, MaxReal float64

	bounded bool // some chunk has set the bounds
}

// FooterColumns returns the statistics the footer records for each leaf
// column, in schema order. It does no I/O: the footer was read by Open.
func (f *File) FooterColumns() []FooterColumn {
	md := f.pf.Metadata()
	var cols []FooterColumn
	index := map[string]int{}
	for rgi, rg := range md.RowGroups {
		for _, cc := range rg.Columns {
			m := &cc.MetaData
			path := slices.Clone([]string(m.PathInSchema))
			k := pathKey(path)
			i, ok := index[k]
			if !ok {
				if rgi > 0 {
					continue // a column missing from the first row group
				}
				i = len(cols)
				index[k] = i
				cols = append(cols, FooterColumn{Path: path, HasNullCount: true, HasBounds: true})
			}
			col := &cols[i]
			s := &m.Statistics
			if len(s.MinValue) == 0 && len(s.MaxValue) == 0 && s.NullCount == 0 {
				// No statistics at all, unless every value of the chunk is
				// null (then there are no bounds either): unknown.
				col.HasNullCount, col.HasBounds = false, false
				continue
			}
			col.NullCount += s.NullCount
			if !col.HasBounds {
				continue
			}
			if m.NumValues == s.NullCount {
				continue // an all-null chunk has no bounds and needs none
			}
			lo, hi, isInt, ok := decodeBounds(m.Type, s.MinValue, s.MaxValue)
			if !ok {
				col.HasBounds = false
				continue
			}
			col.mergeBounds(lo, hi, isInt)
			col.Float32 = m.Type == format.Float
		}
	}
	for i := range cols {
		if cols[i].HasBounds && !cols[i].bounded {
			cols[i].HasBounds = false // every chunk was all null
		}
	}
	return cols
}

type bound struct {
	i int64
	f float64
}

func (c *FooterColumn) mergeBounds(lo, hi bound, isInt bool) {
	if !c.bounded {
		c.bounded, c.IsInt = true, isInt
		c.MinInt, c.MaxInt, c.MinReal, c.MaxReal = lo.i, hi.i, lo.f, hi.f
		return
	}
	c.MinInt, c.MaxInt = min(c.MinInt, lo.i), max(c.MaxInt, hi.i)
	c.MinReal, c.MaxReal = min(c.MinReal, lo.f), max(c.MaxReal, hi.f)
}

// decodeBounds decodes PLAIN-encoded min_value and max_value of the
// fixed-width numeric physical types.
func decodeBounds(t format.Type, lo, hi []byte) (bound, bound, bool, bool) {
	dec := func(b []byte) (bound, bool) {
		switch t {
		case format.Int32:
			if len(b) != 4 {
				return bound{}, false
			}
			v := int64(int32(binary.LittleEndian.Uint32(b)))
			return bound{v, float64(v)}, true
		case format.Int64:
			if len(b) != 8 {
				return bound{}, false
			}
			v := int64(binary.LittleEndian.Uint64(b))
			return bound{v, float64(v)}, true
		case format.Float:
			if len(b) != 4 {
				return bound{}, false
			}
			f := float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
			return bound{0, f}, !math.IsNaN(f)
		case format.Double:
			if len(b) != 8 {
				return bound{}, false
			}
			f := math.Float64frombits(binary.LittleEndian.Uint64(b))
			return bound{0, f}, !math.IsNaN(f)
		}
		return bound{}, false
	}
	l, ok1 := dec(lo)
	h, ok2 := dec(hi)
	return l, h, t == format.Int32 || t == format.Int64, ok1 && ok2
}

func pathKey(p []string) string {
	n := 0
	for _, s := range p {
		n += len(s) + 1
	}
	b := make([]byte, 0, n)
	for _, s := range p {
		b = append(b, s...)
		b = append(b, 0)
	}
	return string(b)
}

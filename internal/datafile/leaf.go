package datafile

import (
	"github.com/parquet-go/parquet-go/encoding"

	"github.com/godelta/delta/internal/parquetio"
	"github.com/godelta/delta/schema"
)

// leaf is one leaf column of the file and a cursor over its entries in
// the current row group: the shared page cursor, whose pages this side
// converts to schema.Values in one typed loop per page (or, for a
// dictionary page, the dictionary converted once, then indexes).
type leaf struct {
	parquetio.Cursor
	node *pnode
	conv convFunc

	vals     []schema.Value // converted values of a plain page; reused
	dictVals []schema.Value // converted dictionary values
}

// LoadPage converts the values of a plain page.
func (l *leaf) LoadPage(d encoding.Values, n int) { l.vals = l.conv(l.vals[:0], d, n) }

// LoadDict converts the values of the chunk's dictionary.
func (l *leaf) LoadDict(d encoding.Values, n int) { l.dictVals = l.conv(l.dictVals[:0], d, n) }

// open puts the cursor at the start of a column chunk, read from pages.
func (l *leaf) open(pages parquetio.PageReader) {
	l.Open(pages)
	l.dictVals = l.dictVals[:0]
}

// value returns the value of the current entry, null below the maximum
// definition level, and moves past it.
func (l *leaf) value() schema.Value {
	if l.I >= l.N {
		l.Need()
	}
	var v schema.Value
	if l.Defs == nil || l.Defs[l.I] == l.MaxDef {
		if l.Idx != nil {
			v = l.dictVals[l.Idx[l.V]]
		} else {
			v = l.vals[l.V]
		}
		l.V++
	}
	l.I++
	return v
}

// fill reads the next len(dst) rows of a leaf that is not repeated into
// dst, a page at a time.
func (l *leaf) fill(dst []schema.Value) {
	for i := 0; i < len(dst); {
		if l.I >= l.N {
			l.Need()
		}
		k := min(len(dst)-i, l.N-l.I)
		out := dst[i : i+k]
		switch {
		case l.Defs == nil && l.Idx == nil:
			copy(out, l.vals[l.V:l.V+k])
			l.V += k
		case l.Defs == nil:
			for j, x := range l.Idx[l.V : l.V+k] {
				out[j] = l.dictVals[x]
			}
			l.V += k
		default:
			defs := l.Defs[l.I : l.I+k]
			v := l.V
			for j, d := range defs {
				if d == l.MaxDef {
					if l.Idx != nil {
						out[j] = l.dictVals[l.Idx[v]]
					} else {
						out[j] = l.vals[v]
					}
					v++
				} else {
					out[j] = schema.Value{}
				}
			}
			l.V = v
		}
		l.I += k
		i += k
	}
}

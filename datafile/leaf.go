package datafile

import (
	"bytes"
	"io"
	"slices"

	"github.com/parquet-go/parquet-go"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
)

// leaf is one leaf column of the file and a cursor over its entries in
// the current row group.
//
// A leaf column is a sequence of entries, each with a definition level
// (how many optional or repeated nodes above it, itself included, are
// present) and a repetition level (0 where a row starts). Only an entry at
// the maximum definition level carries a value. The cursor walks one page
// at a time: the page's levels as parquet-go decodes them, and its values
// converted to schema.Values in one typed loop per page (or, for a
// dictionary page, the dictionary converted once, then indexes).
type leaf struct {
	node   *pnode
	name   string // dotted wanted path, for errors
	conv   convFunc
	maxDef byte
	maxRep byte

	pages parquet.Pages // of the current row group; nil when closed
	page  parquet.Page  // current page, nil before the first
	done  bool          // no page left in the chunk
	defs  []byte        // definition levels of the page; nil means all maxDef
	reps  []byte        // repetition levels of the page; nil means all 0
	n     int           // entries in the page
	i     int           // next entry
	v     int           // value index of the next entry, when it has one

	vals     []schema.Value // converted values of a plain page; reused
	idx      []int32        // dictionary indexes of the page; nil for plain pages
	dict     parquet.Dictionary
	dictVals []schema.Value // converted dictionary values
}

// open puts the cursor at the start of the column chunk c.
func (l *leaf) open(c parquet.ColumnChunk) {
	l.close()
	l.pages = c.Pages()
	l.done = false
	l.dict, l.dictVals = nil, l.dictVals[:0]
}

// close releases the current page and the page reader.
func (l *leaf) close() {
	if l.page != nil {
		parquet.Release(l.page)
		l.page = nil
	}
	if l.pages != nil {
		l.pages.Close()
		l.pages = nil
	}
	l.defs, l.reps, l.idx = nil, nil, nil
	l.n, l.i, l.v = 0, 0, 0
}

// more reports whether an entry is left in the chunk, reading pages as
// needed so that l.i is an entry of the current page when it is true.
func (l *leaf) more() bool {
	for l.i >= l.n {
		if l.done {
			return false
		}
		l.nextPage()
	}
	return true
}

// need is more for an entry that the row structure says must exist.
func (l *leaf) need() {
	if !l.more() {
		failf("column %s has fewer values than its row group has rows", l.name)
	}
}

func (l *leaf) nextPage() {
	if l.page != nil {
		parquet.Release(l.page)
		l.page = nil
	}
	l.defs, l.reps, l.idx = nil, nil, nil
	l.n, l.i, l.v = 0, 0, 0
	p, err := l.pages.ReadPage()
	if err == io.EOF {
		l.done = true
		return
	}
	if err != nil {
		fail(&deltaerr.CorruptError{Path: fileName, Reason: "column " + l.name, Err: err})
	}
	l.page = p
	n := int(p.NumValues())
	if l.maxDef > 0 {
		l.defs = p.DefinitionLevels()
		if len(l.defs) != n {
			failf("column %s: page has %d definition levels for %d entries", l.name, len(l.defs), n)
		}
	}
	if l.maxRep > 0 {
		l.reps = p.RepetitionLevels()
		if len(l.reps) != n {
			failf("column %s: page has %d repetition levels for %d entries", l.name, len(l.reps), n)
		}
		if n > 0 && slices.Max(l.reps) > l.maxRep {
			failf("column %s: repetition level above the maximum %d", l.name, l.maxRep)
		}
	}
	nv := n
	if l.defs != nil {
		nv = bytes.Count(l.defs, []byte{l.maxDef})
		if n > 0 && slices.Max(l.defs) > l.maxDef {
			failf("column %s: definition level above the maximum %d", l.name, l.maxDef)
		}
		if nv == n {
			l.defs = nil // no nulls: take the fast paths
		}
	}
	l.n = n
	if l.conv == nil {
		return // read for its levels only
	}
	data := p.Data()
	if d := p.Dictionary(); d != nil {
		l.idx = data.Int32()
		if len(l.idx) < nv {
			failf("column %s: page has %d dictionary indexes for %d values", l.name, len(l.idx), nv)
		}
		if d != l.dict {
			l.dict = d
			l.dictVals = l.conv(l.dictVals[:0], d.Page().Data(), d.Len())
		}
		nd := int32(len(l.dictVals))
		for _, j := range l.idx[:nv] {
			if uint32(j) >= uint32(nd) {
				failf("column %s: dictionary index %d out of range", l.name, j)
			}
		}
		return
	}
	l.vals = l.conv(l.vals[:0], data, nv)
}

// def returns the definition level of the current entry.
func (l *leaf) def() byte {
	if l.i >= l.n {
		l.need()
	}
	if l.defs == nil {
		return l.maxDef
	}
	return l.defs[l.i]
}

// rep returns the repetition level of the current entry; the caller has
// checked more.
func (l *leaf) rep() byte {
	if l.reps == nil {
		return 0
	}
	return l.reps[l.i]
}

// next moves past the current entry.
func (l *leaf) next() {
	if l.defs == nil || l.defs[l.i] == l.maxDef {
		l.v++
	}
	l.i++
}

// value returns the value of the current entry, null below the maximum
// definition level, and moves past it.
func (l *leaf) value() schema.Value {
	if l.i >= l.n {
		l.need()
	}
	var v schema.Value
	if l.defs == nil || l.defs[l.i] == l.maxDef {
		if l.idx != nil {
			v = l.dictVals[l.idx[l.v]]
		} else {
			v = l.vals[l.v]
		}
		l.v++
	}
	l.i++
	return v
}

// skip moves past the current entry and the entries after it that belong
// to the same value of a node at repetition level rep: those repeated
// deeper.
func (l *leaf) skip(rep int) {
	l.need()
	l.next()
	for l.more() && int(l.rep()) > rep {
		l.next()
	}
}

// fill reads the next len(dst) rows of a leaf that is not repeated into
// dst, a page at a time.
func (l *leaf) fill(dst []schema.Value) {
	for i := 0; i < len(dst); {
		if l.i >= l.n {
			l.need()
		}
		k := min(len(dst)-i, l.n-l.i)
		out := dst[i : i+k]
		switch {
		case l.defs == nil && l.idx == nil:
			copy(out, l.vals[l.v:l.v+k])
			l.v += k
		case l.defs == nil:
			for j, x := range l.idx[l.v : l.v+k] {
				out[j] = l.dictVals[x]
			}
			l.v += k
		default:
			defs := l.defs[l.i : l.i+k]
			v := l.v
			for j, d := range defs {
				if d == l.maxDef {
					if l.idx != nil {
						out[j] = l.dictVals[l.idx[v]]
					} else {
						out[j] = l.vals[v]
					}
					v++
				} else {
					out[j] = schema.Value{}
				}
			}
			l.v = v
		}
		l.i += k
		i += k
	}
}

package checkpoint

import (
	"bytes"
	"fmt"
	"io"
	"slices"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/encoding"
)

// leaf is one leaf column of a checkpoint's Parquet schema and a cursor
// over its values in the current row group.
//
// A Parquet leaf column is a sequence of entries, each with a definition
// level (how many optional or repeated ancestors are present) and a
// repetition level (0 where a new row starts). Only entries whose
// definition level is the column's maximum carry a value. The cursor walks
// entries one page at a time, decoding levels and values column-wise
// through parquet-go's page API, and keeps nothing of pages it has left.
//
// The methods that read entries panic with an abort on bad data; guard
// turns that into an error at the file boundary.
type leaf struct {
	col    *parquet.Column
	name   string // dotted path, for errors
	maxDef byte
	maxRep byte
	kind   parquet.Kind
	text   bool // byte arrays are text: keep them as strings

	pages pageReader   // of the current row group; nil when closed
	page  parquet.Page // current page, nil before the first
	done  bool         // no page left in the chunk
	defs  []byte       // definition levels of the page; nil means all maxDef
	reps  []byte       // repetition levels of the page; nil means all 0
	n     int          // entries in the page
	i     int          // next entry
	v     int          // value index of the next entry, when it has one

	pv   values  // values of a plain page
	dv   values  // values of the chunk's dictionary
	idx  []int32 // dictionary indexes of the page; nil for plain pages
	dict parquet.Dictionary
}

// values holds the decoded values of a page or a dictionary, by physical
// kind. The slices point into parquet-go's page buffers and are valid only
// while the page is; text is a copy, and so outlives it.
type values struct {
	n     int // number of values
	bits  []byte
	i32   []int32
	i64   []int64
	i96   []deprecated.Int96
	f32   []float32
	f64   []float64
	bytes []byte   // byte array data, or fixed length values back to back
	offs  []uint32 // byte array offsets: value j is bytes[offs[j]:offs[j+1]]
	size  int      // fixed length byte array size
	text  string   // byte array data as one string, when the leaf is text
	strs  []string // dictionary values as strings, when the leaf is text
}

// load fills vs from the values of a page (or of a dictionary's page).
func (l *leaf) load(vs *values, d encoding.Values, dictionary bool) {
	*vs = values{}
	switch l.kind {
	case parquet.Boolean:
		vs.bits = d.Boolean()
		vs.n = len(vs.bits) * 8
	case parquet.Int32:
		vs.i32 = d.Int32()
		vs.n = len(vs.i32)
	case parquet.Int64:
		vs.i64 = d.Int64()
		vs.n = len(vs.i64)
	case parquet.Int96:
		vs.i96 = d.Int96()
		vs.n = len(vs.i96)
	case parquet.Float:
		vs.f32 = d.Float()
		vs.n = len(vs.f32)
	case parquet.Double:
		vs.f64 = d.Double()
		vs.n = len(vs.f64)
	case parquet.ByteArray:
		vs.bytes, vs.offs = d.ByteArray()
		vs.n = max(len(vs.offs)-1, 0)
		if vs.n > 0 && (vs.offs[0] > vs.offs[vs.n] || int(vs.offs[vs.n]) > len(vs.bytes)) {
			corruptf("column %s: byte array offsets out of range", l.name)
		}
		if l.text {
			// One copy per page; each value is then a substring of it.
			vs.text = string(vs.bytes[:vs.offs[vs.n]])
			if dictionary {
				vs.strs = make([]string, vs.n)
				for j := range vs.strs {
					vs.strs[j] = vs.textAt(j)
				}
			}
		}
	case parquet.FixedLenByteArray:
		vs.bytes, vs.size = d.FixedLenByteArray()
		if vs.size > 0 {
			vs.n = len(vs.bytes) / vs.size
		}
	}
}

// textAt returns byte array value j of a text leaf.
func (vs *values) textAt(j int) string {
	a, b := vs.offs[j], vs.offs[j+1]
	if a > b {
		corruptf("byte array offsets decrease")
	}
	return vs.text[a:b]
}

// open starts reading the leaf's chunk in a row group.
func (l *leaf) open(pages pageReader) {
	l.close()
	l.pages = pages
	l.done = false
	l.dict = nil
	l.dv = values{}
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
	l.pv = values{}
	l.n, l.i, l.v = 0, 0, 0
}

// more reports whether an entry is left in the chunk, reading pages as
// needed so that l.i is an entry of the current page when it is true.
func (l *leaf) more() bool {
	return l.i < l.n || l.morePages()
}

// morePages is the slow path of more.
func (l *leaf) morePages() bool {
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
		corruptf("column %s has fewer rows than its row group", l.name)
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
	check(err)
	l.page = p
	n := int(p.NumValues())
	if l.maxDef > 0 {
		l.defs = p.DefinitionLevels()
		if len(l.defs) != n {
			corruptf("column %s: page has %d definition levels for %d entries", l.name, len(l.defs), n)
		}
	}
	if l.maxRep > 0 {
		l.reps = p.RepetitionLevels()
		if len(l.reps) != n {
			corruptf("column %s: page has %d repetition levels for %d entries", l.name, len(l.reps), n)
		}
	}
	// Levels are decoded with the bit width of their maximum, so they can
	// exceed it only when the maximum is not all ones.
	nv := n
	if l.defs != nil {
		nv = bytes.Count(l.defs, []byte{l.maxDef})
		if l.maxDef&(l.maxDef+1) != 0 && slices.Max(l.defs) > l.maxDef {
			corruptf("column %s: definition level above the maximum %d", l.name, l.maxDef)
		}
	}
	if l.reps != nil && l.maxRep&(l.maxRep+1) != 0 && slices.Max(l.reps) > l.maxRep {
		corruptf("column %s: repetition level above the maximum %d", l.name, l.maxRep)
	}
	data := p.Data()
	if d := p.Dictionary(); d != nil {
		l.idx = data.Int32()
		if len(l.idx) < nv {
			corruptf("column %s: page has %d dictionary indexes for %d values", l.name, len(l.idx), nv)
		}
		if d != l.dict {
			l.dict = d
			l.load(&l.dv, d.Page().Data(), true)
		}
		for _, j := range l.idx[:nv] {
			if j < 0 || int(j) >= l.dv.n {
				corruptf("column %s: dictionary index %d out of range", l.name, j)
			}
		}
	} else {
		l.load(&l.pv, data, false)
		if l.pv.n < nv {
			corruptf("column %s: page has %d values for %d entries that need one", l.name, l.pv.n, nv)
		}
	}
	l.n = n
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
// checked more or need.
func (l *leaf) rep() byte {
	if l.reps == nil {
		return 0
	}
	return l.reps[l.i]
}

// has reports whether the current entry carries a value.
func (l *leaf) has() bool { return l.def() == l.maxDef }

// next moves past the current entry.
func (l *leaf) next() {
	if l.defs == nil || l.defs[l.i] == l.maxDef {
		l.v++
	}
	l.i++
}

// src returns the values the current entry's value is in, and its index
// there. The caller has checked has.
func (l *leaf) src() (*values, int) {
	if l.idx != nil {
		return &l.dv, int(l.idx[l.v])
	}
	return &l.pv, l.v
}

// skipRows moves past n whole rows; the cursor must be at a row start.
func (l *leaf) skipRows(n int) {
	if n == 0 {
		return
	}
	if l.maxRep == 0 {
		for n > 0 {
			l.need()
			k := min(n, l.n-l.i)
			if l.defs == nil {
				l.v += k
			} else {
				for _, d := range l.defs[l.i : l.i+k] {
					if d == l.maxDef {
						l.v++
					}
				}
			}
			l.i += k
			n -= k
		}
		return
	}
	// Each entry with repetition level 0 starts a row; stop at the start
	// of the row after the n skipped.
	for l.more() {
		j, v := l.i, l.v
		for ; j < l.n; j++ {
			if l.reps[j] == 0 {
				if n == 0 {
					break
				}
				n--
			}
			if l.defs == nil || l.defs[j] == l.maxDef {
				v++
			}
		}
		l.i, l.v = j, v
		if j < l.n {
			return
		}
	}
	if n > 0 {
		corruptf("column %s has fewer rows than its row group", l.name)
	}
}

// endRow moves past the remaining entries of the current row, those with
// a repetition level above zero.
func (l *leaf) endRow() {
	for l.more() && l.rep() != 0 {
		l.next()
	}
}

// skipAbsent moves past the rows, from the cursor on, whose first entry
// has a definition level below d, and returns how many it passed. ok is
// false if the chunk ended first.
func (l *leaf) skipAbsent(d byte) (skipped int, ok bool) {
	for {
		if !l.more() {
			return skipped, false
		}
		if l.defs == nil {
			return skipped, true
		}
		if l.maxRep == 0 {
			// Skipped entries are below the maximum level, so carry no
			// value: only the entry index moves.
			j := l.i
			for j < l.n && l.defs[j] < d {
				j++
			}
			skipped += j - l.i
			l.i = j
			if j < l.n {
				return skipped, true
			}
			continue
		}
		if l.defs[l.i] >= d {
			return skipped, true
		}
		l.next()
		l.endRow()
		skipped++
	}
}

// atEnd reports whether the cursor has passed every entry of the chunk.
func (l *leaf) atEnd() bool { return !l.more() }

// Typed reads of the current entry. Each moves past the entry; ok is false
// for a null. Integers accept both INT32 and INT64 columns.

func (l *leaf) str() (string, bool) {
	if !l.has() {
		l.next()
		return "", false
	}
	vs, j := l.src()
	var s string
	if vs.strs != nil {
		s = vs.strs[j]
	} else {
		s = vs.textAt(j)
	}
	l.next()
	return s, true
}

func (l *leaf) int64() (int64, bool) {
	if !l.has() {
		l.next()
		return 0, false
	}
	vs, j := l.src()
	var x int64
	switch l.kind {
	case parquet.Int32:
		x = int64(vs.i32[j])
	case parquet.Int64:
		x = vs.i64[j]
	}
	l.next()
	return x, true
}

func (l *leaf) boolean() (bool, bool) {
	if !l.has() {
		l.next()
		return false, false
	}
	vs, j := l.src()
	b := vs.bits[j>>3]>>(j&7)&1 != 0
	l.next()
	return b, true
}

// pageReader is what a leaf reads its pages from.
type pageReader interface {
	ReadPage() (parquet.Page, error)
	Close() error
}

// pageAhead reads the pages of a column chunk on its own goroutine, one
// page ahead of the caller, so that decompression and decoding run on
// another core while the caller assembles actions. A panic of the decoder
// on that goroutine becomes the error of the page read.
type pageAhead struct {
	pages   parquet.Pages
	ch      chan pageResult
	done    chan struct{}
	started bool
}

type pageResult struct {
	page parquet.Page
	err  error
}

func newPageAhead(pages parquet.Pages) *pageAhead {
	return &pageAhead{pages: pages, ch: make(chan pageResult, 1), done: make(chan struct{})}
}

func (p *pageAhead) run() {
	defer close(p.ch)
	for {
		r := p.read()
		select {
		case p.ch <- r:
		case <-p.done:
			parquet.Release(r.page)
			return
		}
		if r.err != nil {
			return
		}
	}
}

func (p *pageAhead) read() (r pageResult) {
	defer func() {
		if v := recover(); v != nil {
			r = pageResult{err: fmt.Errorf("parquet decoder panic: %v", v)}
		}
	}()
	r.page, r.err = p.pages.ReadPage()
	return r
}

// ReadPage returns the next page, io.EOF after the last.
func (p *pageAhead) ReadPage() (parquet.Page, error) {
	if !p.started {
		p.started = true
		go p.run()
	}
	r, ok := <-p.ch
	if !ok {
		return nil, io.EOF
	}
	return r.page, r.err
}

// Close stops the goroutine, waits for it, and closes the pages.
func (p *pageAhead) Close() error {
	if p.started {
		close(p.done)
		for r := range p.ch {
			parquet.Release(r.page)
		}
	}
	return p.pages.Close()
}

package parquetio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"

	"github.com/godelta/delta/deltaerr"
)

// PageReader is what a [Cursor] reads its pages from: parquet.Pages, or a
// [PageAhead] over them.
type PageReader interface {
	ReadPage() (parquet.Page, error)
	Close() error
}

// Loader takes the values of the pages a [Cursor] reads: the reader's
// side-specific decoding. The Cursor has checked d before the call: its
// kind is the column's, and it holds at least n values (for a byte array
// column, with offsets that never decrease and stay inside the data).
// d is valid until the next call.
type Loader interface {
	// LoadPage takes the values of a plain-encoded page, whose first n
	// values are those of the page's n entries that carry one.
	LoadPage(d encoding.Values, n int)
	// LoadDict takes the n values of the chunk's dictionary, which the
	// entries of the dictionary-encoded pages that follow index.
	LoadDict(d encoding.Values, n int)
}

// Cursor is one leaf column of a Parquet file and a cursor over its
// entries in one column chunk.
//
// A leaf column is a sequence of entries, each with a definition level
// (how many optional or repeated nodes above it, itself included, are
// present) and a repetition level (0 where a row starts). Only an entry at
// the maximum definition level carries a value. The cursor walks one page
// at a time and keeps nothing of the pages it has left.
//
// The methods that move the cursor abort with [Fail] on bad data: run
// them under [Catch].
//
// Invariant, while a page is current: N is its number of entries, I the
// next one (I <= N), and V the index of the next entry's value among the
// page's values. Defs holds the N definition levels, or is nil when every
// entry is at MaxDef; Reps the N repetition levels, or nil when MaxRep is
// 0. For a dictionary-encoded page, Idx holds the dictionary index of
// each value, each within the dictionary the Loader was given last; for a
// plain page Idx is nil and the Loader was given the page's values. The
// readers' value accessors read these fields and move I and V together.
type Cursor struct {
	File   string // the file, for errors
	Name   string // the dotted column path, for errors
	MaxDef byte
	MaxRep byte
	Kind   parquet.Kind
	Loader Loader // nil when the column is read for its levels only
	// Hold keeps the pages the cursor leaves instead of releasing them to
	// parquet-go's pools, until ReleaseHeld or Close: for a Loader whose
	// values alias a page's bytes (Raw.Alias), which stay valid while the
	// page is held.
	Hold bool

	Defs []byte
	Reps []byte
	Idx  []int32
	N    int
	I    int
	V    int

	pages PageReader   // of the current chunk; nil when closed
	page  parquet.Page // current page, nil before the first
	done  bool         // no page left in the chunk
	dict  parquet.Dictionary
	// dictLen is the number of values of dict.
	dictLen int
	held    []parquet.Page // pages left while Hold is set
}

// Open puts the cursor at the start of a column chunk, read from pages.
// The cursor closes pages.
//
// Each page is checked before any of its entries is read: its definition
// and repetition levels, one per entry and none above its maximum; its
// values, of the column's kind and at least one per entry at the maximum
// definition level; for a byte array column, offsets that never decrease
// and stay in the page; for a dictionary-encoded page, one index per such
// entry and each within the dictionary. A page parquet-go cannot read
// (a damaged header, a truncated chunk, a failed decompression) is
// corrupt too. Every error names the file and the column.
func (c *Cursor) Open(pages PageReader) {
	c.Close()
	c.pages = pages
	c.done = false
	c.dict, c.dictLen = nil, 0
}

// Close releases the current page, the held pages and the page reader.
func (c *Cursor) Close() {
	c.ReleaseHeld()
	if c.page != nil {
		parquet.Release(c.page)
		c.page = nil
	}
	if c.pages != nil {
		c.pages.Close()
		c.pages = nil
	}
	c.Defs, c.Reps, c.Idx = nil, nil, nil
	c.N, c.I, c.V = 0, 0, 0
}

// More reports whether an entry is left in the chunk, reading pages as
// needed so that I is an entry of the current page when it is true.
func (c *Cursor) More() bool {
	return c.I < c.N || c.morePages()
}

// morePages is the slow path of More.
func (c *Cursor) morePages() bool {
	for c.I >= c.N {
		if c.done || c.pages == nil {
			return false
		}
		c.nextPage()
	}
	return true
}

// Need is More for an entry that the row structure says must exist.
func (c *Cursor) Need() {
	if !c.More() {
		c.Corruptf("has fewer values than its row group has rows")
	}
}

// Corruptf aborts with a corrupt-file error about the column.
func (c *Cursor) Corruptf(format string, args ...any) {
	Corruptf(c.File, "column "+c.Name+": "+format, args...)
}

// ReleaseHeld releases the pages the cursor left while Hold was set; the
// current page stays.
func (c *Cursor) ReleaseHeld() {
	for i, p := range c.held {
		parquet.Release(p)
		c.held[i] = nil
	}
	c.held = c.held[:0]
}

// TakeHeld appends the pages the cursor left while Hold was set to dst and
// hands them over: the caller releases them (parquet.Release) once the
// values that alias them are no longer used, possibly on another
// goroutine. The current page stays with the cursor.
func (c *Cursor) TakeHeld(dst []parquet.Page) []parquet.Page {
	dst = append(dst, c.held...)
	clear(c.held)
	c.held = c.held[:0]
	return dst
}

// nextPage reads the next page and checks it.
func (c *Cursor) nextPage() {
	if c.page != nil {
		if c.Hold {
			c.held = append(c.held, c.page)
		} else {
			parquet.Release(c.page)
		}
		c.page = nil
	}
	c.Defs, c.Reps, c.Idx = nil, nil, nil
	c.N, c.I, c.V = 0, 0, 0

	var (
		p          parquet.Page
		data, dict encoding.Values
		d          parquet.Dictionary
		n          int64
	)
	err := Decode(c.File, c.Name, func() error {
		var err error
		if p, err = c.pages.ReadPage(); err != nil {
			return err
		}
		n = p.NumValues()
		if c.MaxDef > 0 {
			c.Defs = p.DefinitionLevels()
		}
		if c.MaxRep > 0 {
			c.Reps = p.RepetitionLevels()
		}
		if c.Loader != nil {
			data = p.Data()
			if d = p.Dictionary(); d != nil && d != c.dict {
				dict = d.Page().Data()
			}
		}
		return nil
	})
	if err == io.EOF {
		c.done = true
		return
	}
	if p != nil {
		c.page = p
	}
	if err != nil {
		var ce *deltaerr.CorruptError
		if !errors.As(err, &ce) {
			err = &deltaerr.CorruptError{Path: c.File, Reason: "column " + c.Name, Err: err}
		}
		Fail(err)
	}
	if n < 0 || n > 1<<31-1 {
		c.Corruptf("page of %d entries", n)
	}
	nn := int(n)
	if c.Defs != nil && len(c.Defs) != nn {
		c.Corruptf("page has %d definition levels for %d entries", len(c.Defs), nn)
	}
	if c.Reps != nil && len(c.Reps) != nn {
		c.Corruptf("page has %d repetition levels for %d entries", len(c.Reps), nn)
	}
	if c.MaxRep > 0 && c.Reps == nil && nn > 0 {
		c.Corruptf("page has no repetition levels")
	}
	if c.MaxDef > 0 && c.Defs == nil && nn > 0 {
		c.Corruptf("page has no definition levels")
	}
	// Levels are decoded with the bit width of their maximum, so they can
	// exceed it only when the maximum is not all ones.
	if nn > 0 && c.Reps != nil && c.MaxRep&(c.MaxRep+1) != 0 && anyAbove(c.Reps, c.MaxRep) {
		c.Corruptf("repetition level above the maximum %d", c.MaxRep)
	}
	nv := nn
	if c.Defs != nil {
		if nn > 0 && c.MaxDef&(c.MaxDef+1) != 0 && anyAbove(c.Defs, c.MaxDef) {
			c.Corruptf("definition level above the maximum %d", c.MaxDef)
		}
		nv = bytes.Count(c.Defs, []byte{c.MaxDef})
		if nv == nn {
			c.Defs = nil // no nulls: the readers take their fast paths
		}
	}
	c.N = nn
	if c.Loader == nil {
		return // read for its levels only
	}
	if d == nil {
		if have := c.count(data, "page"); have < nv {
			c.Corruptf("page has %d values for %d entries that need one", have, nv)
		}
		c.Loader.LoadPage(data, nv)
		return
	}
	if d != c.dict {
		size := c.count(dict, "dictionary")
		c.dict = d
		c.Loader.LoadDict(dict, size)
		c.dictLen = size
	}
	if data.Kind() != encoding.Int32 {
		c.Corruptf("dictionary indexes of kind %s", data.Kind())
	}
	c.Idx = data.Int32()
	if len(c.Idx) < nv {
		c.Corruptf("page has %d dictionary indexes for %d values", len(c.Idx), nv)
	}
	nd := uint32(c.dictLen)
	for _, j := range c.Idx[:nv] {
		if uint32(j) >= nd {
			c.Corruptf("dictionary index %d out of range [0, %d)", j, nd)
		}
	}
}

// count returns the number of values in d, a page's or a dictionary's,
// checking that they are of the column's kind and, for byte arrays, that
// their offsets are in order and in range.
func (c *Cursor) count(d encoding.Values, what string) int {
	if d.Kind() != encodingKind(c.Kind) {
		c.Corruptf("%s values of kind %s in a %s column", what, d.Kind(), c.Kind)
	}
	switch c.Kind {
	case parquet.Boolean:
		return len(d.Boolean()) * 8
	case parquet.Int32:
		return len(d.Int32())
	case parquet.Int64:
		return len(d.Int64())
	case parquet.Int96:
		return len(d.Int96())
	case parquet.Float:
		return len(d.Float())
	case parquet.Double:
		return len(d.Double())
	case parquet.ByteArray:
		data, offs := d.ByteArray()
		if len(offs) == 0 {
			return 0
		}
		prev := offs[0]
		for _, o := range offs[1:] {
			if o < prev {
				c.Corruptf("%s byte array offsets decrease", what)
			}
			prev = o
		}
		if int64(prev) > int64(len(data)) {
			c.Corruptf("%s byte array offsets out of range", what)
		}
		return len(offs) - 1
	case parquet.FixedLenByteArray:
		data, size := d.FixedLenByteArray()
		if size <= 0 {
			c.Corruptf("fixed length byte array of size %d", size)
		}
		return len(data) / size
	}
	c.Corruptf("%s values of unknown kind %s", what, c.Kind)
	return 0
}

// encodingKind is parquet-go's encoding.Kind of physical kind k: the same
// order, counted from 1 (0 is encoding.Undefined).
func encodingKind(k parquet.Kind) encoding.Kind { return encoding.Kind(k) + 1 }

// Def returns the definition level of the current entry.
func (c *Cursor) Def() byte {
	if c.I >= c.N {
		c.Need()
	}
	if c.Defs == nil {
		return c.MaxDef
	}
	return c.Defs[c.I]
}

// Rep returns the repetition level of the current entry; the caller has
// checked More or Need.
func (c *Cursor) Rep() byte {
	if c.Reps == nil {
		return 0
	}
	return c.Reps[c.I]
}

// Has reports whether the current entry, which must exist, carries a
// value.
func (c *Cursor) Has() bool { return c.Def() == c.MaxDef }

// Next moves past the current entry.
func (c *Cursor) Next() {
	if c.Defs == nil || c.Defs[c.I] == c.MaxDef {
		c.V++
	}
	c.I++
}

// AtEnd reports whether the cursor has passed every entry of the chunk.
func (c *Cursor) AtEnd() bool { return !c.More() }

// SkipRows moves past n whole rows; the cursor must be at a row start.
func (c *Cursor) SkipRows(n int) {
	if n == 0 {
		return
	}
	if c.MaxRep == 0 {
		for n > 0 {
			c.Need()
			k := min(n, c.N-c.I)
			if c.Defs == nil {
				c.V += k
			} else {
				c.V += bytes.Count(c.Defs[c.I:c.I+k], []byte{c.MaxDef})
			}
			c.I += k
			n -= k
		}
		return
	}
	// Each entry with repetition level 0 starts a row; stop at the start
	// of the row after the n skipped.
	for c.More() {
		j, v := c.I, c.V
		for ; j < c.N; j++ {
			if c.Reps[j] == 0 {
				if n == 0 {
					break
				}
				n--
			}
			if c.Defs == nil || c.Defs[j] == c.MaxDef {
				v++
			}
		}
		c.I, c.V = j, v
		if j < c.N {
			return
		}
	}
	if n > 0 {
		c.Corruptf("has fewer rows than its row group")
	}
}

// EndRow moves past the remaining entries of the current row, those with
// a repetition level above zero.
func (c *Cursor) EndRow() {
	for c.More() && c.Rep() != 0 {
		c.Next()
	}
}

// SkipValue moves past the current entry, which must exist, and the
// entries after it that belong to the same value of a node at repetition
// level rep: those repeated deeper.
func (c *Cursor) SkipValue(rep int) {
	c.Need()
	c.Next()
	for c.More() && int(c.Rep()) > rep {
		c.Next()
	}
}

// SkipAbsent moves past the rows, from the cursor on, whose first entry
// has a definition level below d, and returns how many it passed. ok is
// false if the chunk ended first.
func (c *Cursor) SkipAbsent(d byte) (skipped int, ok bool) {
	for {
		if !c.More() {
			return skipped, false
		}
		if c.Defs == nil {
			return skipped, true
		}
		if c.MaxRep == 0 {
			// Skipped entries are below the maximum level, so carry no
			// value: only the entry index moves.
			j := c.I
			for j < c.N && c.Defs[j] < d {
				j++
			}
			skipped += j - c.I
			c.I = j
			if j < c.N {
				return skipped, true
			}
			continue
		}
		if c.Defs[c.I] >= d {
			return skipped, true
		}
		c.Next()
		c.EndRow()
		skipped++
	}
}

// anyAbove reports whether a level of levels is above top, eight at a
// time when top is under 128: a byte is then above top when its high bit
// is set, or when adding 127-top to its low seven bits sets it (which
// carries out of no byte). It runs on every page of levels, where
// slices.Max took a compare and a branch a byte.
func anyAbove(levels []byte, top byte) bool {
	const lo, hi = 0x7f7f7f7f7f7f7f7f, 0x8080808080808080
	add := uint64(0x7f-top&0x7f) * 0x0101010101010101
	i := 0
	for ; top < 0x80 && i+8 <= len(levels); i += 8 {
		w := binary.LittleEndian.Uint64(levels[i:])
		if (w|(w&lo+add))&hi != 0 {
			return true
		}
	}
	for _, l := range levels[i:] {
		if l > top {
			return true
		}
	}
	return false
}

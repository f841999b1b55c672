package snapshot

import (
	"encoding/binary"
	"hash/maphash"
	"strconv"
	"strings"

	"github.com/godelta/delta/actions"
)

// fileTable holds the add actions of a checkpoint in a compact form, so
// that a snapshot of a million files costs a fraction of a million
// actions.Add structs:
//
//   - a row per file of 56 bytes in fixed-size chunks (no slice doubling),
//     with the path (a substring of the checkpoint decoder's page text),
//     size, modification time and the partition map, which the decoder
//     already shares between files with equal values;
//   - the stats JSON split into a shape, the text with every number and
//     string value taken out, interned per table, and those values, packed
//     into an arena of byte blocks (see encodeStats);
//   - an add with any field the row lacks (tags, a deletion vector, row
//     tracking, clustering) kept whole, in full by row.
//
// Files builds an actions.Add per row as it yields it. A hash index from
// canonical path to row lets Update find the checkpoint files that new
// commits supersede without a pass over every row.
//
// A fileTable is written only while its checkpoint is read and is then
// shared, read-only, by every snapshot built on that checkpoint.
type fileTable struct {
	chunks [][]fileRow
	n      int
	full   map[int]*actions.Add // rows with shape shapeFull

	shapes    []string          // by shape id
	shapeIDs  map[string]uint32 // shape -> id
	lastShape uint32            // id of the last shape stored, shapeRaw before the first: tried first
	lastSegs  []shapeSeg        // lastShape, split for matchStats
	blocks    [][]byte          // arena of encoded stats
	scratch   []byte
	shapeBuf  []byte

	seed  maphash.Seed
	index []uint32 // open addressing, row+1 per slot, 0 empty
}

// fileRow is one add of the checkpoint.
type fileRow struct {
	path    string
	pv      map[string]string
	size    int64
	modTime int64
	stats   statsRef
}

// statsRef locates a row's encoded stats in the arena.
type statsRef struct {
	shape    uint32 // shapeNone, shapeRaw, shapeFull, or an index into shapes; dataChange as the top bit
	blk, off uint32
	n        uint32
}

const (
	shapeNone  = 1<<31 - 1 // no stats
	shapeRaw   = 1<<31 - 2 // the arena holds the stats as they are
	shapeFull  = 1<<31 - 3 // the whole add is in fileTable.full
	dataChange = 1 << 31

	rowChunk  = 4096
	blockSize = 1 << 20
	// maxShapes bounds the interned shapes: past it, stats are kept raw.
	maxShapes = 1 << 16
	// hole marks a value taken out of a shape, kept in the values as its
	// length and text; numHole a run of digits kept as its value. Valid
	// JSON never holds these raw control bytes, so stats that do are kept
	// raw.
	hole    = 0
	numHole = 1
	// maxNumDigits is the longest digit run that fits a uint64 surely.
	maxNumDigits = 19
)

func newFileTable() *fileTable {
	return &fileTable{shapeIDs: map[string]uint32{}, lastShape: shapeRaw, seed: maphash.MakeSeed()}
}

func (t *fileTable) len() int { return t.n }

func (t *fileTable) row(i int) *fileRow { return &t.chunks[i/rowChunk][i%rowChunk] }

// add appends a copy of a.
func (t *fileTable) add(a *actions.Add) {
	if t.n%rowChunk == 0 {
		t.chunks = append(t.chunks, make([]fileRow, rowChunk))
	}
	r := t.row(t.n)
	t.n++
	r.path, r.size = a.Path, a.Size
	if len(a.Tags) > 0 || a.DeletionVector != nil || a.BaseRowID != nil || a.DefaultRowCommitVersion != nil || a.ClusteringProvider != "" {
		c := *a
		if t.full == nil {
			t.full = map[int]*actions.Add{}
		}
		t.full[t.n-1] = &c
		r.stats.shape = shapeFull
		return
	}
	r.pv, r.modTime = a.PartitionValues, a.ModificationTime
	r.stats = t.putStats(a.Stats)
	if a.DataChange {
		r.stats.shape |= dataChange
	}
}

// putStats stores s in the arena.
func (t *fileTable) putStats(s string) statsRef {
	if s == "" {
		return statsRef{shape: shapeNone}
	}
	// Files of one table nearly always share a shape: try the last one
	// first, and split and look up a shape only when s does not fit it.
	id := uint32(shapeRaw)
	vals, ok := t.scratch[:0], false
	if t.lastShape != shapeRaw {
		if vals, ok = matchStats(t.lastSegs, s, vals); ok {
			id = t.lastShape
		}
	}
	if !ok {
		var shape []byte
		shape, vals, ok = encodeStats(s, vals[:0], t.shapeBuf[:0])
		t.shapeBuf = shape[:0]
		if ok {
			if x, found := t.shapeIDs[string(shape)]; found {
				id = x
			} else if len(t.shapes) < maxShapes {
				id = uint32(len(t.shapes))
				str := string(shape)
				t.shapes = append(t.shapes, str)
				t.shapeIDs[str] = id
			}
		}
	}
	t.scratch = vals[:0]
	if id != shapeRaw && id != t.lastShape {
		t.lastShape, t.lastSegs = id, splitShape(t.shapes[id], t.lastSegs[:0])
	}
	if id == shapeRaw {
		vals = append(vals[:0], s...)
		t.scratch = vals[:0]
	}
	if len(vals) > blockSize {
		b := append([]byte(nil), vals...)
		t.blocks = append(t.blocks, b)
		return statsRef{shape: id, blk: uint32(len(t.blocks) - 1), n: uint32(len(b))}
	}
	if len(t.blocks) == 0 || len(t.blocks[len(t.blocks)-1])+len(vals) > blockSize {
		t.blocks = append(t.blocks, make([]byte, 0, blockSize))
	}
	k := len(t.blocks) - 1
	off := len(t.blocks[k])
	t.blocks[k] = append(t.blocks[k], vals...)
	return statsRef{shape: id, blk: uint32(k), off: uint32(off), n: uint32(len(vals))}
}

// stats returns the stats string of a row; buf is scratch space, returned
// for reuse.
func (t *fileTable) stats(ref statsRef, buf []byte) (string, []byte) {
	ref.shape &^= dataChange
	if ref.shape == shapeNone {
		return "", buf
	}
	vals := t.blocks[ref.blk][ref.off : ref.off+ref.n]
	if ref.shape == shapeRaw {
		return string(vals), buf
	}
	return decodeStats(t.shapes[ref.shape], vals, buf)
}

// build fills dst with the add of row i; buf is scratch space, returned
// for reuse.
func (t *fileTable) build(i int, dst *actions.Add, buf []byte) []byte {
	r := t.row(i)
	if r.stats.shape == shapeFull {
		*dst = *t.full[i]
		return buf
	}
	*dst = actions.Add{
		Path:             r.path,
		PartitionValues:  r.pv,
		Size:             r.size,
		ModificationTime: r.modTime,
		DataChange:       r.stats.shape&dataChange != 0,
	}
	dst.Stats, buf = t.stats(r.stats, buf)
	return buf
}

// partitionValues returns the partition values of row i.
func (t *fileTable) partitionValues(i int) map[string]string {
	r := t.row(i)
	if r.stats.shape == shapeFull {
		return t.full[i].PartitionValues
	}
	return r.pv
}

// key returns the file key of row i.
func (t *fileTable) key(i int) fileKey {
	r := t.row(i)
	if r.stats.shape == shapeFull {
		a := t.full[i]
		return keyOf(a.Path, a.DeletionVector)
	}
	return fileKey{path: CanonicalPath(r.path)}
}

// finish builds the path index once every row is in.
func (t *fileTable) finish() {
	if t.n == 0 {
		return
	}
	size := 1
	for size < 2*t.n {
		size <<= 1
	}
	t.index = make([]uint32, size)
	mask := uint64(size - 1)
	for i := 0; i < t.n; i++ {
		h := maphash.String(t.seed, t.key(i).path) & mask
		for t.index[h] != 0 {
			h = (h + 1) & mask
		}
		t.index[h] = uint32(i + 1)
	}
}

// lookupAll calls fn with every row whose file has key k.
func (t *fileTable) lookupAll(k fileKey, fn func(row int)) {
	if len(t.index) == 0 {
		return
	}
	mask := uint64(len(t.index) - 1)
	for h := maphash.String(t.seed, k.path) & mask; t.index[h] != 0; h = (h + 1) & mask {
		i := int(t.index[h] - 1)
		if t.key(i) == k {
			fn(i)
		}
	}
}

// size returns the size of the file of row i.
func (t *fileTable) size(i int) int64 {
	return t.row(i).size
}

// encodeStats splits stats JSON into its shape and values: every run of
// digits, and every string that follows a colon (a value, not a key),
// is replaced in the shape by one hole byte and appended to vals: a digit
// run without a leading zero as its value (a uvarint), anything else as
// its length (a uvarint) and its bytes. The shape is appended to shape.
// decodeStats(shape, vals) gives s back exactly. ok is false when s holds
// a hole byte already.
func encodeStats(s string, vals, shape []byte) (shapeOut, valsOut []byte, ok bool) {
	if strings.IndexByte(s, hole) >= 0 || strings.IndexByte(s, numHole) >= 0 {
		return shape, vals, false
	}
	lit := 0 // start of the pending literal text
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			j := digitsEnd(s, i)
			shape = append(shape, s[lit:i]...)
			if x, ok := canonicalNumber(s[i:j]); ok {
				shape = append(shape, numHole)
				vals = binary.AppendUvarint(vals, x)
			} else {
				shape = append(shape, hole)
				vals = binary.AppendUvarint(vals, uint64(j-i))
				vals = append(vals, s[i:j]...)
			}
			i, lit = j, j
		case c == '"' && i > 0 && s[i-1] == ':':
			j := stringEnd(s, i+1)
			if j >= len(s) {
				i = len(s) // unterminated: the rest stays literal
				continue
			}
			shape = append(shape, s[lit:i+1]...)
			shape = append(shape, hole)
			vals = binary.AppendUvarint(vals, uint64(j-i-1))
			vals = append(vals, s[i+1:j]...)
			i, lit = j, j
		default:
			i++
		}
	}
	shape = append(shape, s[lit:]...)
	return shape, vals, true
}

// shapeSeg is a piece of a shape: literal text, then the hole that
// follows it (none after the last piece).
type shapeSeg struct {
	lit    string
	hole   byte // hole, numHole, or noHole
	quoted bool // the next piece's text starts with a quote: the hole was a string's content
}

const noHole = 0xff

// splitShape appends the pieces of shape to segs.
func splitShape(shape string, segs []shapeSeg) []shapeSeg {
	for {
		h := strings.IndexAny(shape, "\x00\x01")
		if h < 0 {
			return append(segs, shapeSeg{lit: shape, hole: noHole})
		}
		rest := shape[h+1:]
		segs = append(segs, shapeSeg{lit: shape[:h], hole: shape[h], quoted: strings.HasPrefix(rest, `"`)})
		shape = rest
	}
}

// matchStats appends to vals the values of s split along segs, the pieces
// of a shape encodeStats made of other stats, and reports whether s fits
// it: each piece's text appears in s where the holes before it leave it,
// a numHole stands for a digit run that formats back the same
// (canonicalNumber), and a hole for a string's content (when the next
// piece starts with a quote) or a digit run. decodeStats(shape, vals) then
// gives s back exactly, since decoding only concatenates; the split need
// not be the one encodeStats would make. When ok is false, vals holds
// garbage.
func matchStats(segs []shapeSeg, s string, vals []byte) (out []byte, ok bool) {
	i := 0
	for _, seg := range segs {
		if len(s)-i < len(seg.lit) || s[i:i+len(seg.lit)] != seg.lit {
			return vals, false
		}
		i += len(seg.lit)
		var j int
		switch {
		case seg.hole == noHole:
			continue
		case seg.hole == numHole:
			j = digitsEnd(s, i)
			x, ok := canonicalNumber(s[i:j])
			if !ok {
				return vals, false
			}
			vals = binary.AppendUvarint(vals, x)
			i = j
			continue
		case seg.quoted:
			if j = stringEnd(s, i); j >= len(s) {
				return vals, false
			}
		default:
			if j = digitsEnd(s, i); j == i {
				return vals, false
			}
		}
		vals = binary.AppendUvarint(vals, uint64(j-i))
		vals = append(vals, s[i:j]...)
		i = j
	}
	return vals, i == len(s)
}

// digitsEnd returns the end of the run of digits at s[i:].
func digitsEnd(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// stringEnd returns the index of the quote that ends the JSON string
// whose content starts at s[i], or len(s) or more when it is not ended.
func stringEnd(s string, i int) int {
	for i < len(s) && s[i] != '"' {
		if s[i] == '\\' {
			i++
		}
		i++
	}
	return i
}

// canonicalNumber returns the value of digits when formatting it gives
// digits back: one to maxNumDigits digits, no leading zero.
func canonicalNumber(digits string) (uint64, bool) {
	if len(digits) == 0 || len(digits) > maxNumDigits || digits[0] == '0' && len(digits) > 1 {
		return 0, false
	}
	var x uint64
	for _, d := range []byte(digits) {
		x = x*10 + uint64(d-'0')
	}
	return x, true
}

// decodeStats reverses encodeStats, appending to buf, and returns the
// result as a new string and buf for reuse.
func decodeStats(shape string, vals []byte, buf []byte) (string, []byte) {
	out := buf[:0]
	for i := 0; i < len(shape); i++ {
		h := shape[i]
		if h != hole && h != numHole {
			out = append(out, h)
			continue
		}
		n, w := binary.Uvarint(vals)
		vals = vals[w:]
		if h == numHole {
			out = strconv.AppendUint(out, n, 10)
			continue
		}
		out = append(out, vals[:n]...)
		vals = vals[n:]
	}
	return string(out), out
}

package datafile

// The write side: Delta values to a Parquet data file, with the Delta
// per-file statistics of what was written.
//
// # Layout written
//
// The Parquet schema is the one Spark writes for the same Delta types, so
// that Spark, delta-rs and this package's reader all read the files:
// boolean as BOOLEAN; byte and short as INT32 annotated INT(8,true) and
// INT(16,true); integer as INT32; long as INT64; float; double; string as
// BYTE_ARRAY annotated STRING; binary as BYTE_ARRAY; date as INT32 DATE;
// timestamp as INT64 TIMESTAMP(MICROS, isAdjustedToUTC=true) and
// timestamp_ntz as INT64 TIMESTAMP(MICROS, false) (Spark's INT96 default
// is not used: it is deprecated and loses the time zone semantics);
// decimal(p,s) as DECIMAL(p,s) over INT32 for p <= 9, INT64 for p <= 18,
// else FIXED_LEN_BYTE_ARRAY of the fewest bytes that hold 10^p - 1 in two's
// complement; a struct as a group of its fields in schema order; an array
// as the three-level LIST (a repeated group "list" of one field
// "element"); a map as MAP over a repeated group "key_value" of a required
// "key" and a "value"; a variant as a plain group of two required binaries,
// "value" then "metadata". Void fields are left out: readers read a field
// absent from the file as null. Fields are optional when nullable, else
// required, as are array elements (containsNull) and map values
// (valueContainsNull). The root group is named spark_schema.
//
// # How a write works
//
// Write takes one column-major batch and, a chunk of rows at a time,
// shreds every column into the leaf columns of the file (the Dremel
// encoding). Each leaf fills its current data page in place: the values
// PLAIN-encoded into a byte buffer, and one byte per entry for each of
// the definition and repetition levels the leaf has (page, in chunk.go);
// a value has no intermediate form. A top-level primitive column, the
// common case, goes through one typed loop per run of rows that checks,
// encodes and levels the values and gathers both the Delta statistics
// and the chunk's Parquet bounds, in locals; nested values are walked
// recursively, value by value.
//
// A page is cut at the first row boundary at which it holds pageSize
// bytes or pageRows rows, so a row never spans pages: its levels are
// RLE-encoded, its values replaced by their indexes in the chunk's
// dictionary where that pays (dict.go: Spark's PLAIN_DICTIONARY pages,
// with parquet-mr's fallback to PLAIN), its body compressed, and the page
// joins, behind its header, the leaf's column chunk in memory; the
// dictionary page goes before the chunk's data pages when the row group
// is written. When the row group's
// buffered size reaches WriteOptions.RowGroupSize (checked after every
// chunk of rows) and at Close, the last pages are cut and the column
// chunks written, one after the other; Close then writes the footer.
// chunk.go holds the encoder and the file layout, writeschema.go the
// schema. parquet-go provides only low-level pieces: the footer's
// structs and their thrift encoding, the codecs and the level encoding.
//
// Statistics are gathered while shredding, from the Delta values
// themselves, never read back from the file.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/format"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/internal/parquetio"
	"github.com/godelta/delta/schema"
)

// DefaultRowGroupSize is the row group size when WriteOptions leaves
// RowGroupSize at zero: 128 MiB, as Spark's parquet.block.size.
const DefaultRowGroupSize = 128 << 20

// writeChunk is the most rows shredded before the row group size is
// checked.
const writeChunk = 4096

// ErrValueMismatch is returned by Write for a value that does not fit its
// column: a null in a non-nullable field, a map key or a required array
// element; a value of another type; a decimal with more digits than its
// column holds, or a struct with the wrong number of fields. The error
// names the column and the row. It matches deltaerr.ErrInvalidArgument.
var ErrValueMismatch = deltaerr.Mark(errors.New("value does not fit its column"), deltaerr.ErrInvalidArgument)

// errClosed is returned by a Writer used after Close.
var errClosed = fmt.Errorf("datafile: writer is closed: %w", deltaerr.ErrInvalidArgument)

// WriteOptions tune NewWriter. The zero value writes snappy-compressed
// files with 128 MiB row groups, no field ids, and the default statistics.
type WriteOptions struct {
	// ByFieldID writes each field's "delta.columnMapping.id" metadata as
	// its Parquet field id, at every nesting level (column mapping in id
	// mode; Spark writes them in name mode too).
	ByFieldID bool
	// Stats chooses the columns that get statistics.
	Stats StatsOptions
	// Compression is the codec of every column: "snappy" (the default, as
	// Spark), "zstd", "gzip" or "none" ("uncompressed" too). Others give
	// deltaerr.ErrInvalidArgument.
	Compression string
	// RowGroupSize is the buffered size, in bytes before compression, at
	// which a row group is written; 0 means DefaultRowGroupSize. Rows are
	// buffered, as encoded pages, until then: it bounds the Writer's
	// memory.
	RowGroupSize int64
	// NoDictionary writes every data page PLAIN-encoded. By default the
	// pages of every column but booleans are dictionary-encoded, as Spark
	// writes them, with the fallback to PLAIN of parquet-mr (see dict.go).
	NoDictionary bool
}

// Writer writes one Parquet data file. Create it with NewWriter, call
// Write for each batch, then Close, which writes the footer and returns
// the file's statistics; a Writer that is not closed leaves an incomplete
// file behind (the caller deletes it). A Writer is not safe for concurrent
// use. After an error, of the io.Writer or a value that does not fit, the
// Writer is unusable: every later call returns that error.
//
// The file has DATA_PAGE pages of up to about 1 MiB or 20000 rows,
// dictionary-encoded where that pays (see dict.go), else PLAIN, and the
// statistics of every column chunk (null count, min and max) in its
// footer; see chunk.go.
type Writer struct {
	out     io.Writer
	codec   compress.Codec // nil when pages are not compressed
	codecID format.CompressionCodec
	schema  []format.SchemaElement
	top     []*wnode // one per field of the physical schema; nil for void
	leaves  []*wleaf // in file column order
	stats   *collector

	numRows      int64
	row          int64 // the row being shredded, for errors
	rgRows       int64 // rows of the row group being buffered
	rowGroupSize int64
	offset       int64 // bytes written to out
	rowGroups    []format.RowGroup
	scratch      *scratch // buffers of cutPage

	err    error // sticky
	closed bool
}

// NewWriter returns a Writer of a Parquet file with schema physical (the
// caller has applied column mapping and left out partition columns) to w.
// Nothing is written to w before the first row group is complete. A type
// that cannot be written (geometry, geography, a void array element or map
// key, a struct left with no field once void fields are dropped) gives a
// *ColumnError matching ErrUnsupportedType; bad options give
// deltaerr.ErrInvalidArgument.
func NewWriter(w io.Writer, physical *schema.StructType, opts WriteOptions) (*Writer, error) {
	if physical == nil || w == nil {
		return nil, fmt.Errorf("datafile: nil schema or writer: %w", deltaerr.ErrInvalidArgument)
	}
	codec, err := codecOf(opts.Compression)
	if err != nil {
		return nil, err
	}
	elems, top, leaves, err := buildSchema(physical, opts.ByFieldID)
	if err != nil {
		return nil, err
	}
	// The reader (parquet-go) reads no more columns than this.
	if len(leaves) > parquet.MaxColumnIndex {
		return nil, unsupported(nil, "more than "+strconv.Itoa(parquet.MaxColumnIndex)+" leaf columns")
	}
	stats, err := newCollector(physical, top, opts.Stats)
	if err != nil {
		return nil, err
	}
	out := &Writer{
		out: w, codecID: codec.CompressionCodec(), schema: elems, top: top, leaves: leaves, stats: stats,
		rowGroupSize: opts.RowGroupSize,
	}
	if out.codecID != format.Uncompressed {
		out.codec = codec
	}
	if out.rowGroupSize <= 0 {
		out.rowGroupSize = DefaultRowGroupSize
	}
	for _, l := range leaves {
		l.noDict = opts.NoDictionary || l.phys == format.Boolean
	}
	out.takeBufs()
	return out, nil
}

// codecOf returns the codec named by WriteOptions.Compression.
func codecOf(name string) (compress.Codec, error) {
	switch strings.ToLower(name) {
	case "", "snappy":
		return &parquet.Snappy, nil
	case "zstd":
		return &parquet.Zstd, nil
	case "gzip":
		return &parquet.Gzip, nil
	case "none", "uncompressed":
		return &parquet.Uncompressed, nil
	}
	return nil, fmt.Errorf("datafile: unknown compression %q: %w", name, deltaerr.ErrInvalidArgument)
}

// Write appends the first n rows of a column-major batch: cols holds one
// slice per field of the physical schema, in its order, each at least n
// long (values of void fields are ignored). A value that does not fit its
// column gives ErrValueMismatch; the rows of the batch may then be partly
// written, and the Writer is unusable.
func (w *Writer) Write(cols [][]schema.Value, n int) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errClosed
	}
	if len(cols) != len(w.top) || n < 0 {
		return fmt.Errorf("datafile: Write of %d columns, %d rows for a schema of %d fields: %w", len(cols), n, len(w.top), deltaerr.ErrInvalidArgument)
	}
	for i, c := range cols {
		if w.top[i] != nil && len(c) < n {
			return fmt.Errorf("datafile: column %s has %d values for %d rows: %w", w.top[i].name, len(c), n, deltaerr.ErrInvalidArgument)
		}
	}
	for start := 0; start < n; start += writeChunk {
		end := min(n, start+writeChunk)
		if err := w.writeChunk(cols, start, end); err != nil {
			w.err = err
			return err
		}
	}
	return nil
}

// writeChunk shreds rows [start, end) into the leaves' pages, then writes
// the row group if its buffered size reached the target.
func (w *Writer) writeChunk(cols [][]schema.Value, start, end int) error {
	err := protect(func() error {
		for i, n := range w.top {
			if n == nil {
				continue
			}
			vals := cols[i][start:end]
			if n.kind == wLeaf {
				n.leaf.putTop(w, n, vals)
				continue
			}
			for j, v := range vals {
				w.row = w.numRows + int64(j)
				w.cutFullPages(n)
				w.shred(n, v, 0, 0)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	w.stats.numRecords += int64(end - start)
	w.numRows += int64(end - start)
	w.rgRows += int64(end - start)
	if raw, _ := w.buffered(); raw >= w.rowGroupSize {
		return protect(w.flushRowGroup)
	}
	return nil
}

// Size returns the bytes written to the io.Writer so far plus an estimate
// of the row group being buffered: its finished pages as they will be
// written (compressed), the pages being filled at their size before
// compression. It is about what the file would be if closed now, less the
// footer; callers roll to a new file when it reaches their target size.
func (w *Writer) Size() int64 {
	_, encoded := w.buffered()
	return w.offset + encoded
}

// Close writes the buffered rows and the footer, and returns the file's
// statistics (see Stats). It does not close the io.Writer. Closing twice,
// or after an error, returns the error again.
func (w *Writer) Close() (Stats, error) {
	if w.err != nil {
		return Stats{}, w.err
	}
	if w.closed {
		return Stats{}, errClosed
	}
	w.closed = true
	err := protect(func() error {
		if err := w.flushRowGroup(); err != nil {
			return err
		}
		return w.writeFooter()
	})
	w.releaseBufs() // a closed Writer holds no memory
	if err != nil {
		w.err = err
		return Stats{}, err
	}
	return w.stats.result(), nil
}

// writeErr wraps an error of the io.Writer.
func writeErr(err error) error {
	return fmt.Errorf("datafile: writing: %w", err)
}

// protect runs fn, turning an abort (fail, must, badValue) into its
// error. Nothing else is recovered: the Writer encodes values it has
// checked into bytes it builds, so a panic of a codec or of the thrift
// encoder would be a bug, which must not pass for an error.
func protect(fn func() error) error { return parquetio.Catch(fn) }

// must aborts with err, if any.
func must(err error) {
	if err != nil {
		fail(err)
	}
}

// ---- shredding ----

// leafEnc is how a leaf's values are encoded.
type leafEnc uint8

const (
	encBoolean leafEnc = iota
	encByte
	encShort
	encInteger
	encLong
	encFloat
	encDouble
	encString
	encBinary
	encDate
	encTimestamp
	encTimestampNTZ
	encDecimal
)

// decimal storage of a leaf.
const (
	decInt32 = iota + 1
	decInt64
	decFixed
)

// wleaf is one leaf column of the file: its type, its page being filled
// and its column chunk in the current row group.
type wleaf struct {
	enc    leafEnc
	want   schema.Kind // the value kind the leaf takes; integers of other widths are accepted when they fit
	node   *wnode
	phys   format.Type
	path   []string // in the Parquet schema
	maxDef int      // the definition level of an entry that is a value
	maxRep int      // the repetition level of the leaf's innermost list or map
	// decimals
	dec, flen   int
	prec, scale int

	// noDict: the leaf's pages are always PLAIN (booleans, and
	// WriteOptions.NoDictionary).
	noDict bool

	page  page
	chunk chunk
	bufs  *leafBufs // where page and chunk buffers go back to
}

// cutFullPages cuts the full pages of the leaves of n, before a row of n
// is shredded: a page ends at a row boundary.
func (w *Writer) cutFullPages(n *wnode) {
	for _, l := range n.leaves {
		if l.page.full() {
			must(w.cutPage(l))
		}
	}
}

// shred appends the entries of value v of node n to its leaves. The first
// entry gets repetition level r; parentDef is the definition level at which
// n's parent is present.
func (w *Writer) shred(n *wnode, v schema.Value, r, parentDef int) {
	if v.IsNull() {
		w.putNull(n, r, parentDef)
		return
	}
	switch n.kind {
	case wLeaf:
		n.leaf.put(w, v)
		n.leaf.entry(r, n.def)
		if n.stat != nil {
			n.stat.add(v)
		}
	case wStruct:
		fields := v.Fields()
		if v.Kind() != schema.KindStruct || len(fields) != len(n.children) {
			w.badValue(n, fmt.Sprintf("%s value for a struct of %d fields", kindName(v), len(n.children)))
		}
		for i, c := range n.children {
			if c != nil {
				w.shred(c, fields[i], r, n.def)
			}
		}
	case wList:
		if v.Kind() != schema.KindArray {
			w.badValue(n, kindName(v)+" value for an array")
		}
		elems := v.Elements()
		if len(elems) == 0 {
			w.empty(n, r)
			return
		}
		e := n.children[0]
		for i, x := range elems {
			if i > 0 {
				r = n.rep
			}
			w.shred(e, x, r, n.def+1)
		}
	case wMap:
		if v.Kind() != schema.KindMap {
			w.badValue(n, kindName(v)+" value for a map")
		}
		k, vn := n.children[0], n.children[1]
		m := v.MapLen()
		if m == 0 {
			w.empty(n, r)
			return
		}
		for i := range m {
			if i > 0 {
				r = n.rep
			}
			key, val := v.MapEntry(i)
			w.shred(k, key, r, n.def+1)
			w.shred(vn, val, r, n.def+1)
		}
	}
}

// putNull writes a null value of n: one entry at its parent's level in
// every leaf below it, and a null in every stats column it holds.
func (w *Writer) putNull(n *wnode, r, parentDef int) {
	if !n.nullable {
		w.badValue(n, "null in a non-nullable field")
	}
	for _, a := range n.under {
		a.nulls++
	}
	for _, l := range n.leaves {
		l.entry(r, parentDef)
	}
}

// empty writes an empty array or map: one entry per leaf at the level of
// the present list, below that of its repeated group.
func (w *Writer) empty(n *wnode, r int) {
	for _, l := range n.leaves {
		l.entry(r, n.def)
	}
}

// entry appends the levels of an entry to the page; a value's caller has
// appended the value (put).
func (l *wleaf) entry(r, d int) {
	p := &l.page
	if l.maxRep > 0 {
		p.reps = append(p.reps, byte(r))
	}
	if l.maxDef > 0 {
		p.defs = append(p.defs, byte(d))
	}
	p.entries++
	if r == 0 {
		p.rows++
	}
}

// badValue aborts the write with ErrValueMismatch for the current row.
func (w *Writer) badValue(n *wnode, reason string) {
	fail(deltaerr.Mark(fmt.Errorf("column %s, row %d: %s", n.name, w.row, reason), ErrValueMismatch))
}

func kindName(v schema.Value) string {
	if v.Kind() == schema.KindDecimal {
		return v.Type().String()
	}
	return v.Kind().String()
}

// putTop appends the entries of a top-level primitive column, one per
// row. Runs of values go through a typed loop for the leaf's encoding,
// which ends when the page holds pageSize bytes or pageRows rows; the page
// is then cut, between two values and so between two rows.
func (l *wleaf) putTop(w *Writer, n *wnode, vals []schema.Value) {
	for done := 0; done < len(vals); {
		run := vals[done:]
		if room := pageRows - l.page.rows; len(run) > room {
			run = run[:max(room, 0)]
		}
		switch l.enc {
		case encLong, encTimestamp, encTimestampNTZ, encInteger, encDate, encByte, encShort:
			done += l.putInts(w, n, run, done)
		case encDouble:
			done += l.putDoubles(w, n, run, done)
		case encString:
			done += l.putStrings(w, n, run, done)
		default:
			done += l.putValues(w, n, run, done)
		}
		if l.page.full() {
			must(w.cutPage(l))
		}
	}
}

// The typed loops of putTop take values while the page has room, and
// return how many they took; vals[j] is row base+j of the chunk. Each
// encodes the values, and their definition levels when the column is
// nullable, into locals, and keeps the bounds of the run in locals for
// the chunk's Parquet bounds and the Delta statistics (n.stat). A value
// of another kind than the column's goes through check, which aborts
// unless it is an integer of another width that fits. The loops are
// written twice, for required and nullable columns, and the integer loop
// is generic in its width: the compiler then keeps the loop's state in
// registers. They index vals rather than copy a Value or point to one:
// the compiler then loads only the fields used.

// putInts is the loop of integer, date and timestamp columns.
func (l *wleaf) putInts(w *Writer, n *wnode, vals []schema.Value, base int) int {
	var lo, hi int64
	var nv int
	if l.phys == format.Int64 {
		vals = vals[:min(len(vals), l.page.room(8, n.nullable))]
		lo, hi, nv = putIntsOf[int64](w, l, vals, base)
	} else {
		vals = vals[:min(len(vals), l.page.room(4, n.nullable))]
		lo, hi, nv = putIntsOf[int32](w, l, vals, base)
	}
	l.ran(n, len(vals), nv)
	if nv > 0 {
		l.chunk.bounds.addInts(lo, hi)
		if acc := n.stat; acc != nil {
			acc.addInt(lo)
			acc.addInt(hi)
		}
	}
	return len(vals)
}

// putIntsOf encodes vals as Ts and returns their bounds and how many are
// not null.
func putIntsOf[T int32 | int64](w *Writer, l *wleaf, vals []schema.Value, base int) (lo, hi int64, nv int) {
	p, want := &l.page, l.want
	buf := p.vals
	lo, hi = math.MaxInt64, math.MinInt64
	if !l.node.nullable {
		for j := range vals {
			if vals[j].Kind() != want {
				l.check(w, vals[j], base+j)
			}
			x := vals[j].Int64()
			lo, hi = min(lo, x), max(hi, x)
			buf = appendLE(buf, T(x))
		}
		p.vals = buf
		return lo, hi, len(vals)
	}
	defs := p.defs
	for j := range vals {
		switch k := vals[j].Kind(); {
		case k == schema.KindNull:
			defs = append(defs, 0)
			continue
		case k != want:
			l.check(w, vals[j], base+j)
		}
		x := vals[j].Int64()
		lo, hi = min(lo, x), max(hi, x)
		buf = appendLE(buf, T(x))
		defs = append(defs, 1)
		nv++
	}
	p.vals, p.defs = buf, defs
	return lo, hi, nv
}

// appendLE appends x little-endian, as PLAIN encodes INT32 and INT64.
func appendLE[T int32 | int64](b []byte, x T) []byte {
	if unsafe.Sizeof(x) == 8 {
		return binary.LittleEndian.AppendUint64(b, uint64(x))
	}
	return binary.LittleEndian.AppendUint32(b, uint32(x))
}

// putDoubles is the loop of double columns. NaN is left out of the
// bounds, and recorded for the Delta statistics.
func (l *wleaf) putDoubles(w *Writer, n *wnode, vals []schema.Value, base int) int {
	p := &l.page
	vals = vals[:min(len(vals), p.room(8, n.nullable))]
	buf := p.vals
	// lo > hi until a number is seen, then its bounds: a zero keeps the
	// sign it first came with.
	nan, lo, hi := false, math.Inf(1), math.Inf(-1)
	nv := len(vals)
	if !n.nullable {
		for j := range vals {
			if vals[j].Kind() != schema.KindDouble {
				l.check(w, vals[j], base+j)
			}
			f := vals[j].Float64()
			if f != f {
				nan = true
			}
			lo, hi = minNum(lo, f), maxNum(hi, f)
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(f))
		}
	} else {
		defs := p.defs
		nv = 0
		for j := range vals {
			switch k := vals[j].Kind(); {
			case k == schema.KindNull:
				defs = append(defs, 0)
				continue
			case k != schema.KindDouble:
				l.check(w, vals[j], base+j)
			}
			f := vals[j].Float64()
			if f != f {
				nan = true
			}
			lo, hi = minNum(lo, f), maxNum(hi, f)
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(f))
			defs = append(defs, 1)
			nv++
		}
		p.defs = defs
	}
	p.vals = buf
	l.ran(n, len(vals), nv)
	if lo <= hi {
		l.chunk.bounds.addFloats(lo, hi)
	}
	if acc := n.stat; acc != nil {
		if lo <= hi {
			acc.addFloat(lo)
			acc.addFloat(hi)
		}
		acc.nan = acc.nan || nan
	}
	return len(vals)
}

// minNum and maxNum are min and max without NaN: a NaN f leaves the
// bound as it is. Between zeros, the bound keeps the sign it has.
func minNum(lo, f float64) float64 {
	if f < lo {
		return f
	}
	return lo
}

func maxNum(hi, f float64) float64 {
	if f > hi {
		return f
	}
	return hi
}

// putStrings is the loop of string columns. Strings vary in size: the
// loop checks the page's size after each.
func (l *wleaf) putStrings(w *Writer, n *wnode, vals []schema.Value, base int) int {
	p := &l.page
	buf := p.vals
	lo, hi := "", ""
	j, nv := 0, 0
	if !n.nullable {
		for ; j < len(vals) && len(buf) < pageSize; j++ {
			if vals[j].Kind() != schema.KindString {
				l.check(w, vals[j], base+j)
			}
			s := vals[j].String()
			if j == 0 {
				lo, hi = s, s
			} else if s < lo {
				lo = s
			} else if s > hi {
				hi = s
			}
			buf = binary.LittleEndian.AppendUint32(buf, uint32(len(s)))
			buf = append(buf, s...)
		}
		nv = j
	} else {
		defs := p.defs
		for ; j < len(vals) && len(buf)+len(defs) < pageSize; j++ {
			switch k := vals[j].Kind(); {
			case k == schema.KindNull:
				defs = append(defs, 0)
				continue
			case k != schema.KindString:
				l.check(w, vals[j], base+j)
			}
			s := vals[j].String()
			if nv == 0 {
				lo, hi = s, s
			} else if s < lo {
				lo = s
			} else if s > hi {
				hi = s
			}
			buf = binary.LittleEndian.AppendUint32(buf, uint32(len(s)))
			buf = append(buf, s...)
			defs = append(defs, 1)
			nv++
		}
		p.defs = defs
	}
	p.vals = buf
	l.ran(n, j, nv)
	if nv > 0 {
		l.chunk.bounds.addStrings(lo, hi)
		if acc := n.stat; acc != nil {
			acc.addString(lo)
			acc.addString(hi)
		}
	}
	return j
}

// putValues is the loop of the other columns, value by value, as nested
// values are written.
func (l *wleaf) putValues(w *Writer, n *wnode, vals []schema.Value, base int) int {
	j := 0
	for ; j < len(vals) && l.page.size() < pageSize; j++ {
		w.row = w.numRows + int64(base+j)
		v := vals[j]
		if v.IsNull() {
			w.putNull(n, 0, 0)
			continue
		}
		l.put(w, v)
		l.entry(0, n.def)
		if n.stat != nil {
			n.stat.add(v)
		}
	}
	return j
}

// ran accounts for a run of putTop: entries rows, nv of them values.
func (l *wleaf) ran(n *wnode, entries, nv int) {
	l.page.entries += entries
	l.page.rows += entries
	l.page.nvals += nv
	if n.stat != nil {
		n.stat.nulls += int64(entries - nv)
	}
}

// check aborts, at row j of the chunk, unless v, of another kind than the
// top-level column's, is an integer that fits its integer column. A null
// here is one the column does not take.
func (l *wleaf) check(w *Writer, v schema.Value, j int) {
	w.row = w.numRows + int64(j)
	if v.IsNull() {
		w.badValue(l.node, "null in a non-nullable field")
	}
	l.checkKind(w, v)
}

// encKind returns the value kind a leaf of enc takes.
func encKind(enc leafEnc) schema.Kind {
	switch enc {
	case encBoolean:
		return schema.KindBoolean
	case encByte:
		return schema.KindByte
	case encShort:
		return schema.KindShort
	case encInteger:
		return schema.KindInteger
	case encLong:
		return schema.KindLong
	case encFloat:
		return schema.KindFloat
	case encDouble:
		return schema.KindDouble
	case encString:
		return schema.KindString
	case encBinary:
		return schema.KindBinary
	case encDate:
		return schema.KindDate
	case encTimestamp:
		return schema.KindTimestamp
	case encTimestampNTZ:
		return schema.KindTimestampNTZ
	}
	return schema.KindDecimal
}

// checkKind aborts unless v, of another kind than the leaf takes, is an
// integer of another width that fits the leaf's integers.
func (l *wleaf) checkKind(w *Writer, v schema.Value) {
	bits := 0
	switch l.enc {
	case encByte:
		bits = 8
	case encShort:
		bits = 16
	case encInteger:
		bits = 32
	case encLong:
		bits = 64
	}
	if bits == 0 || !intFits(v, bits) {
		l.mismatch(w, v)
	}
}

func (l *wleaf) mismatch(w *Writer, v schema.Value) {
	want := l.node.typ.String()
	w.badValue(l.node, kindName(v)+" value for a column of type "+want)
}

// intFits reports whether v is an integer of any width whose value fits a
// signed integer of bits.
func intFits(v schema.Value, bits int) bool {
	switch v.Kind() {
	case schema.KindByte, schema.KindShort, schema.KindInteger, schema.KindLong:
		x := v.Int64()
		return bits == 64 || x >= -1<<(bits-1) && x < 1<<(bits-1)
	}
	return false
}

// put appends non-null v to the page's values and to the chunk's bounds,
// aborting when v does not fit the leaf. The caller appends the levels
// (entry).
func (l *wleaf) put(w *Writer, v schema.Value) {
	if v.Kind() != l.want {
		l.checkKind(w, v)
	}
	p, b := &l.page, &l.chunk.bounds
	switch l.enc {
	case encBoolean:
		// Bit-packed, least significant bit first: value i of the page
		// is bit i%8 of byte i/8.
		bit := p.nvals % 8
		if bit == 0 {
			p.vals = append(p.vals, 0)
		}
		if v.Bool() {
			p.vals[len(p.vals)-1] |= 1 << bit
		}
		b.addBool(v.Bool())
	case encByte, encShort, encInteger, encDate:
		x := v.Int64()
		p.vals = binary.LittleEndian.AppendUint32(p.vals, uint32(x))
		b.addInts(x, x)
	case encLong, encTimestamp, encTimestampNTZ:
		x := v.Int64()
		p.vals = binary.LittleEndian.AppendUint64(p.vals, uint64(x))
		b.addInts(x, x)
	case encFloat:
		f := float32(v.Float64())
		p.vals = binary.LittleEndian.AppendUint32(p.vals, math.Float32bits(f))
		if f == f {
			b.addFloats(float64(f), float64(f))
		}
	case encDouble:
		f := v.Float64()
		p.vals = binary.LittleEndian.AppendUint64(p.vals, math.Float64bits(f))
		if f == f {
			b.addFloats(f, f)
		}
	case encString:
		s := v.String()
		p.vals = binary.LittleEndian.AppendUint32(p.vals, uint32(len(s)))
		p.vals = append(p.vals, s...)
		b.addStrings(s, s)
	case encBinary:
		bs := v.Bytes()
		p.vals = binary.LittleEndian.AppendUint32(p.vals, uint32(len(bs)))
		p.vals = append(p.vals, bs...)
		b.addBytes(bs)
	default:
		l.putDecimal(w, v)
	}
	p.nvals++
}

// putDecimal appends a decimal, rescaled to the column's scale when the
// value has fewer fraction digits.
func (l *wleaf) putDecimal(w *Writer, v schema.Value) {
	u, _, scale := v.Decimal()
	if scale != l.scale {
		if scale > l.scale {
			l.badDecimal(w, v)
		}
		u.Mul(u, pow10[l.scale-scale])
	}
	if !fitsDigits(u, l.prec) {
		l.badDecimal(w, v)
	}
	p := &l.page
	switch l.dec {
	case decInt32:
		x := u.Int64()
		p.vals = binary.LittleEndian.AppendUint32(p.vals, uint32(x))
		l.chunk.bounds.addInts(x, x)
	case decInt64:
		x := u.Int64()
		p.vals = binary.LittleEndian.AppendUint64(p.vals, uint64(x))
		l.chunk.bounds.addInts(x, x)
	default:
		at := len(p.vals)
		p.vals = slices.Grow(p.vals, l.flen)[:at+l.flen]
		putTwosComplement(p.vals[at:], u)
		l.chunk.bounds.addFixed(p.vals[at:])
	}
}

func (l *wleaf) badDecimal(w *Writer, v schema.Value) {
	w.badValue(l.node, "decimal "+v.String()+" does not fit "+l.node.typ.String())
}

// pow10 holds 10^p for the decimal precisions.
var pow10 = func() [schema.MaxDecimalPrecision + 1]*big.Int {
	var t [schema.MaxDecimalPrecision + 1]*big.Int
	for p := range t {
		t[p] = new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(p)), nil)
	}
	return t
}()

// fitsDigits reports whether |u| has at most p digits.
func fitsDigits(u *big.Int, p int) bool {
	return u.CmpAbs(pow10[p]) < 0
}

// putTwosComplement writes u big-endian in two's complement over all of b,
// which is wide enough.
func putTwosComplement(b []byte, u *big.Int) {
	if u.Sign() >= 0 {
		u.FillBytes(b)
		return
	}
	// -x = ^(x-1)
	t := new(big.Int).Neg(u)
	t.Sub(t, big.NewInt(1))
	t.FillBytes(b)
	for i := range b {
		b[i] = ^b[i]
	}
}

package datafile

// The column-chunk encoder of the write side: a leaf's entries become
// data pages, the pages of a row group become column chunks, and the
// footer describes them. parquet-go provides only the pieces: the
// footer's structs (format), their thrift compact encoding, the
// compression codecs and the RLE/bit-packed hybrid encoding of levels.
//
// # File layout
//
//	"PAR1" | row group 1: chunk of leaf 1, leaf 2, ... | row group 2 ... | footer | footer length (4 bytes LE) | "PAR1"
//
// A column chunk is a run of DATA_PAGE (v1) pages, each a thrift-encoded
// PageHeader then the page body, compressed as a whole with the file's
// codec: repetition levels, then definition levels, each RLE/bit-packed
// hybrid behind a 4-byte little-endian length (left out when the leaf's
// maximum level is 0), then the non-null values: PLAIN-encoded, or as
// indexes into the chunk's dictionary (PLAIN_DICTIONARY), which a
// DICTIONARY_PAGE before the data pages holds (see dict.go). There is no
// page index or bloom filter; the chunk's metadata has its statistics
// (null_count, min_value, max_value) and its page encoding statistics.

import (
	"encoding/binary"
	"fmt"
	"github.com/godelta/delta/internal/buildinfo"
	"hash/crc32"
	"io"
	"math"
	"math/bits"
	"sync"

	"github.com/parquet-go/parquet-go/encoding/rle"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/godelta/delta/deltaerr"
)

// A page is cut at the first row boundary at which it holds pageSize
// bytes (before compression, levels counted a byte each) or pageRows
// rows: the defaults of parquet-mr (parquet.page.size and
// parquet.page.row.count.limit), as Spark writes. The row limit keeps
// the pages of narrow columns small, which readers skip and decompress
// with finer grain, and which compress faster, for a slightly worse
// ratio.
const (
	pageSize = 1 << 20
	pageRows = 20000
)

// maxStatsBytes bounds the min and max of byte array columns: when the
// two together are longer they are left out of the statistics, as
// parquet-mr does, rather than bloat the footer.
const maxStatsBytes = 4096

var magic = []byte("PAR1")

// page is the data page of a leaf being filled: its entries as they come,
// encoded only when the page is cut.
//
// Invariant: entries counts the entries of the page, each of which has a
// definition level in defs (when the leaf's maxDef > 0) and a repetition
// level in reps (when its maxRep > 0), one byte each; nvals of them are
// values, in vals, the others are nulls or empty lists and maps; rows of
// them begin a row (repetition level 0). A page holds whole rows only.
type page struct {
	vals    []byte // the values, PLAIN-encoded; booleans bit-packed, nvals bits
	defs    []byte
	reps    []byte
	entries int
	nvals   int
	rows    int
}

// size is the page's buffered bytes, levels counted a byte each.
func (p *page) size() int { return len(p.vals) + len(p.defs) + len(p.reps) }

// room returns how many more entries, of values of width bytes, fill the
// page: at least one.
func (p *page) room(width int, levels bool) int {
	if levels {
		width++
	}
	return max(1, (pageSize-p.size()+width-1)/width)
}

// full reports whether the page is to be cut before its next row.
func (p *page) full() bool { return p.size() >= pageSize || p.rows >= pageRows }

func (p *page) reset() {
	p.vals, p.defs, p.reps = p.vals[:0], p.defs[:0], p.reps[:0]
	p.entries, p.nvals, p.rows = 0, 0, 0
}

// leafBufs are the buffers of a leaf's page and chunk, and scratch those
// of a Writer's page encoding. Closed Writers give them back for the next
// ones: a stream of files of one table does not allocate and grow them
// again.
type (
	leafBufs struct {
		vals, defs, reps []byte
		data             chunkData
	}
	scratch struct {
		levels, rle, body, zbuf []byte
		ids                     []int32 // a page's dictionary indexes
		dictIDs, dictPage       []byte  // their encoding
	}
)

var (
	leafBufPool = sync.Pool{New: func() any { return new(leafBufs) }}
	scratchPool = sync.Pool{New: func() any { return new(scratch) }}
)

// takeBufs gives the Writer's leaves and page encoding recycled buffers.
func (w *Writer) takeBufs() {
	for _, l := range w.leaves {
		b := leafBufPool.Get().(*leafBufs)
		l.page.vals, l.page.defs, l.page.reps, l.chunk.data = b.vals[:0], b.defs[:0], b.reps[:0], b.data
		l.chunk.data.reset()
		*b = leafBufs{}
		l.bufs = b
	}
	w.scratch = scratchPool.Get().(*scratch)
}

// releaseBufs gives back the buffers of a Writer that needs them no more.
func (w *Writer) releaseBufs() {
	for _, l := range w.leaves {
		*l.bufs = leafBufs{l.page.vals, l.page.defs, l.page.reps, l.chunk.data}
		leafBufPool.Put(l.bufs)
		l.bufs, l.page, l.chunk = nil, page{}, chunk{}
	}
	scratchPool.Put(w.scratch)
	w.scratch = nil
}

// chunk is the column chunk of a leaf in the current row group: the pages
// cut so far, encoded, and what its metadata needs.
type chunk struct {
	data         chunkData // the pages: header then body, each
	numValues    int64     // entries, nulls included
	nulls        int64
	uncompressed int64 // the pages' size with their bodies uncompressed, headers included
	bounds       bounds
	dict         dict // the dictionary of the data pages
}

// chunkData holds the encoded pages of a column chunk in blocks that
// never move: blocks of 4 KiB, then twice as large each, up to
// maxChunkBlock, all kept for the next row group. A row group buffered
// as one growing slice per leaf would be copied each time the slice grows,
// so that its largest column is briefly held twice: with 128 MiB row
// groups, about 250 MiB. In blocks, the Writer holds the row group once,
// and small chunks stay small.
type chunkData struct {
	blocks [][]byte // blocks[:used] hold the data, each full but the last
	used   int
	n      int64 // bytes held
}

const (
	minChunkBlock = 4 << 10
	maxChunkBlock = 1 << 20
)

func (d *chunkData) append(b []byte) {
	for len(b) > 0 {
		if d.used == 0 || len(d.blocks[d.used-1]) == cap(d.blocks[d.used-1]) {
			if d.used == len(d.blocks) {
				size := maxChunkBlock
				if d.used < 8 {
					size = minChunkBlock << d.used // 4 KiB up to 512 KiB
				}
				d.blocks = append(d.blocks, make([]byte, 0, size))
			}
			d.blocks[d.used] = d.blocks[d.used][:0]
			d.used++
		}
		cur := &d.blocks[d.used-1]
		k := min(len(b), cap(*cur)-len(*cur))
		*cur = append(*cur, b[:k]...)
		b = b[k:]
		d.n += int64(k)
	}
}

func (d *chunkData) reset() { d.used, d.n = 0, 0 }

func (c *chunk) reset() {
	c.data.reset()
	c.numValues, c.nulls, c.uncompressed = 0, 0, 0
	c.bounds = bounds{}
	c.dict.reset(false)
}

// bounds are the min and max of a chunk's non-null values in the sort
// order of the leaf's physical type (TypeDefinedOrder): signed integers
// for INT32 and INT64, IEEE order without NaN for FLOAT and DOUBLE
// (floats are held as float64, exactly), unsigned bytes for BYTE_ARRAY,
// signed two's complement for FIXED_LEN_BYTE_ARRAY (only decimals are
// written so), false before true for BOOLEAN.
//
// Invariant: when has is set, the fields of the physical type hold a min
// and max of every value added.
type bounds struct {
	has           bool
	minI, maxI    int64
	minF, maxF    float64
	minS, maxS    string
	falses, trues bool
}

func (b *bounds) addInts(lo, hi int64) {
	widen(&b.minI, &b.maxI, !b.has, lo, hi)
	b.has = true
}

// addFloats adds the bounds of non-NaN values.
func (b *bounds) addFloats(lo, hi float64) {
	widen(&b.minF, &b.maxF, !b.has, lo, hi)
	b.has = true
}

// addStrings adds the bounds of byte arrays. It keeps the strings: the
// caller passes strings that are never modified.
func (b *bounds) addStrings(lo, hi string) {
	widen(&b.minS, &b.maxS, !b.has, lo, hi)
	b.has = true
}

// addBytes adds a byte array; v may be reused by the caller.
func (b *bounds) addBytes(v []byte) {
	switch {
	case !b.has:
		b.minS, b.maxS, b.has = string(v), string(v), true
	case string(v) < b.minS:
		b.minS = string(v)
	case string(v) > b.maxS:
		b.maxS = string(v)
	}
}

// addFixed adds a two's complement value; v may be reused by the caller.
func (b *bounds) addFixed(v []byte) {
	switch {
	case !b.has:
		b.minS, b.maxS, b.has = string(v), string(v), true
	case cmpTwosComplement(v, b.minS) < 0:
		b.minS = string(v)
	case cmpTwosComplement(v, b.maxS) > 0:
		b.maxS = string(v)
	}
}

// cmpTwosComplement compares big-endian two's complement numbers of the
// same length: by sign, then as unsigned bytes.
func cmpTwosComplement(a []byte, b string) int {
	if sa, sb := a[0]&0x80, b[0]&0x80; sa != sb {
		if sa != 0 {
			return -1
		}
		return 1
	}
	switch s := string(a); {
	case s < b:
		return -1
	case s > b:
		return 1
	}
	return 0
}

func (b *bounds) addBool(v bool) {
	b.has = true
	if v {
		b.trues = true
	} else {
		b.falses = true
	}
}

// statistics returns the statistics of the chunk, of physical type phys:
// the null count, and min and max PLAIN-encoded (byte arrays without
// their length) when there are values to bound. A float bound that is
// zero is written -0.0 as the min and +0.0 as the max, as the format
// advises: the chunk may hold either zero.
func (c *chunk) statistics(phys format.Type) format.Statistics {
	s := format.Statistics{NullCount: c.nulls}
	b := &c.bounds
	if !b.has {
		return s
	}
	switch phys {
	case format.Boolean:
		s.MinValue, s.MaxValue = []byte{boolByte(!b.falses)}, []byte{boolByte(b.trues)}
	case format.Int32:
		s.MinValue = binary.LittleEndian.AppendUint32(nil, uint32(int32(b.minI)))
		s.MaxValue = binary.LittleEndian.AppendUint32(nil, uint32(int32(b.maxI)))
	case format.Int64:
		s.MinValue = binary.LittleEndian.AppendUint64(nil, uint64(b.minI))
		s.MaxValue = binary.LittleEndian.AppendUint64(nil, uint64(b.maxI))
	case format.Float, format.Double:
		lo, hi := b.minF, b.maxF
		if lo == 0 {
			lo = math.Copysign(0, -1)
		}
		if hi == 0 {
			hi = 0
		}
		if phys == format.Float {
			s.MinValue = binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(lo)))
			s.MaxValue = binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(hi)))
		} else {
			s.MinValue = binary.LittleEndian.AppendUint64(nil, math.Float64bits(lo))
			s.MaxValue = binary.LittleEndian.AppendUint64(nil, math.Float64bits(hi))
		}
	default:
		if len(b.minS)+len(b.maxS) <= maxStatsBytes {
			s.MinValue, s.MaxValue = []byte(b.minS), []byte(b.maxS)
		}
	}
	return s
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// cutPage encodes the leaf's page, if it has entries, as the next page of
// its chunk, and empties it. Callers cut pages only between rows: a page
// always ends at a row boundary, so no row spans pages.
func (w *Writer) cutPage(l *wleaf) error {
	p := &l.page
	if p.entries == 0 {
		return nil
	}
	var err error
	levels := w.scratch.levels[:0]
	if l.maxRep > 0 {
		levels, err = w.appendLevels(levels, p.reps, l.maxRep)
	}
	if err == nil && l.maxDef > 0 {
		levels, err = w.appendLevels(levels, p.defs, l.maxDef)
	}
	w.scratch.levels = levels
	if err != nil {
		return fmt.Errorf("datafile: column %s: encoding levels: %w", l.node.name, err)
	}
	vals, encoding := p.vals, format.Plain
	if ids, ok := w.dictEncode(l); ok {
		vals, encoding = ids, plainDictionary
	} else {
		l.chunk.dict.plainPages++
	}
	size := len(levels) + len(vals)
	body := [2][]byte{levels, vals}
	if w.codec != nil {
		src := vals
		if len(levels) > 0 {
			w.scratch.body = append(append(w.scratch.body[:0], levels...), vals...)
			src = w.scratch.body
		}
		if w.scratch.zbuf, err = w.codec.Encode(w.scratch.zbuf[:0], src); err != nil {
			return fmt.Errorf("datafile: column %s: compressing a page: %w", l.node.name, err)
		}
		body = [2][]byte{w.scratch.zbuf}
	}
	zsize := len(body[0]) + len(body[1])
	if size > math.MaxInt32 || zsize > math.MaxInt32 {
		// Only a page whose last row alone is about 2 GiB gets here.
		return fmt.Errorf("datafile: column %s: a page of %d bytes is over the format's 2 GiB limit: a row is too large: %w", l.node.name, size, deltaerr.ErrInvalidArgument)
	}
	nulls := p.entries - p.nvals
	header, err := thrift.Marshal(new(thrift.CompactProtocol), &format.PageHeader{
		Type:                 format.DataPage,
		UncompressedPageSize: int32(size),
		CompressedPageSize:   int32(zsize),
		CRC:                  pageCRC(body[0], body[1]),
		DataPageHeader: thrift.New(format.DataPageHeader{
			NumValues:               int32(p.entries),
			Encoding:                encoding,
			DefinitionLevelEncoding: format.RLE,
			RepetitionLevelEncoding: format.RLE,
			// Always written (the field is writezero): the page's
			// null count, and no bounds.
			Statistics: format.Statistics{NullCount: int64(nulls)},
		}),
	})
	if err != nil {
		return fmt.Errorf("datafile: column %s: encoding a page header: %w", l.node.name, err)
	}
	c := &l.chunk
	c.data.append(header)
	c.data.append(body[0])
	c.data.append(body[1])
	c.numValues += int64(p.entries)
	c.nulls += int64(nulls)
	c.uncompressed += int64(len(header) + size)
	p.reset()
	return nil
}

// pageCRC is the crc field of a page header: the CRC-32 (IEEE) of the
// page's bytes after the header, as written (compressed), which parquet-mr
// (Spark) writes on every page since 1.12 and readers check, so that a
// damaged page is an error rather than wrong values.
func pageCRC(parts ...[]byte) int32 {
	var crc uint32
	for _, b := range parts {
		crc = crc32.Update(crc, crc32.IEEETable, b)
	}
	return int32(crc)
}

// appendLevels appends levels, each at most max, RLE/bit-packed hybrid
// encoded behind their 4-byte little-endian length.
func (w *Writer) appendLevels(dst, levels []byte, max int) ([]byte, error) {
	enc := rle.Encoding{BitWidth: bits.Len8(uint8(max))}
	var err error
	w.scratch.rle, err = enc.EncodeLevels(w.scratch.rle[:0], levels)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(w.scratch.rle)))
	return append(dst, w.scratch.rle...), err
}

// buffered returns the size of the current row group so far before
// compression, and as it will be written.
func (w *Writer) buffered() (raw, encoded int64) {
	for _, l := range w.leaves {
		n := int64(l.page.size())
		d := int64(len(l.chunk.dict.values))
		raw += l.chunk.uncompressed + n + d
		encoded += l.chunk.data.n + n + d
	}
	return raw, encoded
}

// Buffered returns the bytes of the row group being buffered, about as it
// will be written: what the Writer holds in memory for the file beyond its
// reusable buffers.
func (w *Writer) Buffered() int64 {
	_, encoded := w.buffered()
	return encoded
}

// Flush writes the rows buffered so far as a row group now, before it
// reaches WriteOptions.RowGroupSize, and lets the memory of its column
// chunks go: for a caller that keeps many files open and bounds what they
// buffer together (package write). A Flush with no rows buffered does
// nothing.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errClosed
	}
	if err := protect(w.flushRowGroup); err != nil {
		w.err = err
		return err
	}
	for _, l := range w.leaves {
		l.chunk.data = chunkData{} // the blocks of the largest chunk so far
	}
	return nil
}

// flushRowGroup cuts the last page of every leaf and writes the row
// group, if it has rows: the chunks, leaf after leaf.
func (w *Writer) flushRowGroup() error {
	if w.rgRows == 0 {
		return nil
	}
	for _, l := range w.leaves {
		if err := w.cutPage(l); err != nil {
			return err
		}
	}
	if err := w.start(); err != nil {
		return err
	}
	rg := format.RowGroup{
		Columns:    make([]format.ColumnChunk, len(w.leaves)),
		NumRows:    w.rgRows,
		FileOffset: w.offset,
	}
	if len(w.rowGroups) <= math.MaxInt16 {
		rg.Ordinal = int16(len(w.rowGroups))
	}
	for i, l := range w.leaves {
		c := &l.chunk
		offset := w.offset
		dp, dpRaw, err := w.dictPage(l)
		if err != nil {
			return fmt.Errorf("datafile: column %s: dictionary page: %w", l.node.name, err)
		}
		for _, b := range dp {
			if err := w.write(b); err != nil {
				return err
			}
		}
		dataOffset := w.offset
		for _, b := range c.data.blocks[:c.data.used] {
			if err := w.write(b); err != nil {
				return err
			}
		}
		encodings, pageStats := l.encodings()
		md := format.ColumnMetaData{
			Type:                  l.phys,
			Encoding:              encodings,
			PathInSchema:          l.path,
			Codec:                 w.codecID,
			NumValues:             c.numValues,
			TotalUncompressedSize: c.uncompressed + dpRaw,
			TotalCompressedSize:   w.offset - offset,
			DataPageOffset:        dataOffset,
			Statistics:            c.statistics(l.phys),
			EncodingStats:         pageStats,
		}
		if dataOffset != offset {
			md.DictionaryPageOffset = offset
		}
		rg.Columns[i] = format.ColumnChunk{FileOffset: offset, MetaData: md}
		rg.TotalByteSize += md.TotalUncompressedSize
		rg.TotalCompressedSize += md.TotalCompressedSize
		c.reset()
	}
	w.rowGroups = append(w.rowGroups, rg)
	w.rgRows = 0
	return nil
}

// writeFooter writes the file metadata and the end of the file.
func (w *Writer) writeFooter() error {
	if err := w.start(); err != nil {
		return err
	}
	orders := make([]format.ColumnOrder, len(w.leaves))
	for i := range orders {
		// Readers trust min_value and max_value only with a column order.
		orders[i].Value = &format.TypeDefinedOrder{}
	}
	md, err := thrift.Marshal(new(thrift.CompactProtocol), &format.FileMetaData{
		Version:      1, // as parquet-mr writes: the format's version 1 features only
		Schema:       w.schema,
		NumRows:      w.numRows,
		RowGroups:    w.rowGroups,
		CreatedBy:    buildinfo.CreatedBy(),
		ColumnOrders: orders,
	})
	if err != nil {
		return fmt.Errorf("datafile: encoding the footer: %w", err)
	}
	md = binary.LittleEndian.AppendUint32(md, uint32(len(md)))
	return w.write(append(md, magic...))
}

// start writes the magic number that begins the file, once.
func (w *Writer) start() error {
	if w.offset > 0 {
		return nil
	}
	return w.write(magic)
}

// write writes b to the io.Writer, counting the bytes.
func (w *Writer) write(b []byte) error {
	n, err := w.out.Write(b)
	w.offset += int64(n)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return writeErr(err)
	}
	return nil
}

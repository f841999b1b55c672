package datafile

// Dictionary encoding of data pages, as parquet-mr (Spark) writes it.
//
// Each leaf of a type other than BOOLEAN starts every column chunk with an
// empty dictionary. When a page is cut, its PLAIN-encoded values are looked
// up in the dictionary, new ones appended, and the page is written as the
// values' dictionary indexes: PLAIN_DICTIONARY, a byte of bit width then
// the RLE/bit-packed hybrid. The chunk then begins with a DICTIONARY_PAGE
// holding the distinct values PLAIN-encoded, in order of first use. Two
// rules fall back to PLAIN pages, as parquet-mr's FallbackValuesWriter
// does:
//
//   - the first page of a chunk stays PLAIN, and so does the rest of the
//     chunk, when its dictionary-encoded form plus the dictionary is not
//     smaller than its PLAIN form (distinct ids, say);
//   - a page whose values would grow the dictionary past maxDictBytes
//     (parquet.dictionary.page.size, 1 MiB) is written PLAIN, as is every
//     later page of the chunk; the pages before it keep their indexes,
//     and the dictionary keeps only their values.
//
// The next row group starts over with a new dictionary. Statistics, page
// boundaries and the data are the same either way: only the bytes of the
// pages differ.

import (
	"encoding/binary"
	"math/bits"

	"github.com/parquet-go/parquet-go/encoding/rle"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// plainDictionary is the PLAIN_DICTIONARY encoding (2), of the dictionary
// page and of the data pages that index it: what parquet-mr's v1 writer,
// and so Spark, writes. The format has since deprecated it for
// RLE_DICTIONARY in data pages and PLAIN in dictionary pages, which every
// reader of the newer name reads too; v1 pages keep the older name that
// older readers know. Part of the file format: never change it.
const plainDictionary = format.Encoding(2)

// maxDictBytes bounds a chunk's dictionary page, before compression:
// parquet-mr's parquet.dictionary.page.size.
const maxDictBytes = 1 << 20

// dict is the dictionary of a leaf's current column chunk.
//
// Invariant: values holds n entries, PLAIN-encoded, and index maps each
// entry's key (its bytes, without a byte array's length) to its position;
// dictPages and plainPages count the chunk's pages of each encoding.
type dict struct {
	off        bool             // no more dictionary pages in this chunk
	index      map[string]int32 // byte arrays
	fixed      map[uint64]int32 // 4- and 8-byte values, by their bits
	values     []byte
	n          int32
	dictPages  int32
	plainPages int32
}

func (d *dict) reset(off bool) {
	clear(d.index)
	clear(d.fixed)
	d.values = d.values[:0]
	d.n, d.dictPages, d.plainPages = 0, 0, 0
	d.off = off
}

// fixedWidth returns the width of l's PLAIN-encoded values when it is 4
// or 8 bytes, else 0.
func (l *wleaf) fixedWidth() int {
	switch l.phys {
	case format.Int32, format.Float:
		return 4
	case format.Int64, format.Double:
		return 8
	}
	return 0
}

// next returns the extent of the PLAIN-encoded value of l at vals[off:]:
// the key the dictionary knows it by, and the offset past it.
func (l *wleaf) next(vals []byte, off int) (key []byte, end int) {
	switch l.phys {
	case format.Int32, format.Float:
		return vals[off : off+4], off + 4
	case format.Int64, format.Double:
		return vals[off : off+8], off + 8
	case format.FixedLenByteArray:
		return vals[off : off+l.flen], off + l.flen
	}
	n := int(binary.LittleEndian.Uint32(vals[off:]))
	return vals[off+4 : off+4+n], off + 4 + n
}

// dictEncode returns the values of l's page as dictionary indexes,
// growing the chunk's dictionary, or false when the page is to be written
// PLAIN (see the fallback rules above).
func (w *Writer) dictEncode(l *wleaf) ([]byte, bool) {
	d := &l.chunk.dict
	if d.off || l.noDict {
		return nil, false
	}
	p := &l.page
	mark, markN := len(d.values), d.n
	ids := w.scratch.ids[:0]
	switch width := l.fixedWidth(); width {
	case 4, 8:
		if d.fixed == nil {
			d.fixed = make(map[uint64]int32)
		}
		for off := 0; off < p.nvals*width; off += width {
			var key uint64
			if width == 4 {
				key = uint64(binary.LittleEndian.Uint32(p.vals[off:]))
			} else {
				key = binary.LittleEndian.Uint64(p.vals[off:])
			}
			id, ok := d.fixed[key]
			if !ok {
				id = d.n
				d.fixed[key] = id
				d.values = append(d.values, p.vals[off:off+width]...)
				d.n++
			}
			ids = append(ids, id)
		}
	default:
		if d.index == nil {
			d.index = make(map[string]int32)
		}
		for off, i := 0, 0; i < p.nvals; i++ {
			key, end := l.next(p.vals, off)
			id, ok := d.index[string(key)]
			if !ok {
				id = d.n
				d.index[string(key)] = id
				d.values = append(d.values, p.vals[off:end]...)
				d.n++
			}
			ids = append(ids, id)
			off = end
		}
	}
	w.scratch.ids = ids
	if len(d.values) > maxDictBytes {
		d.fallBack(mark, markN)
		return nil, false
	}
	width := bits.Len32(uint32(max(d.n-1, 0)))
	enc := rle.Encoding{BitWidth: width}
	out, err := enc.EncodeInt32(w.scratch.dictIDs[:0], ids)
	w.scratch.dictIDs = out
	if err != nil { // cannot happen: every id fits width
		d.fallBack(mark, markN)
		return nil, false
	}
	encoded := append(append(w.scratch.dictPage[:0], byte(width)), out...)
	w.scratch.dictPage = encoded
	if d.dictPages == 0 && len(encoded)+len(d.values) >= len(p.vals) {
		d.fallBack(0, 0) // not worth it for this chunk
		return nil, false
	}
	d.dictPages++
	return encoded, true
}

// fallBack turns the chunk's dictionary off, keeping the first n entries
// (size bytes), those of the pages already cut.
func (d *dict) fallBack(size int, n int32) {
	d.values, d.n, d.off = d.values[:size], n, true
	clear(d.index)
	clear(d.fixed)
}

// dictPage returns the chunk's dictionary page, header and body, or nil
// when no page of the chunk uses the dictionary, and its size with the
// body uncompressed.
func (w *Writer) dictPage(l *wleaf) (page [2][]byte, uncompressed int64, err error) {
	d := &l.chunk.dict
	if d.dictPages == 0 {
		return page, 0, nil
	}
	body := d.values
	if w.codec != nil {
		if w.scratch.zbuf, err = w.codec.Encode(w.scratch.zbuf[:0], d.values); err != nil {
			return page, 0, err
		}
		body = w.scratch.zbuf
	}
	header, err := thrift.Marshal(new(thrift.CompactProtocol), &format.PageHeader{
		Type:                 format.DictionaryPage,
		UncompressedPageSize: int32(len(d.values)),
		CompressedPageSize:   int32(len(body)),
		CRC:                  pageCRC(body),
		DictionaryPageHeader: thrift.New(format.DictionaryPageHeader{NumValues: d.n, Encoding: plainDictionary}),
	})
	if err != nil {
		return page, 0, err
	}
	return [2][]byte{header, body}, int64(len(header) + len(d.values)), nil
}

// encodings returns the encodings of l's chunk and its page encoding
// statistics, which readers (parquet-mr's dictionary filter) use to tell
// whether every data page is dictionary-encoded.
func (l *wleaf) encodings() ([]format.Encoding, []format.PageEncodingStats) {
	d := &l.chunk.dict
	var encs []format.Encoding
	var stats []format.PageEncodingStats
	if d.dictPages > 0 {
		encs = append(encs, plainDictionary)
		stats = append(stats,
			format.PageEncodingStats{PageType: format.DictionaryPage, Encoding: plainDictionary, Count: 1},
			format.PageEncodingStats{PageType: format.DataPage, Encoding: plainDictionary, Count: d.dictPages})
	}
	if d.plainPages > 0 || d.dictPages == 0 {
		encs = append(encs, format.Plain)
		stats = append(stats, format.PageEncodingStats{PageType: format.DataPage, Encoding: format.Plain, Count: d.plainPages})
	}
	if l.maxDef > 0 || l.maxRep > 0 {
		encs = append(encs, format.RLE)
	}
	return encs, stats
}

package checkpoint

import (
	"github.com/parquet-go/parquet-go"

	"github.com/godelta/delta/internal/parquetio"
)

// leaf is one leaf column of a checkpoint's Parquet schema and a cursor
// over its values in the current row group: the shared page cursor, with
// the raw values of its pages, which the decoders read column-wise as
// strings, integers and booleans without boxing.
//
// The methods that read entries abort on bad data (parquetio.Fail); guard
// turns that into an error at the file boundary.
type leaf struct {
	parquetio.Cursor
	raw parquetio.Raw
	col *parquet.Column
}

// open starts reading the leaf's chunk in a row group.
func (l *leaf) open(pages parquetio.PageReader) {
	l.raw.Reset()
	l.Open(pages)
}

// close releases the current page and the page reader.
func (l *leaf) close() {
	l.Close()
	l.raw.Page = parquetio.Values{}
}

// src returns the values the current entry's value is in, and its index
// there. The caller has checked Has.
func (l *leaf) src() (*parquetio.Values, int) { return l.Src(&l.raw) }

// Typed reads of the current entry. Each moves past the entry; ok is false
// for a null. Integers accept both INT32 and INT64 columns.

func (l *leaf) str() (string, bool)   { return l.Str(&l.raw) }
func (l *leaf) int64() (int64, bool)  { return l.Int64(&l.raw) }
func (l *leaf) boolean() (bool, bool) { return l.Bool(&l.raw) }

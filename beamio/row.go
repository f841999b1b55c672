package beamio

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
)

// Row is one row of a table as it travels through a pipeline: its values,
// of the library's value type (schema.Value), in the order of the columns
// it is read with (Read: ReadOptions.Columns, else the table schema's
// order, partition columns included) or written in (Write: the table
// schema's order, partition columns included). Nested values are
// schema.Values of kind struct, array or map.
//
// Rows have a coder of their own (registered by this package), a compact
// self-describing binary form of schema.Value, so any runner can move
// them between workers.
type Row struct {
	Values []schema.Value
}

// ScanRow returns r as a scan.Row of schema sch (the schema of the
// columns r holds), for access by column name.
func (r Row) ScanRow(sch *schema.StructType) scan.Row { return scan.NewRow(sch, r.Values) }

func init() {
	beam.RegisterCoder(reflect.TypeFor[Row](), encodeRow, decodeRow)
}

// ErrBadRow is the error of decoding bytes that are not an encoded Row; it
// matches deltaerr.ErrCorrupt.
var ErrBadRow = fmt.Errorf("beamio: malformed encoded row: %w", deltaerr.ErrCorrupt)

// encodeRow is Row's coder: the number of values, then each value in
// schema.AppendBinary's form.
func encodeRow(r Row) ([]byte, error) {
	b := binary.AppendUvarint(make([]byte, 0, 16*len(r.Values)), uint64(len(r.Values)))
	for _, v := range r.Values {
		b = schema.AppendBinary(b, v)
	}
	return b, nil
}

// decodeRow decodes what encodeRow wrote, from a copy of b that the row's
// strings share (the runner may reuse b).
func decodeRow(b []byte) (Row, error) { return decodeOwnedRow(bytes.Clone(b)) }

// decodeOwnedRow decodes what encodeRow wrote from b itself: the row's
// strings share b, which the caller must not change after.
func decodeOwnedRow(b []byte) (Row, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return Row{}, fmt.Errorf("%w: bad count", ErrBadRow)
	}
	b = b[k:]
	if n > uint64(len(b)) { // every value takes a byte at least
		return Row{}, fmt.Errorf("%w: count %d exceeds the %d bytes left", ErrBadRow, n, len(b))
	}
	vals := make([]schema.Value, n)
	for i := range vals {
		v, used, err := schema.DecodeBinary(b)
		if err != nil {
			return Row{}, fmt.Errorf("%w: value %d: %v", ErrBadRow, i, err)
		}
		vals[i], b = v, b[used:]
	}
	if len(b) != 0 {
		return Row{}, fmt.Errorf("%w: %d bytes after the last value", ErrBadRow, len(b))
	}
	return Row{Values: vals}, nil
}

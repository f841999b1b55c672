package beamio

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
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

// encodeRow is Row's coder: the number of values, then each value (see
// appendValue).
func encodeRow(r Row) ([]byte, error) {
	b := binary.AppendUvarint(make([]byte, 0, 16*len(r.Values)), uint64(len(r.Values)))
	for _, v := range r.Values {
		var err error
		if b, err = appendValue(b, v); err != nil {
			return nil, err
		}
	}
	return b, nil
}

func decodeRow(b []byte) (Row, error) {
	d := decoder{b: b}
	n := d.count(1)
	vals := make([]schema.Value, n)
	for i := range vals {
		vals[i] = d.value(0)
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d bytes after the last value", len(d.b))
	}
	if d.err != nil {
		return Row{}, d.err
	}
	return Row{Values: vals}, nil
}

// The wire form of a value is its kind (schema.Kind, one byte), then:
// nothing for null; one byte for a boolean; a zigzag varint for byte,
// short, integer, long, date and the timestamps; 4 or 8 bytes of IEEE
// bits, little-endian, for float and double; a length and the bytes for
// string and binary; precision, scale and then either 0 and a zigzag
// varint unscaled value, or 1, a sign byte and the length and big-endian
// bytes of its magnitude, for decimal; a count and the values for struct
// fields and array elements, and a count of entries followed by key,
// value pairs for a map. The form is only ever read by the same version of
// this package within one pipeline; it is not stored.
func appendValue(b []byte, v schema.Value) ([]byte, error) {
	k := v.Kind()
	b = append(b, byte(k))
	switch k {
	case schema.KindNull:
	case schema.KindBoolean:
		if v.Bool() {
			return append(b, 1), nil
		}
		return append(b, 0), nil
	case schema.KindByte, schema.KindShort, schema.KindInteger, schema.KindLong,
		schema.KindDate, schema.KindTimestamp, schema.KindTimestampNTZ:
		return binary.AppendVarint(b, v.Int64()), nil
	case schema.KindFloat:
		return binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(v.Float64()))), nil
	case schema.KindDouble:
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(v.Float64())), nil
	case schema.KindString, schema.KindBinary:
		raw := v.Raw()
		return append(binary.AppendUvarint(b, uint64(len(raw))), raw...), nil
	case schema.KindDecimal:
		t := v.Type().(schema.DecimalType)
		b = append(b, byte(t.Precision), byte(t.Scale))
		if u, ok := v.DecimalInt64(); ok {
			return binary.AppendVarint(append(b, 0), u), nil
		}
		u, _, _ := v.Decimal()
		sign := byte(0)
		if u.Sign() < 0 {
			sign = 1
		}
		mag := new(big.Int).Abs(u).Bytes()
		return append(binary.AppendUvarint(append(b, 1, sign), uint64(len(mag))), mag...), nil
	case schema.KindStruct, schema.KindArray:
		kids := v.Fields()
		if k == schema.KindArray {
			kids = v.Elements()
		}
		b = binary.AppendUvarint(b, uint64(len(kids)))
		for _, c := range kids {
			var err error
			if b, err = appendValue(b, c); err != nil {
				return nil, err
			}
		}
	case schema.KindMap:
		n := v.MapLen()
		b = binary.AppendUvarint(b, uint64(n))
		for i := range n {
			key, val := v.MapEntry(i)
			var err error
			if b, err = appendValue(b, key); err != nil {
				return nil, err
			}
			if b, err = appendValue(b, val); err != nil {
				return nil, err
			}
		}
	default:
		return nil, fmt.Errorf("beamio: cannot encode a value of kind %v: %w", k, deltaerr.ErrInvalidArgument)
	}
	return b, nil
}

// maxDepth bounds the nesting of decoded values, so bad bytes cannot
// exhaust the stack.
const maxDepth = 256

// decoder reads values from b; the first failure sticks in err and every
// later read returns zero values.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: "+format, append([]any{ErrBadRow}, args...)...)
	}
	d.b = nil
}

func (d *decoder) byte1() byte {
	if d.err != nil || len(d.b) < 1 {
		d.fail("truncated")
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) varint() int64 {
	x, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return x
}

// count reads a count of items of at least minSize bytes each, refusing
// one the remaining bytes cannot hold.
func (d *decoder) count(minSize int) int {
	x, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad count")
		return 0
	}
	d.b = d.b[n:]
	if x > uint64(len(d.b)/minSize) {
		d.fail("count %d exceeds the %d bytes left", x, len(d.b))
		return 0
	}
	return int(x)
}

func (d *decoder) bytes() []byte {
	n := d.count(1)
	if d.err != nil {
		return nil
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

func (d *decoder) fixed(n int) []byte {
	if d.err != nil || len(d.b) < n {
		d.fail("truncated")
		return make([]byte, n)
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

func (d *decoder) value(depth int) schema.Value {
	if depth > maxDepth {
		d.fail("values nested deeper than %d", maxDepth)
		return schema.Value{}
	}
	k := schema.Kind(d.byte1())
	if d.err != nil {
		return schema.Value{}
	}
	switch k {
	case schema.KindNull:
		return schema.Value{}
	case schema.KindBoolean:
		return schema.BooleanValue(d.byte1() != 0)
	case schema.KindByte, schema.KindShort, schema.KindInteger, schema.KindDate:
		x := d.varint()
		lo, hi := int64(math.MinInt32), int64(math.MaxInt32)
		switch k {
		case schema.KindByte:
			lo, hi = math.MinInt8, math.MaxInt8
		case schema.KindShort:
			lo, hi = math.MinInt16, math.MaxInt16
		}
		if x < lo || x > hi {
			d.fail("%v value %d out of range", k, x)
			return schema.Value{}
		}
		switch k {
		case schema.KindByte:
			return schema.ByteValue(int8(x))
		case schema.KindShort:
			return schema.ShortValue(int16(x))
		case schema.KindInteger:
			return schema.IntegerValue(int32(x))
		}
		return schema.DateValue(int32(x))
	case schema.KindLong:
		return schema.LongValue(d.varint())
	case schema.KindTimestamp:
		return schema.TimestampValue(d.varint())
	case schema.KindTimestampNTZ:
		return schema.TimestampNTZValue(d.varint())
	case schema.KindFloat:
		return schema.FloatValue(math.Float32frombits(binary.LittleEndian.Uint32(d.fixed(4))))
	case schema.KindDouble:
		return schema.DoubleValue(math.Float64frombits(binary.LittleEndian.Uint64(d.fixed(8))))
	case schema.KindString:
		return schema.StringValue(string(d.bytes()))
	case schema.KindBinary:
		return schema.BinaryValue(d.bytes())
	case schema.KindDecimal:
		p, s := int(d.byte1()), int(d.byte1())
		var u *big.Int
		switch d.byte1() {
		case 0:
			u = big.NewInt(d.varint())
		case 1:
			neg := d.byte1() == 1
			u = new(big.Int).SetBytes(d.bytes())
			if neg {
				u.Neg(u)
			}
		default:
			d.fail("bad decimal form")
		}
		if d.err != nil {
			return schema.Value{}
		}
		v, err := schema.DecimalValue(u, p, s)
		if err != nil {
			d.fail("decimal: %v", err)
		}
		return v
	case schema.KindStruct, schema.KindArray:
		n := d.count(1)
		kids := make([]schema.Value, n)
		for i := range kids {
			kids[i] = d.value(depth + 1)
		}
		if k == schema.KindStruct {
			return schema.StructValue(kids)
		}
		return schema.ArrayValue(kids)
	case schema.KindMap:
		n := d.count(2)
		kv := make([]schema.Value, 2*n)
		for i := range kv {
			kv[i] = d.value(depth + 1)
		}
		return schema.MapValue(kv)
	}
	d.fail("unknown kind %d", k)
	return schema.Value{}
}

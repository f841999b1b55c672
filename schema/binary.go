package schema

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"unsafe"
)

// ErrBinary is returned by DecodeBinary for bytes AppendBinary did not
// write: truncated, out of range, or nested too deep.
var ErrBinary = errors.New("schema: malformed binary value")

// MaxBinaryDepth is the deepest nesting DecodeBinary follows, so that bad
// bytes cannot exhaust the stack.
const MaxBinaryDepth = 256

// AppendBinary appends the compact, self-describing binary form of v to
// b and returns it: the value's kind (one byte), then nothing for null;
// one byte for a boolean; a zigzag varint for byte, short, integer, long,
// date and the timestamps; 4 or 8 bytes of IEEE bits, little-endian, for
// float and double; a length and the bytes for string and binary;
// precision, scale and then either 0 and a zigzag varint unscaled value,
// or 1, a sign byte and the length and big-endian bytes of its magnitude,
// for decimal; a count and the values for struct fields and array
// elements, and a count of entries followed by key, value pairs for a map.
//
// The form moves values within one build of this module (an external
// sort's runs, a pipeline's rows between workers); it is never stored in
// a table.
func AppendBinary(b []byte, v Value) []byte {
	k := v.Kind()
	b = append(b, byte(k))
	switch k {
	case KindBoolean:
		if v.Bool() {
			return append(b, 1)
		}
		return append(b, 0)
	case KindByte, KindShort, KindInteger, KindLong, KindDate, KindTimestamp, KindTimestampNTZ:
		return binary.AppendVarint(b, v.Int64())
	case KindFloat:
		return binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(v.Float64())))
	case KindDouble:
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(v.Float64()))
	case KindString, KindBinary:
		raw := v.Raw()
		return append(binary.AppendUvarint(b, uint64(len(raw))), raw...)
	case KindDecimal:
		t := v.Type().(DecimalType)
		b = append(b, byte(t.Precision), byte(t.Scale))
		if u, ok := v.DecimalInt64(); ok {
			return binary.AppendVarint(append(b, 0), u)
		}
		u, _, _ := v.Decimal()
		sign := byte(0)
		if u.Sign() < 0 {
			sign = 1
		}
		mag := new(big.Int).Abs(u).Bytes()
		return append(binary.AppendUvarint(append(b, 1, sign), uint64(len(mag))), mag...)
	case KindStruct, KindArray:
		kids := v.Fields()
		if k == KindArray {
			kids = v.Elements()
		}
		b = binary.AppendUvarint(b, uint64(len(kids)))
		for _, c := range kids {
			b = AppendBinary(b, c)
		}
	case KindMap:
		n := v.MapLen()
		b = binary.AppendUvarint(b, uint64(n))
		for i := range n {
			key, val := v.MapEntry(i)
			b = AppendBinary(AppendBinary(b, key), val)
		}
	}
	return b
}

// DecodeBinary decodes the value AppendBinary wrote at the start of b and
// returns it with the number of bytes it took. Strings and binary values
// share b's memory: b must not change while they are in use. Bytes
// AppendBinary did not write give an error matching ErrBinary, never a
// panic.
func DecodeBinary(b []byte) (Value, int, error) {
	d := binDecoder{b: b}
	v := d.value(0)
	if d.err != nil {
		return Value{}, 0, d.err
	}
	return v, len(b) - len(d.b), nil
}

// binDecoder reads values from b; the first failure sticks in err and
// every later read returns zero values.
type binDecoder struct {
	b   []byte
	err error
}

func (d *binDecoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: "+format, append([]any{ErrBinary}, args...)...)
	}
	d.b = nil
}

func (d *binDecoder) byte1() byte {
	if d.err != nil || len(d.b) < 1 {
		d.fail("truncated")
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *binDecoder) varint() int64 {
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
func (d *binDecoder) count(minSize int) int {
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

// text reads a length and that many bytes, as a string sharing b.
func (d *binDecoder) text() string {
	n := d.count(1)
	if d.err != nil || n == 0 {
		return ""
	}
	s := unsafe.String(&d.b[0], n)
	d.b = d.b[n:]
	return s
}

func (d *binDecoder) fixed(n int) []byte {
	if d.err != nil || len(d.b) < n {
		d.fail("truncated")
		return make([]byte, n)
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

func (d *binDecoder) value(depth int) Value {
	if depth > MaxBinaryDepth {
		d.fail("values nested deeper than %d", MaxBinaryDepth)
		return Value{}
	}
	k := Kind(d.byte1())
	if d.err != nil {
		return Value{}
	}
	switch k {
	case KindNull:
		return Value{}
	case KindBoolean:
		return BooleanValue(d.byte1() != 0)
	case KindByte, KindShort, KindInteger, KindDate:
		x := d.varint()
		lo, hi := int64(math.MinInt32), int64(math.MaxInt32)
		switch k {
		case KindByte:
			lo, hi = math.MinInt8, math.MaxInt8
		case KindShort:
			lo, hi = math.MinInt16, math.MaxInt16
		}
		if x < lo || x > hi {
			d.fail("%v value %d out of range", k, x)
			return Value{}
		}
		return Value{kind: k, num: x}
	case KindLong, KindTimestamp, KindTimestampNTZ:
		return Value{kind: k, num: d.varint()}
	case KindFloat:
		return FloatValue(math.Float32frombits(binary.LittleEndian.Uint32(d.fixed(4))))
	case KindDouble:
		return DoubleValue(math.Float64frombits(binary.LittleEndian.Uint64(d.fixed(8))))
	case KindString, KindBinary:
		return Value{kind: k, str: d.text()}
	case KindDecimal:
		p, s := int(d.byte1()), int(d.byte1())
		var u *big.Int
		switch d.byte1() {
		case 0:
			u = big.NewInt(d.varint())
		case 1:
			neg := d.byte1() == 1
			u = new(big.Int).SetBytes([]byte(d.text()))
			if neg {
				u.Neg(u)
			}
		default:
			d.fail("bad decimal form")
		}
		if d.err != nil {
			return Value{}
		}
		v, err := DecimalValue(u, p, s)
		if err != nil {
			d.fail("decimal: %v", err)
		}
		return v
	case KindStruct, KindArray:
		kids := make([]Value, d.count(1))
		for i := range kids {
			kids[i] = d.value(depth + 1)
		}
		if k == KindStruct {
			return StructValue(kids)
		}
		return ArrayValue(kids)
	case KindMap:
		kv := make([]Value, 2*d.count(2))
		for i := range kv {
			kv[i] = d.value(depth + 1)
		}
		return MapValue(kv)
	}
	d.fail("unknown kind %d", k)
	return Value{}
}

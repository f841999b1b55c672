package datafile

import (
	"math/big"

	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/format"

	"github.com/godelta/delta/schema"
)

// convFunc appends to dst the first n values of a page (or dictionary),
// converted to the wanted type. It aborts with a corrupt-file error when
// a value cannot be held by the wanted type. The page cursor has checked
// d (parquetio.Loader): it holds at least n values of the leaf's physical
// kind, and byte array offsets are in order and in range.
type convFunc func(dst []schema.Value, d encoding.Values, n int) []schema.Value

// Microseconds per day, and the Julian day of 1970-01-01 (INT96).
const (
	microsPerDay    = 86_400_000_000
	julianUnixEpoch = 2_440_588
)

// converter returns how to read leaf n as type want, or an error naming
// the column when the file's type cannot be read as want. The accepted
// pairs are the file's own type and the widenings of the typeWidening
// feature: integers to wider integers, to double and to decimal; float to
// double; decimal to a decimal of no fewer integer and fraction digits;
// date to timestamp_ntz. Geometry and geography read their WKB as binary
// values.
func converter(n *pnode, want schema.DataType, path []string) (convFunc, error) {
	bad := func() (convFunc, error) {
		return nil, mismatch(path, n.describe()+" as "+want.String())
	}
	a := n.ann
	switch t := want.(type) {
	case schema.DecimalType:
		return decimalConverter(n, t, path)
	case schema.GeometryType, schema.GeographyType:
		// Shapes as WKB, in a BYTE_ARRAY annotated GEOMETRY or
		// GEOGRAPHY, or not at all; the CRS is the table schema's.
		if n.phys == format.ByteArray && (a.kind == annNone || a.kind == annGeo) {
			return convBinary, nil
		}
		return bad()
	}
	pt, ok := want.(schema.PrimitiveType)
	if !ok {
		return bad()
	}
	switch pt {
	case schema.Boolean:
		if n.phys == format.Boolean && a.kind == annNone {
			return convBoolean, nil
		}
	case schema.Byte, schema.Short, schema.Integer, schema.Long:
		width := map[schema.PrimitiveType]int{schema.Byte: 8, schema.Short: 16, schema.Integer: 32, schema.Long: 64}[pt]
		bits, signed, ok := intInfo(n)
		if n.phys == format.Int32 && a.kind == annNone && width < 32 {
			bits = width // Spark reads unannotated INT32 as byte and short too
		}
		if !ok || bits > width || (!signed && bits == width) {
			return bad()
		}
		if n.phys == format.Int64 {
			return convInt64Long, nil
		}
		switch pt {
		case schema.Byte:
			return convInt32(func(x int32) schema.Value { return schema.ByteValue(int8(x)) }, 8, signed), nil
		case schema.Short:
			return convInt32(func(x int32) schema.Value { return schema.ShortValue(int16(x)) }, 16, signed), nil
		case schema.Integer:
			return convInt32Integer(signed), nil
		}
		if !signed {
			return convInt32(func(x int32) schema.Value { return schema.LongValue(int64(uint32(x))) }, 64, true), nil
		}
		return convInt32(func(x int32) schema.Value { return schema.LongValue(int64(x)) }, 64, true), nil
	case schema.Float:
		if n.phys == format.Float && a.kind == annNone {
			return convFloat, nil
		}
	case schema.Double:
		switch {
		case n.phys == format.Double && a.kind == annNone:
			return convDouble, nil
		case n.phys == format.Float && a.kind == annNone:
			return convFloatDouble, nil
		}
		if _, signed, ok := intInfo(n); ok {
			if n.phys == format.Int64 {
				if !signed {
					return bad()
				}
				return convInt64(func(x int64) schema.Value { return schema.DoubleValue(float64(x)) }), nil
			}
			if !signed {
				return convInt32(func(x int32) schema.Value { return schema.DoubleValue(float64(uint32(x))) }, 64, true), nil
			}
			return convInt32(func(x int32) schema.Value { return schema.DoubleValue(float64(x)) }, 64, true), nil
		}
	case schema.String:
		if n.phys == format.ByteArray && (a.kind == annNone || a.kind == annString) {
			return convString, nil
		}
	case schema.Binary:
		if n.phys == format.ByteArray && a.kind != annDecimal {
			return convBinary, nil
		}
		if n.phys == format.FixedLenByteArray && a.kind != annDecimal {
			return convFixedBinary, nil
		}
	case schema.Date:
		if n.phys == format.Int32 && (a.kind == annDate || a.kind == annNone) {
			return convInt32(func(x int32) schema.Value { return schema.DateValue(x) }, 32, true), nil
		}
	case schema.Timestamp, schema.TimestampNTZ:
		mk := schema.TimestampValue
		if pt == schema.TimestampNTZ {
			mk = schema.TimestampNTZValue
		}
		switch {
		case n.phys == format.Int96 && a.kind == annNone:
			return convInt96(mk), nil
		case n.phys == format.Int64 && a.kind == annTimestamp:
			switch a.unit {
			case 1:
				if pt == schema.Timestamp {
					return convInt64Timestamp, nil
				}
				return convInt64(mk), nil
			case 1000:
				return convInt64(func(x int64) schema.Value { return mk(x * 1000) }), nil
			default: // nanoseconds
				return convInt64(func(x int64) schema.Value { return mk(floorDiv(x, 1000)) }), nil
			}
		case n.phys == format.Int64 && a.kind == annNone:
			return convInt64(mk), nil // microseconds, as Delta writes them
		case n.phys == format.Int32 && a.kind == annDate && pt == schema.TimestampNTZ:
			return convInt32(func(x int32) schema.Value { return mk(int64(x) * microsPerDay) }, 32, true), nil
		}
	}
	return bad()
}

// intInfo reports the width and signedness of an integer leaf: INT32 or
// INT64, unannotated or with an INT annotation.
func intInfo(n *pnode) (bits int, signed, ok bool) {
	var phys int
	switch n.phys {
	case format.Int32:
		phys = 32
	case format.Int64:
		phys = 64
	default:
		return 0, false, false
	}
	switch n.ann.kind {
	case annNone:
		return phys, true, true
	case annInt:
		if n.ann.bits > phys || n.ann.bits < 8 {
			return 0, false, false
		}
		return n.ann.bits, n.ann.signed, true
	}
	return 0, false, false
}

func floorDiv(x, d int64) int64 {
	q := x / d
	if (x%d != 0) && ((x < 0) != (d < 0)) {
		q--
	}
	return q
}

func convBoolean(dst []schema.Value, d encoding.Values, n int) []schema.Value {
	bits := d.Boolean()
	for j := range n {
		dst = append(dst, schema.BooleanValue(bits[j>>3]>>(j&7)&1 != 0))
	}
	return dst
}

// convInt32 converts INT32 values with mk. Values outside the range of a
// bits-wide integer (signed or not) are corrupt: an INT(8) column with
// 300 in it.
func convInt32(mk func(int32) schema.Value, bits int, signed bool) convFunc {
	return func(dst []schema.Value, d encoding.Values, n int) []schema.Value {
		src := d.Int32()
		for _, x := range src[:n] {
			if bits < 32 && !inRange(x, bits, signed) {
				failf("value %d out of range of a %d-bit integer", x, bits)
			}
			dst = append(dst, mk(x))
		}
		return dst
	}
}

func inRange(x int32, bits int, signed bool) bool {
	if signed {
		lim := int32(1) << (bits - 1)
		return x >= -lim && x < lim
	}
	return x >= 0 && x < int32(1)<<bits
}

func convInt32Integer(signed bool) convFunc {
	if !signed {
		return convInt32(func(x int32) schema.Value { return schema.IntegerValue(x) }, 31, false)
	}
	return func(dst []schema.Value, d encoding.Values, n int) []schema.Value {
		src := d.Int32()
		for _, x := range src[:n] {
			dst = append(dst, schema.IntegerValue(x))
		}
		return dst
	}
}

func convInt64(mk func(int64) schema.Value) convFunc {
	return func(dst []schema.Value, d encoding.Values, n int) []schema.Value {
		src := d.Int64()
		for _, x := range src[:n] {
			dst = append(dst, mk(x))
		}
		return dst
	}
}

// convInt64Long and convInt64Timestamp are convInt64 without the call
// through a func value: the hot paths.
func convInt64Long(dst []schema.Value, d encoding.Values, n int) []schema.Value {
	src := d.Int64()
	for _, x := range src[:n] {
		dst = append(dst, schema.LongValue(x))
	}
	return dst
}

func convInt64Timestamp(dst []schema.Value, d encoding.Values, n int) []schema.Value {
	src := d.Int64()
	for _, x := range src[:n] {
		dst = append(dst, schema.TimestampValue(x))
	}
	return dst
}

// convInt96 reads INT96 timestamps: nanoseconds of the day in the first 8
// bytes, little-endian, then the Julian day number in the last 4.
func convInt96(mk func(int64) schema.Value) convFunc {
	return func(dst []schema.Value, d encoding.Values, n int) []schema.Value {
		src := d.Int96()
		for _, x := range src[:n] {
			dst = append(dst, mk(int96Micros(x)))
		}
		return dst
	}
}

func int96Micros(x deprecated.Int96) int64 {
	nanos := int64(uint64(x[1])<<32 | uint64(x[0]))
	days := int64(int32(x[2])) - julianUnixEpoch
	return days*microsPerDay + floorDiv(nanos, 1000)
}

func convFloat(dst []schema.Value, d encoding.Values, n int) []schema.Value {
	src := d.Float()
	for _, x := range src[:n] {
		dst = append(dst, schema.FloatValue(x))
	}
	return dst
}

func convFloatDouble(dst []schema.Value, d encoding.Values, n int) []schema.Value {
	src := d.Float()
	for _, x := range src[:n] {
		dst = append(dst, schema.DoubleValue(float64(x)))
	}
	return dst
}

func convDouble(dst []schema.Value, d encoding.Values, n int) []schema.Value {
	src := d.Double()
	for _, x := range src[:n] {
		dst = append(dst, schema.DoubleValue(x))
	}
	return dst
}

// convString makes one string of the page's bytes and each value a
// substring of it: one allocation per page, none per value.
func convString(dst []schema.Value, d encoding.Values, n int) []schema.Value {
	data, offs := d.ByteArray()
	if n == 0 {
		return dst
	}
	text := string(data[:offs[n]])
	for j := range n {
		dst = append(dst, schema.StringValue(text[offs[j]:offs[j+1]]))
	}
	return dst
}

// convBinary is convString for binary values: one copy of the page's
// bytes, shared by its values.
func convBinary(dst []schema.Value, d encoding.Values, n int) []schema.Value {
	data, offs := d.ByteArray()
	if n == 0 {
		return dst
	}
	text := string(data[:offs[n]])
	for j := range n {
		dst = append(dst, schema.BinaryValueString(text[offs[j]:offs[j+1]]))
	}
	return dst
}

func convFixedBinary(dst []schema.Value, d encoding.Values, n int) []schema.Value {
	data, size := d.FixedLenByteArray()
	for j := range n {
		dst = append(dst, schema.BinaryValue(data[j*size:(j+1)*size]))
	}
	return dst
}

// integerDigits is how many decimal digits the integer part of a decimal
// needs to hold any value of a bits-wide signed integer.
var integerDigits = map[int]int{8: 3, 16: 5, 32: 10, 64: 20}

// decimalConverter reads a decimal column (INT32, INT64,
// FIXED_LEN_BYTE_ARRAY or BYTE_ARRAY, the latter two two's complement
// big-endian) or an integer column as decimal dt, rescaling the unscaled
// value by 10^(dt.Scale - file scale).
func decimalConverter(n *pnode, dt schema.DecimalType, path []string) (convFunc, error) {
	bad := func() (convFunc, error) {
		return nil, mismatch(path, n.describe()+" as "+dt.String())
	}
	fileScale := 0
	switch a := n.ann; a.kind {
	case annDecimal:
		if a.scale > dt.Scale || a.precision-a.scale > dt.Precision-dt.Scale || a.scale < 0 || a.precision < 1 {
			return bad()
		}
		fileScale = a.scale
	default:
		bits, signed, ok := intInfo(n)
		if !ok {
			return bad()
		}
		if !signed {
			bits *= 2
		}
		if d, ok := integerDigits[bits]; !ok || dt.Precision-dt.Scale < d {
			return bad()
		}
	}
	mul := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(dt.Scale-fileScale)), nil)
	mk := func(u *big.Int) schema.Value {
		if dt.Scale != fileScale {
			u.Mul(u, mul)
		}
		var v schema.Value
		var err error
		if u.IsInt64() {
			v, err = schema.DecimalValueInt64(u.Int64(), dt.Precision, dt.Scale) // no allocation
		} else {
			v, err = schema.DecimalValue(u, dt.Precision, dt.Scale)
		}
		if err != nil {
			failf("column value %s does not fit %s", u, dt)
		}
		return v
	}
	u := new(big.Int)
	unsigned := n.ann.kind == annInt && !n.ann.signed
	switch n.phys {
	case format.Int32:
		return func(dst []schema.Value, d encoding.Values, cnt int) []schema.Value {
			src := d.Int32()
			for _, x := range src[:cnt] {
				if unsigned {
					u.SetUint64(uint64(uint32(x)))
				} else {
					u.SetInt64(int64(x))
				}
				dst = append(dst, mk(u))
			}
			return dst
		}, nil
	case format.Int64:
		return func(dst []schema.Value, d encoding.Values, cnt int) []schema.Value {
			src := d.Int64()
			for _, x := range src[:cnt] {
				if unsigned {
					u.SetUint64(uint64(x))
				} else {
					u.SetInt64(x)
				}
				dst = append(dst, mk(u))
			}
			return dst
		}, nil
	case format.FixedLenByteArray:
		if n.ann.kind != annDecimal {
			return bad()
		}
		return func(dst []schema.Value, d encoding.Values, cnt int) []schema.Value {
			data, size := d.FixedLenByteArray()
			for j := range cnt {
				dst = append(dst, mk(twosComplement(u, data[j*size:(j+1)*size])))
			}
			return dst
		}, nil
	case format.ByteArray:
		if n.ann.kind != annDecimal {
			return bad()
		}
		return func(dst []schema.Value, d encoding.Values, cnt int) []schema.Value {
			data, offs := d.ByteArray()
			for j := range cnt {
				dst = append(dst, mk(twosComplement(u, data[offs[j]:offs[j+1]])))
			}
			return dst
		}, nil
	}
	return bad()
}

// twosComplement sets u to the big-endian two's complement integer b.
func twosComplement(u *big.Int, b []byte) *big.Int {
	if len(b) <= 8 {
		var x int64
		if len(b) > 0 && b[0]&0x80 != 0 {
			x = -1
		}
		for _, c := range b {
			x = x<<8 | int64(c)
		}
		return u.SetInt64(x)
	}
	u.SetBytes(b)
	if b[0]&0x80 != 0 {
		u.Sub(u, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return u
}

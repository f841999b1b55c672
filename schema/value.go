package schema

import (
	"encoding/hex"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unsafe"
)

// Kind is the kind of a Value: null, or one of the primitive types a value
// can have. Decimal values carry their precision and scale besides.
type Kind uint8

// The kinds of values. The zero Kind is null.
const (
	KindNull Kind = iota
	KindBoolean
	KindByte
	KindShort
	KindInteger
	KindLong
	KindFloat
	KindDouble
	KindString
	KindBinary
	KindDate
	KindTimestamp
	KindTimestampNTZ
	KindDecimal
	// Nested kinds: values of struct, array and map columns (a variant is
	// read as the struct of its two binaries, metadata and value).
	KindStruct
	KindArray
	KindMap
)

// kindTypes gives the schema type of each kind but null and decimal.
var kindTypes = [...]PrimitiveType{
	KindBoolean:      Boolean,
	KindByte:         Byte,
	KindShort:        Short,
	KindInteger:      Integer,
	KindLong:         Long,
	KindFloat:        Float,
	KindDouble:       Double,
	KindString:       String,
	KindBinary:       Binary,
	KindDate:         Date,
	KindTimestamp:    Timestamp,
	KindTimestampNTZ: TimestampNTZ,
}

// String returns the name of the kind's type ("long", "decimal"), or
// "null".
func (k Kind) String() string {
	switch {
	case k == KindNull:
		return "null"
	case k == KindDecimal:
		return "decimal"
	case k == KindStruct:
		return "struct"
	case k == KindArray:
		return "array"
	case k == KindMap:
		return "map"
	case int(k) < len(kindTypes):
		return string(kindTypes[k])
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Value is a single typed value: a partition value, a literal, a statistic
// or a cell of a Batch. It is small, immutable and safe to copy; the zero Value
// is null. Null carries no type: the column it belongs to has one.
//
// Integers of every width, dates (days since 1970-01-01) and timestamps
// (microseconds since 1970-01-01 00:00:00, UTC for timestamp, wall clock
// for timestamp_ntz) are read with Int64; float and double with Float64.
// Accessors return the zero value for a value of another kind.
//
// The layout is 40 bytes, so that column-wise batches of values stay
// compact and a primitive costs no allocation:
//
//   - num holds booleans (0 or 1), integers, dates, timestamps, the bits of
//     a float or double, the unscaled value of a decimal that fits in 64
//     bits (ptr nil), and the length of a nested value's list;
//   - str holds a string's text or a binary's bytes;
//   - ptr is a *big.Int for a decimal too large for num, or the first of
//     a nested value's list of values: a struct's fields in order, an
//     array's elements, or a map's entries as key, value, key, value.
//
// Nothing ptr points to is ever modified.
type Value struct {
	kind Kind
	// precision and scale of a decimal.
	precision, scale uint8
	num              int64
	str              string
	ptr              unsafe.Pointer
}

func (v Value) float() float64 { return math.Float64frombits(uint64(v.num)) }

// list returns the values of a nested value.
func (v Value) list() []Value {
	if v.ptr == nil {
		return nil
	}
	return unsafe.Slice((*Value)(v.ptr), v.num)
}

func listValue(k Kind, vals []Value) Value {
	if len(vals) == 0 {
		return Value{kind: k}
	}
	return Value{kind: k, num: int64(len(vals)), ptr: unsafe.Pointer(&vals[0])}
}

// dec returns a decimal's unscaled value; the caller must not change it.
func (v Value) dec() *big.Int {
	if v.ptr != nil {
		return (*big.Int)(v.ptr)
	}
	return big.NewInt(v.num)
}

// BooleanValue returns a boolean value.
func BooleanValue(b bool) Value {
	v := Value{kind: KindBoolean}
	if b {
		v.num = 1
	}
	return v
}

// ByteValue returns a byte (8-bit integer) value.
func ByteValue(i int8) Value { return Value{kind: KindByte, num: int64(i)} }

// ShortValue returns a short (16-bit integer) value.
func ShortValue(i int16) Value { return Value{kind: KindShort, num: int64(i)} }

// IntegerValue returns an integer (32-bit) value.
func IntegerValue(i int32) Value { return Value{kind: KindInteger, num: int64(i)} }

// LongValue returns a long (64-bit integer) value.
func LongValue(i int64) Value { return Value{kind: KindLong, num: i} }

// FloatValue returns a float (32-bit) value.
func FloatValue(f float32) Value {
	return Value{kind: KindFloat, num: int64(math.Float64bits(float64(f)))}
}

// DoubleValue returns a double (64-bit float) value.
func DoubleValue(f float64) Value { return Value{kind: KindDouble, num: int64(math.Float64bits(f))} }

// StringValue returns a string value.
func StringValue(s string) Value { return Value{kind: KindString, str: s} }

// BinaryValueString returns a binary value holding the bytes of s, without
// copying them.
func BinaryValueString(s string) Value { return Value{kind: KindBinary, str: s} }

// BinaryValue returns a binary value holding a copy of b.
func BinaryValue(b []byte) Value { return Value{kind: KindBinary, str: string(b)} }

// DateValue returns a date, as days since 1970-01-01.
func DateValue(days int32) Value { return Value{kind: KindDate, num: int64(days)} }

// TimestampValue returns a timestamp, as microseconds since the epoch UTC.
func TimestampValue(micros int64) Value { return Value{kind: KindTimestamp, num: micros} }

// TimestampNTZValue returns a timestamp without time zone, as microseconds
// since 1970-01-01 00:00:00 on a wall clock.
func TimestampNTZValue(micros int64) Value { return Value{kind: KindTimestampNTZ, num: micros} }

// DecimalValue returns the decimal unscaled × 10^-scale of type
// decimal(precision,scale); unscaled is copied. It fails with
// ErrInvalidValue and deltaerr.ErrInvalidArgument when the parameters are
// out of range or unscaled has more than precision digits.
func DecimalValue(unscaled *big.Int, precision, scale int) (Value, error) {
	t := DecimalType{Precision: precision, Scale: scale}
	if !t.valid() {
		return Value{}, badArgument(ErrInvalidValue, nil, "decimal parameters out of range: "+t.String())
	}
	if unscaled == nil || !fitsPrecision(unscaled, precision) {
		return Value{}, badArgument(ErrInvalidValue, nil, "unscaled value does not fit "+t.String())
	}
	return decimalValue(new(big.Int).Set(unscaled), t), nil
}

// DecimalValueInt64 is DecimalValue for an unscaled value that fits in 64
// bits; it allocates nothing.
func DecimalValueInt64(unscaled int64, precision, scale int) (Value, error) {
	t := DecimalType{Precision: precision, Scale: scale}
	if !t.valid() {
		return Value{}, badArgument(ErrInvalidValue, nil, "decimal parameters out of range: "+t.String())
	}
	if precision < len(pow10) {
		if abs := unscaled; abs == math.MinInt64 || max(abs, -abs) >= pow10[precision] {
			return Value{}, badArgument(ErrInvalidValue, nil, "unscaled value does not fit "+t.String())
		}
	}
	return Value{kind: KindDecimal, num: unscaled, precision: uint8(precision), scale: uint8(scale)}, nil
}

// pow10[i] is 10^i, for the precisions whose limit fits in an int64.
var pow10 = func() (p [19]int64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// decimalValue makes a decimal value from checked parts, taking unscaled.
func decimalValue(unscaled *big.Int, t DecimalType) Value {
	v := Value{kind: KindDecimal, precision: uint8(t.Precision), scale: uint8(t.Scale)}
	if unscaled.IsInt64() {
		v.num = unscaled.Int64()
	} else {
		v.ptr = unsafe.Pointer(unscaled)
	}
	return v
}

// fitsPrecision reports whether |u| has at most precision digits.
func fitsPrecision(u *big.Int, precision int) bool {
	if u.IsInt64() && precision < len(pow10) {
		n := u.Int64()
		return n != math.MinInt64 && max(n, -n) < pow10[precision]
	}
	limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(precision)), nil)
	return new(big.Int).Abs(u).Cmp(limit) < 0
}

// StructValue returns a struct whose fields, in schema order, are fields.
// The slice is kept, not copied: the caller must not change it afterwards.
func StructValue(fields []Value) Value { return listValue(KindStruct, fields) }

// ArrayValue returns an array of elems (null elements allowed). The slice is
// kept, not copied: the caller must not change it afterwards.
func ArrayValue(elems []Value) Value { return listValue(KindArray, elems) }

// MapValue returns a map whose entries are given as key, value, key, value
// in kv (keys are never null). The slice is kept, not copied: the caller
// must not change it afterwards. It panics if len(kv) is odd, a programming
// error.
func MapValue(kv []Value) Value {
	if len(kv)%2 != 0 {
		panic("schema.MapValue: odd number of keys and values")
	}
	return listValue(KindMap, kv)
}

// Fields returns the fields of a struct value, in schema order; nil for
// other kinds. The caller must not change the slice.
func (v Value) Fields() []Value {
	if v.kind == KindStruct {
		return v.list()
	}
	return nil
}

// Elements returns the elements of an array value; nil for other kinds.
// The caller must not change the slice.
func (v Value) Elements() []Value {
	if v.kind == KindArray {
		return v.list()
	}
	return nil
}

// MapLen returns the number of entries of a map value.
func (v Value) MapLen() int {
	if v.kind == KindMap {
		return int(v.num) / 2
	}
	return 0
}

// MapEntry returns the key and value of the i-th entry of a map value, in
// the order they were stored.
func (v Value) MapEntry(i int) (key, value Value) {
	l := v.list()
	return l[2*i], l[2*i+1]
}

// Kind returns the kind of v.
func (v Value) Kind() Kind { return v.kind }

// IsNull reports whether v is null.
func (v Value) IsNull() bool { return v.kind == KindNull }

// Type returns the schema type of v: a PrimitiveType, or a DecimalType for
// a decimal; nil for null and for nested values (their column has the type).
func (v Value) Type() DataType {
	switch {
	case v.kind == KindNull || v.kind >= KindStruct:
		return nil
	case v.kind == KindDecimal:
		return DecimalType{Precision: int(v.precision), Scale: int(v.scale)}
	}
	return kindTypes[v.kind]
}

// Bool returns the value of a boolean.
func (v Value) Bool() bool { return v.kind == KindBoolean && v.num != 0 }

// Int64 returns the value of a byte, short, integer or long, the days of a
// date, or the microseconds of a timestamp.
func (v Value) Int64() int64 {
	switch v.kind {
	case KindByte, KindShort, KindInteger, KindLong, KindDate, KindTimestamp, KindTimestampNTZ:
		return v.num
	}
	return 0
}

// Float64 returns the value of a float or double.
func (v Value) Float64() float64 {
	if v.kind == KindFloat || v.kind == KindDouble {
		return v.float()
	}
	return 0
}

// Bytes returns a copy of the bytes of a binary or string value.
func (v Value) Bytes() []byte {
	if v.kind == KindBinary || v.kind == KindString {
		return []byte(v.str)
	}
	return nil
}

// Raw returns the bytes of a binary or string value as a string, without
// the copy Bytes makes: the column-wise converters (Arrow builders) append
// it as is. It is "" for other kinds.
func (v Value) Raw() string {
	if v.kind == KindBinary || v.kind == KindString {
		return v.str
	}
	return ""
}

// DecimalInt64 returns a decimal's unscaled value when it fits in 64 bits,
// without the allocation of Decimal; ok is false for a larger decimal or
// another kind.
func (v Value) DecimalInt64() (unscaled int64, ok bool) {
	if v.kind != KindDecimal || v.ptr != nil {
		return 0, false
	}
	return v.num, true
}

// Decimal returns a decimal's unscaled value (a copy), precision and scale:
// the value is unscaled × 10^-scale.
func (v Value) Decimal() (unscaled *big.Int, precision, scale int) {
	if v.kind != KindDecimal {
		return nil, 0, 0
	}
	if v.ptr == nil {
		return big.NewInt(v.num), int(v.precision), int(v.scale)
	}
	return new(big.Int).Set(v.dec()), int(v.precision), int(v.scale)
}

// String returns the text of a string value itself, and for other kinds a
// display form: "null"; "true" or "false"; integers in decimal; floats in
// the shortest form that reads back the same, with ".0" on whole numbers,
// exponent notation below 1e-7 and from 1e21, and NaN, Infinity and
// -Infinity; binary in lower-case hex; dates as 2024-01-31; timestamps as
// 2024-01-31T08:09:10.123Z (timestamp_ntz without the Z), with 0, 3 or 6
// fraction digits, the fewest that are exact; decimals with all their
// scale digits, as -123.45600.
//
// For the form that partition values take in the log, use
// FormatPartitionValue.
func (v Value) String() string {
	switch v.kind {
	case KindNull:
		return "null"
	case KindBoolean:
		return strconv.FormatBool(v.num != 0)
	case KindByte, KindShort, KindInteger, KindLong:
		return strconv.FormatInt(v.num, 10)
	case KindFloat:
		return formatFloat(v.float(), 32)
	case KindDouble:
		return formatFloat(v.float(), 64)
	case KindString:
		return v.str
	case KindBinary:
		return hex.EncodeToString([]byte(v.str))
	case KindDate:
		return string(appendDate(nil, v.num))
	case KindTimestamp:
		return string(appendFraction(appendDateTime(nil, v.num, 'T'), v.num, fractionMillisOrMicros)) + "Z"
	case KindTimestampNTZ:
		return string(appendFraction(appendDateTime(nil, v.num, 'T'), v.num, fractionMillisOrMicros))
	case KindDecimal:
		return formatDecimal(v.dec(), int(v.scale))
	case KindStruct, KindArray, KindMap:
		return string(v.appendNested(nil))
	}
	return "Value(" + v.kind.String() + ")"
}

// appendNested writes a nested value as {f1, f2}, [e1, e2] or {k1: v1}:
// a display form only (field names are in the schema, not the value).
func (v Value) appendNested(b []byte) []byte {
	open, close := byte('{'), byte('}')
	if v.kind == KindArray {
		open, close = '[', ']'
	}
	b = append(b, open)
	step := 1
	if v.kind == KindMap {
		step = 2
	}
	list := v.list()
	for i := 0; i < len(list); i += step {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, list[i].String()...)
		if step == 2 {
			b = append(b, ": "...)
			b = append(b, list[i+1].String()...)
		}
	}
	return append(b, close)
}

// formatFloat formats f as Value.String documents.
func formatFloat(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	if abs := math.Abs(f); abs != 0 && (abs < 1e-7 || abs >= 1e21) {
		return strconv.FormatFloat(f, 'e', -1, bits)
	}
	s := strconv.FormatFloat(f, 'f', -1, bits)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// formatDecimal writes unscaled × 10^-scale in plain notation with exactly
// scale fraction digits.
func formatDecimal(unscaled *big.Int, scale int) string {
	digits := new(big.Int).Abs(unscaled).String()
	var sb strings.Builder
	if unscaled.Sign() < 0 {
		sb.WriteByte('-')
	}
	if scale == 0 {
		sb.WriteString(digits)
		return sb.String()
	}
	if len(digits) <= scale {
		digits = strings.Repeat("0", scale-len(digits)+1) + digits
	}
	sb.WriteString(digits[:len(digits)-scale])
	sb.WriteByte('.')
	sb.WriteString(digits[len(digits)-scale:])
	return sb.String()
}

const (
	microsPerSecond = 1_000_000
	secondsPerDay   = 24 * 60 * 60
)

// appendDate appends the date days after 1970-01-01 as YYYY-MM-DD.
func appendDate(b []byte, days int64) []byte {
	t := time.Unix(days*secondsPerDay, 0).UTC()
	return appendYMD(b, t)
}

// appendDateTime appends the whole seconds of micros as
// YYYY-MM-DD<sep>HH:MM:SS.
func appendDateTime(b []byte, micros int64, sep byte) []byte {
	t := time.UnixMicro(micros).UTC()
	b = appendYMD(b, t)
	b = append(b, sep)
	b = append2(b, t.Hour())
	b = append(b, ':')
	b = append2(b, t.Minute())
	b = append(b, ':')
	return append2(b, t.Second())
}

func appendYMD(b []byte, t time.Time) []byte {
	y := t.Year()
	if y >= 0 && y < 1000 {
		b = append(b, "000"[:4-len(strconv.Itoa(y))]...)
	}
	b = strconv.AppendInt(b, int64(y), 10)
	b = append(b, '-')
	b = append2(b, int(t.Month()))
	b = append(b, '-')
	return append2(b, t.Day())
}

func append2(b []byte, n int) []byte {
	return append(b, byte('0'+n/10), byte('0'+n%10))
}

// How many fraction digits appendFraction writes.
type fractionStyle int

const (
	fractionMillisOrMicros fractionStyle = iota // none, 3 or 6: the fewest exact
	fractionTrimmed                             // none, or 1 to 6 without trailing zeros
	fractionMicros                              // always 6
)

// appendFraction appends the sub-second part of micros as ".fff…".
func appendFraction(b []byte, micros int64, style fractionStyle) []byte {
	frac := int(((micros % microsPerSecond) + microsPerSecond) % microsPerSecond)
	digits := strconv.Itoa(frac + microsPerSecond)[1:] // six digits
	switch style {
	case fractionMillisOrMicros:
		switch {
		case frac == 0:
			return b
		case frac%1000 == 0:
			digits = digits[:3]
		}
	case fractionTrimmed:
		digits = strings.TrimRight(digits, "0")
		if digits == "" {
			return b
		}
	}
	b = append(b, '.')
	return append(b, digits...)
}

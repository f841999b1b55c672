package schema

import (
	"math/big"
	"strconv"
	"strings"
	"time"
)

// ParsePartitionValue decodes a partition value as the log stores it, for a
// column of type t, following the protocol's Partition Value Serialization:
//
//   - The empty string is null, for every type. (A JSON null in
//     partitionValues decodes to the empty string too.)
//   - string is taken as is, binary as the string's bytes (JSON decoding has
//     already turned escapes such as \u0001 into bytes).
//   - boolean is "true" or "false", in any case.
//   - byte, short, integer and long are decimal integers in range; float and
//     double are decimal or exponent notation, or NaN, Infinity, -Infinity.
//   - decimal is plain or exponent notation ("-123.45600", "1E-8") whose
//     value is exact at the type's scale and fits its precision.
//   - date is YYYY-MM-DD.
//   - timestamp is YYYY-MM-DD HH:MM:SS with 1 to 6 optional fraction
//     digits, or the same with a T in place of the space; a zone may follow,
//     Z or ±HH:MM (ISO 8601 such as 1970-01-01T00:00:00.123456Z). A value
//     without a zone is taken as UTC. Spark has long written the time in its
//     session time zone there, which the log does not record, so such values
//     are off by that zone's offset; the protocol recommends ISO 8601 in UTC
//     for that reason.
//   - timestamp_ntz is the same without a zone, taken as wall-clock time.
//
// Years have four digits. Other types (variant, void, geospatial, struct,
// array, map) cannot be partition columns, so only the empty string is
// accepted for them. Errors match ErrInvalidValue and deltaerr.ErrCorrupt.
func ParsePartitionValue(t DataType, s string) (Value, error) {
	if s == "" {
		return Value{}, nil
	}
	v, ok := parsePartitionValue(t, s)
	if !ok {
		what := "type cannot be a partition column"
		if partitionable(t) {
			what = "not a valid value"
		}
		return Value{}, corrupt(ErrInvalidValue, nil, strconv.Quote(s)+" for "+typeName(t)+": "+what, nil)
	}
	return v, nil
}

func parsePartitionValue(t DataType, s string) (Value, bool) {
	if d, ok := t.(DecimalType); ok {
		u, ok := parseDecimal(s, d)
		if !ok {
			return Value{}, false
		}
		return decimalValue(u, d), true
	}
	p, _ := t.(PrimitiveType)
	switch p {
	case String:
		return StringValue(s), true
	case Binary:
		return BinaryValue([]byte(s)), true
	case Boolean:
		switch {
		case strings.EqualFold(s, "true"):
			return BooleanValue(true), true
		case strings.EqualFold(s, "false"):
			return BooleanValue(false), true
		}
	case Byte:
		i, err := strconv.ParseInt(s, 10, 8)
		return ByteValue(int8(i)), err == nil
	case Short:
		i, err := strconv.ParseInt(s, 10, 16)
		return ShortValue(int16(i)), err == nil
	case Integer:
		i, err := strconv.ParseInt(s, 10, 32)
		return IntegerValue(int32(i)), err == nil
	case Long:
		i, err := strconv.ParseInt(s, 10, 64)
		return LongValue(i), err == nil
	case Float:
		f, ok := parseFloat(s, 32)
		return FloatValue(float32(f)), ok
	case Double:
		f, ok := parseFloat(s, 64)
		return DoubleValue(f), ok
	case Date:
		if len(s) == len("2006-01-02") {
			if t, ok := parseYMD(s); ok {
				return DateValue(int32(t.Unix() / secondsPerDay)), true
			}
		}
	case Timestamp:
		micros, ok := parseTimestamp(s, true)
		return TimestampValue(micros), ok
	case TimestampNTZ:
		micros, ok := parseTimestamp(s, false)
		return TimestampNTZValue(micros), ok
	}
	return Value{}, false
}

// partitionable reports whether a partition column can have type t.
func partitionable(t DataType) bool {
	if _, ok := t.(DecimalType); ok {
		return true
	}
	p, _ := t.(PrimitiveType)
	switch p {
	case String, Binary, Boolean, Byte, Short, Integer, Long, Float, Double, Date, Timestamp, TimestampNTZ:
		return true
	}
	return false
}

func typeName(t DataType) string {
	if t == nil {
		return "no type"
	}
	return t.String()
}

// parseFloat accepts what strconv.ParseFloat does in range, which includes
// NaN and, in any case, Inf and Infinity with an optional sign.
func parseFloat(s string, bits int) (float64, bool) {
	f, err := strconv.ParseFloat(s, bits)
	return f, err == nil
}

// parseDecimal returns the unscaled value of s at the scale of t. It fails
// when s is not a decimal number, has non-zero digits beyond the scale, or
// does not fit the precision.
func parseDecimal(s string, t DecimalType) (*big.Int, bool) {
	neg := false
	switch {
	case strings.HasPrefix(s, "-"):
		neg, s = true, s[1:]
	case strings.HasPrefix(s, "+"):
		s = s[1:]
	}
	mantissa, expText, hasExp := strings.Cut(s, "e")
	if !hasExp {
		mantissa, expText, hasExp = strings.Cut(s, "E")
	}
	exp := 0
	if hasExp {
		e, err := strconv.Atoi(expText)
		if err != nil || e > 1000 || e < -1000 {
			return nil, false
		}
		exp = e
	}
	intPart, fracPart, _ := strings.Cut(mantissa, ".")
	digits := intPart + fracPart
	if digits == "" || !allDigits(digits) {
		return nil, false
	}
	// The value is digits × 10^shift at the target scale.
	shift := exp - len(fracPart) + t.Scale
	if shift < 0 {
		drop := -shift
		if drop > len(digits) {
			drop = len(digits)
		}
		if strings.Trim(digits[len(digits)-drop:], "0") != "" {
			return nil, false // more fraction digits than the scale holds
		}
		digits = digits[:len(digits)-drop]
		shift = 0
	}
	digits = strings.TrimLeft(digits, "0")
	if digits == "" {
		return new(big.Int), true
	}
	if len(digits)+shift > t.Precision {
		return nil, false
	}
	u, _ := new(big.Int).SetString(digits+strings.Repeat("0", shift), 10)
	if neg {
		u.Neg(u)
	}
	return u, true
}

// parseTimestamp parses YYYY-MM-DD[ T]HH:MM:SS[.f{1,6}], followed when
// zone is true by an optional Z or ±HH:MM, to microseconds since the epoch
// (UTC when no zone is given).
func parseTimestamp(s string, zone bool) (int64, bool) {
	const layout = "2006-01-02 15:04:05"
	if len(s) < len(layout) || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' || s[16] != ':' {
		return 0, false
	}
	day, ok := parseYMD(s[:10])
	h, okH := atoi2(s[11:13])
	m, okM := atoi2(s[14:16])
	sec, okS := atoi2(s[17:19])
	if !ok || !okH || !okM || !okS || h > 23 || m > 59 || sec > 59 {
		return 0, false
	}
	rest := s[19:]
	var frac int64
	if strings.HasPrefix(rest, ".") {
		n := 1
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		digits := rest[1:n]
		if len(digits) < 1 || len(digits) > 6 {
			return 0, false
		}
		f, _ := strconv.Atoi(digits + strings.Repeat("0", 6-len(digits)))
		frac, rest = int64(f), rest[n:]
	}
	var offset int64 // seconds east of UTC
	switch {
	case rest == "":
	case !zone:
		return 0, false
	case rest == "Z":
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		oh, okH := atoi2(rest[1:3])
		om, okM := atoi2(rest[4:6])
		if !okH || !okM || oh > 23 || om > 59 {
			return 0, false
		}
		offset = int64(oh*3600 + om*60)
		if rest[0] == '-' {
			offset = -offset
		}
	default:
		return 0, false
	}
	secs := day.Unix() + int64(h*3600+m*60+sec) - offset
	return secs*microsPerSecond + frac, true
}

// parseYMD parses exactly YYYY-MM-DD as midnight UTC, rejecting dates that
// do not exist.
func parseYMD(s string) (time.Time, bool) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' || !allDigits(s[:4]) {
		return time.Time{}, false
	}
	y, _ := strconv.Atoi(s[:4])
	m, okM := atoi2(s[5:7])
	d, okD := atoi2(s[8:10])
	if !okM || !okD {
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if t.Year() != y || int(t.Month()) != m || t.Day() != d {
		return time.Time{}, false
	}
	return t, true
}

// atoi2 parses exactly two decimal digits.
func atoi2(s string) (int, bool) {
	if len(s) != 2 || !allDigits(s) {
		return 0, false
	}
	return int(s[0]-'0')*10 + int(s[1]-'0'), true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// FormatPartitionValue returns v as a writer stores it in partitionValues,
// such that ParsePartitionValue reads it back to the same value:
//
//   - null is the empty string (so is an empty string value, which the
//     protocol cannot tell apart from null);
//   - string is itself and binary its bytes as a string;
//   - booleans, numbers and dates are as Value.String gives them;
//   - timestamp is ISO 8601 in UTC with six fraction digits,
//     1970-01-01T00:00:00.000000Z, the form the protocol recommends;
//   - timestamp_ntz is 1970-01-01 00:00:00 with the fraction, when not zero,
//     cut after its last non-zero digit, as Spark writes it.
func FormatPartitionValue(v Value) string {
	switch v.kind {
	case KindNull:
		return ""
	case KindString, KindBinary:
		return v.str
	case KindTimestamp:
		return string(appendFraction(appendDateTime(nil, v.num, 'T'), v.num, fractionMicros)) + "Z"
	case KindTimestampNTZ:
		return string(appendFraction(appendDateTime(nil, v.num, ' '), v.num, fractionTrimmed))
	}
	return v.String()
}

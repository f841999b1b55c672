package variant

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"math/big"
	"strconv"
	"time"
	"unicode/utf8"
)

// MaxJSONDepth is the deepest nesting of objects and arrays AppendJSON
// renders; a value nested deeper is ErrMalformed rather than a deep
// recursion on bytes from a file.
const MaxJSONDepth = 1000

// AppendJSON appends value, with the field names of metadata, as JSON
// text: what a person reading `delta scan` expects of a variant column,
// as Spark shows one. Objects keep their fields in the encoded order
// (sorted by name), numbers are numbers (decimals with all their scale
// digits), and the types JSON lacks are strings: dates ("2024-01-31"),
// times, timestamps (ISO 8601, "Z" for the UTC ones), binaries (base64),
// UUIDs, and the non-finite floats ("NaN", "Infinity", "-Infinity").
// Bytes that are not a valid variant are an error matching ErrMalformed;
// what was appended before it is still in the result.
func AppendJSON(dst, metadata, value []byte) ([]byte, error) {
	m, err := ParseMetadata(metadata)
	if err != nil {
		return dst, err
	}
	return appendJSON(dst, m, value, 0)
}

func appendJSON(dst []byte, m Metadata, v []byte, depth int) ([]byte, error) {
	n, err := Size(v)
	if err != nil {
		return dst, err
	}
	v = v[:n]
	switch v[0] & 3 {
	case basicShortString:
		return appendQuoted(dst, string(v[1:])), nil
	case basicObject, basicArray:
		if depth >= MaxJSONDepth {
			return dst, malformedf("nested deeper than %d", MaxJSONDepth)
		}
		c, err := parseContainer(v)
		if err != nil {
			return dst, err
		}
		isObject := v[0]&3 == basicObject
		open, close := byte('['), byte(']')
		if isObject {
			open, close = '{', '}'
		}
		dst = append(dst, open)
		for i := range c.n {
			if i > 0 {
				dst = append(dst, ',')
			}
			if isObject {
				id := readUint(v[c.ids+i*c.idSize:], c.idSize)
				if id >= m.Len() {
					return dst, malformedf("field id %d past the metadata's %d names", id, m.Len())
				}
				dst = appendQuoted(dst, string(m.keyBytes(id)))
				dst = append(dst, ':')
			}
			e, err := c.element(v, i)
			if err != nil {
				return dst, err
			}
			if dst, err = appendJSON(dst, m, e, depth+1); err != nil {
				return dst, err
			}
		}
		return append(dst, close), nil
	}
	data := v[1:]
	switch t := Type(v[0] >> 2); t {
	case TypeNull:
		return append(dst, "null"...), nil
	case TypeTrue:
		return append(dst, "true"...), nil
	case TypeFalse:
		return append(dst, "false"...), nil
	case TypeInt8, TypeInt16, TypeInt32, TypeInt64:
		return strconv.AppendInt(dst, signed(data), 10), nil
	case TypeFloat:
		return appendFloat(dst, float64(math.Float32frombits(binary.LittleEndian.Uint32(data))), 32), nil
	case TypeDouble:
		return appendFloat(dst, math.Float64frombits(binary.LittleEndian.Uint64(data)), 64), nil
	case TypeDecimal4, TypeDecimal8, TypeDecimal16:
		return appendDecimal(dst, data)
	case TypeDate:
		d := time.Unix(signed(data)*86400, 0).UTC()
		return appendQuoted(dst, d.Format(time.DateOnly)), nil
	case TypeTimestamp, TypeTimestampNTZ:
		ts := time.UnixMicro(signed(data)).UTC().Format("2006-01-02T15:04:05.000000")
		if t == TypeTimestamp {
			ts += "Z"
		}
		return appendQuoted(dst, ts), nil
	case TypeTimestampNanos, TypeTimestampNTZNanos:
		x := signed(data)
		ts := time.Unix(0, x).UTC().Format("2006-01-02T15:04:05.000000000")
		if t == TypeTimestampNanos {
			ts += "Z"
		}
		return appendQuoted(dst, ts), nil
	case TypeTime:
		us := signed(data)
		if us < 0 || us >= 86400e6 {
			return dst, malformedf("time of %d microseconds", us)
		}
		return appendQuoted(dst, time.UnixMicro(us).UTC().Format("15:04:05.000000")), nil
	case TypeString:
		return appendQuoted(dst, string(data[4:])), nil
	case TypeBinary:
		return appendQuoted(dst, base64.StdEncoding.EncodeToString(data[4:])), nil
	case TypeUUID:
		u := data[:16]
		const hexd = "0123456789abcdef"
		var b [36]byte
		j := 0
		for i, x := range u {
			if i == 4 || i == 6 || i == 8 || i == 10 {
				b[j] = '-'
				j++
			}
			b[j], b[j+1] = hexd[x>>4], hexd[x&15]
			j += 2
		}
		return appendQuoted(dst, string(b[:])), nil
	}
	return dst, malformedf("unknown primitive type %d", v[0]>>2)
}

// signed reads the little-endian two's complement integer that fills b
// (1, 2, 4 or 8 bytes).
func signed(b []byte) int64 {
	var x uint64
	for i := len(b) - 1; i >= 0; i-- {
		x = x<<8 | uint64(b[i])
	}
	shift := 64 - 8*uint(len(b))
	return int64(x<<shift) >> shift
}

// appendFloat appends a float as JSON: the shortest form that reads back
// the same, and a string for the values JSON has no number for.
func appendFloat(dst []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, bits)
}

// appendDecimal appends the decimal in data (the scale byte, then the
// unscaled value little-endian) with all its scale digits.
func appendDecimal(dst, data []byte) ([]byte, error) {
	scale := int(data[0])
	if scale > 38 {
		return dst, malformedf("decimal scale %d", scale)
	}
	raw := data[1:]
	var u *big.Int
	if len(raw) <= 8 {
		u = big.NewInt(signed(raw))
	} else {
		be := make([]byte, len(raw))
		for i, x := range raw {
			be[len(raw)-1-i] = x
		}
		u = new(big.Int).SetBytes(be)
		if raw[len(raw)-1]&0x80 != 0 {
			u.Sub(u, new(big.Int).Lsh(big.NewInt(1), uint(8*len(raw))))
		}
	}
	s := u.String()
	neg := s[0] == '-'
	if neg {
		s = s[1:]
		dst = append(dst, '-')
	}
	if scale == 0 {
		return append(dst, s...), nil
	}
	for len(s) <= scale {
		s = "0" + s
	}
	dst = append(dst, s[:len(s)-scale]...)
	dst = append(dst, '.')
	return append(dst, s[len(s)-scale:]...), nil
}

// appendQuoted appends s as a JSON string: '"' and '\\' escaped, control
// characters as \u00XX, and bytes that are not UTF-8 as U+FFFD.
func appendQuoted(dst []byte, s string) []byte {
	const hexd = "0123456789abcdef"
	dst = append(dst, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			dst = append(dst, '\\', byte(r))
		case r == '\n':
			dst = append(dst, '\\', 'n')
		case r == '\t':
			dst = append(dst, '\\', 't')
		case r < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hexd[r>>4], hexd[r&15])
		default:
			dst = utf8.AppendRune(dst, r) // RuneError for a bad byte
		}
	}
	return append(dst, '"')
}

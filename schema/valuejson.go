package schema

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/godelta/delta/deltaerr"
)

// AppendValueJSON appends v, a value of type t, as JSON, in the form Spark's
// to_json uses: numbers for integers, floats and decimals (decimals with
// all their scale digits, exactly), strings for dates ("2024-01-31"),
// timestamps (Value.String's form), binary (base64) and the non-finite
// floats ("NaN", "Infinity", "-Infinity"); objects for structs, keyed by
// field name (a variant is {"metadata": ..., "value": ...} with base64
// binaries); arrays; maps as objects when their keys are strings, else
// as arrays of {"key": k, "value": v}.
func AppendValueJSON(b []byte, v Value, t DataType) []byte {
	switch v.kind {
	case KindNull:
		return append(b, "null"...)
	case KindBoolean:
		return strconv.AppendBool(b, v.num != 0)
	case KindByte, KindShort, KindInteger, KindLong:
		return strconv.AppendInt(b, v.num, 10)
	case KindFloat, KindDouble:
		if math.IsNaN(v.float()) || math.IsInf(v.float(), 0) {
			return appendString(b, v.String())
		}
		bits := 64
		if v.kind == KindFloat {
			bits = 32
		}
		return strconv.AppendFloat(b, v.float(), 'g', -1, bits)
	case KindDecimal:
		return append(b, v.String()...)
	case KindString:
		return appendString(b, v.str)
	case KindBinary:
		return appendString(b, base64.StdEncoding.EncodeToString([]byte(v.str)))
	case KindDate, KindTimestamp, KindTimestampNTZ:
		return appendString(b, v.String())
	case KindStruct:
		st, _ := t.(*StructType)
		b = append(b, '{')
		for i, f := range v.list() {
			if i > 0 {
				b = append(b, ',')
			}
			name, ft := "_"+strconv.Itoa(i), DataType(nil)
			switch {
			case st != nil && i < len(st.Fields):
				name, ft = st.Fields[i].Name, st.Fields[i].Type
			case t == Variant && i < 2:
				name, ft = [2]string{"metadata", "value"}[i], Binary
			}
			b = appendString(b, name)
			b = append(b, ':')
			b = AppendValueJSON(b, f, ft)
		}
		return append(b, '}')
	case KindArray:
		var et DataType
		if at, ok := t.(*ArrayType); ok {
			et = at.ElementType
		}
		b = append(b, '[')
		for i, e := range v.list() {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendValueJSON(b, e, et)
		}
		return append(b, ']')
	case KindMap:
		var kt, vt DataType
		if mt, ok := t.(*MapType); ok {
			kt, vt = mt.KeyType, mt.ValueType
		}
		if kt == String {
			b = append(b, '{')
			list := v.list()
			for i := 0; i < len(list); i += 2 {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendString(b, list[i].str)
				b = append(b, ':')
				b = AppendValueJSON(b, list[i+1], vt)
			}
			return append(b, '}')
		}
		b = append(b, '[')
		list := v.list()
		for i := 0; i < len(list); i += 2 {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"key":`...)
			b = AppendValueJSON(b, list[i], kt)
			b = append(b, `,"value":`...)
			b = AppendValueJSON(b, list[i+1], vt)
			b = append(b, '}')
		}
		return append(b, ']')
	}
	return append(b, "null"...)
}

// ParseValueJSON reads a value of type t from x, a value decoded by
// encoding/json with UseNumber (json.Number, string, bool, nil,
// []any, map[string]any): the inverse of AppendValueJSON, also accepting
// numbers for timestamps (epoch microseconds) and dates (days), and
// strings for numbers. A value that does not fit t is an error wrapping
// ErrInvalidValue and deltaerr.ErrInvalidArgument.
func ParseValueJSON(x any, t DataType) (Value, error) {
	if x == nil {
		return Value{}, nil
	}
	bad := func() (Value, error) {
		s := fmt.Sprint(x)
		if len(s) > 40 {
			s = s[:40] + "…"
		}
		return Value{}, deltaerr.Mark(fmt.Errorf("%q is not a %s", s, typeName(t)), ErrInvalidValue, deltaerr.ErrInvalidArgument)
	}
	text := func() (string, bool) {
		switch x := x.(type) {
		case string:
			return x, true
		case json.Number:
			return x.String(), true
		case bool:
			return strconv.FormatBool(x), true
		}
		return "", false
	}
	switch t := t.(type) {
	case PrimitiveType:
		s, ok := text()
		if !ok {
			return bad()
		}
		switch t {
		case Date, Timestamp, TimestampNTZ:
			if n, ok := x.(json.Number); ok {
				i, err := n.Int64()
				if err != nil {
					return bad()
				}
				switch t {
				case Date:
					return DateValue(int32(i)), nil
				case Timestamp:
					return TimestampValue(i), nil
				}
				return TimestampNTZValue(i), nil
			}
			if v, ok := parseJSONTime(s, t); ok {
				return v, nil
			}
			return bad()
		case Binary:
			raw, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return bad()
			}
			return BinaryValue(raw), nil
		case Float, Double:
			bits := 64
			if t == Float {
				bits = 32
			}
			f, ok := parseFloat(s, bits)
			if !ok {
				return bad()
			}
			if t == Float {
				return FloatValue(float32(f)), nil
			}
			return DoubleValue(f), nil
		case String:
			if _, isStr := x.(string); !isStr {
				return bad()
			}
			return StringValue(s), nil
		case Void:
			return bad()
		}
		v, err := ParsePartitionValue(t, s)
		if err != nil || v.IsNull() {
			return bad()
		}
		return v, nil
	case DecimalType:
		s, ok := text()
		if !ok {
			return bad()
		}
		u, ok := parseJSONDecimal(s, t)
		if !ok {
			return bad()
		}
		return decimalValue(u, t), nil
	case *StructType:
		obj, ok := x.(map[string]any)
		if !ok {
			return bad()
		}
		fields := make([]Value, len(t.Fields))
		for i, f := range t.Fields {
			fv, err := ParseValueJSON(obj[f.Name], f.Type)
			if err != nil {
				return Value{}, err
			}
			fields[i] = fv
		}
		return StructValue(fields), nil
	case *ArrayType:
		arr, ok := x.([]any)
		if !ok {
			return bad()
		}
		elems := make([]Value, len(arr))
		for i, e := range arr {
			ev, err := ParseValueJSON(e, t.ElementType)
			if err != nil {
				return Value{}, err
			}
			elems[i] = ev
		}
		return ArrayValue(elems), nil
	case *MapType:
		var kv []Value
		switch m := x.(type) {
		case map[string]any:
			if t.KeyType != String {
				return bad()
			}
			for k, mv := range m {
				vv, err := ParseValueJSON(mv, t.ValueType)
				if err != nil {
					return Value{}, err
				}
				kv = append(kv, StringValue(k), vv)
			}
		case []any:
			for _, e := range m {
				ent, ok := e.(map[string]any)
				if !ok {
					return bad()
				}
				kv2, err := ParseValueJSON(ent["key"], t.KeyType)
				if err != nil || kv2.IsNull() {
					return bad()
				}
				vv, err := ParseValueJSON(ent["value"], t.ValueType)
				if err != nil {
					return Value{}, err
				}
				kv = append(kv, kv2, vv)
			}
		default:
			return bad()
		}
		return MapValue(kv), nil
	}
	return bad()
}

// parseJSONTime reads the forms Value.String writes, RFC 3339 with any
// offset, and the partition-value forms.
func parseJSONTime(s string, t PrimitiveType) (Value, bool) {
	if t == Date {
		d, ok := parseYMD(s)
		if !ok {
			return Value{}, false
		}
		return DateValue(int32(d.Unix() / secondsPerDay)), true
	}
	if tm, err := time.Parse(time.RFC3339Nano, s); err == nil && t == Timestamp {
		return TimestampValue(tm.UnixMicro()), true
	}
	if tm, err := time.Parse("2006-01-02T15:04:05.999999999", s); err == nil {
		if t == Timestamp {
			return TimestampValue(tm.UnixMicro()), true
		}
		return TimestampNTZValue(tm.UnixMicro()), true
	}
	if v, err := ParsePartitionValue(t, s); err == nil && !v.IsNull() {
		return v, true
	}
	return Value{}, false
}

// parseJSONDecimal reads a decimal in plain or exponent notation and
// returns its unscaled value at t's scale, if exact and within precision.
func parseJSONDecimal(s string, t DecimalType) (*big.Int, bool) {
	r, ok := new(big.Rat).SetString(strings.TrimSpace(s))
	if !ok {
		return nil, false
	}
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(t.Scale)), nil)))
	if !r.IsInt() {
		return nil, false
	}
	u := new(big.Int).Set(r.Num())
	if !fitsPrecision(u, t.Precision) {
		return nil, false
	}
	return u, true
}

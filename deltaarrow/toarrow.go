package deltaarrow

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/godelta/delta/schema"
)

// appendColumn appends the values of one column of type t to b, whose
// type is arrowType(t): the nested path (the elements of arrays, the
// fields of structs), through builders; top-level primitive columns are
// written directly by column. Null values append nulls.
func appendColumn(b array.Builder, t schema.DataType, vals []schema.Value) {
	b.Reserve(len(vals))
	switch b := b.(type) {
	case *array.BooleanBuilder:
		appendEach(b, vals, schema.Value.Bool)
	case *array.Int8Builder:
		appendEach(b, vals, func(v schema.Value) int8 { return int8(v.Int64()) })
	case *array.Int16Builder:
		appendEach(b, vals, func(v schema.Value) int16 { return int16(v.Int64()) })
	case *array.Int32Builder:
		appendEach(b, vals, func(v schema.Value) int32 { return int32(v.Int64()) })
	case *array.Int64Builder:
		appendEach(b, vals, schema.Value.Int64)
	case *array.Float32Builder:
		appendEach(b, vals, func(v schema.Value) float32 { return float32(v.Float64()) })
	case *array.Float64Builder:
		appendEach(b, vals, schema.Value.Float64)
	case *array.Date32Builder:
		appendEach(b, vals, func(v schema.Value) arrow.Date32 { return arrow.Date32(v.Int64()) })
	case *array.TimestampBuilder:
		appendEach(b, vals, func(v schema.Value) arrow.Timestamp { return arrow.Timestamp(v.Int64()) })
	case *array.StringBuilder:
		appendEach(b, vals, schema.Value.Raw)
	case *array.BinaryBuilder:
		for _, v := range vals {
			if v.IsNull() {
				b.AppendNull()
			} else {
				b.AppendString(v.Raw())
			}
		}
	case *array.Decimal128Builder:
		appendEach(b, vals, decimal)
	case *array.NullBuilder:
		b.AppendNulls(len(vals))
	default:
		for _, v := range vals {
			appendValue(b, t, v)
		}
	}
}

// appendEach appends get of each value to b, or a null.
func appendEach[T any, B interface {
	Append(T)
	AppendNull()
}](b B, vals []schema.Value, get func(schema.Value) T) {
	for _, v := range vals {
		if v.IsNull() {
			b.AppendNull()
		} else {
			b.Append(get(v))
		}
	}
}

// decimal returns a decimal value's unscaled value as a decimal128.
func decimal(v schema.Value) decimal128.Num {
	if u, ok := v.DecimalInt64(); ok {
		return decimal128.FromI64(u)
	}
	u, _, _ := v.Decimal()
	return decimal128.FromBigInt(u)
}

// appendValue appends one value of type t to b: the nested path.
func appendValue(b array.Builder, t schema.DataType, v schema.Value) {
	if v.IsNull() {
		b.AppendNull()
		return
	}
	switch b := b.(type) {
	case *array.StructBuilder:
		b.Append(true)
		fields := v.Fields()
		var types []schema.DataType
		switch t := t.(type) {
		case *schema.StructType:
			types = make([]schema.DataType, len(t.Fields))
			for i, f := range t.Fields {
				types[i] = f.Type
			}
		default: // variant
			types = []schema.DataType{schema.Binary, schema.Binary}
		}
		for i, ft := range types {
			var fv schema.Value
			if i < len(fields) {
				fv = fields[i]
			}
			appendValue(b.FieldBuilder(i), ft, fv)
		}
	case *array.ListBuilder:
		b.Append(true)
		et := t.(*schema.ArrayType).ElementType
		appendColumn(b.ValueBuilder(), et, v.Elements())
	case *array.MapBuilder:
		b.Append(true)
		mt := t.(*schema.MapType)
		kb, ib := b.KeyBuilder(), b.ItemBuilder()
		for i := range v.MapLen() {
			k, iv := v.MapEntry(i)
			appendValue(kb, mt.KeyType, k)
			appendValue(ib, mt.ValueType, iv)
		}
	default:
		appendColumn(b, t, []schema.Value{v})
	}
}

package deltaarrow

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/godelta/delta/schema"
)

// appendColumn appends the values of one column of type t to b, whose
// type is arrowType(t). The type is switched on once; the loop over the
// values is typed. Null values (whatever their column) append nulls.
func appendColumn(b array.Builder, t schema.DataType, vals []schema.Value) {
	b.Reserve(len(vals))
	switch b := b.(type) {
	case *array.BooleanBuilder:
		for _, v := range vals {
			if v.IsNull() {
				b.UnsafeAppendBoolToBitmap(false)
			} else {
				b.UnsafeAppend(v.Bool())
			}
		}
	case *array.Int8Builder:
		for _, v := range vals {
			if v.IsNull() {
				b.UnsafeAppendBoolToBitmap(false)
			} else {
				b.UnsafeAppend(int8(v.Int64()))
			}
		}
	case *array.Int16Builder:
		for _, v := range vals {
			if v.IsNull() {
				b.UnsafeAppendBoolToBitmap(false)
			} else {
				b.UnsafeAppend(int16(v.Int64()))
			}
		}
	case *array.Int32Builder:
		for _, v := range vals {
			if v.IsNull() {
				b.UnsafeAppendBoolToBitmap(false)
			} else {
				b.UnsafeAppend(int32(v.Int64()))
			}
		}
	case *array.Int64Builder:
		for _, v := range vals {
			if v.IsNull() {
				b.UnsafeAppendBoolToBitmap(false)
			} else {
				b.UnsafeAppend(v.Int64())
			}
		}
	case *array.Float32Builder:
		for _, v := range vals {
			if v.IsNull() {
				b.UnsafeAppendBoolToBitmap(false)
			} else {
				b.UnsafeAppend(float32(v.Float64()))
			}
		}
	case *array.Float64Builder:
		for _, v := range vals {
			if v.IsNull() {
				b.UnsafeAppendBoolToBitmap(false)
			} else {
				b.UnsafeAppend(v.Float64())
			}
		}
	case *array.Date32Builder:
		for _, v := range vals {
			if v.IsNull() {
				b.UnsafeAppendBoolToBitmap(false)
			} else {
				b.UnsafeAppend(arrow.Date32(v.Int64()))
			}
		}
	case *array.TimestampBuilder:
		for _, v := range vals {
			if v.IsNull() {
				b.UnsafeAppendBoolToBitmap(false)
			} else {
				b.UnsafeAppend(arrow.Timestamp(v.Int64()))
			}
		}
	case *array.StringBuilder:
		n := 0
		for _, v := range vals {
			n += len(v.Raw())
		}
		b.ReserveData(n)
		for _, v := range vals {
			if v.IsNull() {
				b.AppendNull()
			} else {
				b.Append(v.Raw())
			}
		}
	case *array.BinaryBuilder:
		n := 0
		for _, v := range vals {
			n += len(v.Raw())
		}
		b.ReserveData(n)
		for _, v := range vals {
			if v.IsNull() {
				b.AppendNull()
			} else {
				b.AppendString(v.Raw())
			}
		}
	case *array.Decimal128Builder:
		for _, v := range vals {
			if v.IsNull() {
				b.UnsafeAppendBoolToBitmap(false)
			} else if u, ok := v.DecimalInt64(); ok {
				b.UnsafeAppend(decimal128.FromI64(u))
			} else {
				u, _, _ := v.Decimal()
				b.UnsafeAppend(decimal128.FromBigInt(u))
			}
		}
	case *array.NullBuilder:
		b.AppendNulls(len(vals))
	default:
		for _, v := range vals {
			appendValue(b, t, v)
		}
	}
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

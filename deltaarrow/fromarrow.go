package deltaarrow

import (
	"fmt"
	"iter"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/godelta/delta/schema"
)

// binding says how an Arrow type converts to a Delta type: checked once
// per schema, then applied to every record.
type binding struct {
	delta schema.DataType
	arrow arrow.DataType
	// path names the column in errors.
	path string
	// unit is the microseconds multiplier (1 for µs) or divisor (ns) of a
	// timestamp; div says which.
	unit int64
	div  bool
	// idx[i] is the Arrow child of a struct's Delta field i, or -1 when
	// the records lack it (written as null).
	idx []int
	// kids are the bindings of a struct's fields (nil where idx is -1),
	// or an array's element, or a map's key and value.
	kids []*binding
}

func mismatch(path, format string, args ...any) error {
	return &SchemaError{Column: path, Reason: fmt.Sprintf(format, args...)}
}

// bindFields matches the Arrow fields to the Delta fields by name, exact
// first, then ignoring case.
func bindFields(afields []arrow.Field, s *schema.StructType, prefix string) ([]int, []*binding, error) {
	idx := make([]int, len(s.Fields))
	kids := make([]*binding, len(s.Fields))
	used := make([]bool, len(afields))
	for i, f := range s.Fields {
		idx[i] = -1
		for j, af := range afields {
			if af.Name == f.Name {
				idx[i] = j
				break
			}
		}
		if idx[i] < 0 {
			for j, af := range afields {
				if strings.EqualFold(af.Name, f.Name) {
					idx[i] = j
					break
				}
			}
		}
		path := prefix + f.Name
		if idx[i] < 0 {
			if !f.Nullable {
				return nil, nil, mismatch(path, "missing, and the table column is NOT NULL")
			}
			continue
		}
		if used[idx[i]] {
			return nil, nil, mismatch(path, "matches two table columns")
		}
		used[idx[i]] = true
		b, err := bind(afields[idx[i]].Type, f.Type, path)
		if err != nil {
			return nil, nil, err
		}
		kids[i] = b
	}
	for j, af := range afields {
		if !used[j] {
			return nil, nil, mismatch(prefix+af.Name, "not a column of the table")
		}
	}
	return idx, kids, nil
}

// bind checks that Arrow type at converts exactly to Delta type dt.
func bind(at arrow.DataType, dt schema.DataType, path string) (*binding, error) {
	b := &binding{delta: dt, arrow: at, path: path}
	bad := func() (*binding, error) {
		want, err := arrowType(dt, path)
		if err != nil {
			return nil, err
		}
		return nil, mismatch(path, "arrow type %s does not convert to %s (want %s)", at, dt, want)
	}
	if at.ID() == arrow.NULL {
		return b, nil // all nulls fit any nullable column; the writer checks NOT NULL
	}
	switch t := dt.(type) {
	case schema.PrimitiveType:
		id := at.ID()
		switch t {
		case schema.Boolean:
			if id != arrow.BOOL {
				return bad()
			}
		case schema.Byte, schema.Short, schema.Integer, schema.Long:
			width := map[schema.PrimitiveType]int{schema.Byte: 8, schema.Short: 16, schema.Integer: 32, schema.Long: 64}[t]
			w := map[arrow.Type]int{arrow.INT8: 8, arrow.INT16: 16, arrow.INT32: 32, arrow.INT64: 64}[id]
			if w == 0 || w > width {
				return bad()
			}
		case schema.Float:
			if id != arrow.FLOAT32 {
				return bad()
			}
		case schema.Double:
			if id != arrow.FLOAT64 && id != arrow.FLOAT32 {
				return bad()
			}
		case schema.String:
			if id != arrow.STRING && id != arrow.LARGE_STRING && id != arrow.STRING_VIEW {
				return bad()
			}
		case schema.Binary:
			if id != arrow.BINARY && id != arrow.LARGE_BINARY && id != arrow.BINARY_VIEW && id != arrow.FIXED_SIZE_BINARY {
				return bad()
			}
		case schema.Date:
			if id != arrow.DATE32 {
				return bad()
			}
		case schema.Timestamp, schema.TimestampNTZ:
			ts, ok := at.(*arrow.TimestampType)
			if !ok {
				return bad()
			}
			if (ts.TimeZone == "") != (t == schema.TimestampNTZ) {
				if t == schema.Timestamp {
					return nil, mismatch(path, "arrow %s has no time zone, the table column is a timestamp (an instant); use timestamp_ntz or a zoned arrow timestamp", at)
				}
				return nil, mismatch(path, "arrow %s has a time zone, the table column is a timestamp_ntz (wall clock)", at)
			}
			switch ts.Unit {
			case arrow.Second:
				b.unit = 1_000_000
			case arrow.Millisecond:
				b.unit = 1000
			case arrow.Microsecond:
				b.unit = 1
			case arrow.Nanosecond:
				b.unit, b.div = 1000, true
			}
		case schema.Variant:
			st, ok := at.(*arrow.StructType)
			if !ok {
				return bad()
			}
			idx, kids, err := bindFields(st.Fields(), variantStruct, path+".")
			if err != nil {
				return nil, err
			}
			b.idx, b.kids = idx, kids
		case schema.Void:
			return bad()
		default:
			return bad()
		}
	case schema.DecimalType:
		var p, s int32
		switch d := at.(type) {
		case *arrow.Decimal128Type:
			p, s = d.Precision, d.Scale
		case *arrow.Decimal256Type:
			p, s = d.Precision, d.Scale
		default:
			return bad()
		}
		if int(s) != t.Scale || int(p-s) > t.Precision-t.Scale {
			return nil, mismatch(path, "arrow %s does not fit %s exactly", at, dt)
		}
	case schema.GeometryType, schema.GeographyType:
		// WKB, in any binary array.
		if id := at.ID(); id != arrow.BINARY && id != arrow.LARGE_BINARY && id != arrow.BINARY_VIEW {
			return bad()
		}
	case *schema.StructType:
		st, ok := at.(*arrow.StructType)
		if !ok {
			return bad()
		}
		idx, kids, err := bindFields(st.Fields(), t, path+".")
		if err != nil {
			return nil, err
		}
		b.idx, b.kids = idx, kids
	case *schema.ArrayType:
		var ef arrow.Field
		switch l := at.(type) {
		case *arrow.ListType:
			ef = l.ElemField()
		case *arrow.LargeListType:
			ef = l.ElemField()
		default:
			return bad()
		}
		k, err := bind(ef.Type, t.ElementType, path+".element")
		if err != nil {
			return nil, err
		}
		b.kids = []*binding{k}
	case *schema.MapType:
		m, ok := at.(*arrow.MapType)
		if !ok {
			return bad()
		}
		k, err := bind(m.KeyType(), t.KeyType, path+".key")
		if err != nil {
			return nil, err
		}
		v, err := bind(m.ItemType(), t.ValueType, path+".value")
		if err != nil {
			return nil, err
		}
		b.kids = []*binding{k, v}
	default:
		return nil, fmt.Errorf("column %q of type %s: %w", path, dt, ErrUnsupportedType)
	}
	return b, nil
}

var variantStruct = &schema.StructType{Fields: []schema.StructField{
	{Name: "metadata", Type: schema.Binary, Nullable: false},
	{Name: "value", Type: schema.Binary, Nullable: false},
}}

// Batches converts the records of r to batches of the table schema sch
// (logical rows in table schema order, partition columns included), the
// form package write and delta.Table.Append take. The Arrow schema is
// matched to sch by name first (a *SchemaError when it does not fit), so a
// bad schema is reported before any row is written. Each batch's values
// own their memory: they stay valid after the record is released.
// Batches does not release r.
func Batches(sch *schema.StructType, r array.RecordReader) (iter.Seq2[schema.Batch, error], error) {
	idx, kids, err := bindFields(r.Schema().Fields(), sch, "")
	if err != nil {
		return nil, err
	}
	return func(yield func(schema.Batch, error) bool) {
		for r.Next() {
			rec := r.RecordBatch()
			b, err := recordBatch(rec, idx, kids)
			if !yield(b, err) || err != nil {
				return
			}
		}
		if err := r.Err(); err != nil {
			yield(schema.Batch{}, err)
		}
	}, nil
}

// FromRecord converts one record to a batch of the table schema sch,
// as Batches does.
func FromRecord(sch *schema.StructType, rec arrow.RecordBatch) (schema.Batch, error) {
	idx, kids, err := bindFields(rec.Schema().Fields(), sch, "")
	if err != nil {
		return schema.Batch{}, err
	}
	return recordBatch(rec, idx, kids)
}

func recordBatch(rec arrow.RecordBatch, idx []int, kids []*binding) (schema.Batch, error) {
	n := int(rec.NumRows())
	all := make([]schema.Value, n*len(idx))
	b := schema.Batch{Len: n, Columns: make([][]schema.Value, len(idx))}
	for j := range idx {
		col := all[j*n : (j+1)*n : (j+1)*n]
		b.Columns[j] = col
		if idx[j] < 0 {
			continue
		}
		if err := columnValues(rec.Column(idx[j]), kids[j], col); err != nil {
			return schema.Batch{}, err
		}
	}
	return b, nil
}

// columnValues fills out with the values of arr: the type is switched on
// once, the loop is typed.
func columnValues(arr arrow.Array, b *binding, out []schema.Value) error {
	nulls := arr.NullN() > 0
	switch a := arr.(type) {
	case *array.Null:
		return nil
	case *array.Boolean:
		for i := range out {
			if !nulls || a.IsValid(i) {
				out[i] = schema.BooleanValue(a.Value(i))
			}
		}
	case *array.Int8:
		fillInts(out, a.Int8Values(), a, nulls, b.delta)
	case *array.Int16:
		fillInts(out, a.Int16Values(), a, nulls, b.delta)
	case *array.Int32:
		fillInts(out, a.Int32Values(), a, nulls, b.delta)
	case *array.Int64:
		fillInts(out, a.Int64Values(), a, nulls, b.delta)
	case *array.Float32:
		vs := a.Float32Values()
		for i := range out {
			if !nulls || a.IsValid(i) {
				if b.delta == schema.Double {
					out[i] = schema.DoubleValue(float64(vs[i]))
				} else {
					out[i] = schema.FloatValue(vs[i])
				}
			}
		}
	case *array.Float64:
		vs := a.Float64Values()
		for i := range out {
			if !nulls || a.IsValid(i) {
				out[i] = schema.DoubleValue(vs[i])
			}
		}
	case *array.Date32:
		vs := a.Date32Values()
		for i := range out {
			if !nulls || a.IsValid(i) {
				out[i] = schema.DateValue(int32(vs[i]))
			}
		}
	case *array.Timestamp:
		vs := a.TimestampValues()
		ntz := b.delta == schema.TimestampNTZ
		for i := range out {
			if nulls && a.IsNull(i) {
				continue
			}
			us := int64(vs[i])
			switch {
			case b.div:
				if us%b.unit != 0 {
					return mismatch(b.path, "row %d: %d ns is not a whole number of microseconds, the precision of Delta timestamps", i, us)
				}
				us /= b.unit
			case b.unit != 1:
				hi := us * b.unit
				if hi/b.unit != us {
					return mismatch(b.path, "row %d: timestamp out of range", i)
				}
				us = hi
			}
			if ntz {
				out[i] = schema.TimestampNTZValue(us)
			} else {
				out[i] = schema.TimestampValue(us)
			}
		}
	case *array.String:
		for i := range out {
			if !nulls || a.IsValid(i) {
				out[i] = schema.StringValue(strings.Clone(a.Value(i)))
			}
		}
	case *array.LargeString:
		for i := range out {
			if !nulls || a.IsValid(i) {
				out[i] = schema.StringValue(strings.Clone(a.Value(i)))
			}
		}
	case *array.StringView:
		for i := range out {
			if !nulls || a.IsValid(i) {
				out[i] = schema.StringValue(strings.Clone(a.Value(i)))
			}
		}
	case *array.Binary:
		for i := range out {
			if !nulls || a.IsValid(i) {
				out[i] = schema.BinaryValue(a.Value(i))
			}
		}
	case *array.LargeBinary:
		for i := range out {
			if !nulls || a.IsValid(i) {
				out[i] = schema.BinaryValue(a.Value(i))
			}
		}
	case *array.BinaryView:
		for i := range out {
			if !nulls || a.IsValid(i) {
				out[i] = schema.BinaryValue(a.Value(i))
			}
		}
	case *array.FixedSizeBinary:
		for i := range out {
			if !nulls || a.IsValid(i) {
				out[i] = schema.BinaryValue(a.Value(i))
			}
		}
	case *array.Decimal128:
		dt := b.delta.(schema.DecimalType)
		for i := range out {
			if nulls && a.IsNull(i) {
				continue
			}
			n := a.Value(i)
			var v schema.Value
			var err error
			if hi := n.HighBits(); (hi == 0 && n.LowBits() < 1<<63) || (hi == -1 && n.LowBits() >= 1<<63) {
				v, err = schema.DecimalValueInt64(int64(n.LowBits()), dt.Precision, dt.Scale)
			} else {
				v, err = schema.DecimalValue(n.BigInt(), dt.Precision, dt.Scale)
			}
			if err != nil {
				return mismatch(b.path, "row %d: %v", i, err)
			}
			out[i] = v
		}
	case *array.Decimal256:
		dt := b.delta.(schema.DecimalType)
		for i := range out {
			if nulls && a.IsNull(i) {
				continue
			}
			v, err := schema.DecimalValue(a.Value(i).BigInt(), dt.Precision, dt.Scale)
			if err != nil {
				return mismatch(b.path, "row %d: %v", i, err)
			}
			out[i] = v
		}
	default:
		return nestedValues(arr, b, out)
	}
	return nil
}

type validityChecker interface{ IsValid(int) bool }

func fillInts[T int8 | int16 | int32 | int64](out []schema.Value, vs []T, a validityChecker, nulls bool, t schema.DataType) {
	for i := range out {
		if nulls && !a.IsValid(i) {
			continue
		}
		x := int64(vs[i])
		switch t {
		case schema.Byte:
			out[i] = schema.ByteValue(int8(x))
		case schema.Short:
			out[i] = schema.ShortValue(int16(x))
		case schema.Integer:
			out[i] = schema.IntegerValue(int32(x))
		default:
			out[i] = schema.LongValue(x)
		}
	}
}

// nestedValues fills out with the values of a struct, list or map array,
// converting each child array column-wise once and slicing it per row.
func nestedValues(arr arrow.Array, b *binding, out []schema.Value) error {
	switch a := arr.(type) {
	case *array.Struct:
		cols := make([][]schema.Value, len(b.idx))
		for j, k := range b.idx {
			if k < 0 {
				continue
			}
			cols[j] = make([]schema.Value, len(out))
			if err := columnValues(a.Field(k), b.kids[j], cols[j]); err != nil {
				return err
			}
		}
		all := make([]schema.Value, len(out)*len(cols))
		for i := range out {
			if a.IsNull(i) {
				continue
			}
			fields := all[i*len(cols) : (i+1)*len(cols) : (i+1)*len(cols)]
			for j, c := range cols {
				if c != nil {
					fields[j] = c[i]
				}
			}
			out[i] = schema.StructValue(fields)
		}
	case *array.Map:
		if len(out) == 0 {
			return nil
		}
		first, _ := a.ValueOffsets(0)
		_, last := a.ValueOffsets(len(out) - 1)
		keys, err := childValues(a.Keys(), first, last, b.kids[0])
		if err != nil {
			return err
		}
		items, err := childValues(a.Items(), first, last, b.kids[1])
		if err != nil {
			return err
		}
		kv := make([]schema.Value, 2*len(keys))
		for e := range keys {
			kv[2*e], kv[2*e+1] = keys[e], items[e]
		}
		for i := range out {
			if a.IsNull(i) {
				continue
			}
			start, end := a.ValueOffsets(i)
			out[i] = schema.MapValue(kv[2*(start-first) : 2*(end-first) : 2*(end-first)])
		}
	case array.ListLike:
		if len(out) == 0 {
			return nil
		}
		first, _ := a.ValueOffsets(0)
		_, last := a.ValueOffsets(len(out) - 1)
		elems, err := childValues(a.ListValues(), first, last, b.kids[0])
		if err != nil {
			return err
		}
		for i := range out {
			if a.IsNull(i) {
				continue
			}
			start, end := a.ValueOffsets(i)
			out[i] = schema.ArrayValue(elems[start-first : end-first : end-first])
		}
	default:
		return mismatch(b.path, "arrow type %s is not supported", arr.DataType())
	}
	return nil
}

// childValues converts the values [start, end) of a child array.
func childValues(arr arrow.Array, start, end int64, b *binding) ([]schema.Value, error) {
	out := make([]schema.Value, end-start)
	sl := array.NewSlice(arr, start, end)
	defer sl.Release()
	if err := columnValues(sl, b, out); err != nil {
		return nil, err
	}
	return out, nil
}

// Package govalue maps Go struct values to and from rows of schema.Values:
// the one binding that the typed read (scan.All) and the typed write
// (write.StructBatches, delta.AppendStructs) share, so that a struct read
// from a table can be written back to it unchanged, and the reverse.
//
// # Binding
//
// Each exported field of a struct takes the column named by its
// `parquet:"name"` tag (the part before any comma), else the column whose
// name equals the field's, ignoring case; `parquet:"-"` fields take no
// column. Columns match by name, never by position. Bind computes the
// table once per struct type and schema; a Mapper keeps the tables of the
// nested structs it meets.
//
// Reading leaves a field with no column alone. Writing refuses one
// (ErrNoColumn) unless it is tagged `parquet:"-"`: a field whose value
// would be silently dropped is a mistake. A column with no field is
// written as null; whether a null is allowed is the writer's business
// (a NOT NULL column gives its *ConstraintError).
//
// # Conversions
//
// Assign converts a value of a Delta type into a Go value; Value converts
// a Go value into a value of a Delta type. Both accept, for each Delta
// type:
//
//   - byte, short, integer, long: any Go integer type. Writing checks that
//     the value fits the column's width, reading that it fits the field.
//   - float, double: float32 and float64 (a float64 written to a float
//     column must be within float32's range; it is rounded to float32).
//   - decimal(p,s): *big.Rat, big.Rat, string and float64, and Go integers
//     when writing. Writing is exact: the value times 10^s must be an
//     integer of at most p digits, else ErrMismatch (a float64 is taken as
//     the shortest decimal that reads back as it, so 0.1 is 0.1).
//   - string: string. binary: []byte (and string).
//   - boolean: bool.
//   - date: time.Time. Writing takes the calendar date of the time in its
//     own location; reading gives midnight UTC.
//   - timestamp: time.Time, the instant, truncated down to microseconds;
//     reading gives UTC.
//   - timestamp_ntz: time.Time, its wall clock in its own location,
//     truncated down to microseconds; reading gives that wall clock in UTC.
//   - struct: a Go struct, bound by the rules above, recursively.
//   - array: a slice (an array too, when writing); map: a map.
//
// A pointer is null when nil and its target otherwise; a nil slice or map
// is null, an empty one is empty; a field of type any takes (reading) a
// plain Go value or gives (writing) its dynamic value. A field of type
// schema.Value is taken as it is. Variant, void, geometry and geography
// columns have no Go mapping for writing. A value that does not fit gives
// ErrMismatch, which matches deltaerr.ErrInvalidArgument.
//
// This package sits below both scan and write (it imports only schema and
// deltaerr): reading never depends on writing, and neither does the
// mapping.
//
// A Mapper is not safe for concurrent use: give each goroutine its own. Bind
// and GoValue hold no state. The example writes a struct to a row and reads
// it back.
package govalue

import (
	"cmp"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
)

// Errors of this package. Both match deltaerr.ErrInvalidArgument.
var (
	// ErrMismatch is returned for a value that does not fit: a Go value of
	// a type that cannot hold or give the column's Delta type, an integer
	// out of range, a decimal with more digits or fraction digits than its
	// column holds.
	ErrMismatch = fmt.Errorf("govalue: value does not fit: %w", deltaerr.ErrInvalidArgument)
	// ErrNoColumn is returned when writing a struct with an exported field
	// that no column takes and that is not tagged `parquet:"-"`.
	ErrNoColumn = fmt.Errorf("govalue: struct field has no column: %w", deltaerr.ErrInvalidArgument)
	// ErrNotStruct is returned for a type that is not a struct where a
	// struct is needed.
	ErrNotStruct = fmt.Errorf("govalue: not a struct type: %w", deltaerr.ErrInvalidArgument)
)

// Binding is how the fields of one Go struct type match the fields of one
// schema struct.
type Binding struct {
	// Columns[i] is the index of the Go struct field that takes field i
	// of the schema, or -1 when none does.
	Columns []int
	// Unbound are the indexes of the exported Go fields that no column
	// takes and that are not tagged `parquet:"-"`, in field order.
	Unbound []int
}

// Bind matches the exported fields of struct type rt to the fields of sch
// (see the package doc). A tag beats a name match: a column named by a
// field's tag goes to that field even when another field's name matches
// it too.
func Bind(rt reflect.Type, sch *schema.StructType) Binding {
	b := Binding{Columns: make([]int, len(sch.Fields))}
	for i := range b.Columns {
		b.Columns[i] = -1
	}
	byName := map[string]int{}
	byFold := map[string]int{}
	var candidates []int
	for i := range rt.NumField() {
		f := rt.Field(i)
		if !f.IsExported() {
			continue
		}
		tag, _, _ := strings.Cut(f.Tag.Get("parquet"), ",")
		switch tag {
		case "-":
			continue
		case "":
			if _, ok := byFold[strings.ToLower(f.Name)]; !ok {
				byFold[strings.ToLower(f.Name)] = i
			}
		default:
			if _, ok := byName[tag]; !ok {
				byName[tag] = i
			}
		}
		candidates = append(candidates, i)
	}
	taken := make(map[int]bool, len(candidates))
	for c, sf := range sch.Fields {
		if i, ok := byName[sf.Name]; ok && !taken[i] {
			b.Columns[c] = i
			taken[i] = true
		}
	}
	for c, sf := range sch.Fields {
		if b.Columns[c] >= 0 {
			continue
		}
		if i, ok := byFold[strings.ToLower(sf.Name)]; ok && !taken[i] {
			b.Columns[c] = i
			taken[i] = true
		}
	}
	for _, i := range candidates {
		if !taken[i] {
			b.Unbound = append(b.Unbound, i)
		}
	}
	return b
}

// Mapper converts values of one or more struct types, keeping the binding
// of every struct type and schema struct it meets so that nested structs
// are bound once, not once per row. The zero Mapper is ready to use. A
// Mapper is not safe for concurrent use.
type Mapper struct {
	bindings map[bindKey]Binding
}

type bindKey struct {
	rt  reflect.Type
	sch *schema.StructType
}

// Bind is the package's Bind, remembered.
func (m *Mapper) Bind(rt reflect.Type, sch *schema.StructType) Binding {
	k := bindKey{rt, sch}
	if b, ok := m.bindings[k]; ok {
		return b
	}
	if m.bindings == nil {
		m.bindings = map[bindKey]Binding{}
	}
	b := Bind(rt, sch)
	m.bindings[k] = b
	return b
}

var (
	timeType   = reflect.TypeFor[time.Time]()
	ratType    = reflect.TypeFor[big.Rat]()
	ratPtrType = reflect.TypeFor[*big.Rat]()
	valueType  = reflect.TypeFor[schema.Value]()
)

// ---- reading: schema.Value to Go ----

// Assign stores v, of Delta type t, into dst, which must be settable. A
// null sets dst to its zero value. A value that does not fit dst's type is
// ErrMismatch.
func (m *Mapper) Assign(dst reflect.Value, v schema.Value, t schema.DataType) error {
	if dst.Type() == valueType {
		dst.Set(reflect.ValueOf(v))
		return nil
	}
	if v.IsNull() {
		dst.SetZero()
		return nil
	}
	mismatch := func() error {
		return fmt.Errorf("%w: %s value %s does not fit Go type %s", ErrMismatch, v.Kind(), truncate(v.String()), dst.Type())
	}
	switch dst.Type() {
	case timeType:
		switch v.Kind() {
		case schema.KindTimestamp, schema.KindTimestampNTZ:
			dst.Set(reflect.ValueOf(time.UnixMicro(v.Int64()).UTC()))
		case schema.KindDate:
			dst.Set(reflect.ValueOf(time.Unix(v.Int64()*86400, 0).UTC()))
		default:
			return mismatch()
		}
		return nil
	case ratType, ratPtrType:
		if v.Kind() != schema.KindDecimal {
			return mismatch()
		}
		r := decimalRat(v)
		if dst.Type() == ratType {
			dst.Set(reflect.ValueOf(r).Elem())
		} else {
			dst.Set(reflect.ValueOf(r))
		}
		return nil
	}
	switch dst.Kind() {
	case reflect.Pointer:
		p := reflect.New(dst.Type().Elem())
		if err := m.Assign(p.Elem(), v, t); err != nil {
			return err
		}
		dst.Set(p)
	case reflect.Bool:
		if v.Kind() != schema.KindBoolean {
			return mismatch()
		}
		dst.SetBool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if !isIntKind(v.Kind()) || dst.OverflowInt(v.Int64()) {
			return mismatch()
		}
		dst.SetInt(v.Int64())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if !isIntKind(v.Kind()) || v.Int64() < 0 || dst.OverflowUint(uint64(v.Int64())) {
			return mismatch()
		}
		dst.SetUint(uint64(v.Int64()))
	case reflect.Float32, reflect.Float64:
		switch {
		case v.Kind() == schema.KindFloat || v.Kind() == schema.KindDouble:
			f := v.Float64()
			if dst.Kind() == reflect.Float32 && !math.IsInf(f, 0) && !math.IsNaN(f) && math.Abs(f) > math.MaxFloat32 {
				return mismatch()
			}
			dst.SetFloat(f)
		case isIntKind(v.Kind()):
			dst.SetFloat(float64(v.Int64()))
		case v.Kind() == schema.KindDecimal:
			f, _ := decimalRat(v).Float64()
			dst.SetFloat(f)
		default:
			return mismatch()
		}
	case reflect.String:
		switch v.Kind() {
		case schema.KindStruct, schema.KindArray, schema.KindMap:
			return mismatch()
		}
		dst.SetString(v.String())
	case reflect.Slice:
		if dst.Type().Elem().Kind() == reflect.Uint8 && (v.Kind() == schema.KindBinary || v.Kind() == schema.KindString) {
			dst.SetBytes(v.Bytes())
			return nil
		}
		if v.Kind() != schema.KindArray {
			return mismatch()
		}
		var et schema.DataType
		if at, ok := t.(*schema.ArrayType); ok {
			et = at.ElementType
		}
		elems := v.Elements()
		s := reflect.MakeSlice(dst.Type(), len(elems), len(elems))
		for i, e := range elems {
			if err := m.Assign(s.Index(i), e, et); err != nil {
				return err
			}
		}
		dst.Set(s)
	case reflect.Map:
		if v.Kind() != schema.KindMap {
			return mismatch()
		}
		var kt, vt schema.DataType
		if mt, ok := t.(*schema.MapType); ok {
			kt, vt = mt.KeyType, mt.ValueType
		}
		out := reflect.MakeMapWithSize(dst.Type(), v.MapLen())
		for i := range v.MapLen() {
			k, val := v.MapEntry(i)
			kv := reflect.New(dst.Type().Key()).Elem()
			if err := m.Assign(kv, k, kt); err != nil {
				return err
			}
			vv := reflect.New(dst.Type().Elem()).Elem()
			if err := m.Assign(vv, val, vt); err != nil {
				return err
			}
			out.SetMapIndex(kv, vv)
		}
		dst.Set(out)
	case reflect.Struct:
		st, ok := t.(*schema.StructType)
		if v.Kind() != schema.KindStruct || !ok {
			return mismatch()
		}
		b := m.Bind(dst.Type(), st)
		vals := v.Fields()
		for c, fi := range b.Columns {
			if fi < 0 || c >= len(vals) {
				continue
			}
			if err := m.Assign(dst.Field(fi), vals[c], st.Fields[c].Type); err != nil {
				return err
			}
		}
	case reflect.Interface:
		if dst.NumMethod() != 0 {
			return mismatch()
		}
		dst.Set(reflect.ValueOf(GoValue(v)))
	default:
		return mismatch()
	}
	return nil
}

func isIntKind(k schema.Kind) bool {
	return k == schema.KindByte || k == schema.KindShort || k == schema.KindInteger || k == schema.KindLong
}

// decimalRat returns a decimal value as a *big.Rat.
func decimalRat(v schema.Value) *big.Rat {
	u, _, scale := v.Decimal()
	return new(big.Rat).SetFrac(u, pow10(scale))
}

func pow10(n int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

// GoValue returns v as a plain Go value, as a field of type any takes it:
// nil, bool, int64 (every integer), float64, string, []byte, time.Time
// (dates and timestamps, UTC), *big.Rat, []any (arrays and structs, the
// fields in schema order) or map[any]any (binary keys as strings, nested
// keys in their display form).
func GoValue(v schema.Value) any {
	switch v.Kind() {
	case schema.KindNull:
		return nil
	case schema.KindBoolean:
		return v.Bool()
	case schema.KindByte, schema.KindShort, schema.KindInteger, schema.KindLong:
		return v.Int64()
	case schema.KindFloat, schema.KindDouble:
		return v.Float64()
	case schema.KindBinary:
		return v.Bytes()
	case schema.KindDate:
		return time.Unix(v.Int64()*86400, 0).UTC()
	case schema.KindTimestamp, schema.KindTimestampNTZ:
		return time.UnixMicro(v.Int64()).UTC()
	case schema.KindDecimal:
		return decimalRat(v)
	case schema.KindArray, schema.KindStruct:
		src := v.Elements()
		if v.Kind() == schema.KindStruct {
			src = v.Fields()
		}
		out := make([]any, len(src))
		for i, e := range src {
			out[i] = GoValue(e)
		}
		return out
	case schema.KindMap:
		out := make(map[any]any, v.MapLen())
		for i := range v.MapLen() {
			k, val := v.MapEntry(i)
			key := GoValue(k)
			switch kk := key.(type) {
			case []byte:
				key = string(kk) // slices cannot be map keys
			case []any, map[any]any:
				key = k.String()
			}
			out[key] = GoValue(val)
		}
		return out
	}
	return v.String()
}

func truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// ---- writing: Go to schema.Value ----

// maxIndirections is the most pointers and interfaces Value follows to
// reach one value.
const maxIndirections = 64

// Value converts src, a Go value, into a value of Delta type t (see the
// package doc). A nil pointer, interface, slice or map, or an invalid
// reflect.Value, gives null: whether the column allows it is for the
// caller to check.
func (m *Mapper) Value(src reflect.Value, t schema.DataType) (schema.Value, error) {
	for depth := 0; ; depth++ {
		if !src.IsValid() {
			return schema.Value{}, nil
		}
		if depth > maxIndirections { // a pointer cycle, as var x any; x = &x
			return schema.Value{}, fmt.Errorf("%w: more than %d pointers or interfaces in a row", ErrMismatch, maxIndirections)
		}
		if src.Type() == valueType {
			return src.Interface().(schema.Value), nil
		}
		switch src.Kind() {
		case reflect.Pointer, reflect.Interface:
			if src.IsNil() {
				return schema.Value{}, nil
			}
			src = src.Elem()
			continue
		case reflect.Slice, reflect.Map:
			if src.IsNil() {
				return schema.Value{}, nil
			}
		}
		break
	}
	mismatch := func(why string) error {
		if why == "" {
			why = "cannot be written as " + typeName(t)
		}
		return fmt.Errorf("%w: Go %s %s", ErrMismatch, src.Type(), why)
	}
	switch t := t.(type) {
	case schema.PrimitiveType:
		switch t {
		case schema.Boolean:
			if src.Kind() != reflect.Bool {
				return schema.Value{}, mismatch("")
			}
			return schema.BooleanValue(src.Bool()), nil
		case schema.Byte, schema.Short, schema.Integer, schema.Long:
			x, ok := intOf(src)
			if !ok {
				if isInt(src) {
					return schema.Value{}, mismatch(fmt.Sprintf("%d is out of range of %s", src.Uint(), t))
				}
				return schema.Value{}, mismatch("")
			}
			switch t {
			case schema.Byte:
				if x < math.MinInt8 || x > math.MaxInt8 {
					return schema.Value{}, mismatch(fmt.Sprintf("%d is out of range of byte", x))
				}
				return schema.ByteValue(int8(x)), nil
			case schema.Short:
				if x < math.MinInt16 || x > math.MaxInt16 {
					return schema.Value{}, mismatch(fmt.Sprintf("%d is out of range of short", x))
				}
				return schema.ShortValue(int16(x)), nil
			case schema.Integer:
				if x < math.MinInt32 || x > math.MaxInt32 {
					return schema.Value{}, mismatch(fmt.Sprintf("%d is out of range of integer", x))
				}
				return schema.IntegerValue(int32(x)), nil
			}
			return schema.LongValue(x), nil
		case schema.Float, schema.Double:
			if src.Kind() != reflect.Float32 && src.Kind() != reflect.Float64 {
				return schema.Value{}, mismatch("")
			}
			f := src.Float()
			if t == schema.Double {
				return schema.DoubleValue(f), nil
			}
			if !math.IsInf(f, 0) && !math.IsNaN(f) && math.Abs(f) > math.MaxFloat32 {
				return schema.Value{}, mismatch(fmt.Sprintf("%g is out of range of float", f))
			}
			return schema.FloatValue(float32(f)), nil
		case schema.String:
			if src.Kind() != reflect.String {
				return schema.Value{}, mismatch("")
			}
			return schema.StringValue(src.String()), nil
		case schema.Binary:
			switch {
			case src.Kind() == reflect.String:
				return schema.BinaryValueString(src.String()), nil
			case src.Kind() == reflect.Slice && src.Type().Elem().Kind() == reflect.Uint8:
				return schema.BinaryValue(src.Bytes()), nil
			}
			return schema.Value{}, mismatch("")
		case schema.Date, schema.Timestamp, schema.TimestampNTZ:
			if src.Type() != timeType {
				return schema.Value{}, mismatch("")
			}
			return timeValue(src.Interface().(time.Time), t, mismatch)
		}
		return schema.Value{}, mismatch("")
	case schema.DecimalType:
		return decimalOf(src, t, mismatch)
	case *schema.StructType:
		if src.Kind() != reflect.Struct || src.Type() == timeType || src.Type() == ratType {
			return schema.Value{}, mismatch("")
		}
		fields, err := m.StructFields(src, t)
		if err != nil {
			return schema.Value{}, err
		}
		return schema.StructValue(fields), nil
	case *schema.ArrayType:
		if src.Kind() != reflect.Slice && src.Kind() != reflect.Array {
			return schema.Value{}, mismatch("")
		}
		elems := make([]schema.Value, src.Len())
		for i := range elems {
			e, err := m.Value(src.Index(i), t.ElementType)
			if err != nil {
				return schema.Value{}, fmt.Errorf("element %d: %w", i, err)
			}
			elems[i] = e
		}
		return schema.ArrayValue(elems), nil
	case *schema.MapType:
		if src.Kind() != reflect.Map {
			return schema.Value{}, mismatch("")
		}
		type entry struct{ k, v schema.Value }
		entries := make([]entry, 0, src.Len())
		it := src.MapRange()
		for it.Next() {
			k, err := m.Value(it.Key(), t.KeyType)
			if err != nil {
				return schema.Value{}, fmt.Errorf("map key: %w", err)
			}
			v, err := m.Value(it.Value(), t.ValueType)
			if err != nil {
				return schema.Value{}, fmt.Errorf("map value of key %s: %w", truncate(k.String()), err)
			}
			entries = append(entries, entry{k, v})
		}
		// Go maps have no order; sorting the keys makes the file the same
		// for the same map.
		slices.SortFunc(entries, func(a, b entry) int { return compareKeys(a.k, b.k) })
		kv := make([]schema.Value, 0, 2*len(entries))
		for _, e := range entries {
			kv = append(kv, e.k, e.v)
		}
		return schema.MapValue(kv), nil
	}
	return schema.Value{}, mismatch("")
}

// StructFields converts a Go struct into the values of the fields of st,
// in schema order: a field with no Go field is null; a Go field with no
// column is ErrNoColumn.
func (m *Mapper) StructFields(src reflect.Value, st *schema.StructType) ([]schema.Value, error) {
	b := m.Bind(src.Type(), st)
	if len(b.Unbound) > 0 {
		return nil, NoColumnError(src.Type(), b.Unbound[0])
	}
	out := make([]schema.Value, len(st.Fields))
	for c, fi := range b.Columns {
		if fi < 0 {
			continue
		}
		v, err := m.Value(src.Field(fi), st.Fields[c].Type)
		if err != nil {
			return nil, fmt.Errorf("field %s (column %s): %w", src.Type().Field(fi).Name, st.Fields[c].Name, err)
		}
		out[c] = v
	}
	return out, nil
}

// NoColumnError returns the ErrNoColumn error for field i of struct type
// rt.
func NoColumnError(rt reflect.Type, i int) error {
	return fmt.Errorf("%w: %s.%s (tag it `parquet:\"-\"` to leave it out)", ErrNoColumn, rt.Name(), rt.Field(i).Name)
}

// typeName names t for errors: nested types by their kind, not their
// JSON.
func typeName(t schema.DataType) string {
	switch t.(type) {
	case nil:
		return "<nil type>"
	case *schema.StructType:
		return "struct"
	case *schema.ArrayType:
		return "array"
	case *schema.MapType:
		return "map"
	}
	return t.String()
}

func isInt(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false
}

// intOf returns the value of a Go integer as an int64; false for another
// kind or an unsigned value above math.MaxInt64.
func intOf(v reflect.Value) (int64, bool) {
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int(), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if u := v.Uint(); u <= math.MaxInt64 {
			return int64(u), true
		}
	}
	return 0, false
}

// The range of years whose instants fit in int64 microseconds, with room.
const maxMicrosYear = 290_000

func timeValue(tm time.Time, t schema.PrimitiveType, mismatch func(string) error) (schema.Value, error) {
	if y := tm.Year(); y < -maxMicrosYear || y > maxMicrosYear {
		return schema.Value{}, mismatch(fmt.Sprintf("year %d is out of range of %s", y, t))
	}
	switch t {
	case schema.Date:
		y, mo, d := tm.Date()
		days := time.Date(y, mo, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
		return schema.DateValue(int32(days)), nil
	case schema.Timestamp:
		return schema.TimestampValue(tm.UnixMicro()), nil
	}
	y, mo, d := tm.Date()
	h, mi, s := tm.Clock()
	return schema.TimestampNTZValue(time.Date(y, mo, d, h, mi, s, tm.Nanosecond(), time.UTC).UnixMicro()), nil
}

// decimalOf converts src exactly to a decimal of type dt.
func decimalOf(src reflect.Value, dt schema.DecimalType, mismatch func(string) error) (schema.Value, error) {
	r := new(big.Rat)
	switch {
	case src.Type() == ratType:
		rv := src.Interface().(big.Rat)
		r.Set(&rv)
	case src.Kind() == reflect.String:
		if _, ok := r.SetString(strings.TrimSpace(src.String())); !ok {
			return schema.Value{}, mismatch(fmt.Sprintf("%q is not a decimal number", truncate(src.String())))
		}
	case src.Kind() == reflect.Float32 || src.Kind() == reflect.Float64:
		f := src.Float()
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return schema.Value{}, mismatch(fmt.Sprintf("%g is not a decimal number", f))
		}
		bits := 64
		if src.Kind() == reflect.Float32 {
			bits = 32
		}
		r.SetString(strconv.FormatFloat(f, 'f', -1, bits))
	case isInt(src):
		if x, ok := intOf(src); ok {
			r.SetInt64(x)
		} else {
			r.SetInt(new(big.Int).SetUint64(src.Uint()))
		}
	default:
		return schema.Value{}, mismatch("")
	}
	scaled := r.Mul(r, new(big.Rat).SetInt(pow10(dt.Scale)))
	if !scaled.IsInt() {
		return schema.Value{}, mismatch(fmt.Sprintf("value has more than %d fraction digits, the scale of %s", dt.Scale, dt))
	}
	v, err := schema.DecimalValue(scaled.Num(), dt.Precision, dt.Scale)
	if err != nil {
		return schema.Value{}, mismatch(fmt.Sprintf("value has more than %d digits, the precision of %s", dt.Precision, dt))
	}
	return v, nil
}

// compareKeys orders map keys: numbers by value, everything else by its
// display form.
func compareKeys(a, b schema.Value) int {
	switch {
	case isIntKind(a.Kind()) && isIntKind(b.Kind()),
		a.Kind() == b.Kind() && (a.Kind() == schema.KindDate || a.Kind() == schema.KindTimestamp || a.Kind() == schema.KindTimestampNTZ):
		return cmp.Compare(a.Int64(), b.Int64())
	case (a.Kind() == schema.KindFloat || a.Kind() == schema.KindDouble) && a.Kind() == b.Kind():
		return cmp.Compare(a.Float64(), b.Float64())
	case a.Kind() == schema.KindDecimal && b.Kind() == schema.KindDecimal:
		return decimalRat(a).Cmp(decimalRat(b))
	}
	return strings.Compare(a.String(), b.String())
}

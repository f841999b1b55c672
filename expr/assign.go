package expr

// Store assignment: how MERGE and UPDATE store a value into a column,
// nested columns included.
//
// # Rule
//
// Delta's MERGE and UPDATE (UpdateExpressionsSupport.castIfNeeded, with
// spark.databricks.delta.resolveMergeUpdateStructsByName.enabled, true by
// default) store a value into a column of another type as follows, and so
// does NewAssigner:
//
//   - A value whose type is the column's (SameType: the same structure
//     and leaf types, struct field names equal ignoring case, in the same
//     order; nullability and field metadata such as column mapping ids
//     and physical names ignored) is stored as it is.
//   - A struct is stored into a struct field by field BY NAME (ignoring
//     case), whatever the order of the fields, each field recursively.
//     The two must have the same fields: a column field the value lacks,
//     or a value field the column lacks, is ErrAssign (Spark fills a
//     missing field with null only with schema evolution, which this
//     package does not do; an extra field would be lost).
//   - An array is stored element by element, a map key by key and value
//     by value, recursively.
//   - A null struct, array or map stays null (Spark's preserve-null-source-
//     structs fix); null fields, elements and map values stay null.
//   - A leaf (a primitive or decimal value) of another type goes through
//     CAST; a non-null value that CAST makes null (text that is not a
//     number) is ErrAssign, as ANSI store assignment fails it. A nested
//     value into a leaf column, or a leaf into a nested one, is ErrAssign.
//
// Nullability is not checked here: the row writer checks NOT NULL on
// every row written, nested fields included.
//
// CAST itself (CastValue) converts structs by position, as Spark's CAST
// does; only store assignment matches names.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
)

// ErrAssign is returned by NewAssigner for types a value cannot be stored
// across (a struct field missing on either side, a struct into an array),
// and by an Assigner for a value that does not convert; it matches
// deltaerr.ErrInvalidArgument. Its text is not repeated in the messages,
// which name the column and the two types.
var ErrAssign = deltaerr.Mark(errors.New("cannot store value"), deltaerr.ErrInvalidArgument)

// Assigner converts a value to a column's type by store assignment (see
// NewAssigner). It is safe for concurrent use.
type Assigner func(v schema.Value) (schema.Value, error)

// TypeName returns t as Spark's simpleString writes it: int, bigint,
// decimal(10,2), struct<a:int,b:string>, array<int>, map<string,int>.
// Field metadata is not shown. A nil type is void.
func TypeName(t schema.DataType) string {
	return string(appendTypeName(nil, t))
}

func appendTypeName(b []byte, t schema.DataType) []byte {
	switch t := t.(type) {
	case nil:
		return append(b, "void"...)
	case *schema.StructType:
		b = append(b, "struct<"...)
		for i, f := range t.Fields {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, f.Name...)
			b = append(b, ':')
			b = appendTypeName(b, f.Type)
		}
		return append(b, '>')
	case *schema.ArrayType:
		b = append(b, "array<"...)
		return append(appendTypeName(b, t.ElementType), '>')
	case *schema.MapType:
		b = append(b, "map<"...)
		b = appendTypeName(b, t.KeyType)
		b = append(b, ',')
		return append(appendTypeName(b, t.ValueType), '>')
	case schema.DecimalType:
		return fmt.Appendf(b, "decimal(%d,%d)", t.Precision, t.Scale)
	}
	switch t {
	case schema.Byte:
		return append(b, "tinyint"...)
	case schema.Short:
		return append(b, "smallint"...)
	case schema.Integer:
		return append(b, "int"...)
	case schema.Long:
		return append(b, "bigint"...)
	}
	return append(b, t.String()...)
}

// SameType reports whether a value of type a can be stored as it is in a
// column of type b: the same structure and leaf types, struct fields of
// the same names (ignoring case) in the same order. Nullability and field
// metadata (column mapping ids and physical names, comments) do not
// count. A nil type is the same as nothing.
func SameType(a, b schema.DataType) bool {
	if a == nil || b == nil {
		return false
	}
	switch at := a.(type) {
	case *schema.StructType:
		bt, ok := b.(*schema.StructType)
		if !ok || len(at.Fields) != len(bt.Fields) {
			return false
		}
		for i := range at.Fields {
			if !strings.EqualFold(at.Fields[i].Name, bt.Fields[i].Name) || !SameType(at.Fields[i].Type, bt.Fields[i].Type) {
				return false
			}
		}
		return true
	case *schema.ArrayType:
		bt, ok := b.(*schema.ArrayType)
		return ok && SameType(at.ElementType, bt.ElementType)
	case *schema.MapType:
		bt, ok := b.(*schema.MapType)
		return ok && SameType(at.KeyType, bt.KeyType) && SameType(at.ValueType, bt.ValueType)
	}
	if isNested(b) {
		return false
	}
	return a == b // primitives, decimals and geospatial types are comparable values
}

// carriesType reports whether a value of type t has t as its Type: the
// primitives but variant (a struct of binaries) and void, and decimals.
func carriesType(t schema.DataType) bool {
	switch t {
	case schema.Variant, schema.Void:
		return false
	}
	switch t.(type) {
	case schema.PrimitiveType, schema.DecimalType:
		return true
	}
	return false
}

func isNested(t schema.DataType) bool {
	switch t.(type) {
	case *schema.StructType, *schema.ArrayType, *schema.MapType:
		return true
	}
	return false
}

// NewAssigner returns the conversion of values of type from into a column
// of type to, by the rule in this file's doc; name is the column's name,
// the root of the paths errors name (s.a, arr.element, m.key). from may be
// nil when the values' type is not known statically: the column must
// then not be nested, and each value is converted by its own type; a from
// of schema.Void (a NULL literal) converts the null it gives. Types the
// rule cannot store across are ErrAssign.
func NewAssigner(from, to schema.DataType, name string) (Assigner, error) {
	if from == schema.Void {
		return func(v schema.Value) (schema.Value, error) { return leafAssign(v, to, name) }, nil
	}
	if from == nil && isNested(to) {
		return nil, assignErr("column %s: the type of the value is unknown; a %s column takes a column of that shape", name, TypeName(to))
	}
	return assigner(from, to, name)
}

// assignErr is an ErrAssign error with the message given, and no prefix:
// the message names the column and the types.
func assignErr(format string, args ...any) error {
	return deltaerr.Mark(fmt.Errorf(format, args...), ErrAssign)
}

func identity(v schema.Value) (schema.Value, error) { return v, nil }

func assigner(from, to schema.DataType, path string) (Assigner, error) {
	// A nested value of the column's type is kept whole; a leaf is kept
	// when its own type is the column's (leafAssign), which also mends a
	// value of another kind than its declared type (a source batch of
	// ints for a bigint column), except for types a value does not carry
	// (variant, geospatial), kept on the declared type alone.
	if SameType(from, to) && (isNested(to) || !carriesType(to)) {
		return identity, nil
	}
	mismatch := func(why string) error {
		return assignErr("column %s: cannot store %s in %s%s", path, TypeName(from), TypeName(to), why)
	}
	switch to := to.(type) {
	case *schema.StructType:
		ft, ok := from.(*schema.StructType)
		if !ok {
			return nil, mismatch("")
		}
		return structAssigner(ft, to, path, mismatch)
	case *schema.ArrayType:
		ft, ok := from.(*schema.ArrayType)
		if !ok {
			return nil, mismatch("")
		}
		elem, err := assigner(ft.ElementType, to.ElementType, path+".element")
		if err != nil {
			return nil, err
		}
		return func(v schema.Value) (schema.Value, error) {
			if v.IsNull() {
				return v, nil
			}
			if v.Kind() != schema.KindArray {
				return schema.Value{}, assignErr("column %s: %s value for %s", path, v.Kind(), TypeName(to))
			}
			in := v.Elements()
			out := make([]schema.Value, len(in))
			for i, e := range in {
				var err error
				if out[i], err = elem(e); err != nil {
					return schema.Value{}, err
				}
			}
			return schema.ArrayValue(out), nil
		}, nil
	case *schema.MapType:
		ft, ok := from.(*schema.MapType)
		if !ok {
			return nil, mismatch("")
		}
		key, err := assigner(ft.KeyType, to.KeyType, path+".key")
		if err != nil {
			return nil, err
		}
		val, err := assigner(ft.ValueType, to.ValueType, path+".value")
		if err != nil {
			return nil, err
		}
		return func(v schema.Value) (schema.Value, error) {
			if v.IsNull() {
				return v, nil
			}
			if v.Kind() != schema.KindMap {
				return schema.Value{}, assignErr("column %s: %s value for %s", path, v.Kind(), TypeName(to))
			}
			return convertMap(v, key, val, path, ErrAssign)
		}, nil
	}
	if isNested(from) {
		return nil, mismatch("")
	}
	return func(v schema.Value) (schema.Value, error) { return leafAssign(v, to, path) }, nil
}

// structAssigner stores a struct of type from into one of type to, field
// by field by name.
func structAssigner(from, to *schema.StructType, path string, mismatch func(string) error) (Assigner, error) {
	src := make([]int, len(to.Fields)) // the value's field for each column field
	convs := make([]Assigner, len(to.Fields))
	for i, f := range to.Fields {
		j := from.Index(f.Name)
		if j < 0 {
			return nil, mismatch(fmt.Sprintf(": the value has no field %s (a missing field needs schema evolution, which is not supported)", f.Name))
		}
		src[i] = j
		var err error
		if convs[i], err = assigner(from.Fields[j].Type, f.Type, path+"."+f.Name); err != nil {
			return nil, err
		}
	}
	for _, f := range from.Fields {
		if to.Index(f.Name) < 0 {
			return nil, mismatch(fmt.Sprintf(": the column has no field %s, whose values would be lost", f.Name))
		}
	}
	return func(v schema.Value) (schema.Value, error) {
		if v.IsNull() {
			return v, nil
		}
		if v.Kind() != schema.KindStruct {
			return schema.Value{}, assignErr("column %s: %s value for %s", path, v.Kind(), TypeName(to))
		}
		in := v.Fields()
		out := make([]schema.Value, len(convs))
		for i, conv := range convs {
			var fv schema.Value
			if src[i] < len(in) {
				fv = in[src[i]]
			}
			var err error
			if out[i], err = conv(fv); err != nil {
				return schema.Value{}, err
			}
		}
		return schema.StructValue(out), nil
	}, nil
}

// convertMap converts the keys and values of the map v. A key that
// converts to null, or to a key already in the map, is an error wrapping
// kind: map keys are never null, and unique.
func convertMap(v schema.Value, key, val func(schema.Value) (schema.Value, error), path string, kind error) (schema.Value, error) {
	n := v.MapLen()
	out := make([]schema.Value, 0, 2*n)
	seen := make(map[string]bool, n)
	for i := range n {
		k, x := v.MapEntry(i)
		ck, err := key(k)
		if err != nil {
			return schema.Value{}, err
		}
		if ck.IsNull() {
			return schema.Value{}, fmt.Errorf("%w: %s: map key %s converts to null", kind, path, k)
		}
		id := strconv.Itoa(int(ck.Kind())) + ":" + ck.String()
		if seen[id] {
			return schema.Value{}, fmt.Errorf("%w: %s: map key %s converts to %s, a key the map already has", kind, path, k, ck)
		}
		seen[id] = true
		cx, err := val(x)
		if err != nil {
			return schema.Value{}, err
		}
		out = append(out, ck, cx)
	}
	return schema.MapValue(out), nil
}

// leafAssign stores v into a leaf column of type to: as it is when it has
// that type, else through CAST, where a non-null value that becomes null
// is ErrAssign.
func leafAssign(v schema.Value, to schema.DataType, path string) (schema.Value, error) {
	if v.IsNull() {
		return v, nil
	}
	if t := v.Type(); t != nil && t == to {
		return v, nil
	}
	out, err := CastValue(v, to)
	if err != nil {
		return schema.Value{}, deltaerr.Mark(fmt.Errorf("column %s: value %s: %w", path, v, err), ErrAssign)
	}
	if out.IsNull() {
		return schema.Value{}, assignErr("column %s: value %s does not read as %s", path, v, TypeName(to))
	}
	return out, nil
}

// TypeOf returns the type of the values e gives, as far as the expression
// alone tells it: the type of a column (typeOf), of a CAST's target, of a
// literal (schema.Void for NULL), and for coalesce, nvl and if the type
// their value arguments share (NULL literals aside). It reports false for
// other forms (arithmetic and functions, whose values are primitives that
// carry their type) and for coalesce or if over arguments of different
// types (SameType).
func TypeOf(e Expr, typeOf func(column string) (schema.DataType, bool)) (schema.DataType, bool) {
	switch e := e.(type) {
	case Column:
		return typeOf(e.Name)
	case Cast:
		return e.To, e.To != nil
	case Literal:
		v := literalValue(e)
		if v.IsNull() {
			return schema.Void, true
		}
		t := v.Type()
		return t, t != nil
	case Call:
		var args []Expr
		switch e.Name {
		case "coalesce", "nvl", "ifnull":
			args = e.Args
		case "if":
			if len(e.Args) == 3 {
				args = e.Args[1:]
			}
		}
		var out schema.DataType = schema.Void
		for _, a := range args {
			t, ok := TypeOf(a, typeOf)
			switch {
			case !ok:
				return nil, false
			case t == schema.Void:
			case out == schema.Void:
				out = t
			case !SameType(out, t):
				return nil, false
			}
		}
		return out, len(args) > 0
	}
	return nil, false
}

package expr

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
)

func ddlType(t *testing.T, ddl string) schema.DataType {
	t.Helper()
	sch, err := schema.ParseDDL("c " + ddl)
	if err != nil {
		t.Fatal(err)
	}
	return sch.Fields[0].Type
}

func st(vals ...schema.Value) schema.Value  { return schema.StructValue(vals) }
func arr(vals ...schema.Value) schema.Value { return schema.ArrayValue(vals) }
func mp(kv ...schema.Value) schema.Value    { return schema.MapValue(kv) }

var (
	i32 = func(i int32) schema.Value { return schema.IntegerValue(i) }
	i64 = func(i int64) schema.Value { return schema.LongValue(i) }
	txt = schema.StringValue
)

func TestTypeName(t *testing.T) {
	for _, tc := range []struct{ ddl, want string }{
		{"INT", "int"},
		{"BIGINT", "bigint"},
		{"TINYINT", "tinyint"},
		{"SMALLINT", "smallint"},
		{"DECIMAL(10,2)", "decimal(10,2)"},
		{"TIMESTAMP_NTZ", "timestamp_ntz"},
		{"STRUCT<a: INT, b: STRING>", "struct<a:int,b:string>"},
		{"ARRAY<STRUCT<x: BIGINT>>", "array<struct<x:bigint>>"},
		{"MAP<STRING, ARRAY<DOUBLE>>", "map<string,array<double>>"},
	} {
		if got := TypeName(ddlType(t, tc.ddl)); got != tc.want {
			t.Errorf("TypeName(%s) = %q, want %q", tc.ddl, got, tc.want)
		}
	}
	if got := TypeName(nil); got != "void" {
		t.Errorf("TypeName(nil) = %q", got)
	}
	// CAST prints nested types readably, not as upper-cased JSON.
	c := Cast{Value: Column{Name: "x"}, To: ddlType(t, "STRUCT<a: INT>")}
	if got := c.String(); got != "CAST(`x` AS struct<a:int>)" {
		t.Errorf("Cast.String() = %q", got)
	}
	_, err := CastValue(i32(1), ddlType(t, "STRUCT<a: INT>"))
	if err == nil || !strings.Contains(err.Error(), "cannot cast integer to struct<a:int>") {
		t.Errorf("err = %v", err)
	}
}

// withMetadata is typ with column mapping metadata on every struct field,
// as a table with column mapping has it.
func withMetadata(typ schema.DataType) schema.DataType {
	switch typ := typ.(type) {
	case *schema.StructType:
		out := &schema.StructType{}
		for i, f := range typ.Fields {
			f.Type = withMetadata(f.Type)
			id, _ := json.Marshal(i + 100)
			f.Metadata = schema.Metadata{{Key: "delta.columnMapping.id", Value: id}, {Key: "delta.columnMapping.physicalName", Value: json.RawMessage(`"col-x"`)}}
			f.Nullable = i%2 == 0
			out.Fields = append(out.Fields, f)
		}
		return out
	case *schema.ArrayType:
		return &schema.ArrayType{ElementType: withMetadata(typ.ElementType), ContainsNull: !typ.ContainsNull}
	case *schema.MapType:
		return &schema.MapType{KeyType: withMetadata(typ.KeyType), ValueType: withMetadata(typ.ValueType)}
	}
	return typ
}

func TestSameType(t *testing.T) {
	nested := "STRUCT<a: INT, b: ARRAY<STRUCT<x: STRING>>, m: MAP<STRING, STRUCT<y: BIGINT>>>"
	same := [][2]schema.DataType{
		{schema.Long, schema.Long},
		{schema.DecimalType{Precision: 10, Scale: 2}, schema.DecimalType{Precision: 10, Scale: 2}},
		{ddlType(t, nested), ddlType(t, nested)},
		// Metadata and nullability do not count, nor the case of names.
		{ddlType(t, nested), withMetadata(ddlType(t, nested))},
		{ddlType(t, "STRUCT<a: INT>"), ddlType(t, "STRUCT<A: INT NOT NULL>")},
	}
	for _, p := range same {
		if !SameType(p[0], p[1]) || !SameType(p[1], p[0]) {
			t.Errorf("SameType(%s, %s) = false", TypeName(p[0]), TypeName(p[1]))
		}
	}
	differ := [][2]schema.DataType{
		{schema.Long, schema.Integer},
		{schema.DecimalType{Precision: 10, Scale: 2}, schema.DecimalType{Precision: 11, Scale: 2}},
		{ddlType(t, "STRUCT<a: INT, b: INT>"), ddlType(t, "STRUCT<b: INT, a: INT>")},
		{ddlType(t, "STRUCT<a: INT>"), ddlType(t, "STRUCT<a: BIGINT>")},
		{ddlType(t, "STRUCT<a: INT>"), ddlType(t, "STRUCT<a: INT, b: INT>")},
		{ddlType(t, "ARRAY<INT>"), ddlType(t, "ARRAY<BIGINT>")},
		{ddlType(t, "MAP<STRING, INT>"), ddlType(t, "MAP<INT, INT>")},
		{ddlType(t, "ARRAY<INT>"), schema.Integer},
		{schema.String, nil},
	}
	for _, p := range differ {
		if SameType(p[0], p[1]) || SameType(p[1], p[0]) {
			t.Errorf("SameType(%s, %s) = true", TypeName(p[0]), TypeName(p[1]))
		}
	}
}

// TestCastValueNested: CAST of nested values is Spark's, by position.
func TestCastValueNested(t *testing.T) {
	for _, tc := range []struct {
		v    schema.Value
		to   string
		want string
	}{
		// By position: the names do not count.
		{st(i32(1), txt("x")), "STRUCT<b: BIGINT, a: STRING>", "{1, x}"},
		{st(txt("7"), schema.Value{}), "STRUCT<a: INT, b: DOUBLE>", "{7, null}"},
		{arr(i32(1), schema.Value{}, i32(3)), "ARRAY<STRING>", "[1, null, 3]"},
		{mp(txt("1"), i32(2)), "MAP<INT, BIGINT>", "{1: 2}"},
		{arr(st(i32(1)), schema.Value{}), "ARRAY<STRUCT<z: BIGINT>>", "[{1}, null]"},
		{mp(txt("k"), st(i32(1), txt("2"))), "MAP<STRING, STRUCT<p: STRING, q: INT>>", "{k: {1, 2}}"},
		// A string that is not a number is null inside too, as at the top.
		{st(txt("x")), "STRUCT<a: INT>", "{null}"},
	} {
		got, err := CastValue(tc.v, ddlType(t, tc.to))
		if err != nil || got.String() != tc.want {
			t.Errorf("CAST(%s AS %s) = %s, %v, want %s", tc.v, tc.to, got, err, tc.want)
		}
	}
	// The cast leaves have the target's types.
	got, _ := CastValue(st(i32(1), arr(i32(2))), ddlType(t, "STRUCT<a: BIGINT, b: ARRAY<DOUBLE>>"))
	if k := got.Fields()[0].Kind(); k != schema.KindLong {
		t.Errorf("field kind %s", k)
	}
	if k := got.Fields()[1].Elements()[0].Kind(); k != schema.KindDouble {
		t.Errorf("element kind %s", k)
	}
	for _, tc := range []struct {
		v  schema.Value
		to string
	}{
		{st(i32(1)), "STRUCT<a: INT, b: INT>"},
		{st(i32(1), i32(2)), "STRUCT<a: INT>"},
		{arr(i32(1)), "STRUCT<a: INT>"},
		{st(i32(1)), "ARRAY<INT>"},
		{i32(1), "MAP<INT, INT>"},
		{mp(txt("1"), i32(1), txt("01"), i32(2)), "MAP<INT, INT>"},   // two keys cast to 1
		{mp(txt("x"), i32(1)), "MAP<INT, INT>"},                      // a key cast to null
		{st(i64(1 << 40)), "STRUCT<a: INT>"},                         // overflow inside
		{arr(schema.DateValue(1)), "ARRAY<BOOLEAN>"},                 // not castable
		{st(schema.BooleanValue(true)), "STRUCT<a: STRUCT<b: INT>>"}, // a leaf for a struct
	} {
		if got, err := CastValue(tc.v, ddlType(t, tc.to)); err == nil || !errors.Is(err, deltaerr.ErrInvalidArgument) {
			t.Errorf("CAST(%s AS %s) = %s, %v, want an error", tc.v, tc.to, got, err)
		}
	}
	if v, err := CastValue(schema.Value{}, ddlType(t, "STRUCT<a: INT>")); err != nil || !v.IsNull() {
		t.Errorf("CAST(NULL AS struct) = %s, %v", v, err)
	}
}

func TestNewAssigner(t *testing.T) {
	for _, tc := range []struct {
		name     string
		from, to string
		v        schema.Value
		want     string
	}{
		{"same type", "STRUCT<a: INT, b: STRING>", "STRUCT<a: INT, b: STRING>", st(i32(1), txt("x")), "{1, x}"},
		{"by name", "STRUCT<b: STRING, a: INT>", "STRUCT<a: INT, b: STRING>", st(txt("x"), i32(1)), "{1, x}"},
		{"by name ignoring case", "STRUCT<B: STRING, A: INT>", "STRUCT<a: INT, b: STRING>", st(txt("x"), i32(1)), "{1, x}"},
		{"widened leaves", "STRUCT<b: SMALLINT, a: FLOAT>", "STRUCT<a: DOUBLE, b: BIGINT>", st(schema.ShortValue(2), schema.FloatValue(1.5)), "{1.5, 2}"},
		{"null struct", "STRUCT<b: STRING, a: INT>", "STRUCT<a: INT, b: STRING>", schema.Value{}, "null"},
		{"null fields", "STRUCT<b: STRING, a: INT>", "STRUCT<a: INT, b: STRING>", st(schema.Value{}, schema.Value{}), "{null, null}"},
		{"struct in struct", "STRUCT<o: STRUCT<y: INT, x: INT>, p: INT>", "STRUCT<p: INT, o: STRUCT<x: INT, y: INT>>",
			st(st(i32(2), i32(1)), i32(3)), "{3, {1, 2}}"},
		{"array of structs", "ARRAY<STRUCT<y: INT, x: STRING>>", "ARRAY<STRUCT<x: STRING, y: BIGINT>>",
			arr(st(i32(1), txt("a")), schema.Value{}, st(schema.Value{}, txt("b"))), "[{a, 1}, null, {b, null}]"},
		{"empty array", "ARRAY<STRUCT<y: INT, x: STRING>>", "ARRAY<STRUCT<x: STRING, y: BIGINT>>", arr(), "[]"},
		{"map of structs", "MAP<STRING, STRUCT<q: DOUBLE, p: INT>>", "MAP<STRING, STRUCT<p: INT, q: DOUBLE>>",
			mp(txt("k"), st(schema.DoubleValue(0.5), i32(1)), txt("n"), schema.Value{}), "{k: {1, 0.5}, n: null}"},
		{"map keys cast", "MAP<INT, STRING>", "MAP<BIGINT, STRING>", mp(i32(1), txt("a"), i32(2), schema.Value{}), "{1: a, 2: null}"},
		{"struct keys", "MAP<STRUCT<b: INT, a: INT>, INT>", "MAP<STRUCT<a: INT, b: INT>, INT>", mp(st(i32(1), i32(2)), i32(3)), "{{2, 1}: 3}"},
		{"leaf cast", "STRING", "INT", txt("12"), "12"},
		{"unknown leaf type", "", "BIGINT", i32(7), "7"},
		{"null literal for a struct", "VOID", "STRUCT<a: INT>", schema.Value{}, "null"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var from schema.DataType
			switch tc.from {
			case "":
			case "VOID":
				from = schema.Void
			default:
				from = ddlType(t, tc.from)
			}
			to := ddlType(t, tc.to)
			// Column mapping metadata on either side changes nothing.
			for _, pair := range [][2]schema.DataType{{from, to}, {withMetadata(from), to}, {from, withMetadata(to)}} {
				conv, err := NewAssigner(pair[0], pair[1], "c")
				if err != nil {
					t.Fatal(err)
				}
				got, err := conv(tc.v)
				if err != nil || got.String() != tc.want {
					t.Fatalf("got %s, %v, want %s", got, err, tc.want)
				}
			}
		})
	}
	// A leaf of its column's declared type but another kind (a source
	// batch of ints for a bigint column) is converted; a variant, whose
	// value is a struct of two binaries, is kept on its declared type.
	conv, err := NewAssigner(schema.Long, schema.Long, "c")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := conv(i32(5)); err != nil || got.Kind() != schema.KindLong || got.Int64() != 5 {
		t.Errorf("int for bigint: %s (%s), %v", got, got.Kind(), err)
	}
	variant := st(schema.BinaryValue([]byte{1}), schema.BinaryValue([]byte{2}))
	for _, typ := range []schema.DataType{schema.Variant, ddlType(t, "STRUCT<v: VARIANT>")} {
		conv, err := NewAssigner(withMetadata(typ), typ, "c")
		if err != nil {
			t.Fatal(err)
		}
		v := variant
		if _, ok := typ.(*schema.StructType); ok {
			v = st(variant)
		}
		if got, err := conv(v); err != nil || got.String() != v.String() {
			t.Errorf("variant: %s, %v", got, err)
		}
	}
	// The converted leaves have the column's types.
	conv, err = NewAssigner(ddlType(t, "STRUCT<b: SMALLINT, a: FLOAT>"), ddlType(t, "STRUCT<a: DOUBLE, b: BIGINT>"), "c")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := conv(st(schema.ShortValue(2), schema.FloatValue(1.5)))
	if a, b := got.Fields()[0].Kind(), got.Fields()[1].Kind(); a != schema.KindDouble || b != schema.KindLong {
		t.Errorf("kinds %s, %s", a, b)
	}
}

func TestNewAssignerErrors(t *testing.T) {
	for _, tc := range []struct {
		from, to, want string
	}{
		{"STRUCT<a: INT>", "STRUCT<a: INT, b: STRING>", "c: cannot store struct<a:int> in struct<a:int,b:string>: the value has no field b"},
		{"STRUCT<a: INT, b: STRING, z: INT>", "STRUCT<a: INT, b: STRING>", "the column has no field z"},
		{"STRUCT<a: INT, c: STRING>", "STRUCT<a: INT, b: STRING>", "the value has no field b"},
		{"ARRAY<STRUCT<x: INT>>", "ARRAY<STRUCT<x: INT, y: INT>>", "c.element: cannot store struct<x:int> in struct<x:int,y:int>"},
		{"MAP<STRING, STRUCT<x: INT>>", "MAP<STRING, STRUCT<y: INT>>", "c.value: cannot store"},
		{"STRUCT<o: STRUCT<x: INT>>", "STRUCT<o: STRUCT<y: INT>>", "c.o: cannot store struct<x:int> in struct<y:int>"},
		{"ARRAY<INT>", "STRUCT<a: INT>", "c: cannot store array<int> in struct<a:int>"},
		{"STRUCT<a: INT>", "ARRAY<INT>", "c: cannot store struct<a:int> in array<int>"},
		{"STRUCT<a: INT>", "MAP<STRING, INT>", "cannot store"},
		{"STRUCT<a: INT>", "STRING", "c: cannot store struct<a:int> in string"},
		{"BIGINT", "STRUCT<a: INT>", "c: cannot store bigint in struct<a:int>"},
		{"", "STRUCT<a: INT>", "the type of the value is unknown"},
	} {
		var from schema.DataType
		if tc.from != "" {
			from = ddlType(t, tc.from)
		}
		_, err := NewAssigner(from, ddlType(t, tc.to), "c")
		if !errors.Is(err, ErrAssign) || !errors.Is(err, deltaerr.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s into %s: err = %v, want %q", tc.from, tc.to, err, tc.want)
		}
	}
	// Values that do not convert.
	for _, tc := range []struct {
		from, to string
		v        schema.Value
		want     string
	}{
		{"STRUCT<b: STRING, a: STRING>", "STRUCT<a: INT, b: STRING>", st(txt("x"), txt("nope")), "c.a: value nope does not read as int"},
		{"ARRAY<BIGINT>", "ARRAY<INT>", arr(i64(1), i64(1<<40)), "c.element: value 1099511627776"},
		{"MAP<STRING, INT>", "MAP<INT, INT>", mp(txt("1"), i32(1), txt("01"), i32(2)), "a key the map already has"},
		{"MAP<STRING, INT>", "MAP<INT, INT>", mp(txt("x"), i32(1)), "c.key: value x does not read as int"},
		{"STRUCT<a: INT>", "STRUCT<a: INT>", st(i32(1)), ""}, // same type: no error
	} {
		conv, err := NewAssigner(ddlType(t, tc.from), ddlType(t, tc.to), "c")
		if err != nil {
			t.Fatal(err)
		}
		_, err = conv(tc.v)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.v, err)
			}
			continue
		}
		if !errors.Is(err, ErrAssign) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s into %s: err = %v, want %q", tc.v, tc.to, err, tc.want)
		}
	}
}

func TestTypeOf(t *testing.T) {
	types := map[string]schema.DataType{
		"s":  ddlType(t, "STRUCT<a: INT>"),
		"s2": withMetadata(ddlType(t, "STRUCT<A: INT>")),
		"r":  ddlType(t, "STRUCT<b: INT>"),
		"n":  schema.Long,
	}
	typeOf := func(c string) (schema.DataType, bool) {
		typ, ok := types[c]
		return typ, ok
	}
	for _, tc := range []struct {
		e    string
		want string // "" for unknown
	}{
		{"s", "struct<a:int>"},
		{"nope", ""},
		{"NULL", "void"},
		{"1", "int"},
		{"'x'", "string"},
		{"CAST(n AS INT)", "int"},
		{"coalesce(s, s2)", "struct<a:int>"},
		{"coalesce(NULL, s)", "struct<a:int>"},
		{"nvl(s, NULL)", "struct<a:int>"},
		{"if(n > 1, NULL, s2)", "struct<A:int>"},
		{"coalesce(s, r)", ""},
		{"if(n > 1, s, r)", ""},
		{"coalesce(s, nope)", ""},
		{"n + 1", ""},
		{"upper(n)", ""},
	} {
		e, err := Parse(tc.e)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := TypeOf(e, typeOf)
		name := ""
		if ok {
			name = TypeName(got)
		}
		if name != tc.want {
			t.Errorf("TypeOf(%s) = %q, %v, want %q", tc.e, name, ok, tc.want)
		}
	}
}

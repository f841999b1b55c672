package govalue_test

import (
	"errors"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/schema/govalue"
)

func dec(t *testing.T, unscaled int64, p, s int) schema.Value {
	t.Helper()
	v, err := schema.DecimalValueInt64(unscaled, p, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestValue(t *testing.T) {
	d92 := schema.DecimalType{Precision: 9, Scale: 2}
	plus2 := time.FixedZone("+02", 2*3600)
	i := 7
	tests := []struct {
		name string
		src  any
		typ  schema.DataType
		want schema.Value
	}{
		{"bool", true, schema.Boolean, schema.BooleanValue(true)},
		{"int8 to byte", int8(-128), schema.Byte, schema.ByteValue(-128)},
		{"int to byte", 127, schema.Byte, schema.ByteValue(127)},
		{"uint16 to short", uint16(32767), schema.Short, schema.ShortValue(32767)},
		{"int64 to integer", int64(math.MinInt32), schema.Integer, schema.IntegerValue(math.MinInt32)},
		{"uint64 to long", uint64(math.MaxInt64), schema.Long, schema.LongValue(math.MaxInt64)},
		{"float32", float32(1.5), schema.Float, schema.FloatValue(1.5)},
		{"float64 to float", 0.25, schema.Float, schema.FloatValue(0.25)},
		{"float64 inf to float", math.Inf(1), schema.Float, schema.FloatValue(float32(math.Inf(1)))},
		{"double", 1e300, schema.Double, schema.DoubleValue(1e300)},
		{"string", "héllo", schema.String, schema.StringValue("héllo")},
		{"binary", []byte{0, 1}, schema.Binary, schema.BinaryValue([]byte{0, 1})},
		{"empty binary is not null", []byte{}, schema.Binary, schema.BinaryValue(nil)},
		{"nil binary is null", []byte(nil), schema.Binary, schema.Value{}},
		{"date from its own zone", time.Date(2024, 1, 31, 1, 0, 0, 0, plus2), schema.Date, schema.DateValue(19753)},
		{"date before 1970", time.Date(1969, 12, 31, 23, 0, 0, 0, time.UTC), schema.Date, schema.DateValue(-1)},
		{"timestamp is the instant", time.Date(2024, 1, 31, 2, 0, 0, 1500, plus2), schema.Timestamp, schema.TimestampValue(1706659200000001)},
		{"timestamp_ntz is the wall clock", time.Date(2024, 1, 31, 0, 0, 0, 0, plus2), schema.TimestampNTZ, schema.TimestampNTZValue(1706659200000000)},
		{"decimal from string", "-12.5", d92, dec(t, -1250, 9, 2)},
		{"decimal from *big.Rat", big.NewRat(1, 4), d92, dec(t, 25, 9, 2)},
		{"decimal from big.Rat", *big.NewRat(3, 1), d92, dec(t, 300, 9, 2)},
		{"decimal from float64", 0.1, d92, dec(t, 10, 9, 2)},
		{"decimal from int", 42, d92, dec(t, 4200, 9, 2)},
		{"pointer", &i, schema.Long, schema.LongValue(7)},
		{"nil pointer", (*int)(nil), schema.Long, schema.Value{}},
		{"nil interface", nil, schema.Long, schema.Value{}},
		{"schema.Value as is", schema.LongValue(3), schema.Long, schema.LongValue(3)},
		{"array", []int32{1, 2}, &schema.ArrayType{ElementType: schema.Integer},
			schema.ArrayValue([]schema.Value{schema.IntegerValue(1), schema.IntegerValue(2)})},
		{"array of pointers", []*int{nil, &i}, &schema.ArrayType{ElementType: schema.Long, ContainsNull: true},
			schema.ArrayValue([]schema.Value{{}, schema.LongValue(7)})},
		{"map sorted by key", map[string]int{"b": 2, "a": 1}, &schema.MapType{KeyType: schema.String, ValueType: schema.Long},
			schema.MapValue([]schema.Value{schema.StringValue("a"), schema.LongValue(1), schema.StringValue("b"), schema.LongValue(2)})},
		{"nil map is null", map[string]int(nil), &schema.MapType{KeyType: schema.String, ValueType: schema.Long}, schema.Value{}},
	}
	var m govalue.Mapper
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := m.Value(reflect.ValueOf(tc.src), tc.typ)
			if err != nil {
				t.Fatal(err)
			}
			if got.Kind() != tc.want.Kind() || got.String() != tc.want.String() {
				t.Fatalf("got %s %s, want %s %s", got.Kind(), got, tc.want.Kind(), tc.want)
			}
			if tc.want.Kind() == schema.KindDecimal {
				if got.Type().String() != tc.want.Type().String() {
					t.Fatalf("type %s, want %s", got.Type(), tc.want.Type())
				}
			}
		})
	}
}

func TestValueStruct(t *testing.T) {
	st := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.Long},
		{Name: "Label", Type: schema.String, Nullable: true},
		{Name: "extra", Type: schema.String, Nullable: true},
	}}
	type row struct {
		ID      int64
		Name    string `parquet:"Label,optional"`
		Skipped string `parquet:"-"`
		private int
	}
	var m govalue.Mapper
	got, err := m.Value(reflect.ValueOf(row{ID: 1, Name: "x", Skipped: "no", private: 2}), st)
	if err != nil {
		t.Fatal(err)
	}
	if want := "{1, x, null}"; got.String() != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	type extra struct {
		ID    int64
		Other string
	}
	_, err = m.Value(reflect.ValueOf(extra{}), st)
	if !errors.Is(err, govalue.ErrNoColumn) || !errors.Is(err, deltaerr.ErrInvalidArgument) || !strings.Contains(err.Error(), "Other") {
		t.Fatalf("unknown field: %v", err)
	}
}

func TestValueErrors(t *testing.T) {
	d52 := schema.DecimalType{Precision: 5, Scale: 2}
	var cycle any
	cycle = &cycle
	tests := []struct {
		name string
		src  any
		typ  schema.DataType
		msg  string
	}{
		{"byte overflow", 128, schema.Byte, "out of range of byte"},
		{"short overflow", -32769, schema.Short, "out of range of short"},
		{"integer overflow", int64(math.MaxInt32) + 1, schema.Integer, "out of range of integer"},
		{"long overflow", uint64(math.MaxUint64), schema.Long, "out of range of long"},
		{"float overflow", 1e300, schema.Float, "out of range of float"},
		{"string into long", "1", schema.Long, "cannot be written as long"},
		{"int into string", 1, schema.String, "cannot be written as string"},
		{"float into long", 1.0, schema.Long, "cannot be written as long"},
		{"int into date", 1, schema.Date, "cannot be written as date"},
		{"decimal scale too big", "1.005", d52, "more than 2 fraction digits"},
		{"decimal float scale too big", 0.125, d52, "more than 2 fraction digits"},
		{"decimal precision", "1000", d52, "more than 5 digits"},
		{"decimal not a number", "one", d52, "not a decimal number"},
		{"decimal NaN", math.NaN(), d52, "not a decimal number"},
		{"decimal third", big.NewRat(1, 3), d52, "fraction digits"},
		{"array from map", map[int]int{}, &schema.ArrayType{ElementType: schema.Long}, "cannot be written as array"},
		{"bad element", []string{"a"}, &schema.ArrayType{ElementType: schema.Long}, "element 0"},
		{"variant", []byte{1}, schema.Variant, "cannot be written as variant"},
		{"pointer cycle", cycle, schema.Long, "pointers or interfaces in a row"},
		{"year out of range", time.Date(300000, 1, 1, 0, 0, 0, 0, time.UTC), schema.Timestamp, "year 300000"},
	}
	var m govalue.Mapper
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := m.Value(reflect.ValueOf(tc.src), tc.typ)
			if err == nil {
				t.Fatalf("got %s, want an error", v)
			}
			if !errors.Is(err, govalue.ErrMismatch) || !errors.Is(err, deltaerr.ErrInvalidArgument) {
				t.Fatalf("error %v does not match ErrMismatch", err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("error %q does not say %q", err, tc.msg)
			}
		})
	}
}

func TestBind(t *testing.T) {
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "a", Type: schema.Long}, {Name: "B", Type: schema.Long}, {Name: "c", Type: schema.Long}, {Name: "d", Type: schema.Long},
	}}
	type s struct {
		A     int     // a, ignoring case
		X     int     `parquet:"B"` // a tag
		C     int     `parquet:"-"` // left out
		D     int     `parquet:"nope"`
		E     int     // no column
		B     int     // the tag of X took B
		_     int     // blank: not exported
		inner float64 //lint:ignore U1000 an unexported field binds to nothing
	}
	b := govalue.Bind(reflect.TypeFor[s](), sch)
	if want := []int{0, 1, -1, -1}; !reflect.DeepEqual(b.Columns, want) {
		t.Errorf("Columns %v, want %v", b.Columns, want)
	}
	if want := []int{3, 4, 5}; !reflect.DeepEqual(b.Unbound, want) {
		t.Errorf("Unbound %v, want %v", b.Unbound, want)
	}
}

// TestRoundTrip converts Go values to schema.Values and back: the two
// directions are inverses on the types they share.
func TestRoundTrip(t *testing.T) {
	type inner struct {
		N *int32
		S []string
	}
	type row struct {
		By  int8
		Sh  int16
		In  int32
		Lo  int64
		Fl  float32
		Do  float64
		De  *big.Rat
		St  string
		Bi  []byte
		Bo  bool
		Da  time.Time
		Ts  time.Time
		Tn  time.Time
		Str inner
		Arr []*int64
		Map map[string]float64
	}
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "by", Type: schema.Byte}, {Name: "sh", Type: schema.Short}, {Name: "in", Type: schema.Integer},
		{Name: "lo", Type: schema.Long}, {Name: "fl", Type: schema.Float}, {Name: "do", Type: schema.Double},
		{Name: "de", Type: schema.DecimalType{Precision: 20, Scale: 3}}, {Name: "st", Type: schema.String},
		{Name: "bi", Type: schema.Binary}, {Name: "bo", Type: schema.Boolean}, {Name: "da", Type: schema.Date},
		{Name: "ts", Type: schema.Timestamp}, {Name: "tn", Type: schema.TimestampNTZ},
		{Name: "str", Type: &schema.StructType{Fields: []schema.StructField{
			{Name: "n", Type: schema.Integer, Nullable: true},
			{Name: "s", Type: &schema.ArrayType{ElementType: schema.String}},
		}}},
		{Name: "arr", Type: &schema.ArrayType{ElementType: schema.Long, ContainsNull: true}},
		{Name: "map", Type: &schema.MapType{KeyType: schema.String, ValueType: schema.Double}},
	}}
	n, l := int32(5), int64(-9)
	in := row{
		By: -1, Sh: 300, In: 1 << 30, Lo: -1 << 60, Fl: 2.5, Do: math.Pi,
		De: big.NewRat(-123456789012345, 1000), St: "s", Bi: []byte("b"), Bo: true,
		Da: time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), Ts: time.UnixMicro(1706659200123456).UTC(),
		Tn:  time.Date(2000, 1, 1, 12, 30, 0, 1000, time.UTC),
		Str: inner{N: &n, S: []string{"x", "y"}}, Arr: []*int64{&l, nil}, Map: map[string]float64{"k": 1},
	}
	var m govalue.Mapper
	v, err := m.Value(reflect.ValueOf(in), sch)
	if err != nil {
		t.Fatal(err)
	}
	var out row
	if err := m.Assign(reflect.ValueOf(&out).Elem(), v, sch); err != nil {
		t.Fatal(err)
	}
	if out.De.Cmp(in.De) != 0 {
		t.Fatalf("decimal %s, want %s", out.De, in.De)
	}
	out.De = in.De
	if !reflect.DeepEqual(out, in) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", out, in)
	}
}

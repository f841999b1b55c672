package datafile_test

import (
	"bytes"
	"context"
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/internal/datafile"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/schema/variant"
)

// Shredded variants are built here with parquet-go, in the layouts of
// VariantShredding.md (the corpus has no shredded file: Spark's
// spark-shredded-variant-preview-delta writes its variants unshredded).
// Each case reads one variant column and checks, byte for byte, the value
// put back together against the same variant encoded directly with
// package variant's builders.

// vgroup is a shredded variant group, value and typed_value optional.
func vgroup(typed parquet.Node) parquet.Node {
	g := parquet.Group{"metadata": parquet.Leaf(parquet.ByteArrayType), "value": parquet.Optional(parquet.Leaf(parquet.ByteArrayType))}
	if typed != nil {
		g["typed_value"] = parquet.Optional(typed)
	}
	return g
}

// vfield is a shredded object field or array element: a required group
// of optional value and typed_value.
func vfield(typed parquet.Node) parquet.Node {
	g := parquet.Group{"value": parquet.Optional(parquet.Leaf(parquet.ByteArrayType))}
	if typed != nil {
		g["typed_value"] = parquet.Optional(typed)
	}
	return g
}

// vrow is the row value of a variant group; vpair of a field or element.
func vrow(meta []byte, value []byte, typed any) map[string]any {
	return row("metadata", meta, "value", nilIfNil(value), "typed_value", typed)
}

func vpair(value []byte, typed any) map[string]any {
	return row("value", nilIfNil(value), "typed_value", typed)
}

func nilIfNil(b []byte) any {
	if b == nil {
		return nil
	}
	return b
}

// vlist is a three-level LIST of shredded elements, as typed_value: the
// element group required, as the spec says.
func vlist(elem parquet.Node) parquet.Node {
	return parquet.Group{"list": parquet.Repeated(parquet.Group{"element": vfield(elem)})}
}

func vlst(elems ...map[string]any) map[string]any {
	out := make([]any, len(elems))
	for i, e := range elems {
		out[i] = row("element", e)
	}
	return row("list", out)
}

// enc builds expected values.
type enc struct {
	t    *testing.T
	meta variant.Metadata
}

func newEnc(t *testing.T, names ...string) (*enc, []byte) {
	raw := variant.AppendMetadata(nil, names)
	m, err := variant.ParseMetadata(raw)
	if err != nil {
		t.Fatal(err)
	}
	return &enc{t, m}, raw
}

// obj encodes an object of name, value pairs.
func (e *enc) obj(kv ...any) []byte {
	var fields []variant.Field
	for i := 0; i < len(kv); i += 2 {
		id, ok := e.meta.Find(kv[i].(string))
		if !ok {
			e.t.Fatalf("no %q in metadata", kv[i])
		}
		fields = append(fields, variant.Field{Name: kv[i].(string), ID: id, Value: kv[i+1].([]byte)})
	}
	b, err := variant.AppendObject(nil, fields)
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

func vstr(s string) []byte { return variant.AppendString(nil, s) }
func vint(t variant.Type, x int64) []byte {
	return variant.AppendInt(nil, t, x)
}
func varr(elems ...[]byte) []byte { return variant.AppendArray(nil, elems) }

var vnull = []byte{0}

// readVariants reads column v of a file as a variant and returns each
// row's value bytes (nil for a null variant) and metadata.
func readVariants(t *testing.T, b []byte) (values, metas [][]byte, err error) {
	f := openBytes(t, b)
	err = f.Read(context.Background(), st(fld("v", schema.Variant)), datafile.ReadOptions{BatchSize: 3},
		func(b *datafile.Batch) error {
			for _, v := range b.Columns[0][:b.Len] {
				if v.IsNull() {
					values, metas = append(values, nil), append(metas, nil)
					continue
				}
				fs := v.Fields()
				metas = append(metas, fs[0].Bytes())
				values = append(values, fs[1].Bytes())
			}
			return nil
		})
	return values, metas, err
}

type shredCase struct {
	name  string
	typed parquet.Node // the typed_value of column v
	rows  []map[string]any
	want  [][]byte // each row's value; nil: a null variant
}

func runShredCases(t *testing.T, meta []byte, cases []shredCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rows := make([]any, len(c.rows))
			for i, r := range c.rows {
				if r == nil {
					rows[i] = row("v", nil)
				} else {
					rows[i] = row("v", r)
				}
			}
			root := parquet.Group{"v": parquet.Optional(vgroup(c.typed))}
			got, metas, err := readVariants(t, writeFile(t, root, rows, []patch{autoAnnotate}))
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if len(got) != len(c.want) {
				t.Fatalf("%d rows, want %d", len(got), len(c.want))
			}
			for i := range got {
				if (got[i] == nil) != (c.want[i] == nil) || !bytes.Equal(got[i], c.want[i]) {
					t.Errorf("row %d: value % x, want % x", i, got[i], c.want[i])
				}
				if got[i] != nil && !bytes.Equal(metas[i], meta) {
					t.Errorf("row %d: metadata % x, want % x", i, metas[i], meta)
				}
			}
		})
	}
}

// TestShreddedVariant reads the examples of VariantShredding.md.
func TestShreddedVariant(t *testing.T) {
	e, meta := newEnc(t, "click", "email", "error_msg", "event_ts", "event_type", "lat", "location", "lon", "tags")
	const ts = 1729794114937
	eventTyped := parquet.Group{
		"event_type": vfield(parquet.String()),
		"event_ts":   vfield(parquet.TimestampAdjusted(parquet.Microsecond, true)),
	}
	ev := func(value []byte, typeV []byte, typeT any, tsV []byte, tsT any) map[string]any {
		return vrow(meta, value, row("event_type", vpair(typeV, typeT), "event_ts", vpair(tsV, tsT)))
	}
	cases := []shredCase{{
		name:  "primitive",
		typed: parquet.Int(64),
		rows: []map[string]any{
			vrow(meta, nil, int64(34)),
			vrow(meta, vnull, nil),
			vrow(meta, vstr("n/a"), nil),
			vrow(meta, nil, int64(100)),
			vrow(meta, nil, nil), // missing at the top: variant null
			nil,                  // a null variant
		},
		want: [][]byte{vint(variant.TypeInt64, 34), vnull, vstr("n/a"), vint(variant.TypeInt64, 100), vnull, nil},
	}, {
		name:  "object",
		typed: eventTyped,
		rows: []map[string]any{
			ev(nil, nil, "noop", nil, int64(ts)),
			ev(e.obj("email", vstr("user@example.com")), nil, "login", nil, int64(ts+1)),
			ev(e.obj("error_msg", vstr("malformed: ...")), nil, nil, nil, nil),
			vrow(meta, vstr("malformed: not an object"), nil),
			ev(e.obj("click", vstr("_button")), nil, nil, nil, int64(ts+2)),
			ev(nil, vnull, nil, nil, int64(ts+3)),
			ev(nil, nil, "noop", vstr("2024-10-24"), nil),
			ev(nil, nil, nil, nil, nil),
			vrow(meta, vnull, nil),
			vrow(meta, nil, nil),
		},
		want: [][]byte{
			e.obj("event_type", vstr("noop"), "event_ts", vint(variant.TypeTimestamp, ts)),
			e.obj("event_type", vstr("login"), "event_ts", vint(variant.TypeTimestamp, ts+1), "email", vstr("user@example.com")),
			e.obj("error_msg", vstr("malformed: ...")),
			vstr("malformed: not an object"),
			e.obj("event_ts", vint(variant.TypeTimestamp, ts+2), "click", vstr("_button")),
			e.obj("event_type", vnull, "event_ts", vint(variant.TypeTimestamp, ts+3)),
			e.obj("event_type", vstr("noop"), "event_ts", vstr("2024-10-24")),
			e.obj(),
			vnull,
			vnull,
		},
	}, {
		name:  "array",
		typed: vlist(parquet.String()),
		rows: []map[string]any{
			vrow(meta, nil, vlst(vpair(nil, "comedy"), vpair(nil, "drama"))),
			vrow(meta, nil, vlst(vpair(nil, "horror"), vpair(vnull, nil))),
			vrow(meta, nil, vlst()),
			vrow(meta, vnull, nil),
			vrow(meta, vint(variant.TypeInt8, 5), nil),
		},
		want: [][]byte{
			varr(vstr("comedy"), vstr("drama")),
			varr(vstr("horror"), vnull),
			varr(),
			vnull,
			vint(variant.TypeInt8, 5),
		},
	}, {
		name: "nested",
		typed: parquet.Group{
			"location": vfield(parquet.Group{
				"lat": vfield(parquet.Leaf(parquet.DoubleType)),
				"lon": vfield(parquet.Leaf(parquet.DoubleType)),
			}),
			"tags": vfield(vlist(parquet.String())),
		},
		rows: []map[string]any{
			vrow(meta, nil, row(
				"location", vpair(nil, row("lat", vpair(nil, 1.5), "lon", vpair(nil, -2.0))),
				"tags", vpair(nil, vlst(vpair(nil, "a"), vpair(vint(variant.TypeInt16, 7), nil))))),
			vrow(meta, e.obj("email", vstr("x")), row(
				"location", vpair(e.obj("email", vstr("w")), row("lat", vpair(nil, 0.0), "lon", vpair(vstr("w2"), nil))),
				"tags", vpair(nil, nil))),
			vrow(meta, nil, row(
				"location", vpair(vstr("here"), nil),
				"tags", vpair(varr(vnull), nil))),
		},
		want: [][]byte{
			e.obj("location", e.obj("lat", variant.AppendDouble(nil, 1.5), "lon", variant.AppendDouble(nil, -2)),
				"tags", varr(vstr("a"), vint(variant.TypeInt16, 7))),
			e.obj("location", e.obj("lat", variant.AppendDouble(nil, 0), "lon", vstr("w2"), "email", vstr("w")), "email", vstr("x")),
			e.obj("location", vstr("here"), "tags", varr(vnull)),
		},
	}}
	runShredCases(t, meta, cases)

	// A variant whose every value is shredded may leave the value column
	// out.
	t.Run("value column absent", func(t *testing.T) {
		root := parquet.Group{"v": parquet.Optional(parquet.Group{
			"metadata":    parquet.Leaf(parquet.ByteArrayType),
			"typed_value": parquet.Optional(parquet.Int(32)),
		})}
		rows := rowsOf(row("v", row("metadata", meta, "typed_value", int32(-3))), row("v", row("metadata", meta, "typed_value", nil)))
		got, _, err := readVariants(t, writeFile(t, root, rows, nil))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || !bytes.Equal(got[0], vint(variant.TypeInt32, -3)) || !bytes.Equal(got[1], vnull) {
			t.Fatalf("got % x", got)
		}
	})
}

// TestShreddedPrimitives reads every primitive of the spec's "Shredded
// Value Types" table as typed_value, each into the variant type the table
// maps it to.
func TestShreddedPrimitives(t *testing.T) {
	_, meta := newEnc(t)
	dec := func(ty variant.Type, x int64, scale int) []byte {
		b, _ := variant.AppendDecimal(nil, ty, big.NewInt(x), scale)
		return b
	}
	uuid := [16]byte{0x12, 0x34, 15: 0xff}
	long := strings.Repeat("y", 70)
	cases := []shredCase{
		{name: "boolean", typed: parquet.Leaf(parquet.BooleanType), rows: []map[string]any{vrow(meta, nil, true), vrow(meta, nil, false)},
			want: [][]byte{variant.AppendBool(nil, true), variant.AppendBool(nil, false)}},
		{name: "int8", typed: parquet.Int(8), rows: []map[string]any{vrow(meta, nil, int32(-128))}, want: [][]byte{vint(variant.TypeInt8, -128)}},
		{name: "int16", typed: parquet.Int(16), rows: []map[string]any{vrow(meta, nil, int32(300))}, want: [][]byte{vint(variant.TypeInt16, 300)}},
		{name: "int32", typed: parquet.Leaf(parquet.Int32Type), rows: []map[string]any{vrow(meta, nil, int32(-70000))}, want: [][]byte{vint(variant.TypeInt32, -70000)}},
		{name: "int64", typed: parquet.Leaf(parquet.Int64Type), rows: []map[string]any{vrow(meta, nil, int64(1)<<40)}, want: [][]byte{vint(variant.TypeInt64, 1<<40)}},
		{name: "float", typed: parquet.Leaf(parquet.FloatType), rows: []map[string]any{vrow(meta, nil, float32(0.25))}, want: [][]byte{variant.AppendFloat(nil, 0.25)}},
		{name: "double", typed: parquet.Leaf(parquet.DoubleType), rows: []map[string]any{vrow(meta, nil, 1e300)}, want: [][]byte{variant.AppendDouble(nil, 1e300)}},
		{name: "decimal4", typed: parquet.Decimal(2, 9, parquet.Int32Type), rows: []map[string]any{vrow(meta, nil, int32(-12345))}, want: [][]byte{dec(variant.TypeDecimal4, -12345, 2)}},
		{name: "decimal8", typed: parquet.Decimal(3, 18, parquet.Int64Type), rows: []map[string]any{vrow(meta, nil, int64(1)<<50)}, want: [][]byte{dec(variant.TypeDecimal8, 1<<50, 3)}},
		{name: "decimal16", typed: parquet.Decimal(0, 38, parquet.FixedLenByteArrayType(16)), rows: []map[string]any{vrow(meta, nil, twos(-7, 16))}, want: [][]byte{dec(variant.TypeDecimal16, -7, 0)}},
		// The variant decimal follows the physical type, not the precision.
		{name: "decimal16 of precision 9", typed: parquet.Decimal(2, 9, parquet.FixedLenByteArrayType(4)), rows: []map[string]any{vrow(meta, nil, twos(100, 4))}, want: [][]byte{dec(variant.TypeDecimal16, 100, 2)}},
		{name: "date", typed: parquet.Date(), rows: []map[string]any{vrow(meta, nil, int32(19675))}, want: [][]byte{vint(variant.TypeDate, 19675)}},
		{name: "time", typed: parquet.TimeAdjusted(parquet.Microsecond, false), rows: []map[string]any{vrow(meta, nil, int64(3_600_000_000))}, want: [][]byte{vint(variant.TypeTime, 3_600_000_000)}},
		{name: "timestamp", typed: parquet.TimestampAdjusted(parquet.Microsecond, true), rows: []map[string]any{vrow(meta, nil, int64(-1))}, want: [][]byte{vint(variant.TypeTimestamp, -1)}},
		{name: "timestamp_ntz", typed: parquet.TimestampAdjusted(parquet.Microsecond, false), rows: []map[string]any{vrow(meta, nil, int64(5))}, want: [][]byte{vint(variant.TypeTimestampNTZ, 5)}},
		{name: "timestamp nanos", typed: parquet.TimestampAdjusted(parquet.Nanosecond, true), rows: []map[string]any{vrow(meta, nil, int64(1_700_000_000_123_456_789))}, want: [][]byte{vint(variant.TypeTimestampNanos, 1_700_000_000_123_456_789)}},
		{name: "timestamp_ntz nanos", typed: parquet.TimestampAdjusted(parquet.Nanosecond, false), rows: []map[string]any{vrow(meta, nil, int64(-1))}, want: [][]byte{vint(variant.TypeTimestampNTZNanos, -1)}},
		{name: "binary", typed: parquet.Leaf(parquet.ByteArrayType), rows: []map[string]any{vrow(meta, nil, []byte{0, 1})}, want: [][]byte{variant.AppendBinary(nil, "\x00\x01")}},
		{name: "string", typed: parquet.String(), rows: []map[string]any{vrow(meta, nil, "hi"), vrow(meta, nil, long)}, want: [][]byte{vstr("hi"), vstr(long)}},
		{name: "uuid", typed: parquet.UUID(), rows: []map[string]any{vrow(meta, nil, uuid)}, want: [][]byte{variant.AppendUUID(nil, uuid)}},
	}
	runShredCases(t, meta, cases)
}

// TestShreddedVariantNested reads shredded variants inside an array, a
// struct and a map, where Spark puts them too.
func TestShreddedVariantNested(t *testing.T) {
	e, meta := newEnc(t, "a")
	root := parquet.Group{
		"av": stdList(parquet.Optional(vgroup(parquet.Int(64)))),
		"sv": parquet.Optional(parquet.Group{"v": parquet.Optional(vgroup(parquet.Group{"a": vfield(parquet.Int(64))}))}),
		"mv": parquet.Optional(parquet.Group{"key_value": parquet.Repeated(parquet.Group{
			"key": parquet.String(), "value": parquet.Optional(vgroup(parquet.Int(64))),
		})}),
	}
	rows := rowsOf(
		row("av", lst(vrow(meta, nil, int64(1)), nil, vrow(meta, vstr("s"), nil)),
			"sv", row("v", vrow(meta, nil, row("a", vpair(nil, int64(2))))),
			"mv", row("key_value", list(kv("k", vrow(meta, nil, int64(3))), kv("n", nil)))),
		row("av", nil, "sv", row("v", nil), "mv", nil),
	)
	want := st(fld("av", arr(schema.Variant)), fld("sv", st(fld("v", schema.Variant))), fld("mv", mp(schema.String, schema.Variant)))
	f := openBytes(t, writeFile(t, root, rows, []patch{autoAnnotate}))
	got := readRows(t, f, want, datafile.ReadOptions{})
	hexv := func(b []byte) string { return schema.BinaryValue(b).String() }
	m := hexv(meta)
	exp := []string{
		"[[{" + m + ", " + hexv(vint(variant.TypeInt64, 1)) + "}, null, {" + m + ", " + hexv(vstr("s")) + "}], " +
			"{{" + m + ", " + hexv(e.obj("a", vint(variant.TypeInt64, 2))) + "}}, " +
			"{k: {" + m + ", " + hexv(vint(variant.TypeInt64, 3)) + "}, n: null}]",
		"[null, {null}, null]",
	}
	if strings.Join(got, "\n") != strings.Join(exp, "\n") {
		t.Fatalf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(exp, "\n"))
	}
}

// TestShreddedVariantCorrupt: data that breaks the shredding spec is
// reported as corrupt, naming the column.
func TestShreddedVariantCorrupt(t *testing.T) {
	e, meta := newEnc(t, "a")
	obj := parquet.Group{"a": vfield(parquet.Int(64))}
	cases := []struct {
		name  string
		typed parquet.Node
		row   map[string]any
		text  string
	}{
		{"value beside a primitive", parquet.Int(64), vrow(meta, vnull, int64(1)), "both value and a typed_value primitive"},
		{"value beside an array", vlist(parquet.Int(64)), vrow(meta, vnull, vlst()), "both value and a typed_value array"},
		{"missing array element", vlist(parquet.Int(64)), vrow(meta, nil, vlst(vpair(nil, nil))), "element 0 is missing"},
		{"field in both", obj, vrow(meta, e.obj("a", vnull), row("a", vpair(nil, int64(1)))), `field "a" is both shredded`},
		{"value not an object", obj, vrow(meta, vstr("x"), row("a", vpair(nil, int64(1)))), "not an object"},
		{"name not in metadata", obj, vrow(variant.AppendMetadata(nil, []string{"b"}), nil, row("a", vpair(nil, int64(1)))), `"a" is not in the variant metadata`},
		{"bad metadata", parquet.Int(64), vrow([]byte{2}, nil, int64(1)), "metadata version"},
		{"bad value", parquet.Int(64), vrow(meta, []byte{0x3c, 9}, nil), "is not one encoded value"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := parquet.Group{"v": parquet.Optional(vgroup(c.typed))}
			_, _, err := readVariants(t, writeFile(t, root, rowsOf(row("v", c.row)), []patch{autoAnnotate}))
			if !errors.Is(err, deltaerr.ErrCorrupt) || !strings.Contains(err.Error(), c.text) {
				t.Fatalf("error %v, want corrupt with %q", err, c.text)
			}
		})
	}
	t.Run("unsupported typed_value", func(t *testing.T) {
		root := parquet.Group{"v": parquet.Optional(vgroup(parquet.Uint(32)))}
		_, _, err := readVariants(t, writeFile(t, root, rowsOf(row("v", vrow(meta, nil, int32(1)))), nil))
		if !errors.Is(err, datafile.ErrUnsupportedType) {
			t.Fatalf("error %v, want ErrUnsupportedType", err)
		}
	})
}

// shreddedSeed is a file of a shredded variant annotated VARIANT (so that
// the inferred schema reads it as one): an object with a primitive and an
// array field, for the fuzzer to start from.
func shreddedSeed(tb testing.TB) []byte {
	meta := variant.AppendMetadata(nil, []string{"a", "b", "c"})
	typed := parquet.Group{"a": vfield(parquet.Int(64)), "b": vfield(vlist(parquet.String()))}
	root := parquet.Group{"v": parquet.Optional(vgroup(typed))}
	residual, _ := variant.AppendObject(nil, []variant.Field{{Name: "c", ID: 2, Value: vstr("x")}})
	rows := rowsOf(
		row("v", vrow(meta, residual, row("a", vpair(nil, int64(1)), "b", vpair(nil, vlst(vpair(nil, "s"), vpair(vnull, nil)))))),
		row("v", vrow(meta, vnull, nil)),
		row("v", nil),
	)
	return writeFile(tb, root, rows, []patch{autoAnnotate, at("v", variantAnn)})
}

// TestShreddedSeed: the fuzzer's shredded seed reads through the inferred
// schema as a variant, put back together.
func TestShreddedSeed(t *testing.T) {
	f := openBytes(t, shreddedSeed(t))
	sch, err := f.Schema()
	if err != nil {
		t.Fatal(err)
	}
	if sch.Fields[0].Type != schema.Variant {
		t.Fatalf("inferred %s, want variant", sch.Fields[0].Type)
	}
	e, meta := newEnc(t, "a", "b", "c")
	hexv := func(b []byte) string { return schema.BinaryValue(b).String() }
	want := []string{
		"[{" + hexv(meta) + ", " + hexv(e.obj("a", vint(variant.TypeInt64, 1), "b", varr(vstr("s"), vnull), "c", vstr("x"))) + "}]",
		"[{" + hexv(meta) + ", 00}]",
		"[null]",
	}
	if got := readRows(t, f, sch, datafile.ReadOptions{}); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

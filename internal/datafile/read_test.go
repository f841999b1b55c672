package datafile_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/internal/datafile"
	"github.com/godelta/delta/schema"
)

type readCase struct {
	name    string
	root    parquet.Group
	rows    []any
	patches []patch
	want    *schema.StructType
	opts    datafile.ReadOptions
	expect  string // rows, one a line, formatted as formatRow does
	err     error  // when the read must fail: an error kind
	errText string // and a part of its message
}

func runCases(t *testing.T, cases []readCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := openBytes(t, writeFile(t, tc.root, tc.rows, tc.patches))
			got, err := tryReadRows(f, tc.want, tc.opts)
			if tc.err != nil {
				if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.errText) {
					t.Fatalf("error %v, want %v containing %q", err, tc.err, tc.errText)
				}
				return
			}
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			want := lines(tc.expect)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// TestPrimitives reads every primitive Delta type from the physical
// encodings writers use for it, plain and dictionary encoded.
func TestPrimitives(t *testing.T) {
	const (
		t1 = 1_700_000_000_123_456 // 2023-11-14T22:13:20.123456Z
		d1 = 19675                 // 2023-11-14
	)
	dict := func(n parquet.Node) parquet.Node { return parquet.Encoded(n, &parquet.RLEDictionary) }
	cases := []readCase{{
		name: "integers",
		root: parquet.Group{
			"b":  parquet.Optional(parquet.Int(8)),
			"s":  parquet.Optional(parquet.Int(16)),
			"bp": parquet.Optional(parquet.Leaf(parquet.Int32Type)), // byte with no annotation
			"i":  parquet.Optional(parquet.Int(32)),
			"l":  parquet.Optional(parquet.Int(64)),
			"ld": parquet.Optional(dict(parquet.Int(64))),
			"u8": parquet.Optional(parquet.Uint(8)),
		},
		rows: rowsOf(
			row("b", int32(-128), "s", int32(32767), "bp", int32(7), "i", int32(-5), "l", int64(1)<<40, "ld", int64(9), "u8", int32(255)),
			row("b", nil, "s", nil, "bp", nil, "i", nil, "l", nil, "ld", nil, "u8", nil),
			row("b", int32(127), "s", int32(-32768), "bp", int32(-7), "i", int32(2147483647), "l", int64(-1), "ld", int64(9), "u8", int32(0)),
		),
		patches: []patch{at("bp", noAnnotation)},
		want: st(fld("b", schema.Byte), fld("s", schema.Short), fld("bp", schema.Byte), fld("i", schema.Integer),
			fld("l", schema.Long), fld("ld", schema.Long), fld("u8", schema.Short)),
		expect: `
			[-128, 32767, 7, -5, 1099511627776, 9, 255]
			[null, null, null, null, null, null, null]
			[127, -32768, -7, 2147483647, -1, 9, 0]`,
	}, {
		name: "boolean float double",
		root: parquet.Group{
			"t": parquet.Optional(parquet.Leaf(parquet.BooleanType)),
			"f": parquet.Optional(parquet.Leaf(parquet.FloatType)),
			"d": parquet.Leaf(parquet.DoubleType),
		},
		rows: rowsOf(
			row("t", true, "f", float32(1.5), "d", 2.25),
			row("t", nil, "f", nil, "d", -0.5),
			row("t", false, "f", float32(-3), "d", 1e300),
		),
		want: st(fld("t", schema.Boolean), fld("f", schema.Float), fld("d", schema.Double)),
		expect: `
			[true, 1.5, 2.25]
			[null, null, -0.5]
			[false, -3.0, 1e+300]`,
	}, {
		name: "strings and binary",
		root: parquet.Group{
			"s":  parquet.Optional(parquet.String()),
			"sd": parquet.Optional(dict(parquet.String())),
			"sp": parquet.Optional(parquet.Leaf(parquet.ByteArrayType)), // plain BYTE_ARRAY read as string
			"se": parquet.Optional(parquet.Enum()),
			"b":  parquet.Optional(parquet.Leaf(parquet.ByteArrayType)),
			"fb": parquet.Optional(parquet.Leaf(parquet.FixedLenByteArrayType(2))),
		},
		rows: rowsOf(
			row("s", "héllo", "sd", "x", "sp", []byte("raw"), "se", "E", "b", []byte{0, 1, 0xff}, "fb", []byte{0xab, 0xcd}),
			row("s", nil, "sd", nil, "sp", nil, "se", nil, "b", nil, "fb", nil),
			row("s", "", "sd", "x", "sp", []byte{}, "se", "F", "b", []byte{}, "fb", []byte{0, 0}),
		),
		want: st(fld("s", schema.String), fld("sd", schema.String), fld("sp", schema.String),
			fld("se", schema.String), fld("b", schema.Binary), fld("fb", schema.Binary)),
		expect: `
			[héllo, x, raw, E, 0001ff, abcd]
			[null, null, null, null, null, null]
			[, x, , F, , 0000]`,
	}, {
		name: "dates and timestamps",
		root: parquet.Group{
			"d":    parquet.Optional(parquet.Date()),
			"ms":   parquet.Optional(parquet.TimestampAdjusted(parquet.Millisecond, true)),
			"us":   parquet.Optional(parquet.TimestampAdjusted(parquet.Microsecond, true)),
			"ns":   parquet.Optional(parquet.TimestampAdjusted(parquet.Nanosecond, true)),
			"i96":  parquet.Optional(parquet.Leaf(parquet.Int96Type)),
			"ntz":  parquet.Optional(parquet.TimestampAdjusted(parquet.Microsecond, false)),
			"lms":  parquet.Optional(parquet.Leaf(parquet.Int64Type)),
			"usd":  parquet.Optional(dict(parquet.TimestampAdjusted(parquet.Microsecond, true))),
			"i96n": parquet.Optional(parquet.Leaf(parquet.Int96Type)),
		},
		patches: []patch{at("lms", convertedOnly(deprecated.TimestampMillis))},
		rows: rowsOf(
			row("d", int32(d1), "ms", int64(t1/1000), "us", int64(t1), "ns", int64(t1)*1000+999, "i96", int96(t1),
				"ntz", int64(t1), "lms", int64(t1/1000), "usd", int64(t1), "i96n", int96(-1)),
			row("d", nil, "ms", nil, "us", nil, "ns", nil, "i96", nil, "ntz", nil, "lms", nil, "usd", nil, "i96n", nil),
			row("d", int32(-1), "ms", int64(-1), "us", int64(-1), "ns", int64(-1), "i96", int96(0),
				"ntz", int64(0), "lms", int64(0), "usd", int64(t1), "i96n", int96(-86_400_000_000*365)),
		),
		want: st(fld("d", schema.Date), fld("ms", schema.Timestamp), fld("us", schema.Timestamp), fld("ns", schema.Timestamp),
			fld("i96", schema.Timestamp), fld("ntz", schema.TimestampNTZ), fld("lms", schema.Timestamp),
			fld("usd", schema.Timestamp), fld("i96n", schema.Timestamp)),
		expect: `
			[2023-11-14, 2023-11-14T22:13:20.123Z, 2023-11-14T22:13:20.123456Z, 2023-11-14T22:13:20.123456Z, 2023-11-14T22:13:20.123456Z, 2023-11-14T22:13:20.123456, 2023-11-14T22:13:20.123Z, 2023-11-14T22:13:20.123456Z, 1969-12-31T23:59:59.999999Z]
			[null, null, null, null, null, null, null, null, null]
			[1969-12-31, 1969-12-31T23:59:59.999Z, 1969-12-31T23:59:59.999999Z, 1969-12-31T23:59:59.999999Z, 1970-01-01T00:00:00Z, 1970-01-01T00:00:00, 1970-01-01T00:00:00Z, 2023-11-14T22:13:20.123456Z, 1969-01-01T00:00:00Z]`,
	}, {
		// INT64 TIMESTAMP(NANOS), as pandas, arrow and delta-rs write it,
		// reads as microseconds rounded toward negative infinity, so that
		// a value and its stats bound stay ordered before 1970 too
		// (kernel-rs's arrow cast truncates toward zero; Spark and the Java
		// kernel refuse the unit).
		name: "nanosecond timestamps",
		root: parquet.Group{
			"ns":   parquet.Optional(parquet.TimestampAdjusted(parquet.Nanosecond, true)),
			"ntz":  parquet.Optional(parquet.TimestampAdjusted(parquet.Nanosecond, false)),
			"nsd":  parquet.Optional(dict(parquet.TimestampAdjusted(parquet.Nanosecond, true))),
			"list": stdList(parquet.Optional(parquet.TimestampAdjusted(parquet.Nanosecond, false))),
		},
		patches: []patch{autoAnnotate},
		rows: rowsOf(
			row("ns", int64(t1)*1000+999, "ntz", int64(-1000), "nsd", int64(-1001), "list", lst(int64(1), nil, int64(-1))),
			row("ns", int64(math.MinInt64), "ntz", int64(math.MaxInt64), "nsd", int64(-1001), "list", nil),
		),
		want: st(fld("ns", schema.Timestamp), fld("ntz", schema.TimestampNTZ), fld("nsd", schema.Timestamp),
			fld("list", arr(schema.TimestampNTZ))),
		expect: `
			[2023-11-14T22:13:20.123456Z, 1969-12-31T23:59:59.999999, 1969-12-31T23:59:59.999998Z, [1970-01-01T00:00:00, null, 1969-12-31T23:59:59.999999]]
			[1677-09-21T00:12:43.145224Z, 2262-04-11T23:47:16.854775, 1969-12-31T23:59:59.999998Z, null]`,
	}, {
		// Geometry and geography hold WKB in a BYTE_ARRAY annotated
		// GEOMETRY or GEOGRAPHY (or not at all): read as binary values.
		name: "geospatial",
		root: parquet.Group{
			"geom":  parquet.Optional(parquet.Leaf(parquet.ByteArrayType)),
			"geog":  parquet.Optional(parquet.Leaf(parquet.ByteArrayType)),
			"plain": parquet.Optional(parquet.Leaf(parquet.ByteArrayType)),
		},
		patches: []patch{
			at("geom", func(e *format.SchemaElement) {
				e.LogicalType = format.LogicalType{Value: &format.GeometryType{CRS: "OGC:CRS84"}}
			}),
			at("geog", func(e *format.SchemaElement) {
				e.LogicalType = format.LogicalType{Value: &format.GeographyType{Algorithm: format.Spherical}}
			}),
		},
		rows: rowsOf(
			row("geom", wkbPoint, "geog", wkbPoint, "plain", wkbPoint),
			row("geom", nil, "geog", nil, "plain", nil),
		),
		want: st(fld("geom", schema.GeometryType{CRS: "OGC:CRS84"}),
			fld("geog", schema.GeographyType{CRS: "OGC:CRS84", Algorithm: "spherical"}),
			fld("plain", schema.GeometryType{CRS: "EPSG:3857"})),
		expect: `
			[0101000000000000000000f03f0000000000000040, 0101000000000000000000f03f0000000000000040, 0101000000000000000000f03f0000000000000040]
			[null, null, null]`,
	}, {
		name:    "geometry from an integer",
		root:    parquet.Group{"g": parquet.Optional(parquet.Int(32))},
		rows:    rowsOf(row("g", int32(1))),
		want:    st(fld("g", schema.GeometryType{CRS: "OGC:CRS84"})),
		err:     datafile.ErrTypeMismatch,
		errText: "INT32 (INT(32,true)) as geometry(OGC:CRS84)",
	}, {
		name: "void columns read as null",
		root: parquet.Group{"a": parquet.Optional(parquet.Int(64))},
		rows: rowsOf(row("a", int64(1)), row("a", nil)),
		want: st(fld("v", schema.Void), fld("a", schema.Void), fld("b", schema.Long)),
		expect: `
			[null, null, null]
			[null, null, null]`,
	}}
	runCases(t, cases)
}

// wkbPoint is POINT(1 2) as little-endian WKB.
var wkbPoint = []byte{1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0x40}

// TestDecimals reads decimals from each physical encoding, legacy
// annotated too, at their own type and at wider ones.
func TestDecimals(t *testing.T) {
	root := parquet.Group{
		"i32": parquet.Optional(parquet.Decimal(2, 5, parquet.Int32Type)),
		"i64": parquet.Optional(parquet.Decimal(3, 12, parquet.Int64Type)),
		"fix": parquet.Optional(parquet.Decimal(4, 20, parquet.FixedLenByteArrayType(9))),
		"ba":  parquet.Optional(parquet.Decimal(5, 25, parquet.ByteArrayType)),
		"big": parquet.Optional(parquet.Decimal(0, 38, parquet.FixedLenByteArrayType(16))),
		"old": parquet.Optional(parquet.Leaf(parquet.Int64Type)),
		"dct": parquet.Optional(parquet.Encoded(parquet.Decimal(2, 9, parquet.Int32Type), &parquet.RLEDictionary)),
	}
	maxBig := []byte{0x4b, 0x3b, 0x4c, 0xa8, 0x5a, 0x86, 0xc4, 0x7a, 0x09, 0x8a, 0x22, 0x3f, 0xff, 0xff, 0xff, 0xff} // 10^38-1
	rows := rowsOf(
		row("i32", int32(-12345), "i64", int64(123456789012), "fix", twos(-1, 9), "ba", twos(1<<62, 9), "big", maxBig, "old", int64(-7), "dct", int32(5)),
		row("i32", nil, "i64", nil, "fix", nil, "ba", nil, "big", nil, "old", nil, "dct", nil),
		row("i32", int32(1), "i64", int64(-1), "fix", twos(1e15, 9), "ba", []byte{0x80}, "big", twos(-1, 16), "old", int64(0), "dct", int32(5)),
	)
	patches := []patch{at("old", legacyDecimal(10, 1))}
	runCases(t, []readCase{{
		name: "own types", root: root, rows: rows, patches: patches,
		want: st(fld("i32", dec(5, 2)), fld("i64", dec(12, 3)), fld("fix", dec(20, 4)), fld("ba", dec(25, 5)),
			fld("big", dec(38, 0)), fld("old", dec(10, 1)), fld("dct", dec(9, 2))),
		expect: `
			[-123.45, 123456789.012, -0.0001, 46116860184273.87904, 99999999999999999999999999999999999999, -0.7, 0.05]
			[null, null, null, null, null, null, null]
			[0.01, -0.001, 100000000000.0000, -0.00128, -1, 0.0, 0.05]`,
	}, {
		name: "widened", root: root, rows: rows, patches: patches,
		want: st(fld("i32", dec(10, 6)), fld("i64", dec(20, 3)), fld("fix", dec(38, 10)), fld("ba", dec(30, 5)),
			fld("big", dec(38, 0)), fld("old", dec(12, 3)), fld("dct", dec(10, 2))),
		expect: `
			[-123.450000, 123456789.012, -0.0001000000, 46116860184273.87904, 99999999999999999999999999999999999999, -0.700, 0.05]
			[null, null, null, null, null, null, null]
			[0.010000, -0.001, 100000000000.0000000000, -0.00128, -1, 0.000, 0.05]`,
	}, {
		name: "fewer integer digits", root: root, rows: rows, patches: patches,
		want: st(fld("i64", dec(12, 4))),
		err:  datafile.ErrTypeMismatch, errText: "i64",
	}, {
		name: "fewer fraction digits", root: root, rows: rows, patches: patches,
		want: st(fld("fix", dec(20, 3))),
		err:  deltaerr.ErrCorrupt, errText: "fix",
	}})
}

// TestWidening reads columns as the wider types of the typeWidening
// feature, and refuses narrowing and unrelated types.
func TestWidening(t *testing.T) {
	root := parquet.Group{
		"b":  parquet.Optional(parquet.Int(8)),
		"s":  parquet.Optional(parquet.Int(16)),
		"i":  parquet.Optional(parquet.Int(32)),
		"l":  parquet.Optional(parquet.Int(64)),
		"f":  parquet.Optional(parquet.Leaf(parquet.FloatType)),
		"d":  parquet.Optional(parquet.Date()),
		"dc": parquet.Optional(parquet.Decimal(2, 5, parquet.Int32Type)),
		"st": parquet.Optional(parquet.String()),
		"g":  parquet.Optional(parquet.Group{"x": parquet.Optional(parquet.Int(32))}),
	}
	rows := rowsOf(
		row("b", int32(-3), "s", int32(300), "i", int32(-70000), "l", int64(1)<<53, "f", float32(3.4), "d", int32(19975),
			"dc", int32(12345), "st", "x", "g", row("x", int32(1))),
		row("b", nil, "s", nil, "i", nil, "l", nil, "f", nil, "d", nil, "dc", nil, "st", nil, "g", nil),
	)
	ok := []readCase{{
		name: "to long",
		want: st(fld("b", schema.Long), fld("s", schema.Long), fld("i", schema.Long), fld("b", schema.Integer), fld("s", schema.Integer), fld("b", schema.Short)),
		expect: `
			[-3, 300, -70000, -3, 300, -3]
			[null, null, null, null, null, null]`,
	}, {
		name: "to double",
		want: st(fld("b", schema.Double), fld("s", schema.Double), fld("i", schema.Double), fld("l", schema.Double), fld("f", schema.Double)),
		expect: `
			[-3.0, 300.0, -70000.0, 9007199254740992.0, 3.4000000953674316]
			[null, null, null, null, null]`,
	}, {
		name: "to decimal",
		want: st(fld("b", dec(3, 0)), fld("s", dec(7, 2)), fld("i", dec(10, 0)), fld("l", dec(22, 2)), fld("dc", dec(8, 4))),
		expect: `
			[-3, 300.00, -70000, 9007199254740992.00, 123.4500]
			[null, null, null, null, null]`,
	}, {
		name: "date to timestamp_ntz",
		want: st(fld("d", schema.TimestampNTZ)),
		expect: `
			[2024-09-09T00:00:00]
			[null]`,
	}}
	bad := []struct {
		name, col string
		t         schema.DataType
	}{
		{"long as integer", "l", schema.Integer},
		{"integer as short", "i", schema.Short},
		{"short as byte", "s", schema.Byte},
		{"double from float as float is fine, double as float is not", "f", schema.Long},
		{"string as long", "st", schema.Long},
		{"long as string", "l", schema.String},
		{"int as decimal too small", "i", dec(9, 0)},
		{"date as timestamp", "d", schema.Timestamp},
		{"struct as long", "g", schema.Long},
		{"long as struct", "l", st(fld("x", schema.Integer))},
		{"struct as array", "g", arr(schema.Integer)},
		{"struct as map", "g", mp(schema.String, schema.Integer)},
		{"nested field", "g", st(fld("x", schema.String))},
	}
	var cases []readCase
	for _, c := range ok {
		c.root, c.rows = root, rows
		cases = append(cases, c)
	}
	for _, b := range bad {
		cases = append(cases, readCase{name: b.name, root: root, rows: rows, want: st(fld(b.col, b.t)),
			err: datafile.ErrTypeMismatch, errText: "column " + b.col})
	}
	runCases(t, cases)
}

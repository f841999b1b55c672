package datafile_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/internal/datafile"
	"github.com/godelta/delta/schema"
)

// writeRows writes rows (row-major) with a Writer, in batches of batch
// rows (all at once when batch is 0), and returns the file and its stats.
func writeRows(t testing.TB, phys *schema.StructType, opts datafile.WriteOptions, rows [][]schema.Value, batch int) ([]byte, datafile.Stats) {
	t.Helper()
	var buf bytes.Buffer
	w, err := datafile.NewWriter(&buf, phys, opts)
	if err != nil {
		t.Fatalf("NewWriter: %v", err)
	}
	if batch <= 0 {
		batch = max(len(rows), 1)
	}
	for start := 0; start < len(rows); start += batch {
		chunk := rows[start:min(len(rows), start+batch)]
		if err := w.Write(columns(chunk, len(phys.Fields)), len(chunk)); err != nil {
			t.Fatalf("Write: %v", err)
		}
	}
	stats, err := w.Close()
	if err != nil {
		t.Fatalf("Close: %v", err)
	}
	return buf.Bytes(), stats
}

// columns turns rows into the column-major form Write takes.
func columns(rows [][]schema.Value, width int) [][]schema.Value {
	cols := make([][]schema.Value, width)
	for i := range cols {
		cols[i] = make([]schema.Value, len(rows))
		for j, r := range rows {
			cols[i][j] = r[i]
		}
	}
	return cols
}

// readAll reads every row of a file as values, row-major.
func readAll(t testing.TB, data []byte, want *schema.StructType, opts datafile.ReadOptions) [][]schema.Value {
	t.Helper()
	f, err := datafile.Open(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	var out [][]schema.Value
	err = f.Read(context.Background(), want, opts, func(b *datafile.Batch) error {
		for i := range b.Len {
			r := make([]schema.Value, len(b.Columns))
			for j := range b.Columns {
				r[j] = b.Columns[j][i]
			}
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if int64(len(out)) != f.NumRows() {
		t.Fatalf("read %d rows of %d", len(out), f.NumRows())
	}
	return out
}

// sameValue reports whether two values are identical: same kind, same
// type for decimals, same value (NaN equal to NaN, -0 apart from 0),
// nested values element by element.
func sameValue(a, b schema.Value) bool {
	if a.Kind() != b.Kind() {
		return false
	}
	switch a.Kind() {
	case schema.KindStruct, schema.KindArray, schema.KindMap:
		var x, y []schema.Value
		switch a.Kind() {
		case schema.KindStruct:
			x, y = a.Fields(), b.Fields()
		case schema.KindArray:
			x, y = a.Elements(), b.Elements()
		default:
			if a.MapLen() != b.MapLen() {
				return false
			}
			for i := range a.MapLen() {
				ak, av := a.MapEntry(i)
				bk, bv := b.MapEntry(i)
				if !sameValue(ak, bk) || !sameValue(av, bv) {
					return false
				}
			}
			return true
		}
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameValue(x[i], y[i]) {
				return false
			}
		}
		return true
	case schema.KindFloat, schema.KindDouble:
		return math.Float64bits(a.Float64()) == math.Float64bits(b.Float64()) ||
			math.IsNaN(a.Float64()) && math.IsNaN(b.Float64())
	case schema.KindDecimal:
		return a.Type() == b.Type() && a.String() == b.String()
	case schema.KindBinary:
		return bytes.Equal(a.Bytes(), b.Bytes())
	}
	return a.String() == b.String()
}

func decv(t testing.TB, text string, p, s int) schema.Value {
	t.Helper()
	v, err := schema.ParsePartitionValue(dec(p, s), text)
	if err != nil {
		t.Fatalf("decimal %s: %v", text, err)
	}
	return v
}

func req(name string, t schema.DataType) schema.StructField {
	return schema.StructField{Name: name, Type: t}
}

var (
	null  = schema.Value{}
	i32   = schema.IntegerValue
	i64   = schema.LongValue
	str   = schema.StringValue
	sv    = schema.StructValue
	av    = func(e ...schema.Value) schema.Value { return schema.ArrayValue(e) }
	mv    = func(kv ...schema.Value) schema.Value { return schema.MapValue(kv) }
	binv  = func(s string) schema.Value { return schema.BinaryValue([]byte(s)) }
	daysv = schema.DateValue
)

// TestWriteRoundTrip writes every type, then reads the file back with
// Read: the values must be identical.
func TestWriteRoundTrip(t *testing.T) {
	maxDec := func(p int, neg bool) string {
		s := strings.Repeat("9", p)
		if neg {
			s = "-" + s
		}
		return s
	}
	cases := []struct {
		name   string
		schema *schema.StructType
		rows   [][]schema.Value
		opts   datafile.WriteOptions
		batch  int
	}{{
		name: "primitives",
		schema: st(fld("bo", schema.Boolean), fld("by", schema.Byte), fld("sh", schema.Short), fld("in", schema.Integer),
			fld("lo", schema.Long), fld("fl", schema.Float), fld("do", schema.Double), fld("s", schema.String),
			fld("bi", schema.Binary), fld("da", schema.Date), fld("ts", schema.Timestamp), fld("tn", schema.TimestampNTZ)),
		rows: [][]schema.Value{
			{schema.BooleanValue(true), schema.ByteValue(-128), schema.ShortValue(32767), i32(math.MinInt32), i64(math.MaxInt64),
				schema.FloatValue(1.5), schema.DoubleValue(math.Copysign(0, -1)), str("héllo"), binv("\x00\xff"), daysv(-1),
				schema.TimestampValue(-1), schema.TimestampNTZValue(1_700_000_000_123_456)},
			{null, null, null, null, null, null, null, null, null, null, null, null},
			{schema.BooleanValue(false), schema.ByteValue(127), schema.ShortValue(-32768), i32(math.MaxInt32), i64(math.MinInt64),
				schema.FloatValue(float32(math.Inf(-1))), schema.DoubleValue(math.NaN()), str(""), binv(""), daysv(19000),
				schema.TimestampValue(1_700_000_000_123_456), schema.TimestampNTZValue(0)},
		},
	}, {
		name:   "required primitives",
		schema: st(req("a", schema.Long), req("b", schema.String), req("c", schema.Double)),
		rows: [][]schema.Value{
			{i64(1), str("x"), schema.DoubleValue(1)},
			{i64(2), str("y"), schema.DoubleValue(math.Inf(1))},
		},
	}, {
		name: "decimals of each width",
		schema: st(fld("d5", dec(5, 2)), fld("d9", dec(9, 0)), fld("d10", dec(10, 3)), fld("d18", dec(18, 18)),
			fld("d19", dec(19, 0)), fld("d38", dec(38, 10))),
		rows: [][]schema.Value{
			{decv(t, "123.45", 5, 2), decv(t, maxDec(9, false), 9, 0), decv(t, "-1234567.891", 10, 3),
				decv(t, "0."+maxDec(18, false), 18, 18), decv(t, maxDec(19, true), 19, 0), decv(t, maxDec(28, false)+"."+maxDec(10, false), 38, 10)},
			{decv(t, "-999.99", 5, 2), decv(t, maxDec(9, true), 9, 0), decv(t, "0.000", 10, 3),
				decv(t, "-0.000000000000000001", 18, 18), decv(t, maxDec(19, false), 19, 0), decv(t, "-"+maxDec(28, false)+"."+maxDec(10, false), 38, 10)},
			{null, null, null, null, null, decv(t, "-0.0000000001", 38, 10)},
		},
	}, {
		name: "structs",
		schema: st(fld("id", schema.Long), fld("s", st(fld("a", schema.Integer), fld("b", st(fld("c", schema.String), req("d", schema.Date))))),
			req("r", st(req("x", schema.Integer)))),
		rows: [][]schema.Value{
			{i64(0), sv([]schema.Value{i32(1), sv([]schema.Value{str("x"), daysv(3)})}), sv([]schema.Value{i32(7)})},
			{i64(1), null, sv([]schema.Value{i32(8)})},
			{i64(2), sv([]schema.Value{null, null}), sv([]schema.Value{i32(9)})},
			{i64(3), sv([]schema.Value{i32(2), sv([]schema.Value{null, daysv(4)})}), sv([]schema.Value{i32(10)})},
		},
	}, {
		name: "arrays",
		schema: st(fld("l", arr(schema.Integer)), fld("ll", arr(arr(schema.String))),
			fld("ls", arr(st(fld("x", schema.Integer), fld("y", arr(schema.Long))))),
			fld("lr", &schema.ArrayType{ElementType: schema.Long}), req("rl", arr(schema.Integer))),
		rows: [][]schema.Value{
			{av(i32(1), null, i32(3)), av(av(str("p"), null), null, av()), av(sv([]schema.Value{i32(1), av(i64(2), i64(3))}), null, sv([]schema.Value{null, null})), av(i64(5), i64(6)), av()},
			{null, null, null, null, av(null)},
			{av(), av(), av(), av(), av(i32(1), i32(2))},
			{av(null), av(null), av(null), av(i64(1)), av(i32(3))},
		},
	}, {
		name: "maps",
		schema: st(fld("m", mp(schema.String, schema.Long)), fld("ml", mp(schema.Integer, arr(schema.Integer))),
			fld("ms", mp(schema.String, st(fld("a", schema.Integer)))), fld("mr", &schema.MapType{KeyType: schema.Long, ValueType: schema.String}),
			fld("mm", mp(schema.String, mp(schema.String, schema.Integer)))),
		rows: [][]schema.Value{
			{mv(str("a"), i64(1), str("b"), null), mv(i32(1), av(i32(1), null), i32(2), null, i32(3), av()),
				mv(str("k"), sv([]schema.Value{i32(1)}), str("n"), null, str("e"), sv([]schema.Value{null})), mv(i64(1), str("x")),
				mv(str("o"), mv(str("i"), i32(1)), str("p"), mv())},
			{null, null, null, null, null},
			{mv(), mv(), mv(), mv(), mv()},
			{mv(str("z"), i64(-1)), null, mv(str("q"), null), mv(i64(2), str("y"), i64(3), str("")), mv(str("o"), null)},
		},
	}, {
		name:   "variants",
		schema: st(fld("id", schema.Long), fld("v", schema.Variant), fld("lv", arr(schema.Variant))),
		rows: [][]schema.Value{
			{i64(1), sv([]schema.Value{binv("\x01\x00\x00"), binv("\x0c\x01")}), av(sv([]schema.Value{binv("\x01"), binv("\x00")}), null)},
			{i64(2), null, null},
		},
	}, {
		name:   "void columns left out",
		schema: st(fld("a", schema.Integer), fld("v", schema.Void), fld("s", st(fld("n", schema.Void), fld("b", schema.String)))),
		rows: [][]schema.Value{
			{i32(1), null, sv([]schema.Value{null, str("x")})},
			{null, null, null},
		},
	}, {
		name:   "field ids",
		schema: st(withID(fld("a", schema.Integer), 1), withID(fld("s", st(withID(fld("b", schema.String), 3))), 2)),
		opts:   datafile.WriteOptions{ByFieldID: true},
		rows:   [][]schema.Value{{i32(1), sv([]schema.Value{str("x")})}, {null, null}},
	}}
	for _, c := range cases {
		for _, comp := range []string{"", "zstd", "gzip", "none"} {
			t.Run(c.name+"/"+comp, func(t *testing.T) {
				opts := c.opts
				opts.Compression = comp
				data, stats := writeRows(t, c.schema, opts, c.rows, 1)
				if stats.NumRecords != int64(len(c.rows)) {
					t.Errorf("NumRecords %d, want %d", stats.NumRecords, len(c.rows))
				}
				got := readAll(t, data, c.schema, datafile.ReadOptions{ByFieldID: opts.ByFieldID})
				checkRows(t, got, c.rows)
			})
		}
	}
}

func checkRows(t *testing.T, got, want [][]schema.Value) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("read %d rows, want %d", len(got), len(want))
	}
	for i := range want {
		for j := range want[i] {
			w := want[i][j]
			if !sameValue(got[i][j], w) {
				t.Errorf("row %d column %d: got %v (%v), want %v (%v)", i, j, got[i][j], got[i][j].Kind(), w, w.Kind())
			}
		}
	}
}

// TestWriteManyRows crosses chunk, page and row group boundaries, with
// batches of odd sizes.
func TestWriteManyRows(t *testing.T) {
	sch := st(req("id", schema.Long), fld("s", schema.String), fld("l", arr(schema.Integer)), fld("m", mp(schema.String, schema.Integer)))
	const n = 20000
	rows := make([][]schema.Value, n)
	for i := range rows {
		r := []schema.Value{i64(int64(i)), str(strconv.Itoa(i % 97)), null, null}
		if i%5 != 0 {
			r[2] = av(i32(int32(i)), null)
		}
		if i%7 == 0 {
			r[3] = mv(str("k"+strconv.Itoa(i)), i32(int32(-i)))
		}
		if i%11 == 0 {
			r[1] = null
		}
		rows[i] = r
	}
	for _, c := range []struct {
		name  string
		opts  datafile.WriteOptions
		batch int
	}{
		{"one batch", datafile.WriteOptions{}, 0},
		{"odd batches", datafile.WriteOptions{}, 3001},
		{"small row groups", datafile.WriteOptions{RowGroupSize: 64 << 10}, 1000},
	} {
		t.Run(c.name, func(t *testing.T) {
			data, stats := writeRows(t, sch, c.opts, rows, c.batch)
			if stats.NumRecords != n {
				t.Fatalf("NumRecords %d", stats.NumRecords)
			}
			pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
			if err != nil {
				t.Fatal(err)
			}
			rgs := len(pf.Metadata().RowGroups)
			if c.opts.RowGroupSize != 0 && rgs < 2 {
				t.Errorf("%d row groups, want several", rgs)
			}
			if c.opts.RowGroupSize == 0 && rgs != 1 {
				t.Errorf("%d row groups, want 1", rgs)
			}
			checkRows(t, readAll(t, data, sch, datafile.ReadOptions{BatchSize: 777}), rows)
		})
	}
}

// TestWriteEmpty writes a file of no rows: it reads back empty, and its
// stats say so.
func TestWriteEmpty(t *testing.T) {
	sch := st(fld("a", schema.Long), fld("s", st(fld("b", schema.String))), fld("l", arr(schema.Integer)))
	data, stats := writeRows(t, sch, datafile.WriteOptions{}, nil, 0)
	if got := readAll(t, data, sch, datafile.ReadOptions{}); len(got) != 0 {
		t.Fatalf("read %d rows", len(got))
	}
	want := `{"numRecords":0,"minValues":{},"maxValues":{},"nullCount":{"a":0,"s":{"b":0},"l":0}}`
	if got := stats.JSON(); got != want {
		t.Errorf("JSON\n got %s\nwant %s", got, want)
	}
}

// parquetSchema returns the schema elements of a file, keyed by dotted
// path, and the paths in file order.
func parquetSchema(t *testing.T, data []byte) (map[string]format.SchemaElement, []string) {
	t.Helper()
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	elems := pf.Metadata().Schema
	out := map[string]format.SchemaElement{}
	var order []string
	type frame struct {
		prefix string
		left   int32
	}
	stack := []frame{{"", elems[0].NumChildren.V}}
	for i := 1; i < len(elems); i++ {
		for stack[len(stack)-1].left == 0 {
			stack = stack[:len(stack)-1]
		}
		top := &stack[len(stack)-1]
		top.left--
		p := top.prefix + elems[i].Name
		out[p] = elems[i]
		order = append(order, p)
		if nc, ok := elems[i].NumChildren.Get(); ok && nc > 0 && !elems[i].Type.Valid {
			stack = append(stack, frame{p + ".", nc})
		}
	}
	return out, order
}

// TestWriteSchemaLikeSpark compares the Parquet schema of written files
// with files Spark wrote for the same Delta schema: names and their order,
// repetition, physical type, length, logical type and field ids. Spark
// wrote its timestamps as INT96, which this package does not (see
// write.go); those columns are compared with INT64 TIMESTAMP(MICROS).
func TestWriteSchemaLikeSpark(t *testing.T) {
	dir := corpusDir(t)
	for _, c := range []struct {
		table string // root of a table whose first data file is compared
		byID  bool
	}{
		{"golden/parquet-all-types/delta", false},
		{"kernel-rs/stats-writing-all-types/delta", true},
		{"kernel-rs/unshredded-variant", false},
	} {
		t.Run(c.table, func(t *testing.T) {
			root := filepath.Join(dir, c.table)
			meta := readMeta(t, root)
			phys := meta.dataSchema(t)
			files := parquetFiles(t, root)
			if len(files) == 0 {
				t.Fatal("no data files")
			}
			spark, err := os.ReadFile(files[0])
			if err != nil {
				t.Fatal(err)
			}
			ours, _ := writeRows(t, phys, datafile.WriteOptions{ByFieldID: c.byID}, nil, 0)
			se, sorder := parquetSchema(t, spark)
			oe, oorder := parquetSchema(t, ours)
			if strings.Join(sorder, " ") != strings.Join(oorder, " ") {
				t.Fatalf("columns\n got %v\nwant %v", oorder, sorder)
			}
			for _, p := range sorder {
				s, o := se[p], oe[p]
				if s.Type.Valid && s.Type.V == format.Int96 {
					if o.Type.V != format.Int64 || o.LogicalType.String() != "TIMESTAMP(isAdjustedToUTC=true,unit=MICROS)" {
						t.Errorf("%s: timestamp written as %v %v", p, o.Type, o.LogicalType)
					}
					continue
				}
				got := describeElem(o)
				if want := describeElem(s); got != want {
					t.Errorf("%s:\n got %s\nwant %s", p, got, want)
				}
			}
		})
	}
}

func describeElem(e format.SchemaElement) string {
	s := "rep=" + e.RepetitionType.V.String()
	if e.Type.Valid {
		s += " type=" + e.Type.V.String()
	}
	if e.TypeLength.Valid {
		s += " len=" + strconv.Itoa(int(e.TypeLength.V))
	}
	if e.LogicalType.Value != nil {
		s += " logical=" + e.LogicalType.String()
	}
	if e.NumChildren.Valid {
		s += " children=" + strconv.Itoa(int(e.NumChildren.V))
	}
	return s + " id=" + strconv.Itoa(int(e.FieldID))
}

// TestWriteFieldIDs checks that ids reach the footer at every level and
// that the reader matches by them, whatever the names.
func TestWriteFieldIDs(t *testing.T) {
	sch := st(withID(fld("a", schema.Integer), 7), withID(fld("s", st(withID(fld("b", schema.String), 9))), 8),
		withID(fld("l", arr(st(withID(fld("e", schema.Long), 11)))), 10), fld("noid", schema.Long))
	rows := [][]schema.Value{{i32(1), sv([]schema.Value{str("x")}), av(sv([]schema.Value{i64(3)})), i64(4)}}
	data, _ := writeRows(t, sch, datafile.WriteOptions{ByFieldID: true}, rows, 0)
	elems, _ := parquetSchema(t, data)
	for path, id := range map[string]int32{"a": 7, "s": 8, "s.b": 9, "l": 10, "l.list.element.e": 11, "noid": 0, "l.list": 0} {
		if got := elems[path].FieldID; got != id {
			t.Errorf("%s: field id %d, want %d", path, got, id)
		}
	}
	renamed := st(withID(fld("x", schema.Integer), 7), withID(fld("y", st(withID(fld("z", schema.String), 9))), 8),
		withID(fld("w", arr(st(withID(fld("q", schema.Long), 11)))), 10), fld("noid", schema.Long))
	checkRows(t, readAll(t, data, renamed, datafile.ReadOptions{ByFieldID: true}), rows)

	plain, _ := writeRows(t, sch, datafile.WriteOptions{}, rows, 0)
	elems, _ = parquetSchema(t, plain)
	for p, e := range elems {
		if e.FieldID != 0 {
			t.Errorf("%s: field id %d without ByFieldID", p, e.FieldID)
		}
	}
}

type failWriter struct{ n int }

var errDiskFull = errors.New("disk full")

func (f *failWriter) Write(p []byte) (int, error) {
	if f.n -= len(p); f.n < 0 {
		return 0, errDiskFull
	}
	return len(p), nil
}

// TestWriteErrors checks that bad schemas, options and values give typed
// errors, and that an I/O error reaches the caller.
func TestWriteErrors(t *testing.T) {
	var buf bytes.Buffer
	if _, err := datafile.NewWriter(&buf, st(fld("g", schema.GeometryType{CRS: "OGC:CRS84"})), datafile.WriteOptions{}); !errors.Is(err, datafile.ErrUnsupportedType) {
		t.Errorf("geometry: %v", err)
	}
	if _, err := datafile.NewWriter(&buf, st(fld("v", schema.Void)), datafile.WriteOptions{}); !errors.Is(err, datafile.ErrUnsupportedType) {
		t.Errorf("only void: %v", err)
	}
	if _, err := datafile.NewWriter(&buf, st(fld("a", schema.Long)), datafile.WriteOptions{Compression: "lzo"}); !errors.Is(err, deltaerr.ErrInvalidArgument) {
		t.Errorf("compression: %v", err)
	}
	if _, err := datafile.NewWriter(&buf, nil, datafile.WriteOptions{}); !errors.Is(err, deltaerr.ErrInvalidArgument) {
		t.Errorf("nil schema: %v", err)
	}

	sch := st(req("r", schema.Long), fld("i", schema.Integer), fld("d", dec(4, 2)), fld("s", st(fld("a", schema.Long))),
		fld("l", &schema.ArrayType{ElementType: schema.Long}), fld("m", mp(schema.String, schema.Long)), fld("ts", schema.Timestamp))
	good := []schema.Value{i64(1), null, null, null, null, null, null}
	for _, c := range []struct {
		name   string
		col    int
		v      schema.Value
		reason string
	}{
		{"null in required", 0, null, "column r, row 1: null"},
		{"string for long", 0, str("1"), "column r, row 1: string value"},
		{"long too big for integer", 1, i64(1 << 40), "column i, row 1"},
		{"decimal too wide", 2, decv(t, "123.45", 5, 2), "column d, row 1"},
		{"decimal with more scale", 2, decv(t, "1.234", 4, 3), "column d, row 1"},
		{"struct of wrong width", 3, sv([]schema.Value{i64(1), i64(2)}), "column s, row 1"},
		{"long for struct", 3, i64(1), "column s, row 1"},
		{"null element not allowed", 4, av(null), "column l.list.element, row 1"},
		{"null map key", 5, mv(null, i64(1)), "column m.key_value.key, row 1"},
		{"ntz for timestamp", 6, schema.TimestampNTZValue(1), "column ts, row 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			bad := append([]schema.Value(nil), good...)
			bad[c.col] = c.v
			var buf bytes.Buffer
			w, err := datafile.NewWriter(&buf, sch, datafile.WriteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			err = w.Write(columns([][]schema.Value{good, bad}, len(good)), 2)
			if !errors.Is(err, datafile.ErrValueMismatch) || !errors.Is(err, deltaerr.ErrInvalidArgument) {
				t.Fatalf("Write: %v", err)
			}
			if !strings.Contains(err.Error(), c.reason) {
				t.Errorf("error %q does not say %q", err, c.reason)
			}
			if err2 := w.Write(columns([][]schema.Value{good}, len(good)), 1); !errors.Is(err2, datafile.ErrValueMismatch) {
				t.Errorf("Write after an error: %v", err2)
			}
			if _, err2 := w.Close(); !errors.Is(err2, datafile.ErrValueMismatch) {
				t.Errorf("Close after an error: %v", err2)
			}
		})
	}

	t.Run("wrong batch shape", func(t *testing.T) {
		w, err := datafile.NewWriter(&bytes.Buffer{}, sch, datafile.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(columns([][]schema.Value{good}, 3), 1); !errors.Is(err, deltaerr.ErrInvalidArgument) {
			t.Errorf("3 columns: %v", err)
		}
		if err := w.Write(columns([][]schema.Value{good}, len(good)), 2); !errors.Is(err, deltaerr.ErrInvalidArgument) {
			t.Errorf("short columns: %v", err)
		}
	})

	t.Run("use after close", func(t *testing.T) {
		w, err := datafile.NewWriter(&bytes.Buffer{}, sch, datafile.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := w.Write(columns([][]schema.Value{good}, len(good)), 1); !errors.Is(err, deltaerr.ErrInvalidArgument) {
			t.Errorf("Write after Close: %v", err)
		}
		if _, err := w.Close(); !errors.Is(err, deltaerr.ErrInvalidArgument) {
			t.Errorf("second Close: %v", err)
		}
	})

	t.Run("io error", func(t *testing.T) {
		for _, budget := range []int{0, 100, 1000} {
			w, err := datafile.NewWriter(&failWriter{n: budget}, sch, datafile.WriteOptions{NoDictionary: true})
			if err != nil {
				t.Fatal(err)
			}
			rows := make([][]schema.Value, 5000)
			for i := range rows {
				rows[i] = good
			}
			err = w.Write(columns(rows, len(good)), len(rows))
			if err == nil {
				_, err = w.Close()
			}
			if !errors.Is(err, errDiskFull) {
				t.Errorf("budget %d: %v", budget, err)
			}
		}
	})
}

// TestWriteSize checks that Size grows with the rows written and is close
// to the file's size once closed.
func TestWriteSize(t *testing.T) {
	sch := st(req("id", schema.Long), fld("s", schema.String))
	var buf bytes.Buffer
	w, err := datafile.NewWriter(&buf, sch, datafile.WriteOptions{Compression: "none", NoDictionary: true})
	if err != nil {
		t.Fatal(err)
	}
	last := w.Size()
	for b := range 5 {
		rows := make([][]schema.Value, 1000)
		for i := range rows {
			rows[i] = []schema.Value{i64(int64(b*1000 + i)), str(strings.Repeat("x", 20))}
		}
		if err := w.Write(columns(rows, 2), len(rows)); err != nil {
			t.Fatal(err)
		}
		if s := w.Size(); s <= last {
			t.Errorf("Size %d after %d rows, was %d", s, (b+1)*1000, last)
		} else {
			last = s
		}
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// 5000 rows of 8 + 4 + 20 bytes of data, uncompressed.
	if n := int64(buf.Len()); last < 5000*28 || n < 5000*28 {
		t.Errorf("Size %d, file %d: below the data's size", last, n)
	}
}

// writeBenchRow is the row of the write benchmark's parquet-go baseline:
// the columns of BenchmarkRead's file, without dictionary encoding (the
// Writer writes plain pages).
type writeBenchRow struct {
	ID    int64     `parquet:"id"`
	Value float64   `parquet:"value"`
	Name  string    `parquet:"name"`
	TS    time.Time `parquet:"ts,timestamp(microsecond)"`
	N     *int32    `parquet:"n,optional"`
}

const writeBenchRows = 1 << 18

// BenchmarkWrite writes the same rows with the Writer, with and without
// statistics, and with parquet-go's GenericWriter of Go structs, each
// with snappy compression and without: the project's target is the
// Writer with statistics within 1.1x of the bare parquet-go write.
func BenchmarkWrite(b *testing.B) {
	sch := st(req("id", schema.Long), req("value", schema.Double), req("name", schema.String),
		req("ts", schema.Timestamp), fld("n", schema.Integer))
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	structs := make([]writeBenchRow, writeBenchRows)
	cols := make([][]schema.Value, 5)
	for j := range cols {
		cols[j] = make([]schema.Value, writeBenchRows)
	}
	for i := range writeBenchRows {
		r := writeBenchRow{ID: int64(i), Value: float64(i) * 0.5, Name: "name-" + strconv.Itoa(i%1000),
			TS: base.Add(time.Duration(i) * time.Second)}
		cols[0][i], cols[1][i], cols[2][i] = i64(r.ID), schema.DoubleValue(r.Value), str(r.Name)
		cols[3][i] = schema.TimestampValue(r.TS.UnixMicro())
		if i%3 != 0 {
			n := int32(i)
			r.N = &n
			cols[4][i] = i32(n)
		}
		structs[i] = r
	}
	const batch = 8192
	for _, comp := range []string{"snappy", "none"} {
		for _, c := range []struct {
			name  string
			stats datafile.StatsOptions
		}{
			{"stats", datafile.StatsOptions{}},
			{"nostats", datafile.StatsOptions{StatsColumns: []string{}}},
		} {
			b.Run("datafile-"+c.name+"/"+comp, func(b *testing.B) {
				b.ReportAllocs()
				var buf bytes.Buffer
				for b.Loop() {
					buf.Reset()
					w, err := datafile.NewWriter(&buf, sch, datafile.WriteOptions{Compression: comp, Stats: c.stats})
					if err != nil {
						b.Fatal(err)
					}
					part := make([][]schema.Value, len(cols))
					for start := 0; start < writeBenchRows; start += batch {
						for j := range cols {
							part[j] = cols[j][start : start+batch]
						}
						if err := w.Write(part, batch); err != nil {
							b.Fatal(err)
						}
					}
					if _, err := w.Close(); err != nil {
						b.Fatal(err)
					}
				}
				b.SetBytes(int64(buf.Len()))
			})
		}
		b.Run("parquet-go-generic/"+comp, func(b *testing.B) {
			b.ReportAllocs()
			codec := parquet.Compression(&parquet.Snappy)
			if comp == "none" {
				codec = parquet.Compression(&parquet.Uncompressed)
			}
			var buf bytes.Buffer
			for b.Loop() {
				buf.Reset()
				w := parquet.NewGenericWriter[writeBenchRow](&buf, codec)
				for start := 0; start < writeBenchRows; start += batch {
					if _, err := w.Write(structs[start : start+batch]); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(buf.Len()))
		})
	}
}

// Values of a batch never share bytes: each wide decimal (a fixed-length
// byte array) reads back as written, whatever buffers the writer reuses.
func TestWriteDistinctWideDecimals(t *testing.T) {
	sch := &schema.StructType{Fields: []schema.StructField{{Name: "d", Type: schema.DecimalType{Precision: 38, Scale: 18}, Nullable: true}}}
	var in []schema.Value
	for i := range 3 {
		u, _ := new(big.Int).SetString(fmt.Sprintf("1234567890123456789000000000000000000%d", i), 10)
		v, err := schema.DecimalValue(u, 38, 18)
		if err != nil {
			t.Fatal(err)
		}
		in = append(in, v)
	}
	var buf bytes.Buffer
	w, err := datafile.NewWriter(&buf, sch, datafile.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write([][]schema.Value{in}, len(in)); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := datafile.Open(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := f.Read(context.Background(), sch, datafile.ReadOptions{}, func(b *datafile.Batch) error {
		for _, v := range b.Columns[0] {
			got = append(got, v.String())
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for i, v := range in {
		if i >= len(got) || got[i] != v.String() {
			t.Fatalf("read %v, wrote %v", got, in)
		}
	}
}

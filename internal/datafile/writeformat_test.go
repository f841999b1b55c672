package datafile_test

// Tests of the Writer's file format against parquet-go's own, independent
// readers: the values and levels of every column, the footer's
// statistics, the pages of the column chunks, and the codecs. The
// expectations are derived here from the test data by hand (the Dremel
// levels included), not by the Writer's code.

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"github.com/godelta/delta/internal/buildinfo"
	"hash/crc32"
	"io"
	"maps"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/godelta/delta/internal/datafile"
	"github.com/godelta/delta/schema"
)

// Canonical forms of a Parquet value, by physical type, to compare what
// parquet-go reads with what the test expects.
func pBool(b bool) string          { return strconv.FormatBool(b) }
func pI32(x int32) string          { return "i" + strconv.FormatInt(int64(x), 10) }
func pI64(x int64) string          { return "l" + strconv.FormatInt(x, 10) }
func pF32(f float32) string        { return "f" + strconv.FormatUint(uint64(math.Float32bits(f)), 16) }
func pF64(f float64) string        { return "d" + strconv.FormatUint(math.Float64bits(f), 16) }
func pBytes(b []byte) string       { return "b" + hex.EncodeToString(b) }
func pStr(s string) string         { return pBytes([]byte(s)) }
func lv(r, d int, v string) string { return fmt.Sprintf("%d/%d/%s", r, d, v) }

func pv(v parquet.Value) string {
	if v.IsNull() {
		return "null"
	}
	switch v.Kind() {
	case parquet.Boolean:
		return pBool(v.Boolean())
	case parquet.Int32:
		return pI32(v.Int32())
	case parquet.Int64:
		return pI64(v.Int64())
	case parquet.Float:
		return pF32(v.Float())
	case parquet.Double:
		return pF64(v.Double())
	}
	return pBytes(v.ByteArray())
}

// parquetGoColumns reads a file with parquet-go's row reader, row group by
// row group, and returns each leaf column's entries as repetition
// level/definition level/value.
func parquetGoColumns(t *testing.T, data []byte) [][]string {
	t.Helper()
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	cols := make([][]string, len(pf.Schema().Columns()))
	buf := make([]parquet.Row, 100)
	for _, rg := range pf.RowGroups() {
		rows := rg.Rows()
		for {
			n, err := rows.ReadRows(buf)
			for _, row := range buf[:n] {
				row.Range(func(c int, vals []parquet.Value) bool {
					for _, v := range vals {
						cols[c] = append(cols[c], lv(v.RepetitionLevel(), v.DefinitionLevel(), pv(v)))
					}
					return true
				})
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		rows.Close()
	}
	return cols
}

func compareColumns(t *testing.T, names []string, got, want [][]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d columns, want %d", len(got), len(want))
	}
	for c := range want {
		if len(got[c]) != len(want[c]) {
			t.Errorf("column %s: %d entries, want %d", names[c], len(got[c]), len(want[c]))
			continue
		}
		for i := range want[c] {
			if got[c][i] != want[c][i] {
				t.Errorf("column %s, entry %d: got %s, want %s", names[c], i, got[c][i], want[c][i])
				break
			}
		}
	}
}

// twosBig is u as an n-byte big-endian two's complement.
func twosBig(u *big.Int, n int) []byte {
	x := new(big.Int).Set(u)
	if x.Sign() < 0 {
		x.Add(x, new(big.Int).Lsh(big.NewInt(1), uint(8*n)))
	}
	return x.FillBytes(make([]byte, n))
}

// flatFile is a file of every primitive type, many rows with nulls, in
// several row groups whose string chunks have several pages.
type flatFile struct {
	schema *schema.StructType
	rows   [][]schema.Value
	want   [][]string // per leaf column, as parquetGoColumns returns them
}

func newFlatFile(t testing.TB, n int) flatFile {
	sch := st(fld("bo", schema.Boolean), fld("by", schema.Byte), fld("sh", schema.Short), fld("in", schema.Integer),
		req("lo", schema.Long), fld("fl", schema.Float), fld("do", schema.Double), fld("s", schema.String),
		fld("bi", schema.Binary), fld("da", schema.Date), fld("ts", schema.Timestamp), fld("tn", schema.TimestampNTZ),
		fld("d5", dec(5, 2)), fld("d15", dec(15, 3)), fld("d30", dec(30, 10)))
	f := flatFile{schema: sch, want: make([][]string, len(sch.Fields))}
	for i := range n {
		row := make([]schema.Value, len(sch.Fields))
		want := make([]string, len(sch.Fields))
		set := func(c int, v schema.Value, p string) {
			if sch.Fields[c].Nullable && (i+c)%7 == 0 {
				row[c], want[c] = null, lv(0, 0, "null")
				return
			}
			def := 0
			if sch.Fields[c].Nullable {
				def = 1
			}
			row[c], want[c] = v, lv(0, def, p)
		}
		set(0, schema.BooleanValue(i%3 == 0), pBool(i%3 == 0))
		by := int8(i%256 - 128)
		set(1, schema.ByteValue(by), pI32(int32(by)))
		sh := int16(i%65536 - 32768)
		set(2, schema.ShortValue(sh), pI32(int32(sh)))
		in := int32(uint32(i) * 2654435761)
		set(3, i32(in), pI32(in))
		lo := int64(i-n/2) * 1_000_000_000_007
		set(4, i64(lo), pI64(lo))
		fl := float32(i)*0.25 - 100
		set(5, schema.FloatValue(fl), pF32(fl))
		do := float64(i)*1.5e-3 - 7
		if i == 5 {
			do = math.NaN()
		}
		set(6, schema.DoubleValue(do), pF64(do))
		s := strings.Repeat(string(rune('a'+i%26)), 150) + "é" + strconv.Itoa(i)
		set(7, str(s), pStr(s))
		bi := []byte{byte(i), byte(i >> 8), 0xff}
		set(8, schema.BinaryValue(bi), pBytes(bi))
		da := int32(i - 10000)
		set(9, daysv(da), pI32(da))
		ts := int64(i)*1_000_003 - 5_000_000_000_000
		set(10, schema.TimestampValue(ts), pI64(ts))
		set(11, schema.TimestampNTZValue(-ts), pI64(-ts))
		d5 := int64(i%19999 - 9999)
		set(12, decBig(t, big.NewInt(d5), 5, 2), pI32(int32(d5)))
		d15 := int64(i)*1_000_000_007 - 5_000_000_000_000
		set(13, decBig(t, big.NewInt(d15), 15, 3), pI64(d15))
		d30 := new(big.Int).Mul(big.NewInt(int64(i-n/2)), new(big.Int).Exp(big.NewInt(10), big.NewInt(25), nil))
		d30.Add(d30, big.NewInt(int64(i)))
		set(14, decBig(t, d30, 30, 10), pBytes(twosBig(d30, 13)))
		f.rows = append(f.rows, row)
		for c := range want {
			f.want[c] = append(f.want[c], want[c])
		}
	}
	return f
}

func decBig(t testing.TB, u *big.Int, p, s int) schema.Value {
	t.Helper()
	v, err := schema.DecimalValue(u, p, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func fieldNames(sch *schema.StructType) []string {
	var out []string
	for _, f := range sch.Fields {
		out = append(out, f.Name)
	}
	return out
}

// TestWriteReadByParquetGoFlat reads a file of every primitive type with
// parquet-go's row reader and its generic reader of Go structs, across
// row groups and pages.
func TestWriteReadByParquetGoFlat(t *testing.T) {
	f := newFlatFile(t, 30000)
	data, _ := writeRows(t, f.schema, datafile.WriteOptions{RowGroupSize: 3 << 20}, f.rows, 7000)
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(pf.RowGroups()); n < 2 {
		t.Fatalf("%d row groups, want several", n)
	}
	if n := len(dataPages(t, data, pf.Metadata().RowGroups[0].Columns[7])); n < 2 {
		t.Fatalf("%d pages in the first string chunk, want several", n)
	}
	compareColumns(t, fieldNames(f.schema), parquetGoColumns(t, data), f.want)

	type flatGo struct {
		Bo *bool    `parquet:"bo,optional"`
		In *int32   `parquet:"in,optional"`
		Lo int64    `parquet:"lo"`
		Do *float64 `parquet:"do,optional"`
		S  *string  `parquet:"s,optional"`
	}
	r := parquet.NewGenericReader[flatGo](bytes.NewReader(data))
	defer r.Close()
	got := make([]flatGo, len(f.rows)+1)
	n := 0
	for n < len(got) {
		k, err := r.Read(got[n:])
		n += k
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if n != len(f.rows) {
		t.Fatalf("generic reader read %d rows of %d", n, len(f.rows))
	}
	for i, g := range got[:n] {
		w := f.rows[i]
		same := optEq(g.Bo, w[0], func(v schema.Value) bool { return *g.Bo == v.Bool() }) &&
			optEq(g.In, w[3], func(v schema.Value) bool { return int64(*g.In) == v.Int64() }) &&
			g.Lo == w[4].Int64() &&
			optEq(g.Do, w[6], func(v schema.Value) bool { return math.Float64bits(*g.Do) == math.Float64bits(v.Float64()) }) &&
			optEq(g.S, w[7], func(v schema.Value) bool { return *g.S == v.String() })
		if !same {
			t.Fatalf("row %d: generic reader read %+v, wrote %v", i, g, w)
		}
	}
}

// optEq reports whether an optional Go field read matches the value
// written: both null, or both set and eq.
func optEq[T any](p *T, v schema.Value, eq func(schema.Value) bool) bool {
	if p == nil || v.IsNull() {
		return p == nil && v.IsNull()
	}
	return eq(v)
}

// nestedFile is a file of arrays, maps and structs, its rows large enough
// for pages of several rows and rows in several pages of a chunk... never
// one row in two pages.
type nestedFile struct {
	schema *schema.StructType
	rows   [][]schema.Value
	want   [][]string
	names  []string
}

func newNestedFile(n int) nestedFile {
	sch := st(req("id", schema.Long), fld("l", arr(schema.Integer)), fld("m", mp(schema.String, schema.Long)),
		fld("s", st(fld("a", schema.Integer), fld("b", arr(schema.String)))))
	f := nestedFile{schema: sch, want: make([][]string, 6),
		names: []string{"id", "l.list.element", "m.key_value.key", "m.key_value.value", "s.a", "s.b.list.element"}}
	add := func(c int, e ...string) { f.want[c] = append(f.want[c], e...) }
	for i := range n {
		row := make([]schema.Value, 4)
		row[0] = i64(int64(i))
		add(0, lv(0, 0, pI64(int64(i))))
		// l: optional (1) > repeated list (2) > optional element (3).
		switch i % 4 {
		case 0:
			row[1] = null
			add(1, lv(0, 0, "null"))
		case 1:
			row[1] = av()
			add(1, lv(0, 1, "null"))
		case 2:
			row[1] = av(i32(int32(i)), null, i32(int32(-i)))
			add(1, lv(0, 3, pI32(int32(i))), lv(1, 2, "null"), lv(1, 3, pI32(int32(-i))))
		case 3:
			row[1] = av(i32(7))
			add(1, lv(0, 3, pI32(7)))
		}
		// m: optional (1) > repeated key_value (2) > required key (2),
		// optional value (3).
		switch i % 3 {
		case 0:
			row[2] = null
			add(2, lv(0, 0, "null"))
			add(3, lv(0, 0, "null"))
		case 1:
			row[2] = mv()
			add(2, lv(0, 1, "null"))
			add(3, lv(0, 1, "null"))
		case 2:
			k := "k" + strconv.Itoa(i)
			row[2] = mv(str(k), i64(int64(i)), str("z"), null)
			add(2, lv(0, 2, pStr(k)), lv(1, 2, pStr("z")))
			add(3, lv(0, 3, pI64(int64(i))), lv(1, 2, "null"))
		}
		// s: optional (1) > optional a (2); optional b (2) > repeated
		// list (3) > optional element (4). Elements are long: the chunk
		// of s.b has many pages.
		if i%5 == 0 {
			row[3] = null
			add(4, lv(0, 0, "null"))
			add(5, lv(0, 0, "null"))
		} else {
			a := null
			if i%2 == 0 {
				a = i32(int32(i))
				add(4, lv(0, 2, pI32(int32(i))))
			} else {
				add(4, lv(0, 1, "null"))
			}
			var elems []schema.Value
			for k := range i % 3 {
				e := strings.Repeat("x", 300) + strconv.Itoa(i*10+k)
				elems = append(elems, str(e))
				r := 0
				if k > 0 {
					r = 1
				}
				add(5, lv(r, 4, pStr(e)))
			}
			if len(elems) == 0 {
				add(5, lv(0, 2, "null"))
			}
			row[3] = sv([]schema.Value{a, schema.ArrayValue(elems)})
		}
		f.rows = append(f.rows, row)
	}
	return f
}

// TestWriteReadByParquetGoNested reads arrays, maps and structs with
// parquet-go's row reader: the levels and values of every leaf column, in
// several row groups and pages.
func TestWriteReadByParquetGoNested(t *testing.T) {
	f := newNestedFile(20000)
	for _, c := range []struct {
		name string
		opts datafile.WriteOptions
	}{
		{"one row group", datafile.WriteOptions{}},
		{"row groups", datafile.WriteOptions{RowGroupSize: 2 << 20}},
	} {
		t.Run(c.name, func(t *testing.T) {
			data, _ := writeRows(t, f.schema, c.opts, f.rows, 3000)
			compareColumns(t, f.names, parquetGoColumns(t, data), f.want)
			checkRows(t, readAll(t, data, f.schema, datafile.ReadOptions{}), f.rows)
		})
	}
}

// dataPages returns the data page headers of a column chunk, walking
// them from its first page: a DICTIONARY_PAGE first when the chunk has a
// dictionary page offset, then DATA_PAGEs, PLAIN_DICTIONARY ones (only
// with a dictionary) before PLAIN ones, which together fill the chunk
// exactly, as its encodings and page encoding statistics say.
func dataPages(t *testing.T, data []byte, cc format.ColumnChunk) []format.PageHeader {
	t.Helper()
	md := cc.MetaData
	start := md.DataPageOffset
	if md.DictionaryPageOffset != 0 {
		start = md.DictionaryPageOffset
	}
	r := bytes.NewReader(data[start : start+md.TotalCompressedSize])
	dec := thrift.NewDecoder(new(thrift.CompactProtocol).NewReader(r))
	var out []format.PageHeader
	var values, uncompressed int64
	counts := map[[2]int32]int32{} // (page type, encoding) -> pages
	for r.Len() > 0 {
		var h format.PageHeader
		before := r.Len()
		at := start + int64(len(data[start:start+md.TotalCompressedSize])-before)
		if err := dec.Decode(&h); err != nil {
			t.Fatalf("column %v: page header: %v", md.PathInSchema, err)
		}
		headerLen := int64(before - r.Len())
		uncompressed += headerLen + int64(h.UncompressedPageSize)
		// Every page carries the CRC-32 of its bytes, as parquet-mr's.
		if body := data[at+headerLen : at+headerLen+int64(h.CompressedPageSize)]; h.CRC != int32(crc32.ChecksumIEEE(body)) {
			t.Fatalf("column %v: page at %d: crc %#x, its bytes' %#x", md.PathInSchema, at, uint32(h.CRC), crc32.ChecksumIEEE(body))
		}
		if _, err := r.Seek(int64(h.CompressedPageSize), io.SeekCurrent); err != nil {
			t.Fatal(err)
		}
		if h.Type == format.DictionaryPage {
			if at != md.DictionaryPageOffset || len(out) > 0 || !h.DictionaryPageHeader.Valid || h.DictionaryPageHeader.V.Encoding != plainDict {
				t.Fatalf("column %v: dictionary page %+v at %d (dictionary offset %d) after %d data pages", md.PathInSchema, h, at, md.DictionaryPageOffset, len(out))
			}
			counts[[2]int32{int32(h.Type), int32(plainDict)}]++
			continue
		}
		if h.Type != format.DataPage || !h.DataPageHeader.Valid {
			t.Fatalf("column %v: page of type %v", md.PathInSchema, h.Type)
		}
		if len(out) == 0 && at != md.DataPageOffset {
			t.Fatalf("column %v: first data page at %d, chunk says %d", md.PathInSchema, at, md.DataPageOffset)
		}
		dp := h.DataPageHeader.V
		switch {
		case dp.Encoding == plainDict && md.DictionaryPageOffset != 0 && counts[[2]int32{int32(format.DataPage), int32(format.Plain)}] == 0:
		case dp.Encoding == format.Plain:
		default:
			t.Fatalf("column %v: data page %d encoded %v (dictionary offset %d)", md.PathInSchema, len(out), dp.Encoding, md.DictionaryPageOffset)
		}
		if dp.DefinitionLevelEncoding != format.RLE || dp.RepetitionLevelEncoding != format.RLE {
			t.Fatalf("column %v: level encodings %v %v", md.PathInSchema, dp.DefinitionLevelEncoding, dp.RepetitionLevelEncoding)
		}
		counts[[2]int32{int32(h.Type), int32(dp.Encoding)}]++
		values += int64(dp.NumValues)
		out = append(out, h)
	}
	if values != md.NumValues || uncompressed != md.TotalUncompressedSize {
		t.Fatalf("column %v: pages of %d values, %d bytes; chunk says %d, %d", md.PathInSchema, values, uncompressed, md.NumValues, md.TotalUncompressedSize)
	}
	stats := map[[2]int32]int32{}
	for _, s := range md.EncodingStats {
		if s.Count > 0 {
			stats[[2]int32{int32(s.PageType), int32(s.Encoding)}] += s.Count
		}
	}
	if !maps.Equal(stats, counts) {
		t.Fatalf("column %v: page encoding statistics %v, pages %v", md.PathInSchema, stats, counts)
	}
	encs := map[format.Encoding]bool{}
	for k := range counts {
		encs[format.Encoding(k[1])] = true
	}
	for _, e := range md.Encoding {
		if e != format.RLE && !encs[e] {
			t.Errorf("column %v: encodings %v list %v, which no page has", md.PathInSchema, md.Encoding, e)
		}
		delete(encs, e)
	}
	if len(encs) > 0 {
		t.Errorf("column %v: encodings %v lack %v", md.PathInSchema, md.Encoding, encs)
	}
	return out
}

// TestWritePages checks that chunks are cut into pages of about 1 MiB or
// 20000 rows, and that no row spans two pages: every page of a repeated
// column begins a row.
func TestWritePages(t *testing.T) {
	f := newNestedFile(50000)
	data, _ := writeRows(t, f.schema, datafile.WriteOptions{Compression: "none"}, f.rows, 4096)
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	// id: 8 bytes a row, cut every 20000 rows.
	var ids []int32
	for _, h := range dataPages(t, data, pf.Metadata().RowGroups[0].Columns[0]) {
		ids = append(ids, h.DataPageHeader.V.NumValues)
	}
	if !slices.Equal(ids, []int32{20000, 20000, 10000}) {
		t.Errorf("pages of id: %v values", ids)
	}
	const col = 5 // s.b.list.element: 20000 rows of up to two 300-byte strings
	headers := dataPages(t, data, pf.Metadata().RowGroups[0].Columns[col])
	if len(headers) < 3 {
		t.Fatalf("%d pages, want several", len(headers))
	}
	for i, h := range headers[:len(headers)-1] {
		// Cut at the first row boundary after 1 MiB buffered, levels
		// counted a byte each (they encode smaller): a row adds at most
		// two strings.
		if s := h.UncompressedPageSize; s < 1<<20*9/10 || s > 1<<20+1000 {
			t.Errorf("page %d: %d bytes", i, s)
		}
	}
	pages := pf.RowGroups()[0].ColumnChunks()[col].Pages()
	defer pages.Close()
	n := 0
	for {
		p, err := pages.ReadPage()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if reps := p.RepetitionLevels(); len(reps) == 0 || reps[0] != 0 {
			t.Errorf("page %d does not begin a row: repetition levels %v...", n, reps[:min(len(reps), 5)])
		}
		parquet.Release(p)
		n++
	}
	if n != len(headers) {
		t.Errorf("parquet-go read %d pages, headers say %d", n, len(headers))
	}
}

// TestWriteChunkStatistics checks the statistics of each column chunk in
// the footer: null_count, and min_value and max_value in the order of the
// column's type, for each physical type, chunk by chunk.
func TestWriteChunkStatistics(t *testing.T) {
	f32, f64 := func(f float64) schema.Value { return schema.FloatValue(float32(f)) }, schema.DoubleValue
	nan, negZero := math.NaN(), math.Copysign(0, -1)
	sch := st(fld("i", schema.Integer), fld("l", schema.Long), fld("f", schema.Float), fld("d", schema.Double),
		fld("z", schema.Double), fld("s", schema.String), fld("b", schema.Binary), fld("dc", dec(30, 2)),
		fld("d5", dec(5, 2)), fld("bo", schema.Boolean), fld("nul", schema.Integer), fld("nan", schema.Double),
		fld("ts", schema.Timestamp), fld("by", schema.Byte), fld("ar", arr(schema.Long)))
	batches := [][][]schema.Value{{
		{i32(-5), i64(math.MinInt64 + 1), f32(-1.5), f64(nan), f64(0), str("abc"), binv("\x80"), decv(t, "-1.00", 30, 2),
			decv(t, "-1.50", 5, 2), schema.BooleanValue(true), null, f64(nan), schema.TimestampValue(-3), schema.ByteValue(-128), av(i64(4), null, i64(-9))},
		{i32(3), i64(-1), f32(nan), f64(negZero), f64(negZero), str("\U0010ffff"), binv("\x7f"), decv(t, "0.50", 30, 2),
			decv(t, "2.25", 5, 2), schema.BooleanValue(true), null, f64(nan), schema.TimestampValue(5), schema.ByteValue(127), av()},
		{null, i64(7), f32(2.5), f64(1e300), f64(0), str("é"), binv(""), decv(t, "-12345678901234567890123456.12", 30, 2),
			null, null, null, null, null, null, null},
		{i32(-100), null, null, null, null, null, null, null, decv(t, "-3.00", 5, 2), schema.BooleanValue(true), null, f64(nan), null, null, av(i64(1))},
	}, {
		{i32(1000), i64(5), f32(0), f64(-2), f64(1), str("zz"), binv("a"), decv(t, "99.00", 30, 2),
			decv(t, "0.00", 5, 2), schema.BooleanValue(false), null, null, schema.TimestampValue(1), schema.ByteValue(0), null},
	}}
	type stat struct {
		nulls    int64
		min, max string // pv forms; "" when left out
	}
	le32 := func(x int32) string { return pI32(x) }
	le64 := func(x int64) string { return pI64(x) }
	want := [][]stat{{
		{1, le32(-100), le32(3)},
		{1, le64(math.MinInt64 + 1), le64(7)},
		{1, pF32(-1.5), pF32(2.5)},           // NaN left out
		{1, pF64(negZero), pF64(1e300)},      // a zero min is -0
		{1, pF64(negZero), pF64(0)},          // -0 min, +0 max
		{1, pStr("abc"), pStr("\U0010ffff")}, // unsigned bytes: 0xf4 > 'a'
		{1, pStr(""), pStr("\x80")},          // unsigned bytes
		{1, pBytes(twosBig(mustBig("-1234567890123456789012345612"), 13)), pBytes(twosBig(big.NewInt(50), 13))}, // signed
		{1, le32(-300), le32(225)},
		{1, pBool(true), pBool(true)},
		{4, "", ""}, // no values, no bounds
		{1, "", ""}, // only NaN, no bounds
		{2, le64(-3), le64(5)},
		{2, le32(-128), le32(127)},
		{3, le64(-9), le64(4)}, // nulls: a null element, an empty array, two null arrays
	}, {
		{0, le32(1000), le32(1000)},
		{0, le64(5), le64(5)},
		{0, pF32(float32(negZero)), pF32(0)},
		{0, pF64(-2), pF64(-2)},
		{0, pF64(1), pF64(1)},
		{0, pStr("zz"), pStr("zz")},
		{0, pStr("a"), pStr("a")},
		{0, pBytes(twosBig(big.NewInt(9900), 13)), pBytes(twosBig(big.NewInt(9900), 13))},
		{0, le32(0), le32(0)},
		{0, pBool(false), pBool(false)},
		{1, "", ""},
		{1, "", ""},
		{0, le64(1), le64(1)},
		{0, le32(0), le32(0)},
		{1, "", ""},
	}}
	// A row group per Write: the row group size is reached at once.
	var buf bytes.Buffer
	w, err := datafile.NewWriter(&buf, sch, datafile.WriteOptions{RowGroupSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, rows := range batches {
		if err := w.Write(columns(rows, len(sch.Fields)), len(rows)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	md := pf.Metadata()
	if len(md.RowGroups) != len(want) {
		t.Fatalf("%d row groups, want %d", len(md.RowGroups), len(want))
	}
	if len(md.ColumnOrders) != len(sch.Fields) {
		t.Fatalf("%d column orders, want %d", len(md.ColumnOrders), len(sch.Fields))
	}
	for _, o := range md.ColumnOrders {
		if _, ok := o.Value.(*format.TypeDefinedOrder); !ok {
			t.Fatalf("column order %T", o.Value)
		}
	}
	leaves := pf.Schema().Columns()
	for g, rg := range md.RowGroups {
		for c, cc := range rg.Columns {
			s := cc.MetaData.Statistics
			leaf, _ := pf.Schema().Lookup(leaves[c]...)
			got := stat{nulls: s.NullCount}
			if s.MinValue != nil || s.MaxValue != nil {
				got.min = pv(leaf.Node.Type().Kind().Value(s.MinValue))
				got.max = pv(leaf.Node.Type().Kind().Value(s.MaxValue))
			}
			if s.Min != nil || s.Max != nil {
				t.Errorf("row group %d, column %s: deprecated min/max written", g, sch.Fields[c].Name)
			}
			if got != want[g][c] {
				t.Errorf("row group %d, column %s: stats %+v, want %+v", g, sch.Fields[c].Name, got, want[g][c])
			}
		}
	}
}

func mustBig(s string) *big.Int {
	u, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic(s)
	}
	return u
}

// TestWriteCodecs writes a file with each codec and reads it back with
// parquet-go and with Read.
func TestWriteCodecs(t *testing.T) {
	flat := newFlatFile(t, 5000)
	nested := newNestedFile(3000)
	for _, c := range []struct {
		name  string
		codec format.CompressionCodec
	}{
		{"", format.Snappy},
		{"snappy", format.Snappy},
		{"SNAPPY", format.Snappy},
		{"zstd", format.Zstd},
		{"gzip", format.Gzip},
		{"none", format.Uncompressed},
		{"uncompressed", format.Uncompressed},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, f := range []struct {
				schema *schema.StructType
				rows   [][]schema.Value
				want   [][]string
				names  []string
			}{
				{flat.schema, flat.rows, flat.want, fieldNames(flat.schema)},
				{nested.schema, nested.rows, nested.want, nested.names},
			} {
				data, _ := writeRows(t, f.schema, datafile.WriteOptions{Compression: c.name, RowGroupSize: 1 << 20}, f.rows, 1000)
				pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
				if err != nil {
					t.Fatal(err)
				}
				for _, rg := range pf.Metadata().RowGroups {
					for _, cc := range rg.Columns {
						if cc.MetaData.Codec != c.codec {
							t.Fatalf("column %v: codec %v, want %v", cc.MetaData.PathInSchema, cc.MetaData.Codec, c.codec)
						}
						dataPages(t, data, cc)
					}
				}
				compareColumns(t, f.names, parquetGoColumns(t, data), f.want)
				checkRows(t, readAll(t, data, f.schema, datafile.ReadOptions{}), f.rows)
			}
		})
	}
}

// TestWriteSchemaElements pins every schema element of a file of every
// type: repetition, physical type, length, converted and logical types,
// scale, precision, children and field ids, as the files written before
// the Writer had its own encoder (and as Spark writes them, see
// TestWriteSchemaLikeSpark), and the footer's other fields.
func TestWriteSchemaElements(t *testing.T) {
	sch := st(
		withID(fld("bo", schema.Boolean), 1), req("by", schema.Byte), fld("sh", schema.Short), withID(req("in", schema.Integer), 2),
		fld("lo", schema.Long), fld("fl", schema.Float), fld("do", schema.Double), fld("s", schema.String),
		fld("bi", schema.Binary), fld("da", schema.Date), fld("ts", schema.Timestamp), fld("tn", schema.TimestampNTZ),
		fld("d5", dec(5, 2)), req("d15", dec(15, 3)), fld("d30", dec(30, 10)),
		withID(fld("st", st(withID(fld("a", schema.Integer), 4), req("b", schema.String))), 3),
		withID(fld("ast", arr(st(withID(fld("x", schema.Long), 6)))), 5),
		req("al", &schema.ArrayType{ElementType: schema.String}),
		withID(fld("m", mp(schema.String, schema.Long)), 7),
		req("mr", &schema.MapType{KeyType: schema.Integer, ValueType: arr(schema.Integer)}),
		fld("v", schema.Variant), req("vr", schema.Variant), fld("vo", schema.Void),
	)
	data, _ := writeRows(t, sch, datafile.WriteOptions{ByFieldID: true}, nil, 0)
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	md := pf.Metadata()
	var got []string
	for _, e := range md.Schema {
		got = append(got, fullElem(e))
	}
	want := lines(`
		spark_schema children=22
		bo rep=OPTIONAL type=BOOLEAN id=1
		by rep=REQUIRED type=INT32 converted=INT_8 logical=INT(8,true)
		sh rep=OPTIONAL type=INT32 converted=INT_16 logical=INT(16,true)
		in rep=REQUIRED type=INT32 id=2
		lo rep=OPTIONAL type=INT64
		fl rep=OPTIONAL type=FLOAT
		do rep=OPTIONAL type=DOUBLE
		s rep=OPTIONAL type=BYTE_ARRAY converted=UTF8 logical=STRING
		bi rep=OPTIONAL type=BYTE_ARRAY
		da rep=OPTIONAL type=INT32 converted=DATE logical=DATE
		ts rep=OPTIONAL type=INT64 converted=TIMESTAMP_MICROS logical=TIMESTAMP(isAdjustedToUTC=true,unit=MICROS)
		tn rep=OPTIONAL type=INT64 converted=TIMESTAMP_MICROS logical=TIMESTAMP(isAdjustedToUTC=false,unit=MICROS)
		d5 rep=OPTIONAL type=INT32 converted=DECIMAL scale=2 precision=5 logical=DECIMAL(5,2)
		d15 rep=REQUIRED type=INT64 converted=DECIMAL scale=3 precision=15 logical=DECIMAL(15,3)
		d30 rep=OPTIONAL type=FIXED_LEN_BYTE_ARRAY len=13 converted=DECIMAL scale=10 precision=30 logical=DECIMAL(30,10)
		st rep=OPTIONAL children=2 id=3
		a rep=OPTIONAL type=INT32 id=4
		b rep=REQUIRED type=BYTE_ARRAY converted=UTF8 logical=STRING
		ast rep=OPTIONAL children=1 converted=LIST id=5 logical=LIST
		list rep=REPEATED children=1
		element rep=OPTIONAL children=1
		x rep=OPTIONAL type=INT64 id=6
		al rep=REQUIRED children=1 converted=LIST logical=LIST
		list rep=REPEATED children=1
		element rep=REQUIRED type=BYTE_ARRAY converted=UTF8 logical=STRING
		m rep=OPTIONAL children=1 converted=MAP id=7 logical=MAP
		key_value rep=REPEATED children=2
		key rep=REQUIRED type=BYTE_ARRAY converted=UTF8 logical=STRING
		value rep=OPTIONAL type=INT64
		mr rep=REQUIRED children=1 converted=MAP logical=MAP
		key_value rep=REPEATED children=2
		key rep=REQUIRED type=INT32
		value rep=REQUIRED children=1 converted=LIST logical=LIST
		list rep=REPEATED children=1
		element rep=OPTIONAL type=INT32
		v rep=OPTIONAL children=2
		value rep=REQUIRED type=BYTE_ARRAY
		metadata rep=REQUIRED type=BYTE_ARRAY
		vr rep=REQUIRED children=2
		value rep=REQUIRED type=BYTE_ARRAY
		metadata rep=REQUIRED type=BYTE_ARRAY`)
	if !slices.Equal(got, want) {
		t.Errorf("schema elements\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
	if md.Version != 1 || md.CreatedBy != buildinfo.CreatedBy() || len(md.ColumnOrders) != len(pf.Schema().Columns()) || md.NumRows != 0 {
		t.Errorf("footer: version %d, created_by %q, %d column orders, %d rows", md.Version, md.CreatedBy, len(md.ColumnOrders), md.NumRows)
	}
}

// fullElem describes every field of a schema element.
func fullElem(e format.SchemaElement) string {
	s := e.Name
	if e.RepetitionType.Valid {
		s += " rep=" + e.RepetitionType.V.String()
	}
	if e.Type.Valid {
		s += " type=" + e.Type.V.String()
	}
	if e.TypeLength.Valid {
		s += " len=" + strconv.Itoa(int(e.TypeLength.V))
	}
	if e.NumChildren.Valid {
		s += " children=" + strconv.Itoa(int(e.NumChildren.V))
	}
	if e.ConvertedType.Valid {
		s += " converted=" + convertedName(int(e.ConvertedType.V))
	}
	if e.Scale.Valid {
		s += " scale=" + strconv.Itoa(int(e.Scale.V))
	}
	if e.Precision.Valid {
		s += " precision=" + strconv.Itoa(int(e.Precision.V))
	}
	if e.FieldID != 0 {
		s += " id=" + strconv.Itoa(int(e.FieldID))
	}
	if e.LogicalType.Value != nil {
		s += " logical=" + e.LogicalType.String()
	}
	return s
}

// convertedName names the converted types this package writes.
func convertedName(c int) string {
	names := map[int]string{0: "UTF8", 1: "MAP", 2: "MAP_KEY_VALUE", 3: "LIST", 5: "DECIMAL", 6: "DATE", 10: "TIMESTAMP_MICROS", 15: "INT_8", 16: "INT_16"}
	if n, ok := names[c]; ok {
		return n
	}
	return strconv.Itoa(c)
}

// TestWriteOtherIntegerWidths writes integers of another width than their
// column's, which the Writer takes when they fit, top-level and nested.
func TestWriteOtherIntegerWidths(t *testing.T) {
	sch := st(req("l", schema.Long), fld("i", schema.Integer), fld("b", schema.Byte), fld("a", arr(schema.Short)))
	rows := [][]schema.Value{
		{i32(-7), schema.ByteValue(3), i64(-128), av(i64(32767), schema.ByteValue(-1))},
		{schema.ShortValue(300), i64(math.MaxInt32), schema.ShortValue(127), null},
		{i64(1), null, null, av(i32(-32768))},
	}
	data, stats := writeRows(t, sch, datafile.WriteOptions{}, rows, 0)
	want := [][]string{
		{lv(0, 0, pI64(-7)), lv(0, 0, pI64(300)), lv(0, 0, pI64(1))},
		{lv(0, 1, pI32(3)), lv(0, 1, pI32(math.MaxInt32)), lv(0, 0, "null")},
		{lv(0, 1, pI32(-128)), lv(0, 1, pI32(127)), lv(0, 0, "null")},
		{lv(0, 3, pI32(32767)), lv(1, 3, pI32(-1)), lv(0, 0, "null"), lv(0, 3, pI32(-32768))},
	}
	compareColumns(t, []string{"l", "i", "b", "a"}, parquetGoColumns(t, data), want)
	wantJSON := `{"numRecords":3,"minValues":{"l":-7,"i":3,"b":-128},"maxValues":{"l":300,"i":2147483647,"b":127},"nullCount":{"l":0,"i":1,"b":1,"a":1}}`
	if got := stats.JSON(); got != wantJSON {
		t.Errorf("stats\n got %s\nwant %s", got, wantJSON)
	}
}

// TestWriteChunkStatisticsLongValues checks that byte arrays too long for
// the footer get a null count but no bounds.
func TestWriteChunkStatisticsLongValues(t *testing.T) {
	sch := st(fld("s", schema.String), fld("b", schema.Binary))
	long := strings.Repeat("x", 3000)
	rows := [][]schema.Value{{str(long + "a"), binv("a")}, {str(long + "b"), binv(long)}, {null, binv(long)}}
	data, _ := writeRows(t, sch, datafile.WriteOptions{}, rows, 0)
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	cols := pf.Metadata().RowGroups[0].Columns
	if s := cols[0].MetaData.Statistics; s.NullCount != 1 || s.MinValue != nil || s.MaxValue != nil {
		t.Errorf("s: null count %d, min %.10q, max %.10q; want 1 and no bounds", s.NullCount, s.MinValue, s.MaxValue)
	}
	if s := cols[1].MetaData.Statistics; s.NullCount != 0 || string(s.MinValue) != "a" || string(s.MaxValue) != long {
		t.Errorf("b: null count %d, min %.10q, max %.10q; want 0, a, x...", s.NullCount, s.MinValue, s.MaxValue)
	}
}

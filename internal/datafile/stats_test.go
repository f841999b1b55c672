package datafile_test

import (
	"bufio"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/internal/datafile"
	"github.com/godelta/delta/schema"
)

func tsv(s string) schema.Value {
	v, err := schema.ParsePartitionValue(schema.Timestamp, s)
	if err != nil {
		panic(err)
	}
	return v
}

// TestStatsJSON checks the stats string of small files, type by type.
func TestStatsJSON(t *testing.T) {
	f32 := func(f float64) schema.Value { return schema.FloatValue(float32(f)) }
	f64 := schema.DoubleValue
	nan, inf := math.NaN(), math.Inf(1)
	cases := []struct {
		name   string
		schema *schema.StructType
		opts   datafile.StatsOptions
		rows   [][]schema.Value
		want   string
	}{{
		name:   "integers and nulls",
		schema: st(fld("b", schema.Byte), fld("s", schema.Short), fld("i", schema.Integer), req("l", schema.Long)),
		rows: [][]schema.Value{
			{schema.ByteValue(-3), schema.ShortValue(7), null, i64(math.MinInt64)},
			{schema.ByteValue(5), null, null, i64(math.MaxInt64)},
		},
		want: `{"numRecords":2,"minValues":{"b":-3,"s":7,"l":-9223372036854775808},"maxValues":{"b":5,"s":7,"l":9223372036854775807},"nullCount":{"b":0,"s":1,"i":2,"l":0},"tightBounds":true}`,
	}, {
		name:   "floats: NaN is the max, infinities are strings",
		schema: st(fld("f", schema.Float), fld("d", schema.Double), fld("n", schema.Double), fld("x", schema.Double)),
		rows: [][]schema.Value{
			{f32(1.5), f64(nan), f64(nan), f64(-inf)},
			{f32(-2.25), f64(3.14), f64(nan), f64(inf)},
			{f32(3.14), f64(-1e-300), null, f64(0)},
		},
		want: `{"numRecords":3,"minValues":{"f":-2.25,"d":-1e-300,"n":"NaN","x":"-Infinity"},"maxValues":{"f":3.14,"d":"NaN","n":"NaN","x":"Infinity"},"nullCount":{"f":0,"d":0,"n":1,"x":0},"tightBounds":true}`,
	}, {
		name:   "decimals exactly",
		schema: st(fld("a", dec(5, 2)), fld("b", dec(38, 10)), fld("c", dec(3, 1))),
		rows: [][]schema.Value{
			{decv(t, "-1.50", 5, 2), decv(t, "1234567890123456789012345678.0000000001", 38, 10), decv(t, "1.5", 2, 1)},
			{decv(t, "100.00", 5, 2), decv(t, "-0.0000000001", 38, 10), decv(t, "1", 1, 0)},
		},
		want: `{"numRecords":2,"minValues":{"a":-1.50,"b":-0.0000000001,"c":1.0},"maxValues":{"a":100.00,"b":1234567890123456789012345678.0000000001,"c":1.5},"nullCount":{"a":0,"b":0,"c":0},"tightBounds":true}`,
	}, {
		name:   "dates and timestamps truncated to milliseconds",
		schema: st(fld("d", schema.Date), fld("t", schema.Timestamp), fld("n", schema.TimestampNTZ), fld("o", schema.Date)),
		rows: [][]schema.Value{
			{daysv(-1), schema.TimestampValue(-1), schema.TimestampNTZValue(1_706_688_550_123_999), daysv(3_000_000)},
			{daysv(19753), tsv("2024-01-31T08:09:10.123456Z"), schema.TimestampNTZValue(0), null},
		},
		want: `{"numRecords":2,"minValues":{"d":"1969-12-31","t":"1969-12-31T23:59:59.999Z","n":"1970-01-01T00:00:00.000"},` +
			`"maxValues":{"d":"2024-01-31","t":"2024-01-31T08:09:10.123Z","n":"2024-01-31T08:09:10.123"},"nullCount":{"d":0,"t":0,"n":0,"o":1},"tightBounds":true}`,
	}, {
		name:   "strings cut with tie-breakers",
		schema: st(fld("a", schema.String), fld("b", schema.String), fld("c", schema.String), fld("d", schema.String), fld("e", schema.String)),
		opts:   datafile.StatsOptions{StringPrefixLength: 3},
		rows: [][]schema.Value{
			{str("abcz"), str("abcé"), str("ab\U0010ffff\U0010ffffx"), str("a\xffb"), str("éèêë")},
			{str("abcdef"), str("abc"), str("a"), str("a"), str("x")},
		},
		want: `{"numRecords":2,"minValues":{"a":"abc","b":"abc","c":"a","d":"a","e":"x"},` +
			`"maxValues":{"a":"abc` + "\x7f" + `","b":"abc` + "\U0010ffff" + `","c":"ab` + "\U0010ffff\U0010ffff\u007f" + `","e":"éèê` + "\U0010ffff" + `"},` +
			`"nullCount":{"a":0,"b":0,"c":0,"d":0,"e":0},"tightBounds":true}`,
	}, {
		name: "nested: null counts through null structs, nothing but nulls for arrays, maps, booleans, binaries, variants",
		schema: st(fld("s", st(fld("x", schema.Integer), fld("t", st(fld("y", schema.String))))), fld("l", arr(schema.Integer)),
			fld("m", mp(schema.String, schema.Integer)), fld("bo", schema.Boolean), fld("bi", schema.Binary), fld("v", schema.Variant), fld("vo", schema.Void)),
		rows: [][]schema.Value{
			{sv([]schema.Value{i32(4), sv([]schema.Value{str("q")})}), av(i32(1)), mv(), schema.BooleanValue(true), binv("x"), null, null},
			{null, null, null, null, null, null, null},
			{sv([]schema.Value{null, null}), av(), null, schema.BooleanValue(false), binv(""), sv([]schema.Value{binv("\x01"), binv("\x00")}), null},
		},
		want: `{"numRecords":3,"minValues":{"s":{"x":4,"t":{"y":"q"}}},"maxValues":{"s":{"x":4,"t":{"y":"q"}}},` +
			`"nullCount":{"s":{"x":2,"t":{"y":2}},"l":1,"m":2,"bo":1,"bi":1,"v":2,"vo":3},"tightBounds":true}`,
	}, {
		name:   "first N leaf columns, structs flattened",
		schema: st(fld("a", schema.Integer), fld("s", st(fld("b", schema.Integer), fld("c", schema.Integer))), fld("d", schema.Integer)),
		opts:   datafile.StatsOptions{NumIndexedCols: 2},
		rows:   [][]schema.Value{{i32(1), sv([]schema.Value{i32(2), i32(3)}), i32(4)}},
		want:   `{"numRecords":1,"minValues":{"a":1,"s":{"b":2}},"maxValues":{"a":1,"s":{"b":2}},"nullCount":{"a":0,"s":{"b":0}},"tightBounds":true}`,
	}, {
		name:   "all columns",
		schema: st(fld("a", schema.Integer), fld("s", st(fld("b", schema.Integer), fld("c", schema.Integer))), fld("d", schema.Integer)),
		opts:   datafile.StatsOptions{NumIndexedCols: -1},
		rows:   [][]schema.Value{{i32(1), sv([]schema.Value{i32(2), i32(3)}), i32(4)}},
		want: `{"numRecords":1,"minValues":{"a":1,"s":{"b":2,"c":3},"d":4},"maxValues":{"a":1,"s":{"b":2,"c":3},"d":4},` +
			`"nullCount":{"a":0,"s":{"b":0,"c":0},"d":0},"tightBounds":true}`,
	}, {
		name:   "named columns: a struct stands for its leaves, case ignored, backticks quote",
		schema: st(fld("a", schema.Integer), fld("s", st(fld("b", schema.Integer), fld("c", schema.Integer))), fld("d.e", schema.Integer)),
		opts:   datafile.StatsOptions{StatsColumns: []string{"S", "`d.e`", "missing"}},
		rows:   [][]schema.Value{{i32(1), sv([]schema.Value{i32(2), i32(3)}), i32(4)}},
		want: `{"numRecords":1,"minValues":{"s":{"b":2,"c":3},"d.e":4},"maxValues":{"s":{"b":2,"c":3},"d.e":4},` +
			`"nullCount":{"s":{"b":0,"c":0},"d.e":0},"tightBounds":true}`,
	}, {
		name:   "named nested column",
		schema: st(fld("a", schema.Integer), fld("s", st(fld("b", schema.Integer), fld("c", schema.Integer)))),
		opts:   datafile.StatsOptions{StatsColumns: []string{"s.c"}},
		rows:   [][]schema.Value{{i32(1), sv([]schema.Value{i32(2), i32(3)})}},
		want:   `{"numRecords":1,"minValues":{"s":{"c":3}},"maxValues":{"s":{"c":3}},"nullCount":{"s":{"c":0}},"tightBounds":true}`,
	}, {
		name:   "no columns",
		schema: st(fld("a", schema.Integer)),
		opts:   datafile.StatsOptions{StatsColumns: []string{}},
		rows:   [][]schema.Value{{i32(1)}},
		want:   `{"numRecords":1,"minValues":{},"maxValues":{},"nullCount":{},"tightBounds":true}`,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.opts.TightBounds = true // as on a table that supports deletion vectors
			_, stats := writeRows(t, c.schema, datafile.WriteOptions{Stats: c.opts}, c.rows, 1)
			got := stats.JSON()
			if got != c.want {
				t.Errorf("JSON\n got %s\nwant %s", got, c.want)
			}
			if !json.Valid([]byte(got)) {
				t.Errorf("not JSON: %s", got)
			}
			if _, err := expr.ParseStats(got, c.schema, schema.ColumnMappingNone); err != nil {
				t.Errorf("ParseStats: %v", err)
			}
		})
	}
}

// TestStatsLikeSpark rewrites the rows of files Spark wrote, with the same
// physical schema, and compares the statistics with those Spark put in
// the log: the same JSON (but tightBounds, which Spark writes only with
// deletion vectors) where Spark wrote UTC, the same decoded statistics
// otherwise.
func TestStatsLikeSpark(t *testing.T) {
	dir := corpusDir(t)
	for _, c := range []struct {
		table     string
		exactJSON bool
	}{
		{"kernel-rs/stats-writing-all-types/delta", true},
		{"golden/data-skipping-basic-stats-all-types/delta", false},
		{"golden/data-skipping-basic-stats-all-types-columnmapping-id/delta", false},
		{"kernel-rs/timestamp-truncation-stats", true},
	} {
		t.Run(c.table, func(t *testing.T) {
			root := filepath.Join(dir, c.table)
			meta := readMeta(t, root)
			phys := meta.dataSchema(t)
			adds := addStats(t, root)
			if len(adds) == 0 {
				t.Fatal("no add actions with stats")
			}
			for path, sparkStats := range adds {
				data, err := os.ReadFile(filepath.Join(root, path))
				if err != nil {
					t.Fatal(err)
				}
				rows := readAll(t, data, phys, datafile.ReadOptions{ByFieldID: meta.mode == schema.ColumnMappingByID})
				_, stats := writeRows(t, phys, datafile.WriteOptions{}, rows, 0)
				ours := stats.JSON()
				if c.exactJSON {
					var a, b map[string]any
					if err := json.Unmarshal([]byte(ours), &a); err != nil {
						t.Fatal(err)
					}
					if err := json.Unmarshal([]byte(sparkStats), &b); err != nil {
						t.Fatal(err)
					}
					delete(a, "tightBounds")
					if !reflect.DeepEqual(a, b) {
						t.Errorf("%s:\n ours  %s\n spark %s", path, ours, sparkStats)
					}
				}
				so, err := expr.ParseStats(ours, meta.schema, meta.mode)
				if err != nil {
					t.Fatal(err)
				}
				ss, err := expr.ParseStats(sparkStats, meta.schema, meta.mode)
				if err != nil {
					t.Fatal(err)
				}
				for _, col := range leafNames(meta.schema) {
					for _, get := range []func(*expr.Stats, string) (schema.Value, bool){(*expr.Stats).Min, (*expr.Stats).Max} {
						x, okx := get(so, col)
						y, oky := get(ss, col)
						if okx != oky || okx && !sameValue(x, y) {
							t.Errorf("%s %s: bound %v (%v), Spark's %v (%v)", path, col, x, okx, y, oky)
						}
					}
					x, okx := so.NullCount(col)
					y, oky := ss.NullCount(col)
					if okx != oky || x != y {
						t.Errorf("%s %s: nullCount %d (%v), Spark's %d (%v)", path, col, x, okx, y, oky)
					}
				}
			}
		})
	}
}

// addStats returns the stats of the add actions of a table's commits, by
// path.
func addStats(t *testing.T, root string) map[string]string {
	t.Helper()
	commits, _ := filepath.Glob(filepath.Join(root, "_delta_log", "*.json"))
	out := map[string]string{}
	for _, p := range commits {
		fh, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<26)
		for sc.Scan() {
			var line struct {
				Add *struct {
					Path  string `json:"path"`
					Stats string `json:"stats"`
				} `json:"add"`
			}
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Add != nil && line.Add.Stats != "" {
				out[line.Add.Path] = line.Add.Stats
			}
		}
		fh.Close()
	}
	return out
}

// leafNames returns the dotted logical names of the leaf columns.
func leafNames(st *schema.StructType) []string {
	var out []string
	for _, p := range st.LeafColumns() {
		out = append(out, strings.Join(p, "."))
	}
	return out
}

// TestStatsNeverSkipAMatch writes files of random rows and checks, for
// many predicates, that the stats never let a reader skip a file that has
// a row the predicate holds for (expr.Eval True): through expr.ParseStats
// and MightMatch, as a scan reads them.
func TestStatsNeverSkipAMatch(t *testing.T) {
	sch := st(fld("i", schema.Integer), fld("l", schema.Long), fld("d", schema.Double), fld("f", schema.Float),
		fld("s", schema.String), fld("dt", schema.Date), fld("ts", schema.Timestamp), fld("tn", schema.TimestampNTZ),
		fld("dec", dec(20, 3)), fld("st", st(fld("x", schema.Short), fld("y", schema.String))))
	names := []string{"i", "l", "d", "f", "s", "dt", "ts", "tn", "dec", "st.x", "st.y"}
	rng := rand.New(rand.NewPCG(1, 2))
	runes := []rune{'a', 'b', 'z', 0x7e, 0x7f, 0x80, 'é', 0xfffd, 0xffff, utf8MaxRune}
	randString := func() string {
		var sb strings.Builder
		for range rng.IntN(8) {
			sb.WriteRune(runes[rng.IntN(len(runes))])
		}
		return sb.String()
	}
	randValue := func(col string) schema.Value {
		if rng.IntN(6) == 0 {
			return null
		}
		switch col {
		case "i":
			return i32(int32(rng.IntN(200) - 100))
		case "l":
			return i64(rng.Int64() >> rng.IntN(64))
		case "d":
			switch rng.IntN(10) {
			case 0:
				return schema.DoubleValue(math.NaN())
			case 1:
				return schema.DoubleValue(math.Inf(rng.IntN(2)*2 - 1))
			}
			return schema.DoubleValue(rng.NormFloat64() * 100)
		case "f":
			if rng.IntN(10) == 0 {
				return schema.FloatValue(float32(math.NaN()))
			}
			return schema.FloatValue(float32(rng.NormFloat64()))
		case "s", "st.y":
			return str(randString())
		case "dt":
			return daysv(int32(rng.IntN(40000) - 20000))
		case "ts":
			return schema.TimestampValue(rng.Int64N(1<<52) - 1<<51)
		case "tn":
			return schema.TimestampNTZValue(rng.Int64N(1<<52) - 1<<51)
		case "dec":
			return decv(t, strconv.FormatInt(rng.Int64N(2e15)-1e15, 10)+"."+strconv.Itoa(rng.IntN(1000)), 20, 3)
		case "st.x":
			return schema.ShortValue(int16(rng.IntN(100)))
		}
		panic(col)
	}
	randRow := func() []schema.Value {
		r := make([]schema.Value, len(sch.Fields))
		for j, name := range names[:9] {
			r[j] = randValue(name)
		}
		if rng.IntN(8) != 0 {
			r[9] = sv([]schema.Value{randValue("st.x"), randValue("st.y")})
		}
		return r
	}
	get := func(row []schema.Value, col string) schema.Value {
		if j := slices.Index(names, col); j < 9 {
			return row[j]
		}
		s := row[9]
		if s.IsNull() {
			return null
		}
		return s.Fields()[slices.Index(names, col)-9]
	}
	typeOf := func(col string) schema.DataType {
		if j := slices.Index(names, col); j < 9 {
			return sch.Fields[j].Type
		}
		return sch.Fields[9].Type.(*schema.StructType).Fields[slices.Index(names, col)-9].Type
	}
	ops := []expr.Op{expr.Eq, expr.Ne, expr.Lt, expr.Le, expr.Gt, expr.Ge}
	checked := 0
	for file := range 60 {
		rows := make([][]schema.Value, 1+rng.IntN(12))
		for i := range rows {
			rows[i] = randRow()
		}
		opts := datafile.WriteOptions{Stats: datafile.StatsOptions{StringPrefixLength: 1 + rng.IntN(4), NumIndexedCols: -1}}
		_, stats := writeRows(t, sch, opts, rows, 0)
		parsed, err := expr.ParseStats(stats.JSON(), sch, schema.ColumnMappingNone)
		if err != nil {
			t.Fatal(err)
		}
		for _, col := range names {
			var preds []expr.Expr
			preds = append(preds, expr.IsNull{Value: expr.Column{Name: col}}, expr.IsNull{Value: expr.Column{Name: col}, Negate: true})
			for range 8 {
				lit := get(rows[rng.IntN(len(rows))], col)
				if rng.IntN(3) == 0 || lit.IsNull() {
					lit = randValue(col)
				}
				if lit.IsNull() {
					continue
				}
				for _, op := range ops {
					preds = append(preds, expr.Compare{Op: op, Left: expr.Column{Name: col}, Right: expr.Literal{Value: lit}})
				}
			}
			for _, p := range preds {
				for _, r := range rows {
					lookup := func(c string) (schema.DataType, schema.Value, bool) {
						if !slices.Contains(names, c) {
							return nil, schema.Value{}, false
						}
						return typeOf(c), get(r, c), true
					}
					if expr.Eval(p, lookup) == expr.True {
						checked++
						if !parsed.MightMatch(p) {
							t.Errorf("file %d skipped for %v, which row %v matches; stats %s", file, p, r, stats.JSON())
						}
						break
					}
				}
			}
		}
	}
	if checked < 1000 {
		t.Errorf("only %d matching predicates checked", checked)
	}
}

const utf8MaxRune = '\U0010FFFF'

// Without StatsOptions.TightBounds the JSON has no tightBounds, as Spark
// writes stats on tables without deletion vectors.
func TestStatsJSONWithoutTightBounds(t *testing.T) {
	sch := st(fld("a", schema.Long))
	_, stats := writeRows(t, sch, datafile.WriteOptions{}, [][]schema.Value{{schema.LongValue(1)}}, 1)
	if want := `{"numRecords":1,"minValues":{"a":1},"maxValues":{"a":1},"nullCount":{"a":0}}`; stats.JSON() != want {
		t.Errorf("JSON\n got %s\nwant %s", stats.JSON(), want)
	}
}

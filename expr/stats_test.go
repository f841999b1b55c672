package expr

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
	"github.com/godelta/delta/testutil"
)

// mustSchema parses a schema string.
func mustSchema(t testing.TB, js string) *schema.StructType {
	t.Helper()
	st, err := schema.Parse(js)
	if err != nil {
		t.Fatalf("schema.Parse: %v", err)
	}
	return st
}

func field(name, typ string) string {
	return fmt.Sprintf(`{"name":%q,"type":%q,"nullable":true,"metadata":{}}`, name, typ)
}

func structSchema(fields ...string) string {
	return `{"type":"struct","fields":[` + strings.Join(fields, ",") + `]}`
}

// allTypes is a schema with a column of every type stats are kept for.
var allTypes = structSchema(
	field("i", "integer"), field("l", "long"), field("b", "byte"), field("sh", "short"),
	field("f", "float"), field("d", "double"), field("s", "string"), field("dt", "date"),
	field("ts", "timestamp"), field("ntz", "timestamp_ntz"), field("dec", "decimal(10,2)"),
	field("big", "decimal(25,2)"), field("flag", "boolean"), field("bin", "binary"),
	`{"name":"st","type":{"type":"struct","fields":[`+field("x", "long")+`,{"name":"in","type":{"type":"struct","fields":[`+field("y", "string")+`]},"nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}}`,
)

func TestParseStatsValues(t *testing.T) {
	st := mustSchema(t, allTypes)
	raw := `{"numRecords":10,"tightBounds":true,
	  "minValues":{"i":-3,"l":1,"b":-128,"sh":2.0,"f":1.5,"d":"-Infinity","s":"abc","dt":"2024-01-31",
	    "ts":"2023-05-31T18:58:33.633Z","ntz":"2023-05-31T18:58:33.633","dec":1.5,"big":"12.34","flag":false,
	    "bin":"zz","st":{"x":7,"in":{"y":"p"}}},
	  "maxValues":{"i":3,"l":"99","b":127,"sh":70000,"f":"NaN","d":2.5e3,"s":"abd\u007f","dt":"2024-02-01",
	    "ts":"2023-05-31T20:58:33.633+02:00","ntz":"2023-05-31T18:58:33.633Z","dec":"123.45","big":1.5,"flag":true,
	    "st":{"x":9,"in":{"y":"q\ud83d"}}},
	  "nullCount":{"i":0,"l":10,"s":3,"st":{"x":1,"in":{"y":2}}},
	  "extra":[1,{"a":null}]}`
	s, err := ParseStats(raw, st, schema.ColumnMappingNone)
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := s.NumRecords(); n != 10 || !ok {
		t.Errorf("NumRecords = %d, %v", n, ok)
	}
	if !s.TightBounds() {
		t.Error("TightBounds = false")
	}
	ts := func(s string) schema.Value {
		v, err := schema.ParsePartitionValue(schema.Timestamp, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	ntz := func(s string) schema.Value {
		v, err := schema.ParsePartitionValue(schema.TimestampNTZ, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	dec := func(s string, p, sc int) schema.Value {
		v, err := schema.ParsePartitionValue(schema.DecimalType{Precision: p, Scale: sc}, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	none := schema.Value{}
	for _, tc := range []struct {
		col      string
		min, max schema.Value
	}{
		{"i", schema.IntegerValue(-3), schema.IntegerValue(3)},
		{"l", schema.LongValue(1), schema.LongValue(99)},
		{"b", schema.ByteValue(-128), schema.ByteValue(127)},
		{"sh", schema.ShortValue(2), none},  // 70000 does not fit a short
		{"f", schema.FloatValue(1.5), none}, // NaN is unknown
		{"d", schema.DoubleValue(negInf()), schema.DoubleValue(2500)},
		{"s", schema.StringValue("abc"), schema.StringValue("abd")}, // tie-breaker dropped
		{"dt", schema.DateValue(19753), schema.DateValue(19754)},
		{"ts", ts("2023-05-31T18:58:33.633Z"), schema.TimestampValue(ts("2023-05-31T18:58:33.633Z").Int64() + 999)},
		{"ntz", ntz("2023-05-31 18:58:33.633"), schema.TimestampNTZValue(ntz("2023-05-31 18:58:33.633").Int64() + 999)},
		{"dec", dec("1.50", 10, 2), dec("123.45", 10, 2)},
		{"big", dec("12.34", 25, 2), dec("1.51", 25, 2)}, // a double-printed number above 15 digits is widened
		{"flag", schema.BooleanValue(false), schema.BooleanValue(true)},
		{"bin", none, none},
		{"st.x", schema.LongValue(7), schema.LongValue(9)},
		{"st.in.y", schema.StringValue("p"), schema.StringValue("q")}, // cut at the lone surrogate
	} {
		gotMin, okMin := s.Min(tc.col)
		gotMax, okMax := s.Max(tc.col)
		if okMin != !tc.min.IsNull() || okMin && !sameValue(gotMin, tc.min) {
			t.Errorf("Min(%s) = %v, %v; want %v", tc.col, gotMin, okMin, tc.min)
		}
		if okMax != !tc.max.IsNull() || okMax && !sameValue(gotMax, tc.max) {
			t.Errorf("Max(%s) = %v, %v; want %v", tc.col, gotMax, okMax, tc.max)
		}
	}
	for col, want := range map[string]int64{"i": 0, "l": 10, "s": 3, "st.x": 1, "st.in.y": 2} {
		if n, ok := s.NullCount(col); !ok || n != want {
			t.Errorf("NullCount(%s) = %d, %v; want %d", col, n, ok, want)
		}
	}
	if _, ok := s.NullCount("d"); ok {
		t.Error("NullCount(d) known")
	}
	if _, ok := s.Min("nope"); ok {
		t.Error("Min(nope) known")
	}
}

func negInf() float64 { var z float64; return -1 / z }

func sameValue(a, b schema.Value) bool {
	if a.Kind() != b.Kind() {
		return false
	}
	n, ok := Order(a, b)
	return ok && n == 0
}

func TestParseStatsEmptyAndErrors(t *testing.T) {
	st := mustSchema(t, allTypes)
	for _, raw := range []string{"", "  \n", `{}`, `{"numRecords":null,"minValues":null,"maxValues":5,"nullCount":"x"}`} {
		s, err := ParseStats(raw, st, schema.ColumnMappingNone)
		if err != nil {
			t.Errorf("ParseStats(%q): %v", raw, err)
			continue
		}
		if _, ok := s.NumRecords(); ok {
			t.Errorf("ParseStats(%q): numRecords known", raw)
		}
		if _, ok := s.Min("i"); ok {
			t.Errorf("ParseStats(%q): min known", raw)
		}
		e, _ := Parse("i = 1 AND i IS NULL AND s > 'zz'")
		if !s.MightMatch(e) {
			t.Errorf("ParseStats(%q): skipped with nothing known", raw)
		}
	}
	for _, raw := range []string{
		`{`, `[]`, `null`, `{"numRecords":1,}`, `{"numRecords":01}`, `{"numRecords":1}x`,
		`{"minValues":{"s":"a\x"}}`, `{"minValues":{"s":"tab	here"}}`, `{"minValues":{"s":"\u12"}}`,
		`{"a":[1,2}`, `{"a":tru}`, `{"a":-}`, `{"a":1.}`, `{"a":1e}`, `{'a':1}`, `{"a" 1}`,
		strings.Repeat(`{"a":`, 2000) + "1" + strings.Repeat("}", 2000),
	} {
		_, err := ParseStats(raw, st, schema.ColumnMappingNone)
		if !errors.Is(err, ErrInvalidStats) || !errors.Is(err, deltaerr.ErrCorrupt) {
			t.Errorf("ParseStats(%q) err = %v, want ErrInvalidStats", raw, err)
		}
	}
}

func TestParseStatsColumnMapping(t *testing.T) {
	js := `{"type":"struct","fields":[
	  {"name":"a","type":"long","nullable":true,"metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-a"}},
	  {"name":"s","type":{"type":"struct","fields":[
	    {"name":"b","type":"string","nullable":true,"metadata":{"delta.columnMapping.id":3,"delta.columnMapping.physicalName":"col-b"}}]},
	   "nullable":true,"metadata":{"delta.columnMapping.id":2,"delta.columnMapping.physicalName":"col-s"}}]}`
	st := mustSchema(t, js)
	raw := `{"numRecords":2,"minValues":{"col-a":1,"a":100,"col-s":{"col-b":"x"}},"maxValues":{"col-a":5,"col-s":{"col-b":"y","b":"zz"}},"nullCount":{"col-a":0,"col-s":{"col-b":0}}}`
	for _, mode := range []schema.ColumnMappingMode{schema.ColumnMappingByName, schema.ColumnMappingByID} {
		s, err := ParseStats(raw, st, mode)
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := s.Min("a"); !ok || v.Int64() != 1 {
			t.Errorf("%s: Min(a) = %v, %v", mode, v, ok)
		}
		if v, ok := s.Max("s.b"); !ok || v.String() != "y" {
			t.Errorf("%s: Max(s.b) = %v, %v", mode, v, ok)
		}
		if e, _ := Parse("a > 5 OR s.b = 'zz'"); s.MightMatch(e) {
			t.Errorf("%s: %s not skipped", mode, e)
		}
	}
	// Without mapping the logical names are the keys.
	s, err := ParseStats(raw, st, schema.ColumnMappingNone)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := s.Min("a"); !ok || v.Int64() != 100 {
		t.Errorf("none: Min(a) = %v, %v", v, ok)
	}
	// A decoder given columns keeps only what it is asked for.
	s, err = NewStatsDecoder(st, schema.ColumnMappingByName, []string{"S.B"}).Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Min("a"); ok {
		t.Error("columns S.B: Min(a) known")
	}
	if v, ok := s.Min("s.b"); !ok || v.String() != "x" {
		t.Errorf("columns S.B: Min(s.b) = %v, %v", v, ok)
	}
}

type skipCase struct {
	pred string
	want bool // MightMatch
}

func runSkipCases(t *testing.T, s *Stats, cases []skipCase) {
	t.Helper()
	for _, tc := range cases {
		e, err := Parse(tc.pred)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.pred, err)
			continue
		}
		if got := s.MightMatch(e); got != tc.want {
			t.Errorf("MightMatch(%s) = %v, want %v", tc.pred, got, tc.want)
		}
	}
}

func TestMightMatch(t *testing.T) {
	st := mustSchema(t, structSchema(
		field("i", "integer"), field("l", "long"), field("s", "string"), field("n", "long"),
		field("allnull", "string"), field("nonull", "long"), field("dt", "date"), field("dec", "decimal(10,2)"),
		field("d", "double"), field("fnan", "double"), field("flag", "boolean"), field("one", "long"),
		field("ts", "timestamp"), field("ss", "string"),
		`{"name":"st","type":{"type":"struct","fields":[`+field("x", "long")+`]},"nullable":true,"metadata":{}}`,
	))
	raw := `{"numRecords":4,
	  "minValues":{"i":10,"l":10,"s":"bcd","n":1,"nonull":5,"dt":"2024-01-10","dec":"1.25","d":-1.5,"fnan":0,"flag":false,"one":7,
	    "ts":"2024-01-01T00:00:00.000Z","ss":"10","st":{"x":100}},
	  "maxValues":{"i":20,"l":20,"s":"bdf","n":9,"nonull":6,"dt":"2024-01-20","dec":"3.50","d":2.5,"fnan":"NaN","flag":false,"one":7,
	    "ts":"2024-01-02T00:00:00.000Z","ss":"9","st":{"x":200}},
	  "nullCount":{"i":0,"l":1,"s":0,"n":2,"allnull":4,"nonull":0,"one":0,"flag":0,"st":{"x":0}}}`
	s, err := ParseStats(raw, st, schema.ColumnMappingNone)
	if err != nil {
		t.Fatal(err)
	}
	runSkipCases(t, s, []skipCase{
		// Every comparison operator, literal on either side.
		{"i = 15", true}, {"i = 9", false}, {"i = 21", false}, {"i = 10", true}, {"i = 20", true},
		{"i != 15", true}, {"i < 10", false}, {"i < 11", true}, {"i <= 10", true}, {"i <= 9", false},
		{"i > 20", false}, {"i > 19", true}, {"i >= 20", true}, {"i >= 21", false},
		{"9 = i", false}, {"10 > i", false}, {"11 > i", true}, {"20 < i", false}, {"19 < i", true},
		{"21 <= i", false}, {"9 >= i", false}, {"10 >= i", true},
		// != needs every value equal to skip.
		{"one != 7", false}, {"one != 8", true}, {"NOT (one = 7)", false}, {"one = 7", true},
		{"nonull != 5", true},
		// Integers across widths, decimals and text literals as Eval reads them.
		{"i = 15.5", true}, {"i > 20.5", false}, {"i < 9.99", false}, {"i = '15'", true}, {"i > '20'", false},
		{"i > '20.5'", false}, {"l > 20", false},
		{"dec > 3.5", false}, {"dec >= 3.5", true}, {"dec < 1.25", false}, {"dec = 1.249", false}, {"dec = '2'", true},
		// Dates; a timestamp text reads as its date, as Spark casts it.
		{"dt > '2024-01-20'", false}, {"dt >= DATE '2024-01-20'", true}, {"dt < '2024-01-10'", false},
		{"dt > '2024-01-21T00:00:00Z'", false}, {"dt >= '2024-01-20T23:00:00Z'", true}, {"dt > 'not a date'", true},
		// Timestamps: the max is widened by 999µs.
		{"ts > '2024-01-02T00:00:00.000999Z'", false}, {"ts > '2024-01-02T00:00:00.000998Z'", true},
		{"ts >= '2024-01-02T00:00:00.000999Z'", true}, {"ts < '2024-01-01T00:00:00Z'", false},
		{"ts = '2024-01-02T00:00:00.0005Z'", true}, {"ts != '2024-01-01T00:00:00Z'", true},
		// Strings by UTF-8 bytes; the max bounds only up to extension.
		{"s < 'bcd'", false}, {"s <= 'bcd'", true}, {"s < 'bcda'", true}, {"s = 'bc'", false},
		{"s > 'bdf'", true}, {"s > 'bdg'", false}, {"s >= 'bdfzzz'", true}, {"s = 'bdf'", true},
		{"s > 'be'", false}, {"s = 'c'", false}, {"s < 'é'", true}, {"s > 'é'", false},
		// A string column compared with a number: Eval reads each row as a number.
		{"ss > 10", true}, {"ss < 9", true}, {"ss = 100", true},
		// Null counts.
		{"n IS NULL", true}, {"n IS NOT NULL", true}, {"nonull IS NULL", false}, {"nonull IS NOT NULL", true},
		{"allnull IS NULL", true}, {"allnull IS NOT NULL", false}, {"allnull = 'x'", false},
		{"allnull != 'x'", false}, {"NOT (allnull = 'x')", false}, {"allnull IN ('x')", false},
		{"allnull NOT IN ('x')", false}, {"NOT (allnull IS NOT NULL)", true}, {"i IS NULL", false},
		{"l IS NULL", true},
		// NOT, AND, OR.
		{"NOT (i > 5)", false}, {"NOT (i > 15)", true}, {"NOT (i < 5)", true}, {"NOT (NOT (i < 5))", false},
		{"i > 25 OR i < 5", false}, {"i > 25 OR i < 15", true}, {"i > 15 AND i < 12", true},
		{"i > 15 AND l > 25", false}, {"NOT (i > 25 OR i < 5)", true}, {"NOT (i > 5 AND i < 25)", false},
		{"NOT (i = 15 AND allnull IS NULL)", true}, {"NOT (nonull IS NOT NULL AND i >= 10)", false},
		// IN and NOT IN, nulls in the list.
		{"i IN (1, 2, 30)", false}, {"i IN (1, 15)", true}, {"i IN (NULL)", false}, {"i IN (NULL, 1)", false},
		{"i IN (NULL, 12)", true}, {"i NOT IN (1, 2)", true}, {"i NOT IN (NULL, 1)", false},
		{"one NOT IN (7)", false}, {"one NOT IN (7, 8)", false}, {"one NOT IN (8)", true}, {"NOT (one IN (7))", false},
		{"NOT (i IN (1, 2))", true}, {"i IN ('15')", true}, {"i IN (l)", true},
		// Literals only, and null literals.
		{"1 = 1", true}, {"1 = 2", false}, {"NULL = 1", false}, {"i = NULL", false},
		{"NOT (i != NULL)", false}, {"NULL IS NULL", true}, {"1 IS NULL", false},
		{"1 IN (1, 2)", true}, {"3 IN (1, 2)", false},
		// Column against column: no skipping, except when one is all null.
		{"i = l", true}, {"i > l", true}, {"i = allnull", false},
		// Unknown columns and missing stats: never skip.
		{"nope = 1", true}, {"nope IS NULL", true}, {"NOT (nope = 1)", true}, {"st = 1", true},
		{"flag = TRUE", false}, {"flag = FALSE", true},
		// Nested fields.
		{"st.x > 200", false}, {"st.x > 150", true}, {"st.x IS NULL", false}, {"`st.x` < 100", false},
		// Floats: NaN bound or literal never skips; != never skips.
		{"d > 2.5", false}, {"d < -1.5", false}, {"d = 0", true}, {"d > 2", true},
		{"fnan > 100", true}, {"fnan < 0", false}, {"fnan < 0.5", true}, {"d != 0", true},
		{"d = 'NaN'", true}, {"d > 'NaN'", true},
		// Type mismatch: keep.
		{"i = 'abc'", true}, {"s = TRUE", true}, {"dt = 5", true},
	})
	// Predicates the parser has no text for: boolean literals and columns.
	for _, tc := range []struct {
		e    Expr
		want bool
	}{
		{Literal{Value: schema.BooleanValue(true)}, true},
		{Literal{Value: schema.BooleanValue(false)}, false},
		{Literal{Value: schema.LongValue(1)}, false}, // Eval: Unknown
		{Column{Name: "flag"}, false},                // every flag is false
		{Not{Value: Column{Name: "flag"}}, true},
		{Column{Name: "i"}, false}, // not a boolean: Eval is Unknown
		{Column{Name: "nope"}, true},
		{In{Value: Column{Name: "i"}}, false}, // an empty list: False for every row
		{In{Value: Column{Name: "i"}, Negate: true}, true},
		{Compare{Op: Eq, Left: Column{Name: "i"}, Right: Not{Value: Column{Name: "flag"}}}, true},
	} {
		if got := s.MightMatch(tc.e); got != tc.want {
			t.Errorf("MightMatch(%s) = %v, want %v", tc.e, got, tc.want)
		}
	}
}

func TestMightMatchEmptyFile(t *testing.T) {
	st := mustSchema(t, structSchema(field("i", "long")))
	s, err := ParseStats(`{"numRecords":0,"minValues":{},"maxValues":{},"nullCount":{}}`, st, schema.ColumnMappingNone)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := Parse("i IS NULL OR i IS NOT NULL")
	if s.MightMatch(e) {
		t.Error("file without records kept")
	}
	var nilStats *Stats
	if !nilStats.MightMatch(e) {
		t.Error("nil Stats skipped")
	}
}

// With deletion vectors, numRecords counts deleted rows and, with wide
// bounds, nullCount is read only at 0 and numRecords. Min and max are still
// bounds.
func TestMightMatchWideBounds(t *testing.T) {
	st := mustSchema(t, structSchema(field("v", "integer"), field("a", "string"), field("z", "long"), field("p", "long")))
	raw := `{"numRecords":10,"tightBounds":false,"minValues":{"v":0,"p":1},"maxValues":{"v":9,"p":3},
	  "nullCount":{"v":0,"a":10,"z":4,"p":11}}`
	s, err := ParseStats(raw, st, schema.ColumnMappingNone)
	if err != nil {
		t.Fatal(err)
	}
	if s.TightBounds() {
		t.Fatal("TightBounds = true")
	}
	runSkipCases(t, s, []skipCase{
		{"v > 3", true}, {"v > 9", false}, {"v < 0", false}, {"v = 0", true}, {"v IS NULL", false},
		{"a IS NOT NULL", false}, {"a = 'x'", false}, {"a IS NULL", true},
		// A partial count carries no information: both are possible.
		{"z IS NULL", true}, {"z IS NOT NULL", true},
		// A count above numRecords is treated as absent.
		{"p IS NULL", true}, {"p IS NOT NULL", true}, {"p > 3", false},
	})
}

// The corpus table timestamp-truncation-stats: the second file's max is
// written as 00:00:04.000 but it holds 00:00:04.000500.
func TestMightMatchTimestampTruncation(t *testing.T) {
	st := mustSchema(t, structSchema(field("id", "long"), field("ts_col", "timestamp"), field("ntz", "timestamp_ntz")))
	s, err := ParseStats(`{"numRecords":2,"minValues":{"id":3,"ts_col":"1970-01-01T00:00:03.000Z","ntz":"1970-01-01T00:00:03.000"},
	  "maxValues":{"id":4,"ts_col":"1970-01-01T00:00:04.000Z","ntz":"1970-01-01T00:00:04.000"},"nullCount":{"id":0,"ts_col":0,"ntz":0}}`,
		st, schema.ColumnMappingNone)
	if err != nil {
		t.Fatal(err)
	}
	const lit = "'1970-01-01T00:00:04.000400Z'"
	const ntzLit = "'1970-01-01 00:00:04.000400'"
	runSkipCases(t, s, []skipCase{
		{"ts_col > " + lit, true}, {"ts_col >= " + lit, true}, {"ts_col < " + lit, true},
		{"ts_col <= " + lit, true}, {"ts_col = " + lit, true},
		{"ts_col > '1970-01-01T00:00:04.001Z'", false}, {"ts_col = '1970-01-01T00:00:04.001Z'", false},
		{"ts_col < '1970-01-01T00:00:03Z'", false}, {"ts_col < '1970-01-01T01:00:03+01:00'", false},
		{"ntz > " + ntzLit, true}, {"ntz = " + ntzLit, true}, {"ntz > '1970-01-01 00:00:04.001'", false},
		{"ntz > " + lit, true}, // a zone does not read as timestamp_ntz: Eval is Unknown, keep
	})
}

// Spark truncates string stats; the max is kept only as a prefix bound.
func TestMightMatchStringTruncation(t *testing.T) {
	st := mustSchema(t, structSchema(field("s", "string")))
	for _, tc := range []struct {
		name string
		max  string // as JSON
		// values of the file, all above the prefix "abc"
		cases []skipCase
	}{
		{"new Spark, ASCII tie-breaker", `"abc\u007f"`, []skipCase{
			{"s = 'abcz'", true}, {"s > 'abcz'", true}, {"s >= 'abd'", false}, {"s = 'abd'", false}}},
		{"new Spark, max code point", `"abc\udbff\udfff"`, []skipCase{
			{"s = 'abc😀'", true}, {"s >= 'abd'", false}}},
		{"old Spark, U+FFFD below a supplementary character", `"abc\ufffd"`, []skipCase{
			{"s = 'abc😀'", true}, {"s > 'abc\uffff'", true}, {"s >= 'abd'", false}}},
		{"plain prefix", `"abc"`, []skipCase{
			{"s = 'abcz'", true}, {"s > 'abc'", true}, {"s > 'abd'", false}}},
		{"cut inside a surrogate pair", `"abc\ud83d"`, []skipCase{
			{"s = 'abc😀'", true}, {"s = 'abcz'", true}, {"s = 'abd'", false}}},
		{"invalid UTF-8", "\"abc\xf0\x9f\"", []skipCase{
			{"s = 'abc😀'", true}, {"s = 'abd'", false}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseStats(`{"numRecords":3,"minValues":{"s":"abc"},"maxValues":{"s":`+tc.max+`},"nullCount":{"s":0}}`, st, schema.ColumnMappingNone)
			if err != nil {
				t.Fatal(err)
			}
			runSkipCases(t, s, append(tc.cases, skipCase{"s < 'abc'", false}, skipCase{"s <= 'abc'", true},
				skipCase{"s != 'abc'", true}))
		})
	}
}

func TestWithPartitionValues(t *testing.T) {
	st := mustSchema(t, structSchema(field("id", "long"), field("part", "integer"), field("region", "string")))
	base, err := ParseStats(`{"numRecords":5,"minValues":{"id":1},"maxValues":{"id":5},"nullCount":{"id":0}}`, st, schema.ColumnMappingNone)
	if err != nil {
		t.Fatal(err)
	}
	s := base.WithPartitionValues(map[string]schema.Value{"part": schema.IntegerValue(3), "region": {}, "unknown": schema.LongValue(1)})
	runSkipCases(t, s, []skipCase{
		{"part = 3", true}, {"part = 4", false}, {"part != 3", false}, {"part IN (1, 2)", false},
		{"part NOT IN (3)", false}, {"part NOT IN (1)", true}, {"part IS NULL", false}, {"part > '2'", true},
		{"region IS NULL", true}, {"region IS NOT NULL", false}, {"region = 'eu'", false},
		{"part = 3 AND id > 5", false}, {"part = 3 AND id = 5", true}, {"part = 4 OR id = 2", true},
	})
	// The original is unchanged.
	runSkipCases(t, base, []skipCase{{"part = 4", true}, {"region IS NOT NULL", true}})
	// Partition values alone, with no stats.
	empty, _ := ParseStats("", st, schema.ColumnMappingNone)
	runSkipCases(t, empty.WithPartitionValues(map[string]schema.Value{"part": schema.IntegerValue(3)}),
		[]skipCase{{"part = 3", true}, {"part < 3", false}, {"id = 1", true}})
}

// ---- soundness: random files and predicates ----

// A random file: rows of a few columns, stats written the way writers do
// (truncated strings with one of three tie-breaker styles, timestamps
// truncated to milliseconds, optionally a deletion vector with wide
// bounds). For every random predicate that Eval makes True on some live
// row, MightMatch must be true.
func TestMightMatchSound(t *testing.T) {
	st := mustSchema(t, structSchema(field("i", "long"), field("s", "string"), field("ts", "timestamp"),
		field("d", "double"), field("flag", "boolean"), field("dec", "decimal(5,2)")))
	rng := rand.New(rand.NewSource(1))
	strs := []string{"", "a", "ab", "abc", "abd", "b", "ba", "bcd", "é", "aé", "a😀x", "😀😀😀", "ab\u00ff", "10", "9", "zzzz"}
	tsVals := []int64{-1500, 0, 500, 1000, 4000400, 4000500, 4001000}
	dVals := []float64{-1.5, 0, 2.5, 7}
	decVals := []string{"-1.25", "0.00", "1.50", "99.99"}
	cols := []string{"i", "s", "ts", "d", "flag", "dec"}

	type row map[string]schema.Value
	randVal := func(col string) schema.Value {
		if rng.Intn(4) == 0 {
			return schema.Value{}
		}
		switch col {
		case "i":
			return schema.LongValue(int64(rng.Intn(7) - 3))
		case "s":
			return schema.StringValue(strs[rng.Intn(len(strs))])
		case "ts":
			return schema.TimestampValue(tsVals[rng.Intn(len(tsVals))])
		case "d":
			return schema.DoubleValue(dVals[rng.Intn(len(dVals))])
		case "flag":
			return schema.BooleanValue(rng.Intn(2) == 0)
		}
		v, _ := schema.ParsePartitionValue(schema.DecimalType{Precision: 5, Scale: 2}, decVals[rng.Intn(len(decVals))])
		return v
	}
	randLit := func(col string) Expr {
		switch rng.Intn(8) {
		case 0:
			return Literal{}
		case 1:
			return Literal{Value: schema.LongValue(int64(rng.Intn(9) - 4))}
		case 2:
			return Literal{Value: schema.DoubleValue(float64(rng.Intn(9)-4) / 2)}
		case 3:
			s := strs[rng.Intn(len(strs))]
			return Literal{Value: schema.StringValue(s), Text: s, IsText: true}
		}
		var txt string
		switch col {
		case "i":
			txt = fmt.Sprint(rng.Intn(9) - 4)
		case "s":
			txt = strs[rng.Intn(len(strs))]
			if rng.Intn(2) == 0 && len(txt) > 0 {
				txt = txt[:rng.Intn(len(txt))] + string(rune("a\x7f\u00ff\uffff"[rng.Intn(4)]))
			}
		case "ts":
			txt = time.UnixMicro(tsVals[rng.Intn(len(tsVals))] + int64(rng.Intn(3)-1)*100).UTC().Format("2006-01-02T15:04:05.000000Z")
		case "d":
			return Literal{Value: schema.DoubleValue(dVals[rng.Intn(len(dVals))])}
		case "flag":
			return Literal{Value: schema.BooleanValue(rng.Intn(2) == 0)}
		case "dec":
			txt = decVals[rng.Intn(len(decVals))]
		}
		return Literal{Value: schema.StringValue(txt), Text: txt, IsText: true}
	}
	ops := []Op{Eq, Ne, Lt, Le, Gt, Ge}
	var randPred func(depth int) Expr
	randPred = func(depth int) Expr {
		col := cols[rng.Intn(len(cols))]
		c := Column{Name: col}
		k := rng.Intn(10)
		if depth > 2 {
			k = rng.Intn(6)
		}
		switch k {
		case 0, 1:
			return Compare{Op: ops[rng.Intn(len(ops))], Left: c, Right: randLit(col)}
		case 2:
			return Compare{Op: ops[rng.Intn(len(ops))], Left: randLit(col), Right: c}
		case 3:
			list := make([]Expr, 1+rng.Intn(3))
			for j := range list {
				list[j] = randLit(col)
			}
			return In{Value: c, List: list, Negate: rng.Intn(2) == 0}
		case 4:
			return IsNull{Value: c, Negate: rng.Intn(2) == 0}
		case 5:
			if col == "flag" {
				return c
			}
			return Compare{Op: ops[rng.Intn(len(ops))], Left: c, Right: Column{Name: cols[rng.Intn(len(cols))]}}
		case 6, 7:
			return Not{Value: randPred(depth + 1)}
		case 8:
			return And{Terms: []Expr{randPred(depth + 1), randPred(depth + 1)}}
		}
		return Or{Terms: []Expr{randPred(depth + 1), randPred(depth + 1)}}
	}

	const prefixLen = 2 // characters kept of a string stat
	truncMax := func(s string, style int) string {
		r := []rune(s)
		if len(r) <= prefixLen {
			return s
		}
		p := string(r[:prefixLen])
		switch style {
		case 0: // Spark now: U+007F when the next character is below it, else U+10FFFF
			if r[prefixLen] < 0x7F {
				return p + "\x7f"
			}
			return p + string(utf8.MaxRune)
		case 1: // old Spark: U+FFFD, compared in UTF-16
			return p + "\ufffd"
		}
		return p // a writer without tie-breaker
	}
	truncMin := func(s string) string {
		if r := []rune(s); len(r) > prefixLen {
			return string(r[:prefixLen])
		}
		return s
	}
	statJSON := func(v schema.Value, col string, isMax bool, style int) any {
		switch col {
		case "s":
			if isMax {
				return truncMax(v.String(), style)
			}
			return truncMin(v.String())
		case "ts":
			return time.UnixMicro(v.Int64()).UTC().Truncate(time.Millisecond).Format("2006-01-02T15:04:05.000Z07:00")
		case "i":
			return v.Int64()
		case "d":
			return v.Float64()
		case "flag":
			return v.Bool()
		}
		return json.Number(v.String())
	}

	checked, skipped := 0, 0
	for file := 0; file < 600; file++ {
		rows := make([]row, rng.Intn(6))
		for r := range rows {
			rows[r] = row{}
			for _, c := range cols {
				rows[r][c] = randVal(c)
			}
		}
		// Stats over all physical rows.
		minV, maxV, nulls := map[string]any{}, map[string]any{}, map[string]any{}
		style := rng.Intn(3)
		for _, c := range cols {
			var lo, hi schema.Value
			n := 0
			for _, r := range rows {
				v := r[c]
				if v.IsNull() {
					n++
					continue
				}
				if lo.IsNull() || cmpTest(v, lo) < 0 {
					lo = v
				}
				if hi.IsNull() || cmpTest(v, hi) > 0 {
					hi = v
				}
			}
			nulls[c] = n
			if !lo.IsNull() && rng.Intn(8) != 0 { // sometimes a writer leaves bounds out
				minV[c] = statJSON(lo, c, false, style)
				maxV[c] = statJSON(hi, c, true, style)
			}
		}
		stats := map[string]any{"numRecords": len(rows), "minValues": minV, "maxValues": maxV, "nullCount": nulls}
		live := rows
		if rng.Intn(3) == 0 && len(rows) > 0 { // a deletion vector: bounds go wide
			stats["tightBounds"] = false
			live = nil
			for _, r := range rows {
				if rng.Intn(2) == 0 {
					live = append(live, r)
				}
			}
		}
		raw, err := json.Marshal(stats)
		if err != nil {
			t.Fatal(err)
		}
		s, err := ParseStats(string(raw), st, schema.ColumnMappingNone)
		if err != nil {
			t.Fatalf("ParseStats(%s): %v", raw, err)
		}
		for p := 0; p < 40; p++ {
			e := randPred(0)
			matches := false
			for _, r := range live {
				if Eval(e, func(c string) (schema.DataType, schema.Value, bool) {
					v, ok := r[c]
					return typeOf(c), v, ok
				}) == True {
					matches = true
					break
				}
			}
			checked++
			if !s.MightMatch(e) {
				skipped++
				if matches {
					t.Errorf("skipped a matching file:\n stats %s\n predicate %s", raw, e)
				}
			}
		}
	}
	t.Logf("%d checks, %d skipped", checked, skipped)
	if skipped < checked/10 {
		t.Errorf("only %d of %d skipped: skipping does almost nothing", skipped, checked)
	}
}

func typeOf(col string) schema.DataType {
	switch col {
	case "i":
		return schema.Long
	case "s":
		return schema.String
	case "ts":
		return schema.Timestamp
	case "d":
		return schema.Double
	case "flag":
		return schema.Boolean
	}
	return schema.DecimalType{Precision: 5, Scale: 2}
}

func cmpTest(a, b schema.Value) int {
	n, _ := Order(a, b)
	return n
}

// ---- the corpus ----

func corpusDir(t *testing.T) string { return testutil.CorpusDir(t) }

type corpusAdd struct {
	Path            string             `json:"path"`
	PartitionValues map[string]*string `json:"partitionValues"`
	Stats           *string            `json:"stats"`
}

type corpusTable struct {
	schema     *schema.StructType
	mode       schema.ColumnMappingMode
	partitions []string
	adds       map[string]corpusAdd // live files, by path
	order      []string
}

// replayJSON replays the JSON commits of a log in version order: the
// latest metaData, and the live adds (checkpoints are not read, so only
// logs that start at version 0 are complete). fn, when not nil, sees every
// add with the metaData in force at its commit.
func replayJSON(t *testing.T, logDir string, fn func(tbl *corpusTable, add corpusAdd, file string)) *corpusTable {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(logDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	tbl := &corpusTable{adds: map[string]corpusAdd{}}
	for _, name := range names {
		if strings.HasPrefix(filepath.Base(name), "._") || !regexp.MustCompile(`^\d{20}\.json$`).MatchString(filepath.Base(name)) {
			continue
		}
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<28)
		for sc.Scan() {
			var a struct {
				MetaData *struct {
					SchemaString     string            `json:"schemaString"`
					PartitionColumns []string          `json:"partitionColumns"`
					Configuration    map[string]string `json:"configuration"`
				} `json:"metaData"`
				Add    *corpusAdd `json:"add"`
				Remove *struct {
					Path string `json:"path"`
				} `json:"remove"`
			}
			if json.Unmarshal(sc.Bytes(), &a) != nil {
				continue
			}
			switch {
			case a.MetaData != nil:
				st, err := schema.Parse(a.MetaData.SchemaString)
				if err != nil {
					// A few golden tables have metaData without a schema.
					t.Logf("%s: schema: %v", name, err)
					tbl.schema = nil
					continue
				}
				mode, err := schema.ParseColumnMappingMode(a.MetaData.Configuration[tableconfig.KeyColumnMappingMode])
				if err != nil {
					t.Errorf("%s: mode: %v", name, err)
					continue
				}
				tbl.schema, tbl.mode, tbl.partitions = st, mode, a.MetaData.PartitionColumns
			case a.Add != nil:
				if fn != nil {
					fn(tbl, *a.Add, name)
				}
				if _, ok := tbl.adds[a.Add.Path]; !ok {
					tbl.order = append(tbl.order, a.Add.Path)
				}
				tbl.adds[a.Add.Path] = *a.Add
			case a.Remove != nil:
				delete(tbl.adds, a.Remove.Path)
			}
		}
		f.Close()
	}
	return tbl
}

// Every add with JSON stats in the corpus decodes with its table's schema
// and column mapping mode, and agrees with encoding/json on numRecords.
func TestStatsCorpus(t *testing.T) {
	dir := corpusDir(t)
	var logDirs []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "_delta_log" {
			logDirs = append(logDirs, p)
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	files, bounds := 0, 0
	for _, logDir := range logDirs {
		replayJSON(t, logDir, func(tbl *corpusTable, add corpusAdd, name string) {
			if add.Stats == nil || tbl.schema == nil {
				return
			}
			s, err := ParseStats(*add.Stats, tbl.schema, tbl.mode)
			if err != nil {
				t.Errorf("%s: %s: %v", name, add.Path, err)
				return
			}
			files++
			var want struct {
				NumRecords *int64 `json:"numRecords"`
			}
			if err := json.Unmarshal([]byte(*add.Stats), &want); err != nil {
				t.Errorf("%s: encoding/json rejects stats the decoder accepts: %v", name, err)
				return
			}
			if n, ok := s.NumRecords(); want.NumRecords != nil && (!ok || n != *want.NumRecords) {
				t.Errorf("%s: NumRecords = %d, %v; want %d", name, n, ok, *want.NumRecords)
			}
			for _, path := range tbl.schema.LeafColumns() {
				if _, ok := s.Min(strings.Join(path, ".")); ok {
					bounds++
				}
			}
		})
	}
	if files == 0 {
		t.Fatal("no stats found in the corpus")
	}
	t.Logf("%d files' stats decoded, %d column lower bounds", files, bounds)
}

// The kernel-rs cases of kind scan_with_file_skipping_predicate: kernel-rs
// uses the predicate only to skip files, so the expected rows are all rows
// of the files it kept. A file is identified by the range of a key column
// in its stats (or its partition value); every expected row must lie in a
// kept file, and every kept file must hold an expected row.
func TestSkippingCorpusCases(t *testing.T) {
	dir := corpusDir(t)
	keys := map[string]string{"mixed-nulls": "part", "table-with-dv-small": "value", "timestamp-truncation-stats": "id"}
	// kernel-rs predicates our parser cannot read, translated by hand.
	tsPred := regexp.MustCompile(`^(\w+) (>=|<=|=|<|>) TIMESTAMP (\S+) \(`)
	ran := 0
	names, _ := filepath.Glob(filepath.Join(dir, "derived-expected", "kernel-rs", "*.json"))
	for _, name := range names {
		table := strings.TrimSuffix(filepath.Base(name), ".json")
		var doc struct {
			Cases []struct {
				Kind      string `json:"kind"`
				Predicate string `json:"predicate"`
				Expected  struct {
					Columns []string    `json:"columns"`
					Rows    [][]*string `json:"rows"`
				} `json:"expected"`
			} `json:"cases"`
		}
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, c := range doc.Cases {
			if c.Kind != "scan_with_file_skipping_predicate" {
				continue
			}
			text := c.Predicate
			if m := tsPred.FindStringSubmatch(text); m != nil {
				text = m[1] + " " + m[2] + " TIMESTAMP '" + m[3] + "'"
			}
			e, err := Parse(text)
			key, hasKey := keys[table]
			if err != nil || !hasKey {
				t.Logf("%s: %q: not checked (parse error %v, or no key column)", table, c.Predicate, err)
				continue
			}
			t.Run(table+"/"+text, func(t *testing.T) {
				tbl := replayJSON(t, filepath.Join(dir, "kernel-rs", table, "_delta_log"), nil)
				if tbl.schema == nil {
					t.Fatal("no metaData")
				}
				keyField, ok := tbl.schema.Field(key)
				if !ok {
					t.Fatalf("no column %s", key)
				}
				col := -1
				for i, name := range c.Expected.Columns {
					if name == key {
						col = i
					}
				}
				if col < 0 {
					t.Fatalf("expected rows lack %s", key)
				}
				type file struct {
					path   string
					kept   bool
					stats  *Stats
					holds  bool
					lo, hi schema.Value
				}
				var fs []*file
				for _, path := range tbl.order {
					add, live := tbl.adds[path]
					if !live {
						continue
					}
					raw := ""
					if add.Stats != nil {
						raw = *add.Stats
					}
					s, err := ParseStats(raw, tbl.schema, tbl.mode)
					if err != nil {
						t.Fatal(err)
					}
					pv := map[string]schema.Value{}
					for _, p := range tbl.partitions {
						f, _ := tbl.schema.Field(p)
						txt := ""
						if v := add.PartitionValues[f.PhysicalName(tbl.mode)]; v != nil {
							txt = *v
						}
						if pv[p], err = schema.ParsePartitionValue(f.Type, txt); err != nil {
							t.Fatal(err)
						}
					}
					s = s.WithPartitionValues(pv)
					lo, okLo := s.Min(key)
					hi, okHi := s.Max(key)
					if !okLo || !okHi {
						t.Fatalf("%s: no bounds for %s", path, key)
					}
					fs = append(fs, &file{path: path, kept: s.MightMatch(e), stats: s, lo: lo, hi: hi})
				}
				for _, r := range c.Expected.Rows {
					if r[col] == nil {
						t.Fatalf("null key in expected row %v", r)
					}
					v, err := schema.ParsePartitionValue(keyField.Type, *r[col])
					if err != nil {
						t.Fatal(err)
					}
					inKept := false
					for _, f := range fs {
						if cmpTest(f.lo, v) <= 0 && cmpTest(v, f.hi) <= 0 {
							f.holds = true
							inKept = inKept || f.kept
						}
					}
					if !inKept {
						t.Errorf("expected row with %s=%s is in no kept file", key, *r[col])
					}
				}
				for _, f := range fs {
					if f.kept && !f.holds {
						t.Errorf("kept %s, which holds no expected row (kernel-rs skipped it)", f.path)
					}
				}
			})
			ran++
		}
	}
	if ran < 8 {
		t.Errorf("only %d corpus skipping cases checked", ran)
	}
}

// ---- benchmarks ----

func benchStats(b *testing.B) (*schema.StructType, string) {
	fields := make([]string, 0, 40)
	for i := 0; i < 40; i++ {
		typ := []string{"long", "string", "double", "timestamp", "date"}[i%5]
		fields = append(fields, field(fmt.Sprintf("c%d", i), typ))
	}
	st := mustSchema(b, structSchema(fields...))
	minV, maxV, nulls := map[string]any{}, map[string]any{}, map[string]any{}
	for i := 0; i < 40; i++ {
		c := fmt.Sprintf("c%d", i)
		switch i % 5 {
		case 0:
			minV[c], maxV[c] = i, i*1000
		case 1:
			minV[c], maxV[c] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz\u007f"
		case 2:
			minV[c], maxV[c] = -1.5, 1e10
		case 3:
			minV[c], maxV[c] = "2023-05-31T18:58:33.633Z", "2024-05-31T18:58:33.633Z"
		case 4:
			minV[c], maxV[c] = "2023-05-31", "2024-05-31"
		}
		nulls[c] = i % 3
	}
	raw, _ := json.Marshal(map[string]any{"numRecords": 1000, "minValues": minV, "maxValues": maxV, "nullCount": nulls})
	return st, string(raw)
}

func BenchmarkDecodeAll(b *testing.B) {
	st, raw := benchStats(b)
	d := NewStatsDecoder(st, schema.ColumnMappingNone, nil)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Decode(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeForPredicate(b *testing.B) {
	st, raw := benchStats(b)
	e, _ := Parse("c0 > 500 AND c3 < '2023-01-01T00:00:00Z'")
	d := NewStatsDecoder(st, schema.ColumnMappingNone, Columns(e))
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		s, err := d.Decode(raw)
		if err != nil {
			b.Fatal(err)
		}
		_ = s.MightMatch(e)
	}
}

func BenchmarkEncodingJSON(b *testing.B) {
	_, raw := benchStats(b)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		var v map[string]any
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			b.Fatal(err)
		}
	}
}

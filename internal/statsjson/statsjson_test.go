package statsjson_test

import (
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/internal/statsjson"
	"github.com/godelta/delta/schema"
)

func mustDecimal(t *testing.T, unscaled int64, p, s int) schema.Value {
	t.Helper()
	v, err := schema.DecimalValue(big.NewInt(unscaled), p, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestRoundTrip encodes stats with Stats.JSON and reads them back with
// every reader of the codec: NumRecords, Widen, and expr's typed decoder.
func TestRoundTrip(t *testing.T) {
	ts := time.Date(2026, 1, 2, 3, 4, 5, 678_901_000, time.UTC).UnixMicro()
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.Long, Nullable: true},
		{Name: "name", Type: schema.String, Nullable: true},
		{Name: "s", Type: &schema.StructType{Fields: []schema.StructField{
			{Name: "ts", Type: schema.Timestamp, Nullable: true},
			{Name: "d", Type: schema.DecimalType{Precision: 10, Scale: 2}, Nullable: true},
		}}, Nullable: true},
		{Name: "ntz", Type: schema.TimestampNTZ, Nullable: true},
	}}
	st := statsjson.Stats{NumRecords: 7, TightBounds: true, Columns: []statsjson.Column{
		{Path: []string{"id"}, Type: schema.Long, NullCount: 0, Min: schema.LongValue(-9_007_199_254_740_993), Max: schema.LongValue(1 << 62)},
		{Path: []string{"name"}, Type: schema.String, NullCount: 2, Min: schema.StringValue("a\"\\\n\u00e9"), Max: schema.StringValue("z\u007f")},
		{Path: []string{"s", "ts"}, Type: schema.Timestamp, NullCount: 1, Min: schema.TimestampValue(ts), Max: schema.TimestampValue(ts)},
		{Path: []string{"s", "d"}, Type: schema.DecimalType{Precision: 10, Scale: 2}, NullCount: 0, Min: mustDecimal(t, -12345, 10, 2), Max: mustDecimal(t, 100, 10, 2)},
		{Path: []string{"ntz"}, Type: schema.TimestampNTZ, NullCount: 7},
	}}
	raw := st.JSON()
	const want = `{"numRecords":7,"minValues":{"id":-9007199254740993,"name":"a\"\\\né","s":{"ts":"2026-01-02T03:04:05.678Z","d":-123.45}},` +
		`"maxValues":{"id":4611686018427387904,"name":"z` + "\u007f" + `","s":{"ts":"2026-01-02T03:04:05.678Z","d":1.00}},` +
		`"nullCount":{"id":0,"name":2,"s":{"ts":1,"d":0},"ntz":7},"tightBounds":true}`
	if raw != want {
		t.Fatalf("JSON:\n got %s\nwant %s", raw, want)
	}
	if !json.Valid([]byte(raw)) {
		t.Fatal("JSON is not valid JSON")
	}
	if n, ok, err := statsjson.NumRecords(raw); n != 7 || !ok || err != nil {
		t.Errorf("NumRecords = %d, %v, %v", n, ok, err)
	}

	check := func(label, raw string, tight bool) {
		t.Helper()
		s, err := expr.ParseStats(raw, sch, schema.ColumnMappingNone)
		if err != nil {
			t.Fatalf("%s: ParseStats: %v", label, err)
		}
		if n, ok := s.NumRecords(); n != 7 || !ok {
			t.Errorf("%s: NumRecords = %d, %v", label, n, ok)
		}
		if s.TightBounds() != tight {
			t.Errorf("%s: TightBounds = %v", label, s.TightBounds())
		}
		if v, ok := s.Min("id"); !ok || v.Int64() != -9_007_199_254_740_993 {
			t.Errorf("%s: Min(id) = %v, %v", label, v, ok)
		}
		if v, ok := s.Min("name"); !ok || v.String() != "a\"\\\n\u00e9" {
			t.Errorf("%s: Min(name) = %q, %v", label, v.String(), ok)
		}
		// The reader drops the tie-breaker and widens the timestamp max by
		// the 999µs the millisecond form may have cut.
		if v, ok := s.Max("name"); !ok || v.String() != "z" {
			t.Errorf("%s: Max(name) = %q, %v", label, v.String(), ok)
		}
		msTS := ts - ts%1000
		if v, ok := s.Min("s.ts"); !ok || v.Int64() != msTS {
			t.Errorf("%s: Min(s.ts) = %v, %v; want %d", label, v.Int64(), ok, msTS)
		}
		if v, ok := s.Max("s.ts"); !ok || v.Int64() != msTS+999 {
			t.Errorf("%s: Max(s.ts) = %v, %v", label, v.Int64(), ok)
		}
		if v, ok := s.Min("s.d"); !ok || v.String() != mustDecimal(t, -12345, 10, 2).String() {
			t.Errorf("%s: Min(s.d) = %v, %v", label, v, ok)
		}
		if n, ok := s.NullCount("ntz"); n != 7 || !ok {
			t.Errorf("%s: NullCount(ntz) = %d, %v", label, n, ok)
		}
		if _, ok := s.Min("ntz"); ok {
			t.Errorf("%s: Min(ntz) present for an all-null column", label)
		}
	}
	check("JSON", raw, true)

	wide, err := statsjson.Widen(raw, 99)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(wide, `,"tightBounds":false}`) || strings.Count(wide, "tightBounds") != 1 {
		t.Errorf("Widen = %s", wide)
	}
	check("Widen", wide, false) // numRecords kept, not the physical count
	if again, err := statsjson.Widen(wide, 99); err != nil || again != wide {
		t.Errorf("Widen twice = %s, %v", again, err)
	}
}

func TestWiden(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{``, `{"numRecords":5,"tightBounds":false}`},
		{` `, `{"numRecords":5,"tightBounds":false}`},
		{`{}`, `{"numRecords":5,"tightBounds":false}`},
		{`{"numRecords":3}`, `{"numRecords":3,"tightBounds":false}`},
		{`{"tightBounds":true,"numRecords":3, "minValues": {"a" : 1}}`, `{"numRecords":3,"minValues":{"a" : 1},"tightBounds":false}`},
		{`{"minValues":{"k\"ey\u00e9":"x"},"future":[1,{"a":null}]}`, `{"minValues":{"k\"ey\u00e9":"x"},"future":[1,{"a":null}],"numRecords":5,"tightBounds":false}`},
		{`{"weird\nkey":1}`, `{"weird\nkey":1,"numRecords":5,"tightBounds":false}`},
	} {
		got, err := statsjson.Widen(tc.in, 5)
		if err != nil || got != tc.want {
			t.Errorf("Widen(%q) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("Widen(%q) = %s: not JSON", tc.in, got)
		}
	}
}

// TestHostile feeds every reader input that a corrupt or hostile log could
// hold: each gives a typed error or an unknown statistic, never a panic.
func TestHostile(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000)
	deepArr := `{"numRecords":1,"x":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "}"
	sch := &schema.StructType{Fields: []schema.StructField{{Name: "a", Type: schema.Long, Nullable: true}}}
	for _, tc := range []struct {
		name, raw string
		n         int64
		ok        bool
		invalid   bool // ErrInvalid from every reader
	}{
		{"empty", ``, 0, false, false},
		{"blank", " \n\t", 0, false, false},
		{"plain", `{"numRecords":12}`, 12, true, false},
		{"zero", `{"numRecords":0}`, 0, true, false},
		{"last valid wins", `{"numRecords":1,"numRecords":"x"}`, 1, true, false},
		{"huge integer", `{"numRecords":99999999999999999999999999}`, 0, false, false},
		{"max int64", `{"numRecords":9223372036854775807}`, 9223372036854775807, true, false},
		{"huge exponent", `{"numRecords":1e400}`, 0, false, false},
		{"float", `{"numRecords":1.5}`, 0, false, false},
		{"negative", `{"numRecords":-1}`, 0, false, false},
		{"string", `{"numRecords":"3"}`, 0, false, false},
		{"bool", `{"numRecords":true}`, 0, false, false},
		{"null", `{"numRecords":null}`, 0, false, false},
		{"object", `{"numRecords":{"n":3}}`, 0, false, false},
		{"array", `{"numRecords":[3]}`, 0, false, false},
		{"wrong types below", `{"numRecords":2,"minValues":[1],"maxValues":"x","nullCount":{"a":{"b":1}}}`, 2, true, false},
		{"name in a column", `{"minValues":{"numRecords":3}}`, 0, false, false},
		{"deep nesting", deep, 0, false, true},
		{"deep arrays", deepArr, 0, false, true},
		{"top-level array", `[{"numRecords":1}]`, 0, false, true},
		{"top-level null", `null`, 0, false, true},
		{"top-level number", `3`, 0, false, true},
		{"truncated", `{"numRecords":3`, 0, false, true},
		{"truncated string", `{"numRecords":3,"minValues":{"a":"x`, 0, false, true},
		{"trailing data", `{"numRecords":3} {}`, 0, false, true},
		{"single quotes", `{'numRecords':3}`, 0, false, true},
		{"bare word", `{"numRecords":NaN}`, 0, false, true},
		{"leading zero", `{"numRecords":03}`, 0, false, true},
		{"control character", "{\"numRecords\":3,\"minValues\":{\"a\":\"\x01\"}}", 0, false, true},
		{"bad escape", `{"minValues":{"a":"\x"}}`, 0, false, true},
		{"bad unicode escape", `{"minValues":{"a":"\u12"}}`, 0, false, true},
		{"lone surrogate", `{"numRecords":1,"minValues":{"a":"\ud800"}}`, 1, true, false},
		{"invalid UTF-8", "{\"numRecords\":1,\"minValues\":{\"a\":\"\xff\"}}", 1, true, false},
		{"missing colon", `{"numRecords" 3}`, 0, false, true},
		{"missing comma", `{"numRecords":3 "x":1}`, 0, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, ok, err := statsjson.NumRecords(tc.raw)
			if tc.invalid {
				if !errors.Is(err, statsjson.ErrInvalid) || !errors.Is(err, deltaerr.ErrCorrupt) {
					t.Errorf("NumRecords err = %v, want ErrInvalid", err)
				}
			} else if err != nil || n != tc.n || ok != tc.ok {
				t.Errorf("NumRecords = %d, %v, %v; want %d, %v", n, ok, err, tc.n, tc.ok)
			}
			_, werr := statsjson.Widen(tc.raw, 1)
			if tc.invalid != errors.Is(werr, statsjson.ErrInvalid) || !tc.invalid && werr != nil {
				t.Errorf("Widen err = %v", werr)
			}
			s, perr := expr.ParseStats(tc.raw, sch, schema.ColumnMappingNone)
			if tc.invalid != errors.Is(perr, expr.ErrInvalidStats) || !tc.invalid && perr != nil {
				t.Errorf("ParseStats err = %v", perr)
			}
			if perr == nil {
				if n, ok := s.NumRecords(); n != tc.n || ok != tc.ok {
					t.Errorf("ParseStats NumRecords = %d, %v", n, ok)
				}
			}
		})
	}
}

func TestAppend(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", `"plain"`},
		{"q\"b\\n\nr\rt\tc\x01", `"q\"b\\n\nr\rt\tc\u0001"`},
		{"é€😀", `"é€😀"`},
		{"a\xffb", `"a\ufffdb"`},
	} {
		if got := string(statsjson.AppendString(nil, tc.in)); got != tc.want {
			t.Errorf("AppendString(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
	ts := time.Date(1969, 12, 31, 23, 59, 59, 999_999_000, time.FixedZone("x", 3600))
	if got := string(statsjson.AppendTimestamp(nil, ts, true)); got != `"1969-12-31T22:59:59.999Z"` {
		t.Errorf("AppendTimestamp = %s", got)
	}
	if got := string(statsjson.AppendTimestamp(nil, ts, false)); got != `"1969-12-31T22:59:59.999"` {
		t.Errorf("AppendTimestamp ntz = %s", got)
	}
}

// FuzzNumRecords checks the codec against encoding/json on every input:
// where encoding/json reads an object with a count, NumRecords reads the
// same count, and it never panics.
func FuzzNumRecords(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"numRecords":3}`, `{"numRecords":-1}`, `{"numRecords":1e3}`,
		`{"numRecords":3,"minValues":{"a":"\ud800x"}}`, `[1]`, `{"numRecords":3}}`, `{"a":[[[{}]]],"numRecords":0}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		n, ok, err := statsjson.NumRecords(raw)
		if err != nil && !errors.Is(err, statsjson.ErrInvalid) {
			t.Fatalf("error %v is not ErrInvalid", err)
		}
		var m map[string]json.RawMessage
		if strings.TrimSpace(raw) == "" || json.Unmarshal([]byte(raw), &m) != nil || m == nil {
			return
		}
		if err != nil {
			t.Fatalf("NumRecords(%q): %v; encoding/json reads it", raw, err)
		}
		var want int64
		wantOK := json.Unmarshal(m["numRecords"], &want) == nil && want >= 0 && m["numRecords"] != nil && string(m["numRecords"]) != "null"
		if strings.Count(raw, `"numRecords"`) > 1 || strings.Contains(raw, `\u`) {
			return // repeated keys (or escaped names): the readers may pick different ones
		}
		if ok != wantOK || ok && n != want {
			t.Fatalf("NumRecords(%q) = %d, %v; encoding/json %d, %v", raw, n, ok, want, wantOK)
		}
	})
}

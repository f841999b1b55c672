package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The rules of input values, the same from CSV and JSON lines (issue 30,
// item 10): a decimal may be a JSON string, read exactly; a key twice in
// one JSON object and a lone UTF-16 surrogate escape are refused, not
// resolved silently; a CSV double is a plain decimal or exponent number or
// one of Spark's spellings of NaN and the infinities, not any form
// strconv.ParseFloat takes; dates and timestamps are in years 0001 to
// 9999 whichever format gives them. Each refused file commits nothing.
func TestInputRules(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "t")
	mustRun(t, "create", root, "--schema",
		"id BIGINT, d DECIMAL(6,2), x DOUBLE, f FLOAT, s STRING, ts TIMESTAMP, ntz TIMESTAMP_NTZ, day DATE, st STRUCT<a: INT, t: TIMESTAMP>")

	for _, tc := range []struct {
		file, content, want string
	}{
		// A decimal as a string is read as exactly as a number is.
		{"dec-scale.jsonl", `{"d":"12.345"}`, `line 1, column "d": `},
		{"dec-precision.jsonl", `{"d":"12345.6"}`, `line 1, column "d": `},
		{"dec-fraction.jsonl", `{"d":"1/4"}`, `line 1, column "d": `},
		{"dec-hex.jsonl", `{"d":"0x10"}`, `line 1, column "d": `},
		{"dec-space.jsonl", `{"d":" 1.5"}`, `line 1, column "d": `},
		{"dec-empty.jsonl", `{"d":""}`, `line 1, column "d": `},
		{"dec-number-scale.jsonl", `{"d":12.345}`, `line 1, column "d": `},

		// Duplicate keys, at the top and nested, and in a CSV cell's JSON.
		{"dup.jsonl", `{"id":1,"s":"a","id":2}`, `line 1: key "id" appears twice in one object`},
		{"dup-nested.jsonl", `{"st":{"a":1,"a":2}}`, `line 1: key "a" appears twice in one object`},
		{"dup-escaped.jsonl", `{"id":1,"\u0069d":2}`, `line 1: key "id" appears twice in one object`},
		{"dup-cell.csv", "id,st\n1,\"{\"\"a\"\":1,\"\"a\"\":2}\"\n", `line 2, column "st": key "a" appears twice in one object`},

		// Lone surrogates, high and low, in values and keys.
		{"surrogate-high.jsonl", `{"s":"x\ud800"}`, `line 1: \ud800 is a lone UTF-16 surrogate, not a character`},
		{"surrogate-low.jsonl", `{"s":"\udc00x"}`, `line 1: \udc00 is a lone UTF-16 surrogate`},
		{"surrogate-reversed.jsonl", `{"s":"\ude00\ud83d"}`, `line 1: \ude00 is a lone UTF-16 surrogate`},
		{"surrogate-key.jsonl", `{"\ud800":1}`, `line 1: \ud800 is a lone UTF-16 surrogate`},
		{"surrogate-cell.csv", "id,st\n1,\"{\"\"a\"\":1,\"\"\\ud800\"\":2}\"\n", `line 2, column "st": \ud800 is a lone UTF-16 surrogate`},

		// CSV doubles and floats: Go's syntax beyond decimal numbers, and
		// spellings of NaN and infinity that Spark does not take.
		{"hex.csv", "x\n0x1p3\n", `line 2, column "x": "0x1p3" is not a double`},
		{"underscore.csv", "x\n1_000\n", `line 2, column "x": "1_000" is not a double`},
		{"inf-lower.csv", "x\ninf\n", `line 2, column "x": "inf" is not a double`},
		{"inf-plus.csv", "x\n+Inf\n", `line 2, column "x": "+Inf" is not a double`},
		{"nan-lower.csv", "x\nnan\n", `line 2, column "x": "nan" is not a double`},
		{"infinity-upper.csv", "x\nINFINITY\n", `line 2, column "x": "INFINITY" is not a double`},
		{"float-hex.csv", "f\n0x1p-2\n", `line 2, column "f": "0x1p-2" is not a float`},
		{"space.csv", "x\n 1.5\n", `line 2, column "x": " 1.5" is not a double`},
		{"suffix.csv", "x\n1.5d\n", `line 2, column "x": "1.5d" is not a double`},
		{"dec-fraction.csv", "d\n1/4\n", `line 2, column "d": "1/4" is not a decimal(6,2)`},
		{"dec-hex.csv", "d\n0x10\n", `line 2, column "d": "0x10" is not a decimal(6,2)`},

		// Years 0001 to 9999, from either format: a JSON number of
		// seconds (here milliseconds given by mistake), a zone that moves
		// the instant out, year 0000, a number of days in a CSV cell's JSON.
		{"ms.jsonl", `{"ts":1700000000000}`, `line 1, column "ts": 55840-11-08T22:13:20Z is outside years 0001 to 9999`},
		{"neg.jsonl", `{"ts":-62135596801}`, `line 1, column "ts": 0000-12-31T23:59:59Z is outside years 0001 to 9999`},
		{"offset.jsonl", `{"ts":"9999-12-31T23:59:59-01:00"}`, `line 1, column "ts": 10000-01-01T00:59:59Z is outside years 0001 to 9999`},
		{"offset.csv", "ts\n9999-12-31T23:59:59-01:00\n", `line 2, column "ts": 10000-01-01T00:59:59Z is outside years 0001 to 9999`},
		{"year0.csv", "ts\n0000-06-01 00:00:00\n", `line 2, column "ts": 0000-06-01T00:00:00Z is outside years 0001 to 9999`},
		{"year0-ntz.csv", "ntz\n0000-06-01 00:00:00\n", `line 2, column "ntz": 0000-06-01T00:00:00 is outside years 0001 to 9999`},
		{"year0-date.csv", "day\n0000-06-01\n", `line 2, column "day": 0000-06-01 is outside years 0001 to 9999`},
		{"year0-date.jsonl", `{"day":"0000-06-01"}`, `line 1, column "day": 0000-06-01 is outside years 0001 to 9999`},
		{"year10000.csv", "ts\n10000-01-01 00:00:00\n", `line 2, column "ts": `},
		{"nested.jsonl", `{"st":{"t":1700000000000}}`, `line 1, column "st": field "t": 55840-11-08T22:13:20Z is outside years 0001 to 9999`},
		{"nested-cell.csv", "st\n\"{\"\"t\"\":1700000000000}\"\n", `line 2, column "st": field "t": 55840-11-08T22:13:20Z is outside years 0001 to 9999`},
	} {
		path := writeFile(t, filepath.Join(dir, tc.file), tc.content+"\n")
		r := runDelta("append", root, path)
		if r.code != exitFailure || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("append %s: exit %d, %q; want exit 1 and %q", tc.file, r.code, clipMsg(r.stderr), tc.want)
		}
		checkErrorLine(t, "append "+tc.file, r.stderr)
	}
	if v := mustRun(t, "describe", root, "--json").stdout; !strings.Contains(v, `"version": 0,`) {
		t.Fatalf("a refused input committed something:\n%s", v)
	}

	// What is accepted.
	good := []struct{ file, content string }{
		{"good.jsonl", `{"id":1,"d":"12.34","s":"\ud83d\ude00 \\ud800"}` + "\n" +
			`{"id":2,"d":"-1.5E1","ts":253402300799,"day":"0001-01-01"}` + "\n" +
			`{"id":3,"d":12.3,"ts":-62135596800,"st":{"a":1,"t":"9999-12-31T23:59:59.999999Z"}}`},
		{"good.csv", "id,x,f,d,ntz\n4,1.5,-2e3,+.5,0001-01-01 00:00:00\n5,NaN,Inf,5.,9999-12-31 23:59:59.999999\n" +
			"6,-Inf,Infinity,1e2,\n7,+Infinity,-Infinity,,\n8,.5e-1,1E+2,,\n"},
	}
	for _, g := range good {
		mustRun(t, "append", root, writeFile(t, filepath.Join(dir, g.file), g.content+"\n"))
	}
	got := mustRun(t, "scan", root, "--format", "jsonl", "--columns", "id,d,x,f,s,ts,ntz,day,st").stdout
	want := `{"id":1,"d":12.34,"x":null,"f":null,"s":"😀 \\ud800","ts":null,"ntz":null,"day":null,"st":null}
{"id":2,"d":-15.00,"x":null,"f":null,"s":null,"ts":"9999-12-31T23:59:59Z","ntz":null,"day":"0001-01-01","st":null}
{"id":3,"d":12.30,"x":null,"f":null,"s":null,"ts":"0001-01-01T00:00:00Z","ntz":null,"day":null,"st":{"a":1,"t":"9999-12-31T23:59:59.999999Z"}}
{"id":4,"d":0.50,"x":1.5,"f":-2000,"s":null,"ts":null,"ntz":"0001-01-01T00:00:00","day":null,"st":null}
{"id":5,"d":5.00,"x":"NaN","f":"Infinity","s":null,"ts":null,"ntz":"9999-12-31T23:59:59.999999","day":null,"st":null}
{"id":6,"d":100.00,"x":"-Infinity","f":"Infinity","s":null,"ts":null,"ntz":null,"day":null,"st":null}
{"id":7,"d":null,"x":"Infinity","f":"-Infinity","s":null,"ts":null,"ntz":null,"day":null,"st":null}
{"id":8,"d":null,"x":0.05,"f":100,"s":null,"ts":null,"ntz":null,"day":null,"st":null}
`
	if got != want {
		t.Errorf("scan:\n%s\nwant:\n%s", got, want)
	}
}

// One line reader and one limit for every input: the MERGE source and the
// schema of append --merge-schema name the file, the line and the limit
// of an over-long line, as append does, instead of bufio's "token too
// long"; a CSV header over the limit is refused too, not cut short.
// (Issue 30, item 11.)
func TestInputLineLimitShared(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "t")
	mustRun(t, "create", root, "--schema", "id BIGINT, name STRING")

	long := bytes.Repeat([]byte{'a'}, maxRecordBytes)
	jsonl := filepath.Join(dir, "long.jsonl")
	if err := os.WriteFile(jsonl, append(append([]byte(`{"id":1}`+"\n"+`{"name":"`), long...), `"}`+"\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	header := filepath.Join(dir, "header.csv")
	if err := os.WriteFile(header, append(append([]byte("id,"), long...), "\n1,2\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args       []string
		file, want string
	}{
		{[]string{"merge", root, "--source", jsonl, "--on", "t.id = s.id", "--insert-all"}, jsonl, "line 2: a record is longer than 64 MiB"},
		{[]string{"append", root, jsonl, "--merge-schema"}, jsonl, "line 2: a record is longer than 64 MiB"},
		{[]string{"append", root, jsonl}, jsonl, "line 2: a record is longer than 64 MiB"},
		{[]string{"merge", root, "--source", header, "--on", "t.id = s.id", "--insert-all"}, header, "line 1: a record is longer than 64 MiB"},
		{[]string{"append", root, header, "--merge-schema"}, header, "line 1: a record is longer than 64 MiB"},
		{[]string{"append", root, header}, header, "line 1: a record is longer than 64 MiB"},
	} {
		r := runDelta(tc.args...)
		if r.code != exitFailure || !strings.HasPrefix(r.stderr, "delta: "+tc.file+": ") || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%q: exit %d, %q; want exit 1, the file and %q", tc.args[:3], r.code, clipMsg(r.stderr), tc.want)
		}
		checkErrorLine(t, tc.args[0], r.stderr)
	}
}

// jsonStrict finds a repeated key however many keys the object has (past
// 16 it keeps them in a map), in nested objects and arrays, and leaves
// alone what only looks like a key or an escape.
func TestJSONStrict(t *testing.T) {
	many := func(extra string) string {
		var b strings.Builder
		b.WriteString("{")
		for i := range 20 {
			b.WriteString(`"k` + itoa(i) + `":` + itoa(i) + ",")
		}
		return b.String() + extra + "}"
	}
	for _, tc := range []struct{ text, want string }{
		{many(`"z":1`), ""},
		{many(`"k3":1`), `key "k3" appears twice`},
		{many(`"k19":1`), `key "k19" appears twice`},
		{`{"a":{"b":1},"b":{"a":1}}`, ""},
		{`[{"a":1},{"a":1}]`, ""},
		{`{"a":[{"a":1,"b":[1,{"a":2}]}],"c":"\"a\":1"}`, ""},
		{`{"a":[1,2],"b":{"x":[{"y":1,"y":2}]}}`, `key "y" appears twice`},
		{`{"a":1,"b":{"c":1},"a":2}`, `key "a" appears twice`},
		{`{"\\ud800":"\\\ud83d\ude00"}`, ""},
		{`{"s":"\uD83D\uDE00\uDBFF\uDFFF\u0041"}`, ""},
		{`{"s":"\ud83d\u0041"}`, `\ud83d is a lone UTF-16 surrogate`},
		{`{"s":"\ud83d"}`, `\ud83d is a lone UTF-16 surrogate`},
		{`{"s":"\ud83d\ud83d\ude00"}`, `\ud83d is a lone UTF-16 surrogate`},
		{`{"s":"\uDFFF"}`, `\uDFFF is a lone UTF-16 surrogate`},
	} {
		err := jsonStrict([]byte(tc.text))
		if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("jsonStrict(%s) = %v, want %q", tc.text, err, tc.want)
		}
	}
}

package main

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestMergeNested is issue 30 through the CLI: merge --update-all
// --insert-all on struct, array, map, array-of-struct, map-of-struct and
// struct-in-struct columns of a column-mapped table with the change data
// feed on, by copy-on-write and with deletion vectors, from a JSON lines
// source and from a table whose struct fields are in another order (so
// matched by name). The rows and the change data after are exact.
func TestMergeNested(t *testing.T) {
	const ddl = "id BIGINT NOT NULL, s STRUCT<a: INT, b: STRING>, arr ARRAY<INT>, m MAP<STRING, INT>, " +
		"sa ARRAY<STRUCT<x: INT, y: STRING>>, ms MAP<STRING, STRUCT<p: BIGINT, q: DOUBLE>>, " +
		"ns STRUCT<inner: STRUCT<c: INT, d: ARRAY<STRING>>, e: BIGINT>"
	row := func(parts ...string) string {
		names := []string{"id", "s", "arr", "m", "sa", "ms", "ns"}
		var b strings.Builder
		b.WriteString("{")
		for i, p := range parts {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(`"` + names[i] + `":` + p)
		}
		return b.String() + "}"
	}
	one := row("1", `{"a":1,"b":"one"}`, "[1,2]", `{"k":1}`, `[{"x":1,"y":"y1"}]`, `{"a":{"p":1,"q":0.5}}`, `{"inner":{"c":1,"d":["d1"]},"e":10}`)
	two := row("2", `{"a":2,"b":"two"}`, "[2]", `{"k":2}`, `[{"x":2,"y":"y2"}]`, `{"a":{"p":2,"q":1.5}}`, `{"inner":{"c":2,"d":["d2"]},"e":20}`)
	three := row("3", `{"a":3,"b":"three"}`, "[3]", `{"k":3}`, `[{"x":3,"y":"y3"}]`, `{"a":{"p":3,"q":2.5}}`, `{"inner":{"c":3,"d":["d3"]},"e":30}`)
	// The source: 2 updated with new values everywhere (a null element,
	// a null map value, a null struct in an array and in a map), 3
	// updated to nulls, 4 inserted with empty and null parts. (Maps have
	// one entry each: the JSON reader does not keep the order of a JSON
	// object's members.)
	two2 := row("2", `{"a":20,"b":"TWO"}`, "[20,null]", `{"n":null}`, `[null,{"x":21,"y":"z"}]`, `{"b":{"p":22,"q":-0.25}}`, `{"inner":{"c":null,"d":[]},"e":-2}`)
	three2 := row("3", "null", "null", "null", "null", "null", "null")
	four := row("4", `{"a":null,"b":"four"}`, "[]", "{}", "[]", `{"c":null}`, `{"inner":null,"e":4}`)

	for _, dvs := range []bool{false, true} {
		t.Run(map[bool]string{false: "copy-on-write", true: "deletion-vectors"}[dvs], func(t *testing.T) {
			dir := t.TempDir()
			root := filepath.Join(dir, "t")
			mustRun(t, "create", root, "--schema", ddl,
				"--property", "delta.columnMapping.mode=name", "--property", "delta.enableChangeDataFeed=true",
				"--property", "delta.enableDeletionVectors="+map[bool]string{true: "true", false: "false"}[dvs])
			mustRun(t, "append", root, writeFile(t, filepath.Join(dir, "a.jsonl"), one+"\n"+two+"\n"+three+"\n"))

			src := writeFile(t, filepath.Join(dir, "s.jsonl"), two2+"\n"+three2+"\n"+four+"\n")
			r := mustRun(t, "merge", root, "--source", src, "--on", "t.id = s.id", "--update-all", "--insert-all")
			if !strings.Contains(r.stdout, "1 rows inserted, 2 updated, 0 deleted (of 3 source rows) at version 2") {
				t.Fatalf("merge: %q", r.stdout)
			}
			if dvs != strings.Contains(r.stdout, "deletion vectors: 1 added") {
				t.Errorf("merge output %q", r.stdout)
			}
			checkLines(t, "rows", mustRun(t, "scan", root, "--format", "jsonl").stdout, one, two2, three2, four)
			checkLines(t, "change data", changeLines(mustRun(t, "changes", root, "--from", "2", "--to", "2", "--format", "jsonl").stdout),
				withChange(two, "update_preimage"), withChange(two2, "update_postimage"),
				withChange(three, "update_preimage"), withChange(three2, "update_postimage"),
				withChange(four, "insert"))

			// A table source whose columns and struct fields are in
			// another order, and whose ints are narrower: fields are
			// matched by name and widened.
			other := filepath.Join(dir, "other")
			mustRun(t, "create", other, "--schema", "ns STRUCT<e: INT, inner: STRUCT<d: ARRAY<STRING>, c: SMALLINT>>, "+
				"ms MAP<STRING, STRUCT<q: DOUBLE, p: INT>>, sa ARRAY<STRUCT<y: STRING, X: INT>>, m MAP<STRING, INT>, arr ARRAY<INT>, "+
				"s STRUCT<B: STRING, a: INT>, id BIGINT, extra STRING")
			mustRun(t, "append", other, writeFile(t, filepath.Join(dir, "o.jsonl"),
				`{"id":1,"extra":"x","s":{"B":"uno","a":100},"arr":[7],"m":{"u":1},"sa":[{"y":"w","X":5}],"ms":{"m":{"q":0.75,"p":-1}},"ns":{"e":11,"inner":{"d":["e"],"c":12}}}`+"\n"+
					`{"id":5,"extra":"y","s":null,"arr":null,"m":null,"sa":null,"ms":null,"ns":{"e":5,"inner":{"d":null,"c":null}}}`+"\n"))
			r = mustRun(t, "merge", root, "--source", other, "--on", "t.id = s.id", "--update-all", "--insert-all")
			if !strings.Contains(r.stdout, "1 rows inserted, 1 updated, 0 deleted (of 2 source rows) at version 3") {
				t.Fatalf("merge from a table: %q", r.stdout)
			}
			one3 := row("1", `{"a":100,"b":"uno"}`, "[7]", `{"u":1}`, `[{"x":5,"y":"w"}]`, `{"m":{"p":-1,"q":0.75}}`, `{"inner":{"c":12,"d":["e"]},"e":11}`)
			five := row("5", "null", "null", "null", "null", "null", `{"inner":{"c":null,"d":null},"e":5}`)
			checkLines(t, "rows after the table source", mustRun(t, "scan", root, "--format", "jsonl").stdout, one3, two2, three2, four, five)
			checkLines(t, "change data of the table source", changeLines(mustRun(t, "changes", root, "--from", "3", "--to", "3", "--format", "jsonl").stdout),
				withChange(one, "update_preimage"), withChange(one3, "update_postimage"), withChange(five, "insert"))

			// A source struct without one of the table's fields is
			// refused, naming it; nothing is committed.
			narrow := filepath.Join(dir, "narrow")
			mustRun(t, "create", narrow, "--schema", "id BIGINT, s STRUCT<a: INT>")
			mustRun(t, "append", narrow, writeFile(t, filepath.Join(dir, "n.jsonl"), `{"id":1,"s":{"a":1}}`+"\n"))
			r = runDelta("merge", root, "--source", narrow, "--on", "t.id = s.id", "--update-set", "s = s.s")
			if r.code != exitFailure || !strings.Contains(r.stderr, "s: cannot store struct<a:int> in struct<a:int,b:string>: the value has no field b") {
				t.Errorf("merge of a narrower struct: exit %d, %q", r.code, r.stderr)
			}
		})
	}
}

// checkLines compares the lines of out, sorted, with want, sorted.
func checkLines(t *testing.T, what, out string, want ...string) {
	t.Helper()
	got := strings.Split(strings.TrimSpace(out), "\n")
	slices.Sort(got)
	want = slices.Clone(want)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n%s\nwant\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

var commitColumns = regexp.MustCompile(`,"_commit_version":\d+,"_commit_timestamp":"[^"]*"`)

// changeLines drops the commit version and timestamp of changes' jsonl.
func changeLines(out string) string { return commitColumns.ReplaceAllString(out, "") }

func withChange(row, typ string) string {
	return strings.TrimSuffix(row, "}") + `,"_change_type":"` + typ + `"}`
}

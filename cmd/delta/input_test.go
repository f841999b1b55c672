package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Input files are read strictly: one JSON object a line and nothing after
// it, JSON kinds as Spark's to_json writes them, valid UTF-8 for STRING
// columns from every format, and a cap on the size of a record, so that a
// CSV of /dev/zero fails with a message instead of growing without bound.
// Each bad file commits nothing. (Issue 19, items 15 and 16.)
func TestAppendInputStrict(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "t")
	mustRun(t, "create", root, "--schema", "id BIGINT, name STRING, ts TIMESTAMP, ok BOOLEAN, x DOUBLE")

	huge := bytes.Repeat([]byte{0}, maxRecordBytes+1024)
	hugeLine := append([]byte(`{"name":"`), bytes.Repeat([]byte{'a'}, maxRecordBytes)...)
	hugeLine = append(hugeLine, []byte(`"}`+"\n")...)
	for _, tc := range []struct {
		file    string
		content []byte
		want    string
	}{
		{"two.jsonl", []byte(`{"id":1} {"id":2}` + "\n"), `line 1: "{\"id\":2}" after the JSON object`},
		{"garbage.jsonl", []byte(`{"id":1}` + "\n" + `{"id":1} garbage` + "\n"), `line 2: "garbage" after the JSON object`},
		{"comma.jsonl", []byte(`{"id":1},` + "\n"), `line 1: "," after the JSON object`},
		{"null.jsonl", []byte("null\n"), "line 1: not a JSON object"},
		{"strnum.jsonl", []byte(`{"id":"5"}` + "\n"), `line 1, column "id": a string for a long column, which takes a number`},
		{"strbool.jsonl", []byte(`{"ok":"true"}` + "\n"), `column "ok": a string for a boolean column`},
		{"numstr.jsonl", []byte(`{"name":5}` + "\n"), `column "name": a number for a string column`},
		{"utf8.jsonl", []byte("{\"name\":\"a\xffb\"}\n"), "line 1: text is not valid UTF-8"},
		{"utf8.csv", []byte("id,name\n1,a\xffb\n"), `line 2, column "name": text is not valid UTF-8`},
		{"zero.csv", append([]byte("id,name\n"), huge...), "line 2: a record is longer than 64 MiB"},
		{"long.jsonl", append([]byte(`{"id":1}`+"\n"), hugeLine...), "line 2: a record is longer than 64 MiB"},
	} {
		path := filepath.Join(dir, tc.file)
		if err := os.WriteFile(path, tc.content, 0o644); err != nil {
			t.Fatal(err)
		}
		r := runDelta("append", root, path)
		if r.code != exitFailure || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("append %s: exit %d, %q; want %q", tc.file, r.code, clipMsg(r.stderr), tc.want)
		}
		checkErrorLine(t, "append "+tc.file, r.stderr)
	}
	if v := mustRun(t, "describe", root, "--json").stdout; !strings.Contains(v, `"version": 0,`) {
		t.Fatalf("a refused input committed something:\n%s", v)
	}

	// What is accepted: a number for a timestamp is seconds, as Spark's
	// from_json reads it; NaN as to_json writes it.
	path := filepath.Join(dir, "good.jsonl")
	if err := os.WriteFile(path, []byte(`{"id":1,"ts":86400,"x":"NaN","ok":true}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "append", root, path)
	got := strings.TrimSpace(mustRun(t, "scan", root, "--format", "jsonl").stdout)
	if want := `{"id":1,"name":null,"ts":"1970-01-02T00:00:00Z","ok":true,"x":"NaN"}`; got != want {
		t.Errorf("scan: %s, want %s", got, want)
	}
}

func clipMsg(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

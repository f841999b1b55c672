package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestErrorsOnce: the CLI prints common failures as one line that says
// what happened once: "delta: " once, no part of the message twice, the
// path once. The messages before issue 25's fix are in comments.
func TestErrorsOnce(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "t")
	mustRun(t, "create", root, "--schema", "id BIGINT, s STRUCT<a: INT, b: STRING>")
	mustRun(t, "append", root, writeFile(t, filepath.Join(dir, "rows.jsonl"), `{"id":1,"s":{"a":1,"b":"x"}}`+"\n"))
	mustRun(t, "append", root, writeFile(t, filepath.Join(dir, "more.jsonl"), `{"id":2,"s":{"a":2,"b":"y"}}`+"\n"))
	src := filepath.Join(dir, "src")
	mustRun(t, "create", src, "--schema", "id BIGINT, s STRING")
	mustRun(t, "append", src, writeFile(t, filepath.Join(dir, "src.jsonl"), `{"id":1,"s":"q"}`+"\n"))
	copyTable := func(name string) string {
		t.Helper()
		to := filepath.Join(dir, name)
		if err := os.CopyFS(to, os.DirFS(root)); err != nil {
			t.Fatal(err)
		}
		return to
	}
	gone := copyTable("gone")
	files, _ := filepath.Glob(filepath.Join(gone, "*.parquet"))
	if len(files) == 0 {
		t.Fatal("no data file")
	}
	for _, f := range files {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	hole := copyTable("hole")
	if err := os.Remove(filepath.Join(hole, "_delta_log", "00000000000000000001.json")); err != nil {
		t.Fatal(err)
	}
	bad := copyTable("bad")
	f, err := os.OpenFile(filepath.Join(bad, "_delta_log", "00000000000000000002.json"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"add": {"path": ` + "\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()

	for _, c := range []struct {
		name string
		args []string
		want string // a part of the message
	}{
		// Before: "delta: data file F: corrupt table data: datafile:
		// reading F: logstore: get range "F": logstore/local: logstore:
		// object not found: stat /abs/F: no such file or directory".
		{"missing data file", []string{"scan", gone}, " is in the log but not in storage: it was deleted outside the log " +
			"(by a VACUUM with too short a retention, or by hand); restore it from a backup"},
		{"missing commit", []string{"scan", hole}, "commit _delta_log/00000000000000000001.json is missing (needed for version 2): missing log file"},
		{"bad JSON commit", []string{"scan", bad}, "corrupt _delta_log/00000000000000000002.json: line 3 is not a valid action: unexpected end of JSON input"},
		// Before: "delta: merge: column: dml: invalid operation: invalid
		// argument: WHEN MATCHED clause 1: expr: cannot store value:
		// invalid argument: s: cannot store string in struct<a:int,b:string>".
		{"merge type mismatch", []string{"merge", root, "--source", src, "--on", "t.id = s.id", "--update-all"},
			"merge: WHEN MATCHED clause 1: column s: cannot store string in struct<a:int,b:string>"},
		// Before: "delta: bad.csv: line 2, column "id": schema: invalid
		// value: "x" is not a long: invalid argument".
		{"append bad value", []string{"append", root, writeFile(t, filepath.Join(dir, "bad.csv"), "id\nx\n")},
			`bad.csv: line 2, column "id": "x" is not a long`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runDelta(c.args...)
			if r.code != exitFailure {
				t.Fatalf("exit %d, want %d: %s", r.code, exitFailure, r.stderr)
			}
			msg := strings.TrimSpace(r.stderr)
			if strings.Count(msg, "\n") > 0 || !strings.HasPrefix(msg, "delta: ") || !strings.Contains(msg, c.want) {
				t.Errorf("stderr %q, want one line \"delta: ...%s...\"", r.stderr, c.want)
			}
			seen := map[string]bool{}
			for part := range strings.SplitSeq(msg, ": ") {
				if seen[part] {
					t.Errorf("%q says %q twice", msg, part)
				}
				seen[part] = true
			}
			for _, word := range strings.Fields(msg) {
				if w := strings.Trim(word, `"():,;`); strings.Contains(w, ".") && strings.Count(msg, w) > 1 {
					t.Errorf("%q names %s more than once", msg, w)
				}
			}
			t.Log(msg)
		})
	}
}

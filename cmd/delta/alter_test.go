package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

func TestAlterCommands(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t")
	mustRun(t, "create", dir, "--schema", "id BIGINT, v STRING, s STRUCT<a: INT>")
	in := filepath.Join(t.TempDir(), "rows.csv")
	if err := os.WriteFile(in, []byte("id,v\n1,one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "append", dir, in)
	// Rename needs column mapping, and says which property to set.
	r := runDelta("alter", dir, "rename-column", "v", "w")
	if r.code != 1 || !strings.Contains(r.stderr, "delta.columnMapping.mode") {
		t.Fatalf("rename without column mapping: exit %d: %s", r.code, r.stderr)
	}
	for _, args := range [][]string{
		{"add-column", "c DOUBLE COMMENT 'new'"},
		{"add-column", "s.b STRING"},
		{"enable-feature", "columnMapping"},
		{"rename-column", "v", "w"},
		{"drop-column", "c"},
		{"set", "delta.enableTypeWidening=true", "owner=ops"},
		{"widen-column", "s.a", "BIGINT"},
		{"add-constraint", "pos", "id > 0"},
		{"drop-constraint", "pos"},
		{"unset", "--if-exists", "owner", "nope"},
	} {
		r := mustRun(t, append([]string{"alter", dir}, args...)...)
		if !strings.Contains(r.stdout, "committed at version") {
			t.Fatalf("alter %v: %s", args, r.stdout)
		}
	}
	r = mustRun(t, "scan", dir, "--format", "csv")
	if want := "id,w,s\n1,one,\n"; r.stdout != want {
		t.Fatalf("scan:\n%s\nwant\n%s", r.stdout, want)
	}
	r = mustRun(t, "history", dir, "--json")
	for _, op := range []string{"ADD COLUMNS", "SET TBLPROPERTIES", "RENAME COLUMN", "DROP COLUMNS", "CHANGE COLUMN", "ADD CONSTRAINT", "DROP CONSTRAINT", "UNSET TBLPROPERTIES"} {
		if !strings.Contains(r.stdout, `"operation": "`+op+`"`) {
			t.Errorf("history lacks %s", op)
		}
	}
	// Usage errors exit 2; refused changes exit 1.
	if r := runDelta("alter", dir, "no-such-op"); r.code != 2 {
		t.Fatalf("unknown operation: exit %d", r.code)
	}
	if r := runDelta("alter", dir, "rename-column", "w"); r.code != 2 {
		t.Fatalf("missing argument: exit %d", r.code)
	}
	if r := runDelta("alter", dir, "set", "delta.noSuchProperty=1"); r.code != 1 || !strings.Contains(r.stderr, "delta.noSuchProperty") {
		t.Fatalf("unknown property: exit %d: %s", r.code, r.stderr)
	}
	if r := runDelta("alter", dir, "add-constraint", "neg", "id < 0"); r.code != 1 || !strings.Contains(r.stderr, "neg") {
		t.Fatalf("violated constraint: exit %d: %s", r.code, r.stderr)
	}
}

func TestConvertAndMergeSchema(t *testing.T) {
	type rec struct {
		ID int64 `parquet:"id"`
	}
	dir := t.TempDir()
	for i, p := range []string{"p=1", "p=2"} {
		f := filepath.Join(dir, p, "part.parquet")
		os.MkdirAll(filepath.Dir(f), 0o755)
		if err := parquet.WriteFile(f, []rec{{int64(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	if r := runDelta("convert", dir, "--partition-by", "p"); r.code != 2 {
		t.Fatalf("bad --partition-by: exit %d", r.code)
	}
	r := mustRun(t, "convert", dir, "--partition-by", "p INT")
	if !strings.Contains(r.stdout, "2 files") || r.stderr != "" {
		t.Fatalf("convert: %q %q (no progress bar off a terminal)", r.stdout, r.stderr)
	}
	in := filepath.Join(t.TempDir(), "more.jsonl")
	os.WriteFile(in, []byte(`{"id": 5, "p": 3, "tag": "x", "n": 1.5}`+"\n"), 0o644)
	if r := runDelta("append", dir, in); r.code != 1 {
		t.Fatalf("append of new columns without --merge-schema: exit %d", r.code)
	}
	mustRun(t, "append", dir, in, "--merge-schema")
	r = mustRun(t, "scan", dir, "--format", "csv")
	for _, want := range []string{"id,p,n,tag\n", "0,1,,\n", "1,2,,\n", "5,3,1.5,x\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("scan lacks %q:\n%s", want, r.stdout)
		}
	}
}

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
)

// The command line refuses what it used to read as something else
// (issue 30, item 11): --columns with an empty or a repeated name, an
// empty TABLE; a SQL comment in --where is a comment, as in Spark SQL.
func TestScanFlagRules(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir) // an empty path taken for the current directory would write there, not here
	root := filepath.Join(dir, "t")
	mustRun(t, "create", root, "--schema", "id BIGINT, name STRING", "--property", "delta.enableChangeDataFeed=true")
	mustRun(t, "append", root, writeFile(t, filepath.Join(dir, "a.csv"), "id,name\n1,a\n2,b\n"))

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"scan", root, "--columns", ",,,"}, `invalid --columns ",,,": an empty column name`},
		{[]string{"scan", root, "--columns", "id,,name"}, `invalid --columns "id,,name": an empty column name`},
		{[]string{"scan", root, "--columns", "id,id"}, `invalid --columns "id,id": column "id" given twice`},
		{[]string{"scan", root, "--columns", "id, ID"}, `invalid --columns "id, ID": column "ID" given twice`},
		{[]string{"changes", root, "--from", "0", "--columns", "id,,"}, `invalid --columns "id,,": an empty column name`},
		{[]string{"tail", root, "--once", "--columns", "name,name"}, `invalid --columns "name,name": column "name" given twice`},
		{[]string{"scan", ""}, "TABLE is empty"},
		{[]string{"describe", ""}, "TABLE is empty"},
		{[]string{"clone", root, ""}, "argument 2 is empty"},
		{[]string{"append", "", "x.csv"}, "argument 1 is empty"},
	} {
		r := runDelta(tc.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%q: exit %d, %q; want exit 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}

	for _, where := range []string{
		"id = 1 -- the first row",
		"id = 1 --",
		"id = /* one */ 1",
		"/* a /* nested */ comment */ id = 1",
		"id = 1 -- a comment\n AND name = 'a'",
		"id--1\n = 1",
	} {
		got := mustRun(t, "scan", root, "--where", where, "--format", "csv").stdout
		if got != "id,name\n1,a\n" {
			t.Errorf("--where %q: %q, want the row of id 1", where, got)
		}
	}
	for _, where := range []string{"id = 1 /* unclosed", "id = 1 /*+ hint */"} {
		if r := runDelta("scan", root, "--where", where); r.code != exitUsage || !strings.Contains(r.stderr, "comment") {
			t.Errorf("--where %q: exit %d, %q; want a usage error about the comment", where, r.code, r.stderr)
		}
	}
	// Inside a string or a back-quoted name, -- and /* are text.
	if got := mustRun(t, "scan", root, "--where", "name = '-- /*'", "--format", "csv").stdout; got != "id,name\n" {
		t.Errorf("--where with -- in a string: %q", got)
	}

	// The root command reads, writes and maintains tables; it does not
	// only inspect them.
	help := mustRun(t, "--help").stdout
	if strings.Contains(help, "nspect") || !strings.Contains(help, "reads, writes and maintains") {
		t.Errorf("root help:\n%s", help)
	}

	// _commit_timestamp is the commit's time in milliseconds, as Spark
	// gives it (and as history dates the commit), not the file's time to
	// the microsecond.
	out := mustRun(t, "changes", root, "--from", "1", "--format", "jsonl").stdout
	m := regexp.MustCompile(`"_commit_timestamp":"([^"]*)"`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("changes: %q", out)
	}
	ts, err := time.Parse(time.RFC3339Nano, m[1])
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(root, "_delta_log", "00000000000000000001.json"))
	if err != nil {
		t.Fatal(err)
	}
	if want := time.UnixMilli(fi.ModTime().UnixMilli()); !ts.Equal(want) {
		t.Errorf("_commit_timestamp %s, want the commit file's time in ms, %s", m[1], want.UTC().Format(time.RFC3339Nano))
	}
}

// CONVERT of a file whose name no key can hold says which file and why.
// (Issue 30, item 11.)
func TestConvertBadFileName(t *testing.T) {
	type rec struct {
		ID int64 `parquet:"id"`
	}
	dir := t.TempDir()
	if err := parquet.WriteFile(filepath.Join(dir, `a\b.parquet`), []rec{{1}}); err != nil {
		t.Fatal(err)
	}
	r := runDelta("convert", dir)
	if r.code != exitFailure || !strings.Contains(r.stderr, `"a\\b.parquet"`) || !strings.Contains(r.stderr, "backslash") {
		t.Errorf("convert: exit %d, %q; want the file named and the backslash given as the reason", r.code, r.stderr)
	}
}

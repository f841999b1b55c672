package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// failsWith runs the command, checks that it exits 1 with one error line
// holding every one of words, and returns that line.
func failsWith(t *testing.T, args []string, words ...string) string {
	t.Helper()
	r := runDelta(args...)
	if r.panicked != "" {
		t.Fatalf("delta %s panicked: %s", strings.Join(args, " "), r.panicked)
	}
	if r.code != exitFailure {
		t.Errorf("delta %s: exit %d, want %d (stdout %q, stderr %q)", strings.Join(args, " "), r.code, exitFailure, r.stdout, r.stderr)
		return r.stderr
	}
	checkErrorLine(t, strings.Join(args, " "), r.stderr)
	for _, w := range words {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("delta %s: stderr %q does not hold %q", strings.Join(args, " "), r.stderr, w)
		}
	}
	return r.stderr
}

// tableDoc returns describe --json of the table.
func tableDoc(t *testing.T, root string) (version int64, protocol map[string]any, props map[string]string) {
	t.Helper()
	var doc struct {
		Version  int64          `json:"version"`
		Protocol map[string]any `json:"protocol"`
		Metadata struct {
			Configuration map[string]string `json:"configuration"`
		} `json:"metadata"`
	}
	decodeOne(t, mustRun(t, "describe", root, "--json").stdout, &doc)
	return doc.Version, doc.Protocol, doc.Metadata.Configuration
}

// TestCLIColumnNamesSparkCannotWrite: create, alter add-column and append
// --merge-schema refuse a column name Spark cannot write without column
// mapping, naming the column and column mapping; with column mapping the
// name is fine.
func TestCLIColumnNamesSparkCannotWrite(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "t")
	failsWith(t, []string{"create", root, "--schema", "id BIGINT, `my col` STRING"}, `"my col"`, "delta.columnMapping.mode")
	failsWith(t, []string{"create", root, "--schema", "id BIGINT, s STRUCT<`a=b`: INT>"}, `"s.a=b"`)
	mapped := filepath.Join(dir, "mapped")
	mustRun(t, "create", mapped, "--schema", "id BIGINT, `my col` STRING", "--property", "delta.columnMapping.mode=name")
	mustRun(t, "alter", mapped, "add-column", "`x,y` STRING")
	mustRun(t, "append", mapped, writeFile(t, filepath.Join(dir, "m.jsonl"), `{"id":1,"my col":"a","x,y":"b"}`+"\n"))
	if out := mustRun(t, "scan", mapped, "--format", "jsonl").stdout; out != `{"id":1,"my col":"a","x,y":"b"}`+"\n" {
		t.Errorf("scan of the mapped table: %q", out)
	}

	mustRun(t, "create", root, "--schema", "id BIGINT")
	failsWith(t, []string{"alter", root, "add-column", "`a b` STRING"}, `"a b"`, "delta.columnMapping.mode")
	in := writeFile(t, filepath.Join(dir, "a.jsonl"), `{"id":1,"x;y":2}`+"\n")
	failsWith(t, []string{"append", root, in, "--merge-schema"}, `"x;y"`, "delta.columnMapping.mode")
	if v, _, _ := tableDoc(t, root); v != 0 {
		t.Errorf("version %d after refused changes", v)
	}
}

// TestCLIChangeDataFeedReservedColumns: a table cannot have the change
// data feed on and a column named _change_type, _commit_version or
// _commit_timestamp (in any case), whichever comes first.
func TestCLIChangeDataFeedReservedColumns(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "t")
	failsWith(t, []string{"create", root, "--schema", "id BIGINT, _change_type STRING", "--property", "delta.enableChangeDataFeed=true"},
		"_change_type", "change data feed")
	mustRun(t, "create", root, "--schema", "id BIGINT, _Commit_Version BIGINT")
	failsWith(t, []string{"alter", root, "set", "delta.enableChangeDataFeed=true"}, "_Commit_Version", "delta.enableChangeDataFeed")

	cdf := filepath.Join(dir, "cdf")
	mustRun(t, "create", cdf, "--schema", "id BIGINT", "--property", "delta.enableChangeDataFeed=true")
	failsWith(t, []string{"alter", cdf, "add-column", "_commit_timestamp TIMESTAMP"}, "_commit_timestamp", "change data feed")
	in := writeFile(t, filepath.Join(dir, "a.jsonl"), `{"id":1,"_change_type":"mine"}`+"\n")
	failsWith(t, []string{"append", cdf, in, "--merge-schema"}, "_change_type", "change data feed")
	if v, _, _ := tableDoc(t, cdf); v != 0 {
		t.Errorf("version %d after refused changes", v)
	}
	// So the feed never prints a user's column for its own.
	mustRun(t, "append", cdf, writeFile(t, filepath.Join(dir, "b.jsonl"), `{"id":1}`+"\n"))
	out := mustRun(t, "tail", cdf, "--once", "--cdf", "--format", "jsonl").stdout
	if strings.Count(out, `"_change_type"`) != 1 || !strings.Contains(out, `"_change_type":"insert"`) {
		t.Errorf("change feed: %q", out)
	}
}

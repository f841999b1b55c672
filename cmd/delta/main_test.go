package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// testdata returns the corpus directory: $GODELTA_TESTDATA, or else
// shared/testdata beside the module checkout. It skips the test when the
// corpus is absent (and fails it in CI).
func testdata(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("GODELTA_TESTDATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "testdata")
	}
	if _, err := os.Stat(filepath.Join(dir, "index.json")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("corpus not found at %s (set GODELTA_TESTDATA)", dir)
		}
		t.Skipf("corpus not found at %s (set GODELTA_TESTDATA)", dir)
	}
	return dir
}

// result is the outcome of one in-process run of the command.
type result struct {
	code           int
	stdout, stderr string
	panicked       string // the panic and its stack, if run panicked
}

func runDelta(args ...string) (r result) {
	var out, errOut bytes.Buffer
	defer func() {
		if p := recover(); p != nil {
			r.panicked = fmt.Sprintf("%v\n%s", p, debug.Stack())
		}
	}()
	r.code = run(args, &out, &errOut)
	r.stdout, r.stderr = out.String(), errOut.String()
	return r
}

// mustRun runs the command and fails the test unless it exits 0.
func mustRun(t *testing.T, args ...string) result {
	t.Helper()
	r := runDelta(args...)
	if r.panicked != "" {
		t.Fatalf("delta %s panicked: %s", strings.Join(args, " "), r.panicked)
	}
	if r.code != 0 {
		t.Fatalf("delta %s: exit %d: %s", strings.Join(args, " "), r.code, r.stderr)
	}
	return r
}

// decodeOne decodes out as exactly one JSON document followed by a
// newline, indented by two spaces.
func decodeOne(t *testing.T, out string, v any) {
	t.Helper()
	if err := checkOneDocument(out); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("decoding output: %v\n%s", err, out)
	}
}

func checkOneDocument(out string) error {
	if !strings.HasSuffix(out, "\n") || strings.HasSuffix(out, "\n\n") {
		return errors.New("output does not end in exactly one newline")
	}
	dec := json.NewDecoder(strings.NewReader(out))
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("output is not JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("output holds more than one JSON document")
	}
	var want bytes.Buffer
	if err := json.Indent(&want, v, "", "  "); err != nil {
		return err
	}
	if want.String() != strings.TrimSuffix(out, "\n") {
		return errors.New("output is not indented by two spaces")
	}
	return nil
}

// checkErrorLine checks that stderr is one line "delta: ...".
func checkErrorLine(t *testing.T, what, stderr string) {
	t.Helper()
	if !strings.HasPrefix(stderr, "delta: ") || strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
		t.Errorf("%s: stderr is not one line \"delta: ...\": %q", what, stderr)
	}
	if strings.HasPrefix(stderr, "delta: delta: ") {
		t.Errorf("%s: prefix repeated: %q", what, stderr)
	}
	if strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "Usage:") {
		t.Errorf("%s: stderr has a stack or a usage dump: %q", what, stderr)
	}
}

func TestDescribeJSON(t *testing.T) {
	root := filepath.Join(testdata(t), "golden", "checkpoint", "delta")
	r := mustRun(t, "describe", root, "--json")
	var doc map[string]json.RawMessage
	decodeOne(t, r.stdout, &doc)
	for _, k := range []string{"version", "timestamp", "protocol", "metadata", "numFiles", "sizeInBytes"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("describe: missing key %q", k)
		}
	}
	if string(doc["version"]) != "14" {
		t.Errorf("version = %s, want 14", doc["version"])
	}
	var ts string
	if err := json.Unmarshal(doc["timestamp"], &ts); err != nil {
		t.Errorf("timestamp: %v", err)
	} else if _, err := time.Parse("2006-01-02T15:04:05.000Z", ts); err != nil {
		t.Errorf("timestamp %q is not RFC 3339 UTC with milliseconds", ts)
	}
	var proto map[string]any
	if err := json.Unmarshal(doc["protocol"], &proto); err != nil || proto["minReaderVersion"] == nil || proto["minWriterVersion"] == nil {
		t.Errorf("protocol = %s (%v)", doc["protocol"], err)
	}
	var md struct {
		ID               *string `json:"id"`
		Format           *struct{ Provider string }
		Schema           map[string]any    `json:"schema"`
		PartitionColumns []string          `json:"partitionColumns"`
		Configuration    map[string]string `json:"configuration"`
	}
	if err := json.Unmarshal(doc["metadata"], &md); err != nil {
		t.Fatalf("metadata: %v", err)
	}
	if md.ID == nil || md.Format == nil || md.Format.Provider != "parquet" {
		t.Errorf("metadata id/format missing: %s", doc["metadata"])
	}
	if md.Schema["type"] != "struct" {
		t.Errorf("metadata.schema is not a struct object: %v", md.Schema)
	}
	if md.PartitionColumns == nil || md.Configuration == nil {
		t.Errorf("partitionColumns or configuration is null: %s", doc["metadata"])
	}
}

func TestFilesJSON(t *testing.T) {
	root := filepath.Join(testdata(t), "delta-rs", "delta-0.8.0")
	for _, args := range [][]string{{}, {"--version", "1"}} {
		r := mustRun(t, append([]string{"files", root, "--json"}, args...)...)
		var files []map[string]json.RawMessage
		decodeOne(t, r.stdout, &files)
		if len(files) != 2 {
			t.Fatalf("files %v: %d files, want 2:\n%s", args, len(files), r.stdout)
		}
		for _, f := range files {
			for _, k := range []string{"path", "size", "modificationTime", "partitionValues", "dataChange", "deletionVector"} {
				if _, ok := f[k]; !ok {
					t.Errorf("file %s: missing key %q", f["path"], k)
				}
			}
			if string(f["partitionValues"]) != "{}" || string(f["deletionVector"]) != "null" {
				t.Errorf("file %s: partitionValues %s, deletionVector %s", f["path"], f["partitionValues"], f["deletionVector"])
			}
			if s, ok := f["stats"]; ok && !isJSONObject(s) {
				t.Errorf("file %s: stats %s is not an object", f["path"], s)
			}
		}
	}
}

func TestHistory(t *testing.T) {
	root := filepath.Join(testdata(t), "delta-rs", "delta-0.8.0")
	r := mustRun(t, "history", root, "--json")
	var commits []map[string]json.RawMessage
	decodeOne(t, r.stdout, &commits)
	if len(commits) != 2 {
		t.Fatalf("history: %d commits, want 2:\n%s", len(commits), r.stdout)
	}
	for i, c := range commits {
		if want := fmt.Sprint(1 - i); string(c["version"]) != want {
			t.Errorf("commit %d: version %s, want %s (newest first)", i, c["version"], want)
		}
		for _, k := range []string{"version", "timestamp", "operation", "operationParameters"} {
			if _, ok := c[k]; !ok {
				t.Errorf("commit %d: missing key %q", i, k)
			}
		}
		if !isJSONObject(c["operationParameters"]) {
			t.Errorf("commit %d: operationParameters %s is not an object", i, c["operationParameters"])
		}
	}
	if string(commits[0]["operation"]) != `"DELETE"` {
		t.Errorf("newest operation = %s, want DELETE", commits[0]["operation"])
	}

	r = mustRun(t, "history", root, "--limit", "1", "--json")
	decodeOne(t, r.stdout, &commits)
	if len(commits) != 1 || string(commits[0]["version"]) != "1" {
		t.Errorf("history --limit 1 = %s", r.stdout)
	}

	r = mustRun(t, "history", root)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "VERSION") || !strings.HasPrefix(lines[1], "1 ") ||
		!strings.Contains(lines[1], "DELETE") || !strings.HasPrefix(lines[2], "0 ") {
		t.Errorf("history text:\n%s", r.stdout)
	}
}

func TestFailures(t *testing.T) {
	dir := testdata(t)
	checkpointed := filepath.Join(dir, "golden", "checkpoint", "delta")
	for _, tc := range []struct {
		args []string
		code int
		want string // in the message
	}{
		{[]string{"describe", filepath.Join(dir, "golden", "deltalog-invalid-protocol-version", "delta")}, 1, "minReaderVersion 99"},
		{[]string{"files", filepath.Join(dir, "golden", "deltalog-invalid-protocol-version", "delta"), "--json"}, 1, "minReaderVersion 99"},
		{[]string{"describe", filepath.Join(dir, "golden", "no-delta-log-folder", "delta"), "--json"}, 1, "table not found"},
		{[]string{"history", filepath.Join(dir, "golden", "no-delta-log-folder", "delta")}, 1, "table not found"},
		{[]string{"files", filepath.Join(dir, "golden", "no-delta-log-folder", "delta")}, 1, "table not found"},
		{[]string{"describe", filepath.Join(dir, "no", "such", "table")}, 1, "table not found"},
		{[]string{"describe", "s3x://bucket/t"}, 1, "scheme"},
		{[]string{"describe", checkpointed, "--version", "99"}, 1, "version not found"},
		{[]string{"describe", checkpointed, "--version", "9223372036854775807"}, 1, "version not found"},
		{[]string{"scan", checkpointed, "--where", "intCol"}, 1, "not a condition"},
		{[]string{"scan", checkpointed, "--where", "intCol = 'abc'"}, 1, "cannot be read as"},
		{[]string{"describe", checkpointed, "--timestamp", "1970-01-01"}, 1, "timestamp out of range"},
		{[]string{"describe", checkpointed, "--version", "1", "--timestamp", "2020-01-01"}, 2, "mutually exclusive"},
		{[]string{"files", checkpointed, "--timestamp", "yesterday"}, 2, "invalid --timestamp"},
		{[]string{"files", checkpointed, "--version", "-1"}, 2, "negative"},
		{[]string{"files", checkpointed, "--version", "x"}, 2, "--version"},
		{[]string{"history", checkpointed, "--limit", "-1"}, 2, "--limit"},
		{[]string{"history", checkpointed, "--bogus"}, 2, "unknown flag"},
		{[]string{"describe"}, 2, "TABLE"},
		{[]string{"describe", "a", "b"}, 2, "TABLE"},
		{[]string{"descibe", checkpointed}, 2, `did you mean "describe"`},
		{[]string{"nosuch"}, 2, "unknown command"},
	} {
		what := strings.Join(tc.args, " ")
		r := runDelta(tc.args...)
		if r.panicked != "" {
			t.Errorf("%s: panicked: %s", what, r.panicked)
			continue
		}
		if r.code != tc.code {
			t.Errorf("%s: exit %d, want %d (stderr %q)", what, r.code, tc.code, r.stderr)
		}
		if r.stdout != "" {
			t.Errorf("%s: wrote to stdout: %q", what, r.stdout)
		}
		checkErrorLine(t, what, r.stderr)
		if !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: stderr %q does not mention %q", what, r.stderr, tc.want)
		}
	}
}

func TestHelp(t *testing.T) {
	r := mustRun(t, "--help")
	for _, c := range []string{"describe", "history", "files"} {
		if !strings.Contains(r.stdout, c) {
			t.Errorf("help does not list %s:\n%s", c, r.stdout)
		}
	}
	r = mustRun(t, "files", "--help")
	if !strings.Contains(r.stdout, "--timestamp") {
		t.Errorf("files --help:\n%s", r.stdout)
	}
	// No command at all is a usage error, with the usage on stderr.
	r = runDelta()
	if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "Usage:") {
		t.Errorf("no arguments: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// writeTable writes a small table of two commits under a temporary
// directory, exercising what the corpus tables may not: a null partition
// value, a deletion vector, stats that are not an object, characters JSON
// escapers like to touch, and metrics too large for a float64.
func writeTable(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	logDir := filepath.Join(dir, "_delta_log")
	if err := os.Mkdir(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	schemaString := `{"type":"struct","fields":[` +
		`{"name":"id","type":"long","nullable":false,"metadata":{}},` +
		`{"name":"s","type":{"type":"struct","fields":[{"name":"x","type":"decimal(10,2)","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},` +
		`{"name":"tags","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{}},` +
		`{"name":"m","type":{"type":"map","keyType":"string","valueType":{"type":"array","elementType":"integer","containsNull":false},"valueContainsNull":true},"nullable":true,"metadata":{}},` +
		`{"name":"p","type":"string","nullable":true,"metadata":{}}]}`
	lines0 := []any{
		map[string]any{"commitInfo": map[string]any{
			"timestamp": 1704067200000, "operation": "WRITE",
			"operationParameters": map[string]any{"mode": "Append", "partitionBy": `["p"]`},
			"operationMetrics":    json.RawMessage(`{"numOutputRows":12345678901234567890}`),
			"engineInfo":          "test <engine> & co", "isBlindAppend": true, "txnId": "t-1",
		}},
		map[string]any{"protocol": map[string]any{"minReaderVersion": 3, "minWriterVersion": 7,
			"readerFeatures": []string{"deletionVectors"}, "writerFeatures": []string{"deletionVectors"}}},
		map[string]any{"metaData": map[string]any{
			"id": "test-id", "name": "t", "format": map[string]any{"provider": "parquet", "options": map[string]any{}},
			"schemaString": schemaString, "partitionColumns": []string{"p"},
			"configuration": map[string]string{"z.key": "1", "a.key": "<a&b>", "delta.enableDeletionVectors": "true"},
			"createdTime":   1704067200000,
		}},
		map[string]any{"add": map[string]any{"path": "p=__HIVE_DEFAULT_PARTITION__/part-0.parquet",
			"partitionValues": map[string]any{"p": nil}, "size": 100, "modificationTime": 1704067200000,
			"dataChange": true, "stats": `{"numRecords":3,"minValues":{"id":9007199254740993}}`}},
		map[string]any{"add": map[string]any{"path": "p=a/part-1.parquet",
			"partitionValues": map[string]any{"p": "a"}, "size": 200, "modificationTime": 1704067200000,
			"dataChange": true, "stats": `not json`,
			"deletionVector": map[string]any{"storageType": "u", "pathOrInlineDv": "ab^-aqEH.-t@S}K{vb[*k^",
				"offset": 4, "sizeInBytes": 40, "cardinality": 6}}},
	}
	lines1 := []any{
		map[string]any{"commitInfo": map[string]any{"timestamp": 1704153600000, "operation": "DELETE",
			"operationParameters": map[string]any{"predicate": `["(id > 5)"]`}, "readVersion": 0}},
		map[string]any{"remove": map[string]any{"path": "p=a/part-1.parquet", "deletionTimestamp": 1704153600000,
			"dataChange": true}},
	}
	// The remove above names the file without its deletion vector, so it
	// removes nothing: (path, DV id) is a file's identity.
	for v, lines := range [][]any{lines0, lines1} {
		// Spark and delta-rs leave <, > and & unescaped.
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		for _, l := range lines {
			if err := enc.Encode(l); err != nil {
				t.Fatal(err)
			}
		}
		name := filepath.Join(logDir, fmt.Sprintf("%020d.json", v))
		if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		mtime := time.Date(2024, 1, 1+v, 0, 0, 0, 0, time.UTC)
		if err := os.Chtimes(name, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestWrittenTable(t *testing.T) {
	dir := writeTable(t)

	r := mustRun(t, "files", dir, "--json", "--version", "0")
	var files []map[string]json.RawMessage
	decodeOne(t, r.stdout, &files)
	if len(files) != 2 {
		t.Fatalf("files: %d, want 2:\n%s", len(files), r.stdout)
	}
	byPath := map[string]map[string]json.RawMessage{}
	for _, f := range files {
		var p string
		json.Unmarshal(f["path"], &p)
		byPath[p] = f
	}
	f0, f1 := byPath["p=__HIVE_DEFAULT_PARTITION__/part-0.parquet"], byPath["p=a/part-1.parquet"]
	if f0 == nil || f1 == nil {
		t.Fatalf("paths: %s", r.stdout)
	}
	if got := compact(f0["partitionValues"]); got != `{"p":null}` {
		t.Errorf("null partition value: %s", got)
	}
	if got := compact(f1["partitionValues"]); got != `{"p":"a"}` {
		t.Errorf("partition value: %s", got)
	}
	if got := compact(f0["stats"]); got != `{"numRecords":3,"minValues":{"id":9007199254740993}}` {
		t.Errorf("stats not kept exactly: %s", got)
	}
	if _, ok := f1["stats"]; ok {
		t.Errorf("stats that are not JSON: %s, want absent", f1["stats"])
	}
	if got := compact(f0["deletionVector"]); got != "null" {
		t.Errorf("deletionVector = %s, want null", got)
	}
	if got := compact(f1["deletionVector"]); got != `{"storageType":"u","pathOrInlineDv":"ab^-aqEH.-t@S}K{vb[*k^","offset":4,"sizeInBytes":40,"cardinality":6}` {
		t.Errorf("deletionVector = %s", got)
	}

	r = mustRun(t, "files", dir)
	if !strings.Contains(r.stdout, "p=null") || !strings.Contains(r.stdout, "6 rows deleted") ||
		!strings.HasPrefix(r.stdout, "PATH ") || !strings.Contains(r.stdout, "PARTITION VALUES") {
		t.Errorf("files text:\n%s", r.stdout)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != 3 {
		t.Errorf("files text has %d lines, want 3:\n%s", len(lines), r.stdout)
	}
	if !strings.Contains(lines[0], "SIZE") || !strings.Contains(lines[1], "  ") {
		t.Errorf("files text not aligned:\n%s", r.stdout)
	}
	for _, l := range lines[1:] {
		// SIZE is right-aligned under its header.
		end := strings.Index(lines[0], "SIZE") + len("SIZE")
		if len(l) < end || l[end-1] < '0' || l[end-1] > '9' {
			t.Errorf("size column not aligned:\n%s", r.stdout)
		}
	}

	r = mustRun(t, "describe", dir, "--json")
	var doc struct {
		Version  int64
		Protocol json.RawMessage
		Metadata struct {
			Name, Description string
			Schema            json.RawMessage
			Configuration     map[string]string
			CreatedTime       *int64
		}
		NumFiles, SizeInBytes int64
	}
	decodeOne(t, r.stdout, &doc)
	if doc.Version != 1 || doc.NumFiles != 2 || doc.SizeInBytes != 300 {
		t.Errorf("describe: version %d, numFiles %d, sizeInBytes %d", doc.Version, doc.NumFiles, doc.SizeInBytes)
	}
	if got := compact(doc.Protocol); got != `{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["deletionVectors"],"writerFeatures":["deletionVectors"]}` {
		t.Errorf("protocol = %s", got)
	}
	if compact(doc.Metadata.Schema) != schemaStringOf(t, dir) {
		t.Errorf("schema = %s", doc.Metadata.Schema)
	}
	if doc.Metadata.Configuration["a.key"] != "<a&b>" || !strings.Contains(r.stdout, `"<a&b>"`) {
		t.Errorf("configuration escaped or lost: %s", r.stdout)
	}
	if doc.Metadata.CreatedTime == nil || *doc.Metadata.CreatedTime != 1704067200000 {
		t.Errorf("createdTime = %v", doc.Metadata.CreatedTime)
	}

	r = mustRun(t, "describe", dir)
	for _, want := range []string{
		"Version:", "Reader features:", "deletionVectors", "Partition columns:", "p",
		"Properties:\n  a.key  ", "= <a&b>", "\n  z.key  ",
		"Schema:\nroot\n" +
			" |-- id: long (nullable = false)\n" +
			" |-- s: struct (nullable = true)\n" +
			" |    |-- x: decimal(10,2) (nullable = true)\n" +
			" |-- tags: array (nullable = true)\n" +
			" |    |-- element: string (containsNull = true)\n" +
			" |-- m: map (nullable = true)\n" +
			" |    |-- key: string\n" +
			" |    |-- value: array (valueContainsNull = true)\n" +
			" |    |    |-- element: integer (containsNull = false)\n" +
			" |-- p: string (nullable = true)\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("describe text lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Index(r.stdout, "a.key") > strings.Index(r.stdout, "delta.enableDeletionVectors") ||
		strings.Index(r.stdout, "delta.enableDeletionVectors") > strings.Index(r.stdout, "z.key") {
		t.Errorf("properties not sorted:\n%s", r.stdout)
	}

	// Time travel by timestamp: commit 0 at 2024-01-01, commit 1 at 2024-01-02.
	for _, tc := range []struct {
		ts   string
		want int64
	}{
		{"2024-01-01", 0},
		{"2024-01-01 23:59:59.999", 0},
		{"2024-01-02T00:00:00Z", 1},
		{"1704153600000", 1},
		{"2024-01-02T01:00:00+01:00", 1},
	} {
		r := mustRun(t, "describe", dir, "--json", "--timestamp", tc.ts)
		decodeOne(t, r.stdout, &doc)
		if doc.Version != tc.want {
			t.Errorf("--timestamp %s: version %d, want %d", tc.ts, doc.Version, tc.want)
		}
	}

	r = mustRun(t, "history", dir, "--json")
	var commits []map[string]json.RawMessage
	decodeOne(t, r.stdout, &commits)
	if len(commits) != 2 {
		t.Fatalf("history: %s", r.stdout)
	}
	if got := compact(commits[1]["operationMetrics"]); got != `{"numOutputRows":12345678901234567890}` {
		t.Errorf("operationMetrics not kept exactly: %s", got)
	}
	if got := string(commits[1]["engineInfo"]); got != `"test <engine> & co"` {
		t.Errorf("engineInfo = %s", got)
	}
	if got := string(commits[1]["timestamp"]); got != `"2024-01-01T00:00:00.000Z"` {
		t.Errorf("timestamp = %s", got)
	}
	if string(commits[1]["isBlindAppend"]) != "true" || string(commits[1]["txnId"]) != `"t-1"` {
		t.Errorf("commit 0 = %v", commits[1])
	}
	if string(commits[0]["readVersion"]) != "0" {
		t.Errorf("readVersion = %s", commits[0]["readVersion"])
	}
	for _, k := range []string{"isolationLevel", "userMetadata", "operationMetrics", "txnId", "isBlindAppend", "engineInfo"} {
		if _, ok := commits[0][k]; ok {
			t.Errorf("commit 1 has %q, which it did not record", k)
		}
	}
	r = mustRun(t, "history", dir)
	if !strings.Contains(r.stdout, `{"predicate":"[\"(id > 5)\"]"}`) {
		t.Errorf("history text:\n%s", r.stdout)
	}
}

func TestEmptyTableFiles(t *testing.T) {
	dir := t.TempDir()
	logDir := filepath.Join(dir, "_delta_log")
	os.Mkdir(logDir, 0o755)
	commit := `{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}` + "\n" +
		`{"metaData":{"id":"e","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[]}","partitionColumns":[],"configuration":{}}}` + "\n"
	if err := os.WriteFile(filepath.Join(logDir, "00000000000000000000.json"), []byte(commit), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := mustRun(t, "files", dir, "--json"); r.stdout != "[]\n" {
		t.Errorf("files --json on an empty table = %q, want \"[]\\n\"", r.stdout)
	}
	r := mustRun(t, "history", dir, "--json")
	var commits []map[string]json.RawMessage
	decodeOne(t, r.stdout, &commits)
	if len(commits) != 1 || string(commits[0]["operation"]) != `""` || string(commits[0]["operationParameters"]) != "{}" {
		t.Errorf("history of a commit without commitInfo: %s", r.stdout)
	}
	r = mustRun(t, "describe", dir, "--json")
	var doc struct{ Metadata map[string]json.RawMessage }
	decodeOne(t, r.stdout, &doc)
	if _, ok := doc.Metadata["createdTime"]; ok {
		t.Errorf("createdTime present though not recorded: %s", r.stdout)
	}
}

func compact(b json.RawMessage) string {
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return "invalid: " + string(b)
	}
	return out.String()
}

// schemaStringOf returns the schemaString of the table's first commit.
func schemaStringOf(t *testing.T, dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, "_delta_log", "00000000000000000000.json"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		var a struct {
			MetaData *struct{ SchemaString string } `json:"metaData"`
		}
		if json.Unmarshal([]byte(line), &a) == nil && a.MetaData != nil {
			return a.MetaData.SchemaString
		}
	}
	t.Fatal("no metaData")
	return ""
}

// TestEveryTable runs every command, as text and as JSON, on every table
// root of the corpus. Nothing may panic; each JSON output must be one
// document; each failure must be one line on stderr with exit status 1;
// and a table not marked as an expected failure must succeed.
func TestEveryTable(t *testing.T) {
	dir := testdata(t)
	data, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var idx struct {
		Tables []struct {
			Roots           []string `json:"table_roots"`
			ExpectedFailure *string  `json:"expected_failure"`
		} `json:"tables"`
	}
	if err := json.Unmarshal(data, &idx); err != nil {
		t.Fatalf("index.json: %v", err)
	}
	if len(idx.Tables) == 0 {
		t.Fatal("index.json lists no tables")
	}
	commands := [][]string{
		{"describe"}, {"describe", "--json"},
		{"history"}, {"history", "--json"},
		{"files"}, {"files", "--json"},
	}
	// Roots whose log breaks the protocol although the index does not mark
	// them to fail (the same list, and reason, as the conformance suite's).
	mustFail := map[string]string{
		"golden/data-reader-absolute-paths-escaped-chars/delta": "no metaData action in the log",
	}
	for _, tbl := range idx.Tables {
		for _, root := range tbl.Roots {
			if why, ok := mustFail[root]; ok && tbl.ExpectedFailure == nil {
				tbl.ExpectedFailure = &why
			}
			t.Run(root, func(t *testing.T) {
				describeFailed := false
				for _, c := range commands {
					args := append([]string{c[0], filepath.Join(dir, root)}, c[1:]...)
					what := strings.Join(append([]string{c[0], root}, c[1:]...), " ")
					r := runDelta(args...)
					switch {
					case r.panicked != "":
						t.Errorf("%s: panicked: %s", what, r.panicked)
					case r.code == 0:
						if len(c) > 1 {
							if err := checkOneDocument(r.stdout); err != nil {
								t.Errorf("%s: %v", what, err)
							}
						}
						if r.stderr != "" {
							t.Errorf("%s: succeeded but wrote to stderr: %q", what, r.stderr)
						}
					default:
						if c[0] == "describe" {
							describeFailed = true
						}
						if r.code != 1 {
							t.Errorf("%s: exit %d, want 1 for a failure", what, r.code)
						}
						checkErrorLine(t, what, r.stderr)
						if tbl.ExpectedFailure == nil {
							t.Errorf("%s: exit %d: %s", what, r.code, strings.TrimSuffix(r.stderr, "\n"))
						}
					}
				}
				if tbl.ExpectedFailure != nil && !describeFailed {
					t.Errorf("describe %s succeeded; the table must fail (%s)", root, *tbl.ExpectedFailure)
				}
			})
		}
	}
}

func TestWarnHandler(t *testing.T) {
	var b bytes.Buffer
	log := slog.New(newWarnHandler(&b))
	log.Info("not shown")
	log.Warn("skipping unreadable checkpoint", "version", 10, "err", errors.New("delta: corrupt x\nsecond line"))
	log.With("table", "t").WithGroup("g").Error("plain")
	want := `delta: warning: skipping unreadable checkpoint (version=10 err="delta: corrupt x\nsecond line")` + "\n" +
		"delta: warning: plain (table=t)\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

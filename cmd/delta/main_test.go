package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func corpus(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("GODELTA_TESTDATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "testdata")
	}
	if _, err := os.Stat(filepath.Join(dir, "index.json")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("corpus missing at %s", dir)
		}
		t.Skipf("corpus missing at %s", dir)
	}
	return dir
}

func runCmd(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestDescribeJSON(t *testing.T) {
	root := filepath.Join(corpus(t), "golden", "checkpoint", "delta")
	code, out, errOut := runCmd("describe", root, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not one JSON document: %v\n%s", err, out)
	}
	for _, k := range []string{"version", "protocol", "metadata", "numFiles", "sizeInBytes", "timestamp"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("missing key %q", k)
		}
	}
	if doc["version"] != float64(14) {
		t.Errorf("version = %v, want 14", doc["version"])
	}
	md := doc["metadata"].(map[string]any)
	if _, ok := md["schema"].(map[string]any); !ok {
		t.Errorf("metadata.schema is not an object: %v", md["schema"])
	}
}

func TestFilesAndHistoryJSON(t *testing.T) {
	root := filepath.Join(corpus(t), "delta-rs", "delta-0.8.0")
	code, out, errOut := runCmd("files", root, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var files []map[string]any
	if err := json.Unmarshal([]byte(out), &files); err != nil || len(files) != 2 {
		t.Fatalf("files = %d (%v), want 2:\n%s", len(files), err, out)
	}
	code, out, errOut = runCmd("files", root, "--json", "--version", "0")
	if code != 0 || json.Unmarshal([]byte(out), &files) != nil || len(files) != 2 {
		t.Fatalf("files at v0: exit %d %s", code, errOut)
	}
	code, out, errOut = runCmd("history", root, "--json")
	var hist []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &hist) != nil || len(hist) != 2 {
		t.Fatalf("history: exit %d %s\n%s", code, errOut, out)
	}
	if hist[0]["version"] != float64(1) || hist[0]["operation"] != "DELETE" {
		t.Errorf("newest entry = %v", hist[0])
	}
}

func TestErrors(t *testing.T) {
	dir := corpus(t)
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"describe", filepath.Join(dir, "golden", "deltalog-invalid-protocol-version", "delta")}, 1},
		{[]string{"describe", filepath.Join(dir, "golden", "no-delta-log-folder", "delta")}, 1},
		{[]string{"describe", "s3x://bucket/t"}, 1},
		{[]string{"describe", filepath.Join(dir, "golden", "checkpoint", "delta"), "--version", "99"}, 1},
		{[]string{"describe", filepath.Join(dir, "golden", "checkpoint", "delta"), "--version", "1", "--timestamp", "2020-01-01"}, 2},
		{[]string{"describe", filepath.Join(dir, "golden", "checkpoint", "delta"), "--timestamp", "yesterday"}, 2},
		{[]string{"describe"}, 2},
		{[]string{"nosuch"}, 2},
	} {
		code, _, errOut := runCmd(tc.args...)
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d (%s)", tc.args, code, tc.code, errOut)
		}
		if strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "delta: ") {
			t.Errorf("%v: stderr is not one 'delta: ' line: %q", tc.args, errOut)
		}
	}
}

// TestEveryTable runs every command on every table root of the corpus:
// nothing may panic, and tables not marked to fail must succeed.
func TestEveryTable(t *testing.T) {
	dir := corpus(t)
	data, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var idx struct {
		Tables []struct {
			Folder          string   `json:"folder"`
			Roots           []string `json:"table_roots"`
			ExpectedFailure *string  `json:"expected_failure"`
		} `json:"tables"`
	}
	if err := json.Unmarshal(data, &idx); err != nil {
		t.Fatal(err)
	}
	for _, tbl := range idx.Tables {
		for _, root := range tbl.Roots {
			for _, args := range [][]string{{"describe"}, {"describe", "--json"}, {"files"}, {"files", "--json"}, {"history"}, {"history", "--json"}} {
				full := append([]string{args[0], filepath.Join(dir, root)}, args[1:]...)
				code, _, errOut := runCmd(full...)
				if tbl.ExpectedFailure != nil {
					if args[0] == "describe" && code == 0 {
						t.Errorf("%s %v: succeeded, must fail (%s)", root, args, *tbl.ExpectedFailure)
					}
					continue
				}
				if code != 0 && !(root == "golden/data-reader-absolute-paths-escaped-chars/delta" && args[0] != "history") {
					t.Errorf("%s %v: exit %d: %s", root, args, code, errOut)
				}
			}
		}
	}
}

func TestParseTimestamp(t *testing.T) {
	want := time.Date(2024, 1, 2, 3, 4, 5, 123000000, time.UTC)
	for _, s := range []string{"2024-01-02T03:04:05.123Z", "2024-01-02 03:04:05.123", "2024-01-02T03:04:05.123", "1704164645123", "2024-01-02T04:04:05.123+01:00"} {
		got, err := parseTimestamp(s)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseTimestamp(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	if got, err := parseTimestamp("2024-01-02"); err != nil || !got.Equal(time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("date form: %v, %v", got, err)
	}
	for _, s := range []string{"", "yesterday", "2024-13-01"} {
		if _, err := parseTimestamp(s); err == nil {
			t.Errorf("parseTimestamp(%q) succeeded", s)
		}
	}
}

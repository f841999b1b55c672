package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// reorg --purge rewrites exactly the files with deletion vectors, keeps the
// rows, and records Spark's REORG operation; a second run has nothing to do.
func TestReorgPurge(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "t")
	mustRun(t, "create", dir, "--schema", "id BIGINT NOT NULL, p STRING", "--partition-by", "p",
		"--property", "delta.enableDeletionVectors=true")
	csv := "id,p\n"
	for i := range 300 {
		csv += strconv.Itoa(i) + "," + string(rune('a'+i%3)) + "\n"
	}
	mustRun(t, "append", dir, writeFile(t, filepath.Join(base, "a.csv"), csv))
	mustRun(t, "delete", dir, "--where", "p <> 'c' AND id % 2 = 0") // vectors in p=a and p=b
	want := scanIDs(t, dir)

	if r := runDelta("reorg", dir); r.code != exitUsage {
		t.Fatalf("reorg without --purge: exit %d", r.code)
	}
	var res struct {
		Committed bool   `json:"committed"`
		Version   *int64 `json:"version"`
		Metrics   struct {
			NumFilesRemoved int64 `json:"numFilesRemoved"`
			NumFilesAdded   int64 `json:"numFilesAdded"`
		} `json:"metrics"`
	}
	decodeOne(t, mustRun(t, "reorg", dir, "--purge", "--json").stdout, &res)
	if !res.Committed || res.Metrics.NumFilesRemoved != 2 || res.Metrics.NumFilesAdded != 2 {
		t.Fatalf("reorg --purge: %+v", res)
	}
	if got := scanIDs(t, dir); !slices.Equal(got, want) {
		t.Fatalf("after the purge: %d rows, want %d", len(got), len(want))
	}
	commit, err := os.ReadFile(filepath.Join(dir, "_delta_log", "00000000000000000003.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(commit)), "\n") {
		var a map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			t.Fatal(err)
		}
		if ci, ok := a["commitInfo"]; ok {
			var c struct {
				Operation  string         `json:"operation"`
				Parameters map[string]any `json:"operationParameters"`
			}
			json.Unmarshal(ci, &c)
			if c.Operation != "REORG" || c.Parameters["applyPurge"] != true || c.Parameters["predicate"] != "[]" {
				t.Errorf("commitInfo %s", ci)
			}
		}
		if add, ok := a["add"]; ok && strings.Contains(string(add), "deletionVector") && !strings.Contains(string(add), `"deletionVector":null`) {
			t.Errorf("a purged file has a deletion vector: %s", add)
		}
		if add, ok := a["add"]; ok && strings.Contains(string(add), "p=c") {
			t.Errorf("a file without a deletion vector was rewritten: %s", add)
		}
	}
	if r := mustRun(t, "reorg", dir, "--purge"); !strings.Contains(r.stdout, "nothing to purge") {
		t.Errorf("second reorg: %q", r.stdout)
	}
}

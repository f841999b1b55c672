package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAlterEnableRowTrackingAndICT: delta alter TABLE set turns row
// tracking and in-commit timestamps on for a table that has data.
func TestAlterEnableRowTrackingAndICT(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t")
	mustRun(t, "create", dir, "--schema", "id BIGINT, v STRING")
	for i, rows := range []string{"id,v\n1,one\n2,two\n", "id,v\n3,three\n"} {
		in := filepath.Join(t.TempDir(), "rows.csv")
		if err := os.WriteFile(in, []byte(rows), 0o644); err != nil {
			t.Fatal(i, err)
		}
		mustRun(t, "append", dir, in)
	}
	for _, prop := range []string{"delta.enableRowTracking=true", "delta.enableInCommitTimestamps=true"} {
		r := mustRun(t, "alter", dir, "set", prop)
		if !strings.Contains(r.stdout, "committed at version") {
			t.Fatalf("alter set %s: %s", prop, r.stdout)
		}
	}
	r := mustRun(t, "history", dir, "--json")
	for _, op := range []string{"UPGRADE PROTOCOL", "ROW TRACKING BACKFILL", "SET TBLPROPERTIES"} {
		if !strings.Contains(r.stdout, `"operation": "`+op+`"`) {
			t.Errorf("history lacks %s:\n%s", op, r.stdout)
		}
	}
	r = mustRun(t, "scan", dir, "--format", "csv", "--columns", "id,_metadata.row_id")
	// Three rows, ids 0 to 2 in some file order; rows 1 and 2 share a
	// file, so their ids are consecutive.
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	byID := map[string]string{}
	for _, l := range lines[1:] {
		id, rid, _ := strings.Cut(l, ",")
		byID[id] = rid
	}
	if lines[0] != "id,_metadata.row_id" || len(byID) != 3 {
		t.Fatalf("scan:\n%s", r.stdout)
	}
	switch got := byID["1"] + byID["2"] + byID["3"]; got {
	case "012", "120":
	default:
		t.Fatalf("row ids of ids 1, 2, 3: %q\n%s", got, r.stdout)
	}
}

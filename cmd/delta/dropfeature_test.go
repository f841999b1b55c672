package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// alter drop-feature: in-commit timestamps are turned off, then the
// feature leaves the protocol; the log stays sound; a reader-writer
// feature is refused, saying why.
func TestAlterDropFeature(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t")
	mustRun(t, "create", dir, "--schema", "id BIGINT", "--property", "delta.enableInCommitTimestamps=true",
		"--property", "delta.enableDeletionVectors=true")
	mustRun(t, "append", dir, writeFile(t, filepath.Join(filepath.Dir(dir), "a.csv"), "id\n1\n2\n"))
	r := mustRun(t, "alter", dir, "drop-feature", "inCommitTimestamp")
	if !strings.Contains(r.stdout, "committed at version 3") {
		t.Fatalf("drop-feature: %q", r.stdout)
	}
	d := mustRun(t, "describe", dir).stdout
	if strings.Contains(d, "inCommitTimestamp") || !strings.Contains(d, "delta.enableInCommitTimestamps  = false") {
		t.Errorf("describe after the drop:\n%s", d)
	}
	if r := runDelta("check", dir, "--deep"); r.code != 0 {
		t.Errorf("check: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := scanIDs(t, dir); len(got) != 2 {
		t.Errorf("rows %v", got)
	}
	// A reader-writer feature, with checkpoint protection: the rows stay,
	// the table checks clean, the protocol has checkpointProtection.
	mustRun(t, "delete", dir, "--where", "id = 1")
	mustRun(t, "alter", dir, "drop-feature", "deletionVectors")
	d = mustRun(t, "describe", dir).stdout
	if strings.Contains(d, "deletionVectors") || !strings.Contains(d, "checkpointProtection") {
		t.Errorf("describe after dropping deletionVectors:\n%s", d)
	}
	if r := runDelta("check", dir, "--deep"); r.code != 0 {
		t.Errorf("check: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := scanIDs(t, dir); len(got) != 1 || got[0] != "2" {
		t.Errorf("rows %v", got)
	}
	// One the library does not drop is refused, saying so.
	col := filepath.Join(t.TempDir(), "c")
	mustRun(t, "create", col, "--schema", "id BIGINT", "--property", "delta.columnMapping.mode=name")
	r = runDelta("alter", col, "drop-feature", "columnMapping")
	if r.code != exitFailure || !strings.Contains(r.stderr, "not supported") {
		t.Errorf("drop-feature columnMapping: exit %d, %q", r.code, r.stderr)
	}
}

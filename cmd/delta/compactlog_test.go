package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// compact-log writes the compaction file of the commits after the last
// checkpoint; every version reads as before, and again it has nothing new
// to write.
func TestCompactLog(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "t")
	mustRun(t, "create", dir, "--schema", "id BIGINT NOT NULL, p STRING", "--partition-by", "p",
		"--property", "delta.enableDeletionVectors=true")
	for i, rows := range []string{"1,a\n2,b\n", "3,a\n", "4,c\n"} {
		mustRun(t, "append", dir, writeFile(t, filepath.Join(base, string(rune('a'+i))+".csv"), "id,p\n"+rows))
	}
	mustRun(t, "delete", dir, "--where", "id = 2")
	mustRun(t, "alter", dir, "add-column", "note STRING")
	var want [][]string
	for v := range 6 {
		want = append(want, scanIDs(t, dir, "--version", itoa(v)))
	}
	r := mustRun(t, "compact-log", dir)
	if !strings.Contains(r.stdout, "compacted versions 0 to 5") {
		t.Fatalf("compact-log: %q", r.stdout)
	}
	if _, err := os.Stat(filepath.Join(dir, "_delta_log", "00000000000000000000.00000000000000000005.compacted.json")); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "append", dir, writeFile(t, filepath.Join(base, "z.csv"), "id,p\n5,a\n"))
	for v := range 6 {
		if got := scanIDs(t, dir, "--version", itoa(v)); !slices.Equal(got, want[v]) {
			t.Errorf("version %d: %v, want %v", v, got, want[v])
		}
	}
	if got := scanIDs(t, dir); !slices.Equal(got, append(slices.Clone(want[5]), "5")) {
		t.Errorf("version 6, read through the compaction file: %v", got)
	}
	if r := mustRun(t, "compact-log", dir, "--to", "5"); !strings.Contains(r.stdout, "already compacted") {
		t.Errorf("again: %q", r.stdout)
	}
	if r := runDelta("check", dir, "--deep"); r.code != 0 {
		t.Errorf("check: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runDelta("compact-log", dir, "--from", "3", "--to", "3"); r.code != exitFailure {
		t.Errorf("a range of one commit: exit %d", r.code)
	}
}

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/godelta/delta/testutil"
)

func TestCheckpointCommand(t *testing.T) {
	dir := testdata(t)
	root := filepath.Join(t.TempDir(), "t")
	if err := testutil.CopyTree(filepath.Join(dir, "kernel-rs", "table-with-dv-small"), root); err != nil {
		t.Fatal(err)
	}
	before := mustRun(t, "scan", root, "--format", "csv").stdout

	r := mustRun(t, "checkpoint", root, "--cleanup")
	if !strings.Contains(r.stdout, "checkpoint written at version 1") || !strings.Contains(r.stdout, "log cleanup: deleted 0 files") {
		t.Fatalf("checkpoint output: %q", r.stdout)
	}
	data, err := os.ReadFile(filepath.Join(root, "_delta_log", "_last_checkpoint"))
	if err != nil {
		t.Fatal(err)
	}
	var lc struct {
		Version  int64  `json:"version"`
		Checksum string `json:"checksum"`
	}
	if err := json.Unmarshal(data, &lc); err != nil || lc.Version != 1 || lc.Checksum == "" {
		t.Fatalf("_last_checkpoint %s (%v)", data, err)
	}
	// The commits before the checkpoint are not needed any more: the table
	// reads the same from the checkpoint alone.
	for _, name := range []string{"00000000000000000000.json", "00000000000000000001.json"} {
		if err := os.Remove(filepath.Join(root, "_delta_log", name)); err != nil {
			t.Fatal(err)
		}
	}
	if after := mustRun(t, "scan", root, "--format", "csv").stdout; after != before {
		t.Fatalf("rows changed after checkpointing:\n%s\nwant\n%s", after, before)
	}
	if r := runDelta("checkpoint", filepath.Join(t.TempDir(), "none")); r.code != exitFailure {
		t.Fatalf("checkpoint of a missing table: exit %d", r.code)
	}
}

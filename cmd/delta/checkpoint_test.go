package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/godelta/delta"
	"github.com/godelta/delta/schema"
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

// smallTable creates a table of versions 0..3 at a new directory.
func smallTable(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "t")
	sch := &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long, Nullable: true}}}
	tbl, err := delta.Create(ctx, root, delta.TableSpec{Schema: sch})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	for i := range int64(3) {
		if _, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(i)}}, delta.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func logDir(t *testing.T, root string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root, "_delta_log"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// --dry-run writes nothing, not even the checkpoint: it only reports; and
// it needs --cleanup. (Issue 19, item 12.)
func TestCheckpointDryRunWritesNothing(t *testing.T) {
	root := smallTable(t)
	before := logDir(t, root)
	r := mustRun(t, "checkpoint", root, "--cleanup", "--dry-run")
	if !strings.Contains(r.stdout, "dry run: would write a checkpoint at version 3") || !strings.Contains(r.stdout, "log cleanup: would delete 0 files") {
		t.Errorf("dry-run output: %q", r.stdout)
	}
	if after := logDir(t, root); !slices.Equal(before, after) {
		t.Errorf("--dry-run changed the log: %v -> %v", before, after)
	}
	if r := runDelta("checkpoint", root, "--dry-run"); r.code != exitUsage {
		t.Errorf("--dry-run without --cleanup: exit %d, want %d", r.code, exitUsage)
	}
	if after := logDir(t, root); !slices.Equal(before, after) {
		t.Errorf("--dry-run without --cleanup changed the log: %v -> %v", before, after)
	}
}

// checkpoint, with and without --cleanup and --dry-run, refuses a table
// whose writer features this build does not support, as append does, and
// writes nothing. (Issue 19, item 12.)
func TestCheckpointRefusesUnsupportedWriter(t *testing.T) {
	root := smallTable(t)
	commit := `{"protocol":{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["aFeatureFromTheFuture"]}}
{"commitInfo":{"timestamp":1,"operation":"UPGRADE PROTOCOL"}}
`
	if err := os.WriteFile(filepath.Join(root, "_delta_log", "00000000000000000004.json"), []byte(commit), 0o644); err != nil {
		t.Fatal(err)
	}
	before := logDir(t, root)
	for _, args := range [][]string{{"checkpoint", root}, {"checkpoint", root, "--cleanup"}, {"checkpoint", root, "--cleanup", "--dry-run"}} {
		r := runDelta(args...)
		if r.code != exitFailure || !strings.Contains(r.stderr, "aFeatureFromTheFuture") {
			t.Errorf("delta %s: exit %d, stderr %q; want a failure naming the feature", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	if after := logDir(t, root); !slices.Equal(before, after) {
		t.Errorf("the log changed: %v -> %v", before, after)
	}
}

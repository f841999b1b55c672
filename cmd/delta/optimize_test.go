package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/godelta/delta"
	"github.com/godelta/delta/testutil"
)

func sortedLines(s string) []string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	slices.Sort(lines)
	return lines
}

func TestOptimizeCommand(t *testing.T) {
	dir := testdata(t)
	root := filepath.Join(t.TempDir(), "t")
	if err := testutil.CopyTree(filepath.Join(dir, "kernel-rs", "table-with-dv-small"), root); err != nil {
		t.Fatal(err)
	}
	before := mustRun(t, "scan", root, "--format", "csv").stdout

	// The one file has a deletion vector: it is rewritten without it.
	r := mustRun(t, "optimize", root, "--json")
	var doc struct {
		Committed bool   `json:"committed"`
		Version   *int64 `json:"version"`
		Metrics   struct {
			NumFilesAdded       int64 `json:"numFilesAdded"`
			NumFilesRemoved     int64 `json:"numFilesRemoved"`
			DeletionVectorStats struct {
				NumDeletionVectorsRemoved int64 `json:"numDeletionVectorsRemoved"`
			} `json:"deletionVectorStats"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("--json output %q: %v", r.stdout, err)
	}
	if !doc.Committed || doc.Version == nil || *doc.Version != 2 || doc.Metrics.NumFilesRemoved != 1 || doc.Metrics.NumFilesAdded != 1 || doc.Metrics.DeletionVectorStats.NumDeletionVectorsRemoved != 1 {
		t.Fatalf("optimize --json: %s", r.stdout)
	}
	if r.stderr != "" {
		t.Errorf("stderr %q: no progress bar off a terminal", r.stderr)
	}
	after := mustRun(t, "scan", root, "--format", "csv").stdout
	if !slices.Equal(sortedLines(before), sortedLines(after)) {
		t.Fatalf("rows changed:\n%s\nvs\n%s", before, after)
	}
	files := mustRun(t, "files", root, "--json").stdout
	if strings.Contains(files, `"storageType"`) {
		t.Errorf("a live file still has a deletion vector: %s", files)
	}
	r = mustRun(t, "optimize", root)
	if !strings.Contains(r.stdout, "nothing to optimize") {
		t.Errorf("second optimize: %q", r.stdout)
	}
	h := mustRun(t, "history", root, "--limit", "1", "--json").stdout
	if !strings.Contains(h, `"operation": "OPTIMIZE"`) || !strings.Contains(h, `"numDeletionVectorsRemoved": "1"`) {
		t.Errorf("history: %s", h)
	}
}

func TestOptimizeCommandUsage(t *testing.T) {
	root := filepath.Join(t.TempDir(), "t")
	mustRun(t, "create", root, "--schema", "id BIGINT, x BIGINT, p STRING", "--partition-by", "p")
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"optimize", root, "--zorder-by", "x", "--hilbert-by", "x"}, exitUsage},
		{[]string{"optimize", root, "--target-size", "lots"}, exitUsage},
		{[]string{"optimize", root, "--where", "x >"}, exitUsage},
		{[]string{"optimize", root, "--where", "x > 1"}, exitFailure}, // not a partition column
		{[]string{"optimize", root, "--zorder-by", "p"}, exitFailure}, // a partition column
		{[]string{"optimize", root, "--target-size", "64MB"}, exitOK}, // nothing to do
		{[]string{"optimize", root, "--hilbert-by", "x,id"}, exitOK},  // nothing to do
		{[]string{"optimize", filepath.Join(root, "nope")}, exitFailure},
	} {
		if r := runDelta(c.args...); r.code != c.code {
			t.Errorf("%v: exit %d, want %d (%s)", c.args, r.code, c.code, r.stderr)
		}
	}
	for in, want := range map[string]int64{"256MB": 256 << 20, "1g": 1 << 30, "1024": 1024, "1.5KiB": 1536} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v", in, got, err)
		}
	}
}

func TestCreateClusterByAndAlter(t *testing.T) {
	root := filepath.Join(t.TempDir(), "t")
	r := mustRun(t, "create", root, "--schema", "id BIGINT, x BIGINT", "--cluster-by", "x")
	if !strings.Contains(r.stdout, "clustering") {
		t.Errorf("create: %q", r.stdout)
	}
	if r := runDelta("create", filepath.Join(t.TempDir(), "u"), "--schema", "id BIGINT, p STRING", "--partition-by", "p", "--cluster-by", "id"); r.code != exitFailure {
		t.Errorf("partitioned and clustered: exit %d", r.code)
	}
	// ALTER TABLE ... CLUSTER BY through the alter command's dispatch.
	mustRun(t, "alter", root, "cluster-by", "id,x")
	mustRun(t, "alter", root, "cluster-by", "NONE")
	ctx := context.Background()
	tbl, err := delta.Open(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Version() != 2 {
		t.Fatalf("after two ALTER ... CLUSTER BY: version %d, want 2", snap.Version())
	}
}

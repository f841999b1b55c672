package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/godelta/delta"
	"github.com/godelta/delta/schema"
)

// checkTable makes a small table with a checkpoint and returns its
// directory.
func checkTable(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "t")
	sch, err := schema.ParseDDL("id BIGINT, name STRING")
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := delta.Create(ctx, dir, delta.TableSpec{Schema: sch, Properties: map[string]string{"delta.enableDeletionVectors": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	for i := range int64(2) {
		if _, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(i), schema.StringValue("a")}, {schema.LongValue(i + 10), schema.Value{}}}, delta.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tbl.Delete(ctx, "id = 10", delta.DMLOptions{InlineDVMax: -1}); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestCheckCLI(t *testing.T) {
	dir := checkTable(t)
	r := mustRun(t, "check", dir, "--deep")
	if !strings.Contains(r.stdout, "no problems found") {
		t.Errorf("clean table: %s", r.stdout)
	}
	var clean struct {
		Table    string
		OK       bool
		Deep     bool
		Version  int64
		Problems []map[string]any
		Checked  map[string]int64
		Skipped  []string
	}
	decodeOne(t, mustRun(t, "check", dir, "--json").stdout, &clean)
	if !clean.OK || clean.Deep || clean.Version != 3 || clean.Problems == nil || len(clean.Problems) != 0 ||
		clean.Checked["files"] != 2 || clean.Checked["deletionVectors"] != 1 || clean.Skipped == nil {
		t.Errorf("clean --json: %+v", clean)
	}

	// Two problems: a missing data file and a hole in the log.
	parts, _ := filepath.Glob(filepath.Join(dir, "part-*.parquet"))
	if len(parts) == 0 {
		t.Fatal("no data file")
	}
	if err := os.Remove(parts[0]); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "_delta_log", "00000000000000000001.json")); err != nil {
		t.Fatal(err)
	}
	r = runDelta("check", dir)
	if r.code != 1 || strings.Count(r.stdout, "problem: ") != 2 || !strings.Contains(r.stdout, "problem: missing-file at version 3: ") ||
		!strings.Contains(r.stdout, "problem: log at version 1: ") || !strings.Contains(r.stderr, "2 problems found") {
		t.Errorf("damaged table: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = runDelta("check", "--json", dir)
	var bad struct {
		OK       bool
		Problems []struct {
			Kind    string `json:"kind"`
			Version int64  `json:"version"`
			Path    string `json:"path"`
			Message string `json:"message"`
		}
	}
	decodeOne(t, r.stdout, &bad)
	if r.code != 1 || bad.OK || len(bad.Problems) != 2 || bad.Problems[0].Kind != "log" || bad.Problems[1].Kind != "missing-file" ||
		bad.Problems[1].Path != filepath.Base(parts[0]) || bad.Problems[1].Message == "" {
		t.Errorf("damaged table --json: exit %d %+v", r.code, bad)
	}

	// The check cannot run: exit 2.
	if r := runDelta("check", t.TempDir()); r.code != 2 || !strings.Contains(r.stderr, "no Delta log") {
		t.Errorf("not a table: exit %d: %s", r.code, r.stderr)
	}
	if r := runDelta("check"); r.code != 2 {
		t.Errorf("no TABLE: exit %d", r.code)
	}
}

// TestCheckAfterCLICommits: every commit the CLI makes (create, append,
// ALTER, DELETE, checkpoint) leaves its version checksum, and delta check
// finds each one equal to the replay of the log and exits 0.
func TestCheckAfterCLICommits(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t")
	mustRun(t, "create", dir, "--schema", "id BIGINT, v STRING")
	for i, rows := range []string{"id,v\n1,one\n2,two\n", "id,v\n3,three\n"} {
		in := filepath.Join(t.TempDir(), "rows.csv")
		if err := os.WriteFile(in, []byte(rows), 0o644); err != nil {
			t.Fatal(i, err)
		}
		mustRun(t, "append", dir, in)
	}
	mustRun(t, "alter", dir, "set", "delta.enableDeletionVectors=true")
	mustRun(t, "delete", dir, "--where", "id = 2")
	mustRun(t, "checkpoint", dir)
	const latest = 4
	for v := range int64(latest + 1) {
		if _, err := os.Stat(filepath.Join(dir, "_delta_log", fmt.Sprintf("%020d.crc", v))); err != nil {
			t.Errorf("version %d has no checksum: %v", v, err)
		}
	}
	var rep struct {
		OK       bool
		Version  int64
		Problems []map[string]any
		Checked  map[string]int64
	}
	decodeOne(t, mustRun(t, "check", dir, "--json", "--deep").stdout, &rep)
	if !rep.OK || rep.Version != latest || len(rep.Problems) != 0 || rep.Checked["checksums"] != latest+1 {
		t.Errorf("check after CLI commits: %+v", rep)
	}
}

package main

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/testutil/countstore"
)

// countlogScheme opens a local table through a countstore.Store, kept in
// countlogStores by path, so that a test can see what the CLI read.
const countlogScheme = "countlog"

var countlogStores sync.Map // path -> *countstore.Store

func init() {
	logstore.Register(countlogScheme, func(_ context.Context, uri string) (logstore.Store, error) {
		path := strings.TrimPrefix(uri, countlogScheme+"://")
		inner, err := local.New(path)
		if err != nil {
			return nil, err
		}
		s := countstore.New(inner, nil)
		countlogStores.Store(path, s)
		return s, nil
	})
}

// TestAppendReadsLogOnce: delta append loads one snapshot, and shapes the
// rows by its schema and commits on it (Table.AppendOn): before, it loaded
// a second one in Table.Append. Version checksums (<v>.crc, read or
// written by a post-commit hook) are left out of the count: it is of the
// commits, checkpoints and listings read.
func TestAppendReadsLogOnce(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "t")
	mustRun(t, "create", root, "--schema", "id BIGINT")
	csv := writeFile(t, filepath.Join(dir, "rows.csv"), "id\n1\n2\n")
	for range 3 {
		mustRun(t, "append", root, csv)
	}
	mustRun(t, "checkpoint", root)
	for range 2 {
		mustRun(t, "append", root, csv)
	}
	r := mustRun(t, "append", countlogScheme+"://"+root, csv)
	if !strings.Contains(r.stdout, "at version 6") {
		t.Fatalf("stdout %q, want an append at version 6", r.stdout)
	}
	v, ok := countlogStores.Load(root)
	if !ok {
		t.Fatal("the CLI did not open the counting store")
	}
	var got []string
	for _, req := range v.(*countstore.Store).Requests() {
		if strings.HasPrefix(req.Key, "_delta_log/") && !strings.HasSuffix(req.Key, ".crc") {
			got = append(got, req.String())
		}
	}
	slices.Sort(got)
	want := []string{
		"list _delta_log/", // Open: is there a log?
		"list _delta_log/ after _delta_log/00000000000000000003",
		// Protocol and metadata come from 00000000000000000005.crc: the
		// checkpoint is only looked up (stat), not read.
		"range _delta_log/00000000000000000004.json",
		"range _delta_log/00000000000000000005.json",
		"range _delta_log/_last_checkpoint",
		"stat _delta_log/00000000000000000003.checkpoint.parquet",
	}
	if !slices.Equal(got, want) {
		t.Errorf("delta append read the log:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

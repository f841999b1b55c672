package snapshot_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/testutil"
	"github.com/godelta/delta/testutil/countstore"
)

// The corpus table with log compaction files (written by Databricks:
// their commits' actions newest commit first) reads the same at every
// version as a copy without them, and the latest version reads the
// compaction files in place of the commits they cover.
func TestCorpusLogCompaction(t *testing.T) {
	ctx := context.Background()
	table := filepath.Join(testutil.CorpusDir(t), "kernel-rs", "compacted-log-files-table")
	if _, err := os.Stat(table); err != nil {
		t.Skipf("corpus table: %v", err)
	}
	bare := t.TempDir()
	if err := testutil.CopyTree(table, bare); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Join(bare, "_delta_log"))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".compacted.json") {
			os.Remove(filepath.Join(bare, "_delta_log", e.Name()))
		}
	}
	withStore, err := local.New(table)
	if err != nil {
		t.Fatal(err)
	}
	with := countstore.New(withStore, nil)
	without, err := local.New(bare)
	if err != nil {
		t.Fatal(err)
	}
	latest, err := snapshot.Load(ctx, without, -1)
	if err != nil {
		t.Fatal(err)
	}
	for v := int64(0); v <= latest.Version(); v++ {
		s1, err := snapshot.Load(ctx, with, v)
		if err != nil {
			t.Fatal(err)
		}
		s2, err := snapshot.Load(ctx, without, v)
		if err != nil {
			t.Fatal(err)
		}
		st1, err1 := stateOf(ctx, s1)
		st2, err2 := stateOf(ctx, s2)
		if err1 != nil || err2 != nil || !reflect.DeepEqual(st1, st2) {
			t.Errorf("version %d differs with compaction files:\n%+v (%v)\nwithout:\n%+v (%v)", v, st1, err1, st2, err2)
		}
	}

	with.Reset()
	s, err := snapshot.Load(ctx, with, -1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stateOf(ctx, s); err != nil {
		t.Fatal(err)
	}
	var read []string
	for _, r := range with.Requests() {
		if f, ok := deltalog.ParseName(r.Key); ok && r.Op != "list" && (f.Kind == deltalog.Commit || f.Kind == deltalog.Compacted) {
			read = append(read, filepath.Base(r.Key))
		}
	}
	slices.Sort(read)
	read = slices.Compact(read)
	for _, want := range []string{"00000000000000000000.00000000000000000005.compacted.json", "00000000000000000006.00000000000000000015.compacted.json", "00000000000000000025.json"} {
		if !slices.Contains(read, want) {
			t.Errorf("the latest load did not read %s; it read %q", want, read)
		}
	}
	for _, name := range read {
		if f, _ := deltalog.ParseName(name); f.Kind == deltalog.Commit && f.Version <= 15 {
			t.Errorf("the latest load read %s, which a compaction file covers", name)
		}
	}
}

package vacuum_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/testutil"
	"github.com/godelta/delta/vacuum"
)

// liveKeys returns the keys of the live files of version v.
func liveKeys(t *testing.T, tbl *delta.Table, v int64) []string {
	t.Helper()
	ctx := context.Background()
	snap, err := tbl.SnapshotAt(ctx, v)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for a, err := range snap.Files(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a.Path)
	}
	return out
}

func exists(t *testing.T, dir, key string) bool {
	t.Helper()
	_, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(key)))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

// After log cleanup has deleted commits whose removes no VACUUM handled,
// a lite VACUUM refuses, as Spark's does, instead of leaving their files
// behind for ever; a full VACUUM deletes them and records how far it went
// in _delta_log/_last_vacuum_info, Spark's file, after which lite runs
// work again, from the commit after the recorded one.
func TestVacuumLiteAfterLogCleanup(t *testing.T) {
	ctx := context.Background()
	f := build(t)
	removedEarly := append(liveKeys(t, f.tbl, 1), liveKeys(t, f.tbl, 3)...) // A, B and C: removed at +2d and +25d
	if _, err := f.tbl.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	// Log cleanup: the commits before the checkpoint at version 5 go.
	for v := int64(0); v < 5; v++ {
		for _, k := range []string{deltalog.CommitKey(v), deltalog.CRCKey(v)} {
			if err := os.Remove(filepath.Join(f.dir, filepath.FromSlash(k))); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
		}
	}
	at := func(d time.Duration) vacuum.Options {
		now := f.base.Add(d)
		return vacuum.Options{Now: func() time.Time { return now }}
	}
	lite := func(d time.Duration) vacuum.Options {
		o := at(d)
		o.Lite = true
		return o
	}
	info := filepath.Join(f.dir, "_delta_log", "_last_vacuum_info")

	// No VACUUM recorded anything, and Spark's record of a FULL run ({})
	// or of a run before the cleanup says as little: refused.
	for _, content := range []string{"", `{}`, `{"latestCommitVersionOutsideOfRetentionWindow":3}`, `not json`} {
		if content != "" {
			write(t, info, content)
		}
		res, err := vacuum.Vacuum(ctx, f.snap(t), lite(40*day))
		var le *vacuum.LiteError
		if !errors.Is(err, vacuum.ErrCannotVacuumLite) || !errors.As(err, &le) || le.Earliest != 5 || !strings.Contains(err.Error(), "run a full VACUUM") {
			t.Fatalf("lite with _last_vacuum_info %q: %v, want a *LiteError from version 5 telling to run a full VACUUM", content, err)
		}
		if res.StartVersion != -1 || f.snap(t).Version() != 5 {
			t.Fatalf("a refused lite VACUUM committed: %+v", res)
		}
		for _, k := range removedEarly {
			if !exists(t, f.dir, k) {
				t.Fatalf("a refused lite VACUUM deleted %s", k)
			}
		}
		os.Remove(info)
	}

	// A full VACUUM deletes A, B and C, and records version 5, the
	// newest commit before its cut-off (+33d).
	res, err := vacuum.Vacuum(ctx, f.snap(t), at(40*day))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range removedEarly {
		if exists(t, f.dir, k) {
			t.Fatalf("full VACUUM left %s", k)
		}
	}
	if b, err := os.ReadFile(info); err != nil || string(b) != `{"latestCommitVersionOutsideOfRetentionWindow":5}`+"\n" || res.LastVacuumInfo != 5 {
		t.Fatalf("_last_vacuum_info after the full VACUUM: %q %v (result %d)", b, err, res.LastVacuumInfo)
	}

	// New removes after it (version 9, at +42d) are found by lite mode,
	// which reads the commits from version 6 on.
	clock := func(d time.Duration) delta.TxnOptions {
		ts := f.base.Add(d)
		return delta.TxnOptions{Clock: func() time.Time { return ts }}
	}
	if _, err := f.tbl.AppendRows(ctx, rowsOf("e", 50), delta.WriteOptions{Txn: clock(41 * day)}); err != nil { // 8
		t.Fatal(err)
	}
	before := liveKeys(t, f.tbl, 8)
	if _, err := f.tbl.OverwriteRows(ctx, rowsOf("f", 60), delta.OverwriteOptions{WriteOptions: delta.WriteOptions{Txn: clock(42 * day)}}); err != nil { // 9
		t.Fatal(err)
	}
	for v, d := range map[int64]time.Duration{8: 41 * day, 9: 42 * day} {
		ts := f.base.Add(d)
		if err := os.Chtimes(filepath.Join(f.dir, deltalog.CommitKey(v)), ts, ts); err != nil {
			t.Fatal(err)
		}
	}
	res, err = vacuum.Vacuum(ctx, f.snap(t), lite(60*day))
	if err != nil {
		t.Fatalf("lite after a full VACUUM: %v", err)
	}
	if res.Deleted != int64(len(before)) {
		t.Fatalf("lite deleted %d files (%+v), want the %d live at version 8", res.Deleted, res.Files, len(before))
	}
	for _, k := range before {
		if exists(t, f.dir, k) {
			t.Fatalf("lite VACUUM left %s", k)
		}
	}
	for _, k := range liveKeys(t, f.tbl, res.EndVersion) {
		if !exists(t, f.dir, k) {
			t.Fatalf("lite VACUUM deleted the live file %s", k)
		}
	}
	if b, err := os.ReadFile(info); err != nil || string(b) != `{"latestCommitVersionOutsideOfRetentionWindow":9}`+"\n" {
		t.Fatalf("_last_vacuum_info after the lite VACUUM: %q %v", b, err)
	}
}

// Lite mode deletes what the commits name, as Spark's LITE does: the
// files their removes deleted and the change-data files their cdc actions
// wrote (a delta-rs corpus table with an UPDATE that wrote one).
func TestVacuumLiteChangeData(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := testutil.CopyTree(filepath.Join(testutil.CorpusDir(t), "delta-rs", "simple_table_with_cdc"), dir); err != nil {
		t.Fatal(err)
	}
	tbl, err := delta.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	want := []string{
		"_change_data/cdc-00000-a846ce80-2eec-484d-bef7-0e63557786ca.c000.snappy.parquet", // cdc of version 2
		"part-00000-996384f7-3fc5-4a5f-9921-6e56269ec2c9-c000.snappy.parquet",             // removed by version 2
	}
	live := "part-00000-7444aec4-710a-4a4c-8abe-3323499043e9.c000.snappy.parquet"
	now := time.Now().Add(time.Hour)
	res, err := tbl.Vacuum(ctx, vacuum.Options{Lite: true, RetentionSet: true, Force: true, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range res.Files {
		got = append(got, f.Key)
	}
	if !slices.Equal(got, want) || res.Deleted != 2 {
		t.Fatalf("lite VACUUM deleted %q (%d), want %q", got, res.Deleted, want)
	}
	for _, k := range want {
		if exists(t, dir, k) {
			t.Errorf("%s survived", k)
		}
	}
	if !exists(t, dir, live) {
		t.Fatalf("the live file went")
	}
	if b, err := os.ReadFile(filepath.Join(dir, "_delta_log", "_last_vacuum_info")); err != nil || string(b) != `{"latestCommitVersionOutsideOfRetentionWindow":2}`+"\n" {
		t.Fatalf("_last_vacuum_info %q %v", b, err)
	}
}

package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/godelta/delta"
	"github.com/godelta/delta/schema"
)

// maintainTable makes a table at dir with versions 1 (ids 1, 2 in p=a)
// and 2 (an overwrite to id 3 in p=b), committed 10 days ago.
func maintainTable(t *testing.T, dir string) {
	t.Helper()
	ctx := context.Background()
	tbl, err := delta.Create(ctx, dir, delta.TableSpec{
		Schema: &schema.StructType{Fields: []schema.StructField{
			{Name: "id", Type: schema.Long, Nullable: true},
			{Name: "p", Type: schema.String, Nullable: true},
		}},
		PartitionColumns: []string{"p"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	then := time.Now().Add(-10 * 24 * time.Hour)
	o := delta.WriteOptions{Txn: delta.TxnOptions{Clock: func() time.Time { return then }}}
	row := func(id int64, p string) []schema.Value {
		return []schema.Value{schema.LongValue(id), schema.StringValue(p)}
	}
	if _, err := tbl.AppendRows(ctx, [][]schema.Value{row(1, "a"), row(2, "a")}, o); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.OverwriteRows(ctx, [][]schema.Value{row(3, "b")}, delta.OverwriteOptions{WriteOptions: o}); err != nil {
		t.Fatal(err)
	}
	// Data files as old as their commits.
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			os.Chtimes(p, then, then)
		}
		return nil
	})
}

// scanIDs returns the sorted ids of table, scanned with the extra scan
// arguments (--version V, say).
func scanIDs(t *testing.T, table string, extra ...string) []string {
	t.Helper()
	r := mustRun(t, append([]string{"scan", table, "--columns", "id", "--format", "csv"}, extra...)...)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")[1:]
	slices.Sort(lines)
	return lines
}

func TestMaintenanceCommands(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "t")
	maintainTable(t, dir)

	// restore needs a version or a time.
	if r := runDelta("restore", dir); r.code != exitUsage {
		t.Fatalf("restore without a version: exit %d", r.code)
	}
	// A retention below the table's is refused without --force.
	r := runDelta("vacuum", dir, "--retain", "1h")
	if r.code != exitFailure || !strings.Contains(r.stderr, "--force") {
		t.Fatalf("vacuum --retain 1h: exit %d, %q", r.code, r.stderr)
	}
	checkErrorLine(t, "vacuum --retain 1h", r.stderr)

	// A dry run with the default 7 days finds version 1's file.
	var vac vacuumJSON
	decodeOne(t, mustRun(t, "vacuum", dir, "--dry-run", "--json").stdout, &vac)
	if !vac.DryRun || vac.NumFiles != 1 || vac.NumDeletedFiles != 0 || vac.StartVersion != nil || !strings.HasPrefix(vac.Files[0].Path, "p=a/") {
		t.Fatalf("dry run %+v", vac)
	}
	if _, err := os.Stat(filepath.Join(dir, vac.Files[0].Path)); err != nil {
		t.Fatalf("a dry run deleted %s", vac.Files[0].Path)
	}

	// Before vacuuming, clone and restore version 1.
	var cl cloneJSON
	decodeOne(t, mustRun(t, "clone", dir, filepath.Join(base, "c"), "--version", "1", "--json").stdout, &cl)
	if cl.Version != 0 || cl.SourceVersion != 1 || cl.SourceNumOfFiles != 1 || cl.NumCopiedFiles != 0 {
		t.Fatalf("clone %+v", cl)
	}
	if got := scanIDs(t, filepath.Join(base, "c")); !slices.Equal(got, []string{"1", "2"}) {
		t.Fatalf("clone reads %v", got)
	}
	var rs restoreJSON
	decodeOne(t, mustRun(t, "restore", dir, "--version", "1", "--json").stdout, &rs)
	if rs.Version != 3 || rs.RestoredVersion != 1 || rs.NumRestoredFiles != 1 || rs.NumRemovedFiles != 1 {
		t.Fatalf("restore %+v", rs)
	}
	if got := scanIDs(t, dir); !slices.Equal(got, []string{"1", "2"}) {
		t.Fatalf("restored table reads %v", got)
	}
	// Version 2's file is now tombstoned, but recently: a forced zero
	// retention deletes it, and the restored table still reads.
	r = mustRun(t, "vacuum", dir, "--retain", "0h", "--force")
	if !strings.HasPrefix(r.stdout, "vacuum (full): deleted 1 of 1 files") {
		t.Fatalf("vacuum: %q", r.stdout)
	}
	if got := scanIDs(t, dir); !slices.Equal(got, []string{"1", "2"}) {
		t.Fatalf("after vacuum the table reads %v", got)
	}
	// Restoring version 2 now fails: its file is gone.
	r = runDelta("restore", dir, "--version", "2")
	if r.code != exitFailure || !strings.Contains(r.stderr, "missing") {
		t.Fatalf("restore of a vacuumed version: exit %d %q", r.code, r.stderr)
	}
	// The clone still reads, and its lite vacuum deletes nothing of ours.
	decodeOne(t, mustRun(t, "vacuum", filepath.Join(base, "c"), "--lite", "--retain", "0d", "--force", "--json").stdout, &vac)
	if vac.NumFiles != 0 || !vac.Lite || vac.StartVersion == nil {
		t.Fatalf("clone vacuum %+v", vac)
	}

	var mf manifestJSON
	decodeOne(t, mustRun(t, "generate-manifest", dir, "--json").stdout, &mf)
	if mf.NumFiles != 1 || !slices.Equal(mf.Written, []string{"_symlink_format_manifest/p=a/manifest"}) {
		t.Fatalf("manifest %+v", mf)
	}
	b, err := os.ReadFile(filepath.Join(dir, "_symlink_format_manifest", "p=a", "manifest"))
	if err != nil || !strings.HasPrefix(string(b), "file:"+filepath.ToSlash(dir)+"/p=a/part-") {
		t.Fatalf("manifest content %q (%v)", b, err)
	}
}

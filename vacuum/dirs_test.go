package vacuum_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/godelta/delta/vacuum"
)

// A full VACUUM deletes the directories it leaves empty, and those that
// were empty, as Spark's does; never the root, _delta_log, a hidden
// directory, a directory that still holds a file, or anything through a
// symbolic link.
func TestVacuumRemovesEmptyDirs(t *testing.T) {
	ctx := context.Background()
	f := build(t)
	outside := t.TempDir()
	if err := os.MkdirAll(filepath.Join(outside, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "empty"), filepath.Join(f.dir, "linkempty")); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"p=empty", "p=x/q=1", "_hidden_empty", "p=d/.hidden_empty"} {
		if err := os.MkdirAll(filepath.Join(f.dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(f.dir, "p=zz", "part-orphan.parquet"), "orphan")
	fresh := filepath.Join(f.dir, "p=new", "part-fresh.parquet") // too new to go
	write(t, fresh, "in flight")
	if ts := f.base.Add(35 * day); os.Chtimes(fresh, ts, ts) != nil {
		t.Fatal("chtimes")
	}
	now := f.base.Add(40 * day) // cut-off +33d: A, B and C go
	opts := vacuum.Options{Now: func() time.Time { return now }}

	isDir := func(rel string) bool {
		fi, err := os.Lstat(filepath.Join(f.dir, rel))
		return err == nil && fi.IsDir()
	}
	gone := []string{"p=b", "p=c", "p=empty", "p=x/q=1", "p=x", "p=zz"}
	stay := []string{"p=a", "p=d", "p=new", "_hidden_empty", "p=d/.hidden_empty", "_delta_log"}

	dry := opts
	dry.DryRun = true
	if res, err := vacuum.Vacuum(ctx, f.snap(t), dry); err != nil || res.DeletedDirs != 0 {
		t.Fatalf("dry run: %v, %+v", err, res)
	}
	for _, d := range gone {
		if !isDir(d) {
			t.Fatalf("the dry run removed %s", d)
		}
	}

	res, err := vacuum.Vacuum(ctx, f.snap(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range gone {
		if isDir(d) {
			t.Errorf("empty directory %s survived", d)
		}
	}
	for _, d := range stay {
		if !isDir(d) {
			t.Errorf("directory %s was removed", d)
		}
	}
	if res.DeletedDirs != int64(len(gone)) {
		t.Errorf("DeletedDirs %d, want %d", res.DeletedDirs, len(gone))
	}
	if fi, err := os.Lstat(filepath.Join(f.dir, "linkempty")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link to an empty directory outside: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(outside, "empty")); err != nil || !fi.IsDir() {
		t.Errorf("the empty directory outside: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a file newer than the cut-off went: %v", err)
	}
	if _, err := os.Stat(f.dir); err != nil {
		t.Fatal(err)
	}
	// The table still reads.
	if _, err := readIDs(ctx, f.tbl, res.EndVersion); err != nil {
		t.Fatal(err)
	}
}

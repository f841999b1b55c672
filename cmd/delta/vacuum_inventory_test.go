package main

import (
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// vacuum --inventory FILE finds from a CSV inventory what the listing
// finds, skips (and counts) a row outside the root, and deletes; a bad
// row or --lite is refused before anything is deleted.
func TestVacuumInventoryCLI(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "t")
	maintainTable(t, dir)
	old := time.Now().Add(-10 * 24 * time.Hour)
	orphan := filepath.Join(dir, "p=a", "orphan.parquet")
	if err := os.WriteFile(orphan, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(orphan, old, old)

	var listed vacuumJSON
	decodeOne(t, mustRun(t, "vacuum", dir, "--dry-run", "--json").stdout, &listed)

	csv := "path,length,isDir,modificationTime\n"
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		fi, _ := d.Info()
		u := url.URL{Scheme: "file", Path: filepath.ToSlash(p)}
		csv += u.String() + "," + strconv.FormatInt(fi.Size(), 10) + "," + strconv.FormatBool(d.IsDir()) + "," + strconv.FormatInt(fi.ModTime().UnixMilli(), 10) + "\n"
		return nil
	})
	csv += "file:///elsewhere/p=a/x.parquet,1,false,0\n"
	inv := writeFile(t, filepath.Join(base, "inventory.csv"), csv)

	var got vacuumJSON
	decodeOne(t, mustRun(t, "vacuum", dir, "--inventory", inv, "--dry-run", "--json").stdout, &got)
	paths := func(v vacuumJSON) []string {
		var out []string
		for _, f := range v.Files {
			out = append(out, f.Path)
		}
		return out
	}
	if !slices.Equal(paths(got), paths(listed)) || got.InventorySkipped != 1 || !slices.Contains(paths(got), "p=a/orphan.parquet") {
		t.Fatalf("with the inventory %+v; the listing %+v", got, listed)
	}

	bad := writeFile(t, filepath.Join(base, "bad.csv"), "path,length,isDir,modificationTime\n"+"file://"+filepath.ToSlash(orphan)+",1,false,\n")
	if r := runDelta("vacuum", dir, "--inventory", bad); r.code != exitFailure || !strings.Contains(r.stderr, "line 2") {
		t.Fatalf("a row without a time: exit %d, %q", r.code, r.stderr)
	}
	if r := runDelta("vacuum", dir, "--inventory", inv, "--lite"); r.code != exitUsage {
		t.Fatalf("--inventory --lite: exit %d, %q", r.code, r.stderr)
	}
	if _, err := os.Stat(orphan); err != nil {
		t.Fatalf("a refused run deleted: %v", err)
	}

	r := mustRun(t, "vacuum", dir, "--inventory", inv)
	if !strings.Contains(r.stdout, "1 inventory entries are not under the table's root") {
		t.Errorf("vacuum --inventory: %q", r.stdout)
	}
	if _, err := os.Stat(orphan); err == nil {
		t.Error("the orphan is still there")
	}
}

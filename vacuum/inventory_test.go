package vacuum_test

import (
	"context"
	"errors"
	"io/fs"
	"iter"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/vacuum"
)

// inventoryOf lists root as an inventory report would: every file and
// directory, as file:// URIs, with sizes and times.
func inventoryOf(t *testing.T, root string) []vacuum.InventoryEntry {
	t.Helper()
	var out []vacuum.InventoryEntry
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		u := url.URL{Scheme: "file", Path: filepath.ToSlash(p)}
		out = append(out, vacuum.InventoryEntry{Path: u.String(), Size: fi.Size(), IsDir: d.IsDir(), ModTime: fi.ModTime()})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func entries(es []vacuum.InventoryEntry) iter.Seq2[vacuum.InventoryEntry, error] {
	return func(yield func(vacuum.InventoryEntry, error) bool) {
		for _, e := range es {
			if !yield(e, nil) {
				return
			}
		}
	}
}

func keys(fs []vacuum.File) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Key)
	}
	return out
}

// VACUUM USING INVENTORY finds what the listing finds from an inventory
// of the same tree, skips entries outside the root, never deletes what the
// inventory omits, keeps other tables' files and hidden directories, and
// leaves every version in the window readable.
func TestVacuumInventory(t *testing.T) {
	ctx := context.Background()
	f := build(t)
	write(t, filepath.Join(f.dir, "p=a", "orphan-1.parquet"), "orphan")
	write(t, filepath.Join(f.dir, "p=zz", "orphan-2.parquet"), "orphan")
	write(t, filepath.Join(f.dir, "nested", "_delta_log", "00000000000000000000.json"), "{}")
	write(t, filepath.Join(f.dir, "nested", "x.parquet"), "another table's")
	write(t, filepath.Join(f.dir, "_tmp", "x.parquet"), "hidden")

	listed, err := vacuum.Vacuum(ctx, f.snap(t), func() vacuum.Options { o := f.opts(); o.DryRun = true; return o }())
	if err != nil {
		t.Fatal(err)
	}
	inv := inventoryOf(t, f.dir)
	outside := []vacuum.InventoryEntry{
		{Path: "file:///elsewhere/p=a/x.parquet", Size: 1, ModTime: f.base},
		{Path: "p=a/relative.parquet", Size: 1, ModTime: f.base},
	}
	o := f.opts()
	o.DryRun = true
	o.Inventory = entries(append(slices.Clone(inv), outside...))
	got, err := vacuum.Vacuum(ctx, f.snap(t), o)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(keys(got.Files), keys(listed.Files)) || got.Bytes != listed.Bytes {
		t.Fatalf("with the inventory: %q (%d bytes); the listing: %q (%d bytes)", keys(got.Files), got.Bytes, keys(listed.Files), listed.Bytes)
	}
	if got.InventorySkipped != 2 {
		t.Errorf("InventorySkipped = %d, want 2", got.InventorySkipped)
	}
	for _, k := range []string{"p=a/orphan-1.parquet", "p=zz/orphan-2.parquet"} {
		if !slices.Contains(keys(got.Files), k) {
			t.Errorf("the orphan %s is not found", k)
		}
	}

	// A file the inventory omits stays.
	var partial []vacuum.InventoryEntry
	for _, e := range inv {
		if filepath.Base(e.Path) != "orphan-1.parquet" {
			partial = append(partial, e)
		}
	}
	o.Inventory = entries(partial)
	got, err = vacuum.Vacuum(ctx, f.snap(t), o)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(keys(got.Files), "p=a/orphan-1.parquet") {
		t.Error("a file the inventory omits would be deleted")
	}

	// The deleting run.
	o.DryRun = false
	o.Inventory = entries(inv)
	res, err := vacuum.Vacuum(ctx, f.snap(t), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Deleted != int64(len(listed.Files)) {
		t.Fatalf("deleted %d, want %d", res.Deleted, len(listed.Files))
	}
	for _, p := range []string{"nested/x.parquet", "nested/_delta_log/00000000000000000000.json", "_tmp/x.parquet"} {
		if _, err := os.Stat(filepath.Join(f.dir, p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(f.dir, "p=zz")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the emptied directory p=zz is still there: %v", err)
	}
	for v := int64(4); v <= 5; v++ {
		if ids, err := readIDs(ctx, f.tbl, v); err != nil || !slices.Equal(ids, f.ids[v]) {
			t.Fatalf("version %d: %v %v", v, ids, err)
		}
	}
}

func TestVacuumInventoryRefuses(t *testing.T) {
	ctx := context.Background()
	f := build(t)
	for _, tc := range []struct {
		name string
		lite bool
		inv  []vacuum.InventoryEntry
	}{
		{"lite", true, nil},
		{"no time", false, []vacuum.InventoryEntry{{Path: (&url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(f.dir, "p=a", "x.parquet"))}).String(), Size: 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := f.opts()
			o.Lite, o.Inventory = tc.lite, entries(tc.inv)
			if _, err := vacuum.Vacuum(ctx, f.snap(t), o); !errors.Is(err, deltaerr.ErrInvalidArgument) {
				t.Fatalf("err = %v, want ErrInvalidArgument", err)
			}
		})
	}
	// An inventory that cannot be read stops the VACUUM before it deletes.
	o := f.opts()
	boom := errors.New("boom")
	o.Inventory = func(yield func(vacuum.InventoryEntry, error) bool) { yield(vacuum.InventoryEntry{}, boom) }
	res, err := vacuum.Vacuum(ctx, f.snap(t), o)
	if !errors.Is(err, boom) || res.Deleted != 0 || res.StartVersion != -1 {
		t.Fatalf("err = %v, result %+v", err, res)
	}
}

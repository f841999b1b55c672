package delta

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/schema"
)

// cleanupTable builds a table of versions 0..12, one row appended per
// version from 1 on, with checkpoints at 5 and 10, whose commits 0..11
// are older than the 30-day log retention: the cut-off commit is 11 and
// the cut-off checkpoint 10.
func cleanupTable(t *testing.T, props map[string]string) string {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "t")
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.Long, Nullable: true},
		{Name: "s", Type: schema.String, Nullable: true},
	}}
	p := map[string]string{"delta.checkpointInterval": "5"}
	for k, v := range props {
		p[k] = v
	}
	tbl, err := Create(ctx, dir, TableSpec{Schema: sch, Properties: p})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	for i := range int64(12) {
		res, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(i), schema.StringValue(fmt.Sprintf("row %d", i))}}, WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if res.PostCommit.Err != nil {
			t.Fatal(res.PostCommit.Err)
		}
	}
	for _, v := range []int{5, 10} {
		if m, _ := filepath.Glob(filepath.Join(dir, "_delta_log", fmt.Sprintf("%020d.checkpoint.*", v))); len(m) == 0 {
			t.Fatalf("no checkpoint at %d", v)
		}
	}
	old := time.Now().Add(-40 * 24 * time.Hour)
	for v := range 12 {
		if err := os.Chtimes(filepath.Join(dir, "_delta_log", fmt.Sprintf("%020d.json", v)), old, old); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// readVersionsFrom loads every version from..12 of the table at dir and reads
// all its rows: version v holds v rows.
func readVersionsFrom(t *testing.T, dir string, from int64) error {
	t.Helper()
	ctx := context.Background()
	tbl, err := Open(ctx, dir)
	if err != nil {
		return err
	}
	defer tbl.Close()
	for v := from; v <= 12; v++ {
		snap, err := tbl.SnapshotAt(ctx, v)
		if err != nil {
			return fmt.Errorf("version %d: %w", v, err)
		}
		s, err := tbl.Scan(snap, ScanOptions{})
		if err != nil {
			return fmt.Errorf("version %d: %w", v, err)
		}
		n := int64(0)
		for _, err := range s.Rows(ctx) {
			if err != nil {
				return fmt.Errorf("version %d: %w", v, err)
			}
			n++
		}
		if n != v {
			return fmt.Errorf("version %d has %d rows, want %d", v, n, v)
		}
	}
	return nil
}

// Cleanup relies only on a checkpoint it has read in full. With bytes of
// one data page of the cut-off checkpoint damaged (its footer intact),
// readers pass over that checkpoint and replay the commits before it, so
// Cleanup must keep them: it falls back to the older checkpoint at 5.
// Swept over offsets through the checkpoint's data pages; after each
// cleanup every version from the cut-off checkpoint on must load and read
// in full. (Issue 19, item 10.)
func TestCleanupDamagedCheckpointSweep(t *testing.T) {
	ctx := context.Background()
	pristine := cleanupTable(t, nil)
	cpName := filepath.Join("_delta_log", fmt.Sprintf("%020d.checkpoint.parquet", 10))
	data, err := os.ReadFile(filepath.Join(pristine, cpName))
	if err != nil {
		t.Fatal(err)
	}
	// The pages lie between the leading magic and the footer.
	footerLen := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	pagesEnd := len(data) - 8 - footerLen
	const cases = 48
	fellBack, kept := 0, 0
	for i := range cases {
		off := 4 + (pagesEnd-4-16)*i/(cases-1)
		t.Run(fmt.Sprintf("offset %d", off), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "t")
			if err := os.CopyFS(dir, os.DirFS(pristine)); err != nil {
				t.Fatal(err)
			}
			old := time.Now().Add(-40 * 24 * time.Hour)
			for v := range 12 {
				os.Chtimes(filepath.Join(dir, "_delta_log", fmt.Sprintf("%020d.json", v)), old, old)
			}
			bad := append([]byte(nil), data...)
			for j := off; j < off+16; j++ {
				bad[j] ^= 0xA5
			}
			if err := os.WriteFile(filepath.Join(dir, cpName), bad, 0o644); err != nil {
				t.Fatal(err)
			}
			tbl, err := Open(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			res, err := tbl.CleanupLog(ctx, false)
			tbl.Close()
			if err != nil {
				t.Fatalf("cleanup: %v", err)
			}
			switch res.CheckpointVersion {
			case 5:
				fellBack++
			case 10:
				kept++
			default:
				t.Errorf("cleanup kept checkpoint %d, want 5 or 10", res.CheckpointVersion)
			}
			// The retention window starts at the cut-off commit 11; every
			// version from the kept checkpoint on must read.
			if err := readVersionsFrom(t, dir, res.CheckpointVersion); err != nil {
				t.Errorf("after cleanup (kept checkpoint %d, deleted %d files): %v", res.CheckpointVersion, len(res.Deleted), err)
			}
		})
	}
	t.Logf("%d offsets: %d damaged the checkpoint beyond reading (cleanup fell back to 5), %d left it readable (cleanup kept 10)", cases, fellBack, kept)
	if fellBack == 0 {
		t.Error("no offset damaged the checkpoint: the sweep tests nothing")
	}
}

// With every checkpoint before the cut-off commit damaged, Cleanup has
// none to rely on: it refuses with ErrCorrupt and deletes nothing.
func TestCleanupRefusesWhenNoCheckpointReads(t *testing.T) {
	ctx := context.Background()
	dir := cleanupTable(t, nil)
	for _, v := range []int{5, 10} {
		p := filepath.Join(dir, "_delta_log", fmt.Sprintf("%020d.checkpoint.parquet", v))
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		pagesEnd := len(data) - 8 - int(binary.LittleEndian.Uint32(data[len(data)-8:]))
		for j := 4; j < pagesEnd; j++ {
			data[j] ^= 0xA5
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := os.ReadDir(filepath.Join(dir, "_delta_log"))
	tbl, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	res, err := tbl.CleanupLog(ctx, false)
	if !errors.Is(err, deltaerr.ErrCorrupt) || !slices.Equal(res.Unreadable, []int64{10, 5}) || len(res.Deleted) != 0 {
		t.Fatalf("cleanup: %+v, %v; want ErrCorrupt, checkpoints 10 and 5 unreadable, nothing deleted", res, err)
	}
	after, _ := os.ReadDir(filepath.Join(dir, "_delta_log"))
	if len(after) != len(before) {
		t.Errorf("%d log entries before, %d after", len(before), len(after))
	}
	if err := readVersionsFrom(t, dir, 0); err != nil {
		t.Error(err)
	}
}

// Cleanup never follows _delta_log/_sidecars out of the table: on a table
// without V2 checkpoints it does not even list it, and on one with them
// the store refuses to list through the link, so Cleanup fails before it
// deletes anything. The old files in the linked directory, named like
// sidecars, all survive. (Issue 19, item 11.)
func TestCleanupSymlinkedSidecarsOutOfTable(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	ctx := context.Background()
	tests := []struct {
		name    string
		props   map[string]string
		wantErr error // nil: the cleanup runs
	}{
		{"classic table", nil, nil},
		{"v2 table", map[string]string{"delta.checkpointPolicy": "v2"}, logstore.ErrPermission},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := cleanupTable(t, tc.props)
			sidecars := filepath.Join(dir, "_delta_log", "_sidecars")
			if own, _ := os.ReadDir(sidecars); len(own) > 0 {
				t.Fatalf("the table has sidecars of its own: %v", own)
			}
			os.Remove(sidecars)
			elsewhere := t.TempDir()
			old := time.Now().Add(-40 * 24 * time.Hour)
			names := []string{"00010203-0405-4607-8809-0a0b0c0d0e0f.parquet", "precious.parquet", "notes.txt"}
			for _, n := range names {
				p := filepath.Join(elsewhere, n)
				if err := os.WriteFile(p, []byte("not the table's"), 0o644); err != nil {
					t.Fatal(err)
				}
				os.Chtimes(p, old, old)
			}
			if err := os.Symlink(elsewhere, sidecars); err != nil {
				t.Fatal(err)
			}
			tbl, err := Open(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer tbl.Close()
			before, _ := os.ReadDir(filepath.Join(dir, "_delta_log"))
			res, err := tbl.CleanupLog(ctx, false)
			after, _ := os.ReadDir(filepath.Join(dir, "_delta_log"))
			switch {
			case tc.wantErr == nil && (err != nil || res.CheckpointVersion != 10):
				t.Fatalf("cleanup: %+v, %v; want checkpoint 10 kept", res, err)
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Fatalf("cleanup: %v, want %v", err, tc.wantErr)
			case tc.wantErr != nil && (len(res.Deleted) != 0 || len(after) != len(before)):
				t.Fatalf("a refused cleanup deleted %v", res.Deleted)
			}
			for _, n := range names {
				if _, err := os.Stat(filepath.Join(elsewhere, n)); err != nil {
					t.Errorf("outside the table: %v", err)
				}
			}
			if err := readVersionsFrom(t, dir, 10); err != nil {
				t.Error(err)
			}
		})
	}
}

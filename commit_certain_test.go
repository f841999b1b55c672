package delta

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/txn"
)

// dataFiles lists the files of the table at root outside _delta_log.
func dataFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "_delta_log" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// commitRefuser fails every PutIfAbsent of a commit file with err.
type commitRefuser struct {
	logstore.Store
	err  error
	puts atomic.Int32
}

func (s *commitRefuser) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	if strings.HasPrefix(key, "_delta_log/") && strings.HasSuffix(key, ".json") {
		s.puts.Add(1)
		return s.err
	}
	return s.Store.PutIfAbsent(ctx, key, data)
}

var certainSchema = &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long, Nullable: true}}}

// TestAppendCertainFailure: an append whose commit put certainly failed
// reports the cause at once (one put), not ErrCommitUnknown, and deletes the
// data file it wrote (issue 19, item 20: before, 101 attempts, "outcome
// unknown", and with EACCES the data file was left behind).
func TestAppendCertainFailure(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name  string
		err   error
		cause error
	}{
		{"permission", &logstore.OpError{Op: "put if absent", Kind: logstore.ErrPermission, Err: &os.PathError{Op: "open", Path: "x", Err: syscall.EACCES}}, syscall.EACCES},
		{"disk full", &logstore.OpError{Op: "put if absent", Kind: logstore.ErrNotWritten, Err: syscall.ENOSPC}, syscall.ENOSPC},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			inner, err := local.New(root)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := CreateStore(ctx, "t", inner, TableSpec{Schema: certainSchema}); err != nil {
				t.Fatal(err)
			}
			rs := &commitRefuser{Store: inner, err: tt.err}
			tbl, err := OpenStore(ctx, "t", rs)
			if err != nil {
				t.Fatal(err)
			}
			_, err = tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(1)}}, WriteOptions{})
			if !errors.Is(err, tt.cause) || errors.Is(err, txn.ErrCommitUnknown) {
				t.Fatalf("err = %v, want the cause %v and not ErrCommitUnknown", err, tt.cause)
			}
			if n := rs.puts.Load(); n != 1 {
				t.Errorf("%d commit puts, want 1", n)
			}
			if files := dataFiles(t, root); len(files) != 0 {
				t.Errorf("data files left behind: %v", files)
			}
		})
	}
}

// TestAppendDiskFull: the same on a real full disk: _delta_log is a tiny
// tmpfs, filled, so the local store cannot even write the commit's
// temporary file (ENOSPC). Skipped where the test may not mount.
func TestAppendDiskFull(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	tbl, err := Create(ctx, root, TableSpec{Schema: certainSchema})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	logDir := filepath.Join(root, "_delta_log")
	commit0, err := os.ReadFile(filepath.Join(logDir, filepath.Base(deltalog.CommitKey(0))))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", logDir, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(logDir, 0) })
	if err := os.WriteFile(filepath.Join(logDir, filepath.Base(deltalog.CommitKey(0))), commit0, 0o644); err != nil {
		t.Fatal(err)
	}
	filler, err := os.Create(filepath.Join(logDir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	for buf := make([]byte, 1024); ; {
		if _, err := filler.Write(buf); err != nil {
			break
		}
	}
	filler.Close()
	_, err = tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(1)}}, WriteOptions{})
	if !errors.Is(err, syscall.ENOSPC) || !errors.Is(err, logstore.ErrNotWritten) || errors.Is(err, txn.ErrCommitUnknown) {
		t.Fatalf("err = %v, want ENOSPC, ErrNotWritten and not ErrCommitUnknown", err)
	}
	if files := dataFiles(t, root); len(files) != 0 {
		t.Errorf("data files left behind: %v", files)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil || snap.Version() != 0 {
		t.Fatalf("after the failed append: version %v, %v", snap, err)
	}
}

// TestAppendNoRows: an empty or header-only input commits nothing and says
// so with ErrNoRows (issue 19, item 20: before, it made an empty commit).
func TestAppendNoRows(t *testing.T) {
	ctx := context.Background()
	for name, batches := range map[string]func(func(RowBatch, error) bool){
		"no batch":       Rows(nil),
		"an empty batch": func(yield func(RowBatch, error) bool) { yield(RowBatch{Columns: make([][]schema.Value, 1)}, nil) },
		"several empties": func(yield func(RowBatch, error) bool) {
			for range 3 {
				if !yield(RowBatch{Columns: make([][]schema.Value, 1)}, nil) {
					return
				}
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			tbl, err := Create(ctx, root, TableSpec{Schema: certainSchema})
			if err != nil {
				t.Fatal(err)
			}
			defer tbl.Close()
			res, err := tbl.Append(ctx, batches, WriteOptions{})
			if !errors.Is(err, ErrNoRows) || res.Version != 0 {
				t.Fatalf("Append = %+v, %v; want ErrNoRows", res, err)
			}
			snap, err := tbl.Snapshot(ctx)
			if err != nil || snap.Version() != 0 {
				t.Fatalf("version after an empty append: %v, %v", snap.Version(), err)
			}
			if files := dataFiles(t, root); len(files) != 0 {
				t.Errorf("data files written: %v", files)
			}
		})
	}
}

package local_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/logstore/memory"
)

func TestRemoveEmptyDir(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	outside := t.TempDir()
	s, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"full=1/f", "nested=1/b=x/f", "top", "_delta_log/00000000000000000000.json"} {
		if err := s.Put(ctx, k, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{filepath.Join(root, "empty=1"), filepath.Join(root, "nested=1", "b=y"), filepath.Join(root, "linked"), filepath.Join(outside, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "linked"), filepath.Join(root, "in")); err != nil {
		t.Fatal(err)
	}
	isDir := func(rel string) bool {
		fi, err := os.Lstat(filepath.Join(root, rel))
		return err == nil && fi.IsDir()
	}
	for _, tc := range []struct {
		dir     string
		removed bool
		err     error
		stays   string // a path (under root, or absolute) that must remain
	}{
		{dir: "empty=1/", removed: true},
		{dir: "full=1/", stays: "full=1/f"},
		{dir: "nested=1/", stays: "nested=1/b=x/f"},
		{dir: "nested=1/b=y/", removed: true},
		{dir: "missing/"},
		{dir: "top/", stays: "top"},
		{dir: "in/", stays: "in"},   // a link to an empty directory inside
		{dir: "out/", stays: "out"}, // a link to a directory outside
		{dir: "out/sub/", err: logstore.ErrPermission, stays: filepath.Join(outside, "sub")},
		{dir: "", err: logstore.ErrInvalidKey},
		{dir: "no-slash", err: logstore.ErrInvalidKey},
	} {
		removed, err := logstore.RemoveEmptyDir(ctx, s, tc.dir)
		if removed != tc.removed || !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
			t.Errorf("RemoveEmptyDir(%q) = %v, %v; want %v, %v", tc.dir, removed, err, tc.removed, tc.err)
		}
		if tc.removed && isDir(tc.dir) {
			t.Errorf("%q is still there", tc.dir)
		}
		if tc.stays != "" {
			p := tc.stays
			if !filepath.IsAbs(p) {
				p = filepath.Join(root, p)
			}
			if _, err := os.Lstat(p); err != nil {
				t.Errorf("RemoveEmptyDir(%q) removed %s: %v", tc.dir, tc.stays, err)
			}
		}
	}
	if !isDir("linked") || !isDir("_delta_log") {
		t.Error("a directory that was not asked for was removed")
	}

	// Stores without directories have none to remove.
	m := memory.New()
	if err := m.Put(ctx, "a/b", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if removed, err := logstore.RemoveEmptyDir(ctx, m, "a/"); removed || err != nil {
		t.Errorf("memory: %v, %v", removed, err)
	}
}

// Writes into a directory that another goroutine keeps removing whenever
// it is empty all succeed: the writer makes the directory again.
func TestWriteRacesRemoveEmptyDir(t *testing.T) {
	ctx := context.Background()
	s, err := local.New(t.TempDir(), local.WithoutSync())
	if err != nil {
		t.Fatal(err)
	}
	const n = 200
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, err := logstore.RemoveEmptyDir(ctx, s, "p=1/q=2/"); err != nil {
				t.Error(err)
				return
			}
			if _, err := logstore.RemoveEmptyDir(ctx, s, "p=1/"); err != nil {
				t.Error(err)
				return
			}
		}
	})
	for i := range n {
		k := fmt.Sprintf("p=1/q=2/f%d", i)
		var err error
		switch i % 3 {
		case 0:
			err = s.Put(ctx, k, []byte("x"))
		case 1:
			err = s.PutIfAbsent(ctx, k, []byte("x"))
		default:
			var w logstore.Writer
			if w, err = s.NewWriter(ctx, k); err == nil {
				if _, err = w.Write([]byte("x")); err == nil {
					err = w.Close()
				}
			}
		}
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		if err := s.Delete(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	wg.Wait()
}

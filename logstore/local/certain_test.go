package local_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
)

// TestCertainWriteFailures: a write that fails before its final name is
// made leaves nothing and says so with logstore.ErrNotWritten (so that a
// committer reports it at once instead of reading the key back 100 times),
// keeping the cause; an error after the name was made stays
// ErrOutcomeUnknown or unclassified (issue 19, item 20).
func TestCertainWriteFailures(t *testing.T) {
	const key = "_delta_log/00000000000000000001.json"
	tests := []struct {
		name     string
		setup    func(t *testing.T, s logstore.Store, root string)
		wantErr  error // the cause, matched with errors.Is
		linkOnly bool  // Put renames and does not link: it succeeds
	}{
		{"link refused, no space", func(t *testing.T, s logstore.Store, _ string) { local.FailLinks(s, syscall.ENOSPC) }, syscall.ENOSPC, true},
		{"link refused, quota", func(t *testing.T, s logstore.Store, _ string) { local.FailLinks(s, syscall.EDQUOT) }, syscall.EDQUOT, true},
		{"link refused, read-only", func(t *testing.T, s logstore.Store, _ string) { local.FailLinks(s, syscall.EROFS) }, syscall.EROFS, true},
		{"directory at the key", func(t *testing.T, _ logstore.Store, root string) {
			if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(key)), 0o755); err != nil {
				t.Fatal(err)
			}
		}, syscall.EISDIR, false},
		{"file where the log directory goes", func(t *testing.T, _ logstore.Store, root string) {
			if err := os.WriteFile(filepath.Join(root, "_delta_log"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, syscall.ENOTDIR, false},
		{"no hard links, directory at the key", func(t *testing.T, s logstore.Store, root string) {
			local.DisableLinks(s)
			if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(key)), 0o755); err != nil {
				t.Fatal(err)
			}
		}, syscall.EISDIR, false},
		{"disk full (tmpfs)", func(t *testing.T, s logstore.Store, root string) {
			fillTmpfs(t, root)
		}, syscall.ENOSPC, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			if tt.name == "disk full (tmpfs)" {
				mountTmpfs(t, root)
			}
			s, err := local.New(root)
			if err != nil {
				t.Fatal(err)
			}
			tt.setup(t, s, root)
			puts := []func() error{
				func() error { return s.PutIfAbsent(t.Context(), key, bytes.Repeat([]byte("x"), 8<<10)) },
				func() error { return s.Put(t.Context(), key, bytes.Repeat([]byte("x"), 8<<10)) },
			}
			if tt.linkOnly {
				puts = puts[:1]
			}
			for _, put := range puts {
				err := put()
				if !errors.Is(err, logstore.ErrNotWritten) || !logstore.IsCertainFailure(err) {
					t.Fatalf("err = %v, want ErrNotWritten", err)
				}
				if errors.Is(err, logstore.ErrOutcomeUnknown) || errors.Is(err, logstore.ErrAlreadyExists) {
					t.Errorf("err = %v is also unknown or already-exists", err)
				}
				if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
					t.Errorf("err = %v, want the cause %v kept", err, tt.wantErr)
				}
				if _, gerr := s.Get(t.Context(), key); !errors.Is(gerr, logstore.ErrNotFound) {
					t.Errorf("after a certain failure Get = %v, want ErrNotFound", gerr)
				}
			}
		})
	}
	// A refused permission stays ErrPermission, just as certain.
	perm := &os.PathError{Op: "open", Path: "x", Err: syscall.EACCES}
	if err := (&local.Store{}).ErrorKind(perm); err != logstore.ErrPermission {
		t.Errorf("ErrorKind(EACCES) = %v", err)
	}
}

// mountTmpfs mounts a 64 KiB tmpfs on dir, or skips the test where the
// process may not mount (not root, or in a restricted container).
func mountTmpfs(t *testing.T, dir string) {
	t.Helper()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, 0) })
}

// fillTmpfs fills the file system of dir until a write fails with ENOSPC.
func fillTmpfs(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "_delta_log"), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return
		}
	}
}

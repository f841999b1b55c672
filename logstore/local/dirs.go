package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"syscall"

	"github.com/godelta/delta/logstore"
)

var _ logstore.DirLister = (*Store)(nil)

// ListDirs implements logstore.DirLister: the real directories directly
// under dir, in byte order. A symbolic link is never yielded, whether it
// leads to a directory inside the root or out of it, so that a walk of the
// tree (VACUUM's) never goes through one; and a dir that resolves out of
// the root fails with logstore.ErrPermission, as List does.
func (s *Store) ListDirs(ctx context.Context, dir string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		p := filepath.Join(s.root, filepath.FromSlash(dir))
		if err := s.checkInside(p); err != nil {
			yield("", fmt.Errorf("logstore/local: %w", err))
			return
		}
		entries, err := os.ReadDir(p)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return
		}
		if err != nil {
			yield("", fmt.Errorf("logstore/local: %w", err))
			return
		}
		for _, e := range entries {
			// DirEntry.IsDir is false for a symbolic link: it is not followed.
			if !e.IsDir() {
				continue
			}
			if !yield(dir+e.Name()+"/", nil) {
				return
			}
		}
	}
}

var _ logstore.DirRemover = (*Store)(nil)

// RemoveEmptyDir implements logstore.DirRemover. It removes dir with
// rmdir(2), which the system refuses for a directory that is not empty, so
// a file created in it meanwhile is never lost; a symbolic link, a file, or
// a dir whose parent resolves out of the root (logstore.ErrPermission, as
// Delete) is never removed. The parent is synced after a removal.
func (s *Store) RemoveEmptyDir(_ context.Context, dir string) (bool, error) {
	p := filepath.Join(s.root, filepath.FromSlash(dir))
	if filepath.Clean(p) == filepath.Clean(s.root) {
		return false, nil
	}
	parent := filepath.Dir(p)
	if err := s.checkInside(parent); err != nil {
		return false, fmt.Errorf("logstore/local: %w", err)
	}
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || (err == nil && !fi.IsDir()) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("logstore/local: %w", err)
	}
	if err := rmdir(p); err != nil {
		if errors.Is(err, fs.ErrNotExist) || dirNotEmpty(err) {
			return false, nil
		}
		return false, fmt.Errorf("logstore/local: %w", err)
	}
	if err := s.syncDir(parent); err != nil {
		return true, unknown(err)
	}
	return true, nil
}

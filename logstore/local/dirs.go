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

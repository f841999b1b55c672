//go:build !unix

package local

import (
	"errors"
	"io/fs"
	"os"
)

// rmdir removes directory p if it is empty. os.Remove is the portable way
// (on Windows it removes an empty directory, and fails for one that is
// not); the caller has checked that p is a directory.
func rmdir(p string) error { return os.Remove(p) }

// dirNotEmpty reports whether err from rmdir says the directory is not
// empty. os.Remove gives no portable error for it, so any failure of a
// directory that still exists counts.
func dirNotEmpty(err error) bool {
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return false
	}
	fi, serr := os.Lstat(pe.Path)
	return serr == nil && fi.IsDir()
}

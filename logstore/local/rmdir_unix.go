//go:build unix

package local

import (
	"errors"
	"io/fs"
	"syscall"
)

// rmdir removes directory p, only if it is an empty directory: never a
// file, as os.Remove would (a file put in its place meanwhile survives).
func rmdir(p string) error {
	if err := syscall.Rmdir(p); err != nil {
		return &fs.PathError{Op: "rmdir", Path: p, Err: err}
	}
	return nil
}

// dirNotEmpty reports whether err from rmdir says the directory is not
// empty (or is not a directory any more).
func dirNotEmpty(err error) bool {
	return errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST) || errors.Is(err, syscall.ENOTDIR)
}

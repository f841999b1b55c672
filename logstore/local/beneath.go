package local

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/logstore"
)

// Writes reach the directory of their key through openDir, which each
// platform implements (beneath_unix.go, beneath_other.go): from the root,
// one name at a time, making missing directories, and refusing any name
// that is a symbolic link. The file operations of a write then go through
// the *dir it returned, never through a path, so that a link cannot send
// them elsewhere.

// symlinkError is the error of a write whose path beneath the root has a
// symbolic link in it (or, on Windows, a junction): a directory on the way
// to the key, or the key itself. errors.Is matches it with
// deltaerr.ErrPathEscapesRoot, and with logstore.ErrPermission, the kind
// of a write that was certainly refused; nothing was written.
type symlinkError struct {
	path string // the link: the root joined with the names beneath it
}

func (e *symlinkError) Error() string {
	return fmt.Sprintf("%s: %s is a symbolic link, which writes do not follow", deltaerr.ErrPathEscapesRoot, e.path)
}

// Is reports whether target is deltaerr.ErrPathEscapesRoot or
// logstore.ErrPermission.
func (e *symlinkError) Is(target error) bool {
	return target == deltaerr.ErrPathEscapesRoot || target == logstore.ErrPermission
}

// splitKey returns the directory of key ("" for the root, else slash
// separated names) and its last name.
func splitKey(key string) (dir, name string) {
	i := strings.LastIndexByte(key, '/')
	if i < 0 {
		return "", key
	}
	return key[:i], key[i+1:]
}

// entryKind is what a name in a directory is, without following a link.
type entryKind int

const (
	entryNone entryKind = iota // missing, or it cannot be told
	entryFile                  // anything but a directory or a link
	entryDir                   // a directory
	entryLink                  // a symbolic link (or a Windows junction)
)

// tempName returns a new random temporary file name.
func tempName() string {
	return fmt.Sprintf("%s%016x%s", tmpPrefix, rand.Uint64(), tmpSuffix)
}

// tempIn opens the directory of key beneath the root (making it if
// missing) and creates a new temporary file in it. It tries a few times,
// since a VACUUM may remove an empty directory (RemoveEmptyDir) between
// the walk and the create; once the temporary file is in it, the
// directory is not empty and stays. The caller closes d.
func (s *Store) tempIn(key string) (d *dir, name string, f *os.File, err error) {
	rel, name := splitKey(key)
	for i := range mkdirTries {
		walkPause(i)
		if d, err = s.openDir(rel); err == nil {
			if f, err = d.createTemp(); err == nil {
				return d, name, f, nil
			}
			d.close()
		}
		if !errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	return nil, "", nil, err
}

// checkNotLink returns a *symlinkError when name in d is a symbolic link:
// Put and a writer's Close, which rename over the key, refuse to replace
// a link (rename(2) would replace the link itself, not its target, but a
// write path with a link in it is refused as a whole).
func checkNotLink(d *dir, name string) error {
	if d.kind(name) == entryLink {
		return &symlinkError{path: d.join(name)}
	}
	return nil
}

// syncD syncs directory d unless syncing is off. Windows cannot sync a
// directory, and needs not.
func (s *Store) syncD(d *dir) error {
	if !s.sync || runtime.GOOS == "windows" {
		return nil
	}
	return d.sync()
}

// join returns the path of name in d, for messages.
func (d *dir) join(name string) string { return filepath.Join(d.path, name) }

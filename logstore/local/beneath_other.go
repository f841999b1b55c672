//go:build !unix || aix || solaris || godelta_portablewalk

// This is the portable walk, for systems without openat(2) (Windows), or
// whose golang.org/x/sys/unix has no linkat(2) (AIX, Solaris, illumos).
// The build tag godelta_portablewalk selects it on other Unix systems too,
// so that its tests run there:
//
//	go test -tags godelta_portablewalk ./logstore/local/

package local

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// dir is a directory beneath the root, reached from the root one name at a
// time with os.Lstat, none of them a symbolic link or a junction. Unlike
// the descriptors of the Unix walk, it is a path: a link swapped in for a
// directory after the walk, by someone who can write in the table, is
// followed by the write that comes next.
type dir struct {
	path string
}

// openDir returns directory rel of the root ("" for the root itself, else
// names separated by '/'), making each missing directory and syncing its
// parent. The root path is taken as given, following any symbolic link in
// it; beneath it, a name that is a symbolic link (even a dangling one, or
// one that leads back inside) or any other reparse point (a Windows
// junction is ModeIrregular) gives a *symlinkError.
func (s *Store) openDir(rel string) (*dir, error) {
	if err := s.mkdirs(s.root); err != nil {
		return nil, err
	}
	d := &dir{path: s.root}
	if rel == "" {
		return d, nil
	}
	for name := range strings.SplitSeq(rel, "/") {
		if err := s.enter(d, name); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// enter moves d down to its sub-directory name, making it if missing.
func (s *Store) enter(d *dir, name string) error {
	child := filepath.Join(d.path, name)
	for i := 0; ; i++ {
		fi, err := os.Lstat(child)
		switch {
		case err == nil && fi.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0:
			return &symlinkError{path: child}
		case err == nil && !fi.IsDir():
			return &fs.PathError{Op: "open", Path: child, Err: syscall.ENOTDIR}
		case err == nil:
			d.path = child
			return nil
		case !errors.Is(err, fs.ErrNotExist) || i == mkdirTries:
			return err
		}
		if err := os.Mkdir(child, 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
			return err // ErrNotExist: d was removed; the caller walks again
		}
		// Made here, or by another writer meanwhile, which may not have
		// synced the parent yet: sync it here as well.
		if err := s.syncD(d); err != nil {
			return err
		}
	}
}

// close does nothing: d holds no resources.
func (d *dir) close() {}

// sync syncs directory d.
func (d *dir) sync() error {
	f, err := os.Open(d.path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// kind tells what name in d is, without following a link.
func (d *dir) kind(name string) entryKind {
	fi, err := os.Lstat(d.join(name))
	switch {
	case err != nil:
		return entryNone
	case fi.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0:
		return entryLink
	case fi.IsDir():
		return entryDir
	}
	return entryFile
}

// createTemp creates a new temporary file in d. Permissions are 0666 less
// the umask, as for any file, since it becomes the object.
func (d *dir) createTemp() (*os.File, error) {
	for range 10 {
		f, err := d.create(tempName(), os.O_RDWR)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, &fs.PathError{Op: "createtemp", Path: d.path, Err: fs.ErrExist}
}

// create creates file name in d with O_CREATE|O_EXCL, which never follows
// a link (one there is ErrExist), and flags (O_RDWR or O_WRONLY).
func (d *dir) create(name string, flags int) (*os.File, error) {
	return os.OpenFile(d.join(name), flags|os.O_CREATE|os.O_EXCL, 0o666)
}

// link makes newname in d a hard link to oldname in d.
func (d *dir) link(oldname, newname string) error {
	return os.Link(d.join(oldname), d.join(newname))
}

// rename renames oldname in d over newname in d.
func (d *dir) rename(oldname, newname string) error {
	return os.Rename(d.join(oldname), d.join(newname))
}

// remove removes file name from d.
func (d *dir) remove(name string) error { return os.Remove(d.join(name)) }

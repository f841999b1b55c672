//go:build unix && !aix && !solaris && !godelta_portablewalk

package local

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// dir is a directory beneath the root, open as a file descriptor that was
// reached from the root one name at a time with openat(2) and
// O_NOFOLLOW|O_DIRECTORY, so that no name on the way was a symbolic link
// (or, if one was swapped in later, the descriptor still refers to the
// directory that was there). Every file operation of a write is made
// relative to it (openat, linkat, renameat, unlinkat), never by path.
type dir struct {
	fd   int
	path string // the root joined with the names walked, for messages
}

// openDir opens directory rel of the root ("" for the root itself, else
// names separated by '/'), making each missing directory with mkdirat(2)
// and syncing its parent. The root path is opened as given, following any
// symbolic link in it; beneath it, a name that is a symbolic link, even a
// dangling one or one that leads back inside, gives a *symlinkError.
func (s *Store) openDir(rel string) (*dir, error) {
	fd, err := s.openRoot()
	if err != nil {
		return nil, err
	}
	d := &dir{fd: fd, path: s.root}
	if rel == "" {
		return d, nil
	}
	for name := range strings.SplitSeq(rel, "/") {
		if err := s.enter(d, name); err != nil {
			d.close()
			return nil, err
		}
	}
	return d, nil
}

// openRoot opens the root directory, making it (as os.MkdirAll, through
// any link in the root path) when it is missing. The descriptor is opened
// anew for each write rather than kept by the Store: a root directory that
// is moved, or removed and made again, while the Store is open is then
// written where it is read, and Close has nothing to wait for. It costs
// one open(2) and close(2), next to the fsync(2)s of a write.
func (s *Store) openRoot() (int, error) {
	for i := 0; ; i++ {
		fd, err := openat(unix.AT_FDCWD, s.root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err == nil {
			return fd, nil
		}
		if err != unix.ENOENT || i == mkdirTries {
			return -1, &fs.PathError{Op: "open", Path: s.root, Err: err}
		}
		if err := s.mkdirs(s.root); err != nil {
			return -1, err
		}
	}
}

// enter moves d down to its sub-directory name, making it if missing.
func (s *Store) enter(d *dir, name string) error {
	child := filepath.Join(d.path, name)
	for i := 0; ; i++ {
		fd, err := openat(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == nil {
			unix.Close(d.fd)
			d.fd, d.path = fd, child
			return nil
		}
		if err == unix.ENOENT && i < mkdirTries {
			err = ignoringEINTR(func() error { return unix.Mkdirat(d.fd, name, 0o777) })
			if err == nil || err == unix.EEXIST {
				// Made here, or by another writer meanwhile, which may not
				// have synced the parent yet: sync it here as well.
				if err := s.syncD(d); err != nil {
					return err
				}
				continue // open what is there now: a link put there is refused
			}
			// ENOENT again: d itself was removed (an empty directory that
			// RemoveEmptyDir took); the caller walks again from the root.
			return &fs.PathError{Op: "mkdir", Path: child, Err: err}
		}
		// O_NOFOLLOW on a link fails with ELOOP, ENOTDIR (Linux, with
		// O_DIRECTORY) or EMLINK (FreeBSD): tell a link from a file.
		if d.kind(name) == entryLink {
			return &symlinkError{path: child}
		}
		return &fs.PathError{Op: "open", Path: child, Err: err}
	}
}

// close closes d's descriptor.
func (d *dir) close() { unix.Close(d.fd) }

// sync syncs directory d.
func (d *dir) sync() error {
	if err := ignoringEINTR(func() error { return unix.Fsync(d.fd) }); err != nil {
		return &fs.PathError{Op: "sync", Path: d.path, Err: err}
	}
	return nil
}

// kind tells what name in d is, without following a link.
func (d *dir) kind(name string) entryKind {
	var st unix.Stat_t
	if err := ignoringEINTR(func() error { return unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) }); err != nil {
		return entryNone
	}
	switch uint32(st.Mode) & unix.S_IFMT {
	case unix.S_IFLNK:
		return entryLink
	case unix.S_IFDIR:
		return entryDir
	}
	return entryFile
}

// createTemp creates a new temporary file in d. Permissions are 0666 less
// the umask, as for any file, since it becomes the object.
func (d *dir) createTemp() (*os.File, error) {
	for range 10 {
		name := tempName()
		f, err := d.create(name, unix.O_RDWR)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, &fs.PathError{Op: "createtemp", Path: d.path, Err: fs.ErrExist}
}

// create creates file name in d with O_CREAT|O_EXCL, which never follows
// a link (one there is EEXIST), and flags (O_RDWR or O_WRONLY).
func (d *dir) create(name string, flags int) (*os.File, error) {
	fd, err := openat(d.fd, name, flags|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o666)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.join(name), Err: err}
	}
	return os.NewFile(uintptr(fd), d.join(name)), nil
}

// link makes newname in d a hard link to oldname in d, never following a
// link at either name; it fails with EEXIST when newname exists.
func (d *dir) link(oldname, newname string) error {
	if err := ignoringEINTR(func() error { return unix.Linkat(d.fd, oldname, d.fd, newname, 0) }); err != nil {
		return &os.LinkError{Op: "link", Old: d.join(oldname), New: d.join(newname), Err: err}
	}
	return nil
}

// rename renames oldname in d over newname in d.
func (d *dir) rename(oldname, newname string) error {
	if err := ignoringEINTR(func() error { return unix.Renameat(d.fd, oldname, d.fd, newname) }); err != nil {
		return &os.LinkError{Op: "rename", Old: d.join(oldname), New: d.join(newname), Err: err}
	}
	return nil
}

// remove removes file name from d.
func (d *dir) remove(name string) error {
	if err := ignoringEINTR(func() error { return unix.Unlinkat(d.fd, name, 0) }); err != nil {
		return &fs.PathError{Op: "remove", Path: d.join(name), Err: err}
	}
	return nil
}

// openat is unix.Openat, tried again when a signal interrupts it.
func openat(dirfd int, name string, flags int, mode uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags, mode)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// ignoringEINTR calls fn until it does not fail with EINTR.
func ignoringEINTR(fn func() error) error {
	for {
		if err := fn(); err != unix.EINTR {
			return err
		}
	}
}

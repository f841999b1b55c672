//go:build unix && !aix && !solaris && !godelta_portablewalk

package local

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// dir is a directory beneath the root, open as a file descriptor that was
// reached from the root one name at a time with openat(2) and
// O_NOFOLLOW|O_DIRECTORY, so that no name on the way was a symbolic link
// (or, if one was swapped in later, the descriptor still refers to the
// directory that was there). Every file operation of a write is made
// relative to it (openat, linkat, renameat, unlinkat), never by path.
//
// The descriptor is held in an *os.File and used through its RawConn, so
// that it is never used after close nor reused meanwhile, and a writer
// that is dropped without Close or Abort does not leak it.
type dir struct {
	f    *os.File
	rc   syscall.RawConn
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
	path := s.root
	if rel != "" {
		for name := range strings.SplitSeq(rel, "/") {
			child, err := s.enter(fd, path, name)
			unix.Close(fd)
			if err != nil {
				return nil, err
			}
			fd, path = child, filepath.Join(path, name)
		}
	}
	f := os.NewFile(uintptr(fd), path)
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &dir{f: f, rc: rc, path: path}, nil
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

// enter opens the sub-directory name of directory fd (at path), making it
// if missing, and returns its descriptor; fd stays open.
func (s *Store) enter(fd int, path, name string) (int, error) {
	child := filepath.Join(path, name)
	for i := 0; ; i++ {
		cfd, err := openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == nil {
			return cfd, nil
		}
		if err == unix.ENOENT && i < mkdirTries {
			err = ignoringEINTR(func() error { return unix.Mkdirat(fd, name, 0o777) })
			if err == nil || err == unix.EEXIST {
				// Made here, or by another writer meanwhile, which may not
				// have synced the parent yet: sync it here as well.
				if s.sync {
					if err := fsync(fd, path); err != nil {
						return -1, err
					}
				}
				continue // open what is there now: a link put there is refused
			}
			// ENOENT again: fd itself was removed (an empty directory that
			// RemoveEmptyDir took); the caller walks again from the root.
			return -1, &fs.PathError{Op: "mkdir", Path: child, Err: err}
		}
		// O_NOFOLLOW on a link fails with ELOOP, ENOTDIR (Linux, with
		// O_DIRECTORY) or EMLINK (FreeBSD): tell a link from a file.
		if kindAt(fd, name) == entryLink {
			return -1, &symlinkError{path: child}
		}
		return -1, &fs.PathError{Op: "open", Path: child, Err: err}
	}
}

// control calls fn with d's descriptor, which stays open meanwhile.
func (d *dir) control(fn func(fd int) error) error {
	var ferr error
	if err := d.rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

// close closes d's descriptor.
func (d *dir) close() { d.f.Close() }

// sync syncs directory d.
func (d *dir) sync() error {
	return d.control(func(fd int) error { return fsync(fd, d.path) })
}

// fsync syncs descriptor fd, of the file at path.
func fsync(fd int, path string) error {
	if err := ignoringEINTR(func() error { return unix.Fsync(fd) }); err != nil {
		return &fs.PathError{Op: "sync", Path: path, Err: err}
	}
	return nil
}

// kind tells what name in d is, without following a link.
func (d *dir) kind(name string) entryKind {
	k := entryNone
	d.control(func(fd int) error {
		k = kindAt(fd, name)
		return nil
	})
	return k
}

// kindAt tells what name in directory fd is, without following a link.
func kindAt(fd int, name string) entryKind {
	var st unix.Stat_t
	if err := ignoringEINTR(func() error { return unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) }); err != nil {
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
		f, err := d.create(tempName(), unix.O_RDWR)
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
	var nfd int
	err := d.control(func(fd int) (err error) {
		nfd, err = openat(fd, name, flags|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o666)
		return err
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.join(name), Err: err}
	}
	return os.NewFile(uintptr(nfd), d.join(name)), nil
}

// link makes newname in d a hard link to oldname in d, never following a
// link at either name; it fails with EEXIST when newname exists.
func (d *dir) link(oldname, newname string) error {
	err := d.control(func(fd int) error {
		return ignoringEINTR(func() error { return unix.Linkat(fd, oldname, fd, newname, 0) })
	})
	if err != nil {
		return &os.LinkError{Op: "link", Old: d.join(oldname), New: d.join(newname), Err: err}
	}
	return nil
}

// rename renames oldname in d over newname in d.
func (d *dir) rename(oldname, newname string) error {
	err := d.control(func(fd int) error {
		return ignoringEINTR(func() error { return unix.Renameat(fd, oldname, fd, newname) })
	})
	if err != nil {
		return &os.LinkError{Op: "rename", Old: d.join(oldname), New: d.join(newname), Err: err}
	}
	return nil
}

// remove removes file name from d.
func (d *dir) remove(name string) error {
	err := d.control(func(fd int) error {
		return ignoringEINTR(func() error { return unix.Unlinkat(fd, name, 0) })
	})
	if err != nil {
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

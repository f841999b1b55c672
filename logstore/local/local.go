// Package local is a logstore.Store over a directory of the local file
// system. Key "a/b/c" is the file root/a/b/c; directories are created as
// writes need them and never removed. New returns the portable
// logstore.Store (a *logstore.Portable) over the driver, a *Store; reach the
// driver with logstore.DriverOf[*local.Store] for Root.
//
// Importing the package registers the URI scheme file:// with
// logstore.Open, which also sends plain paths here: file:///abs/path,
// file:/abs/path, file://localhost/abs/path, or a path absolute or relative
// to the working directory. The URI of a Store is "file://" + Root().
// Close does nothing: the driver holds no resources between calls.
//
// # Writes
//
// Every write first goes to a new temporary file in the directory of its
// key, which is synced (fsync) and only then given its final name:
//
//   - PutIfAbsent hard-links the temporary file to the key with link(2),
//     which fails with EEXIST if the name is taken, then removes the
//     temporary name. The link is atomic in the file system, so of many
//     writers, in this process or any other, on this machine or over a
//     shared file system with working hard links, exactly one wins; and the
//     object appears whole, with its data already on disk.
//   - Put renames the temporary file over the key with rename(2), which
//     replaces it atomically: readers see the old file or the new one.
//
// After the final name is made, the directory is synced too, so a write
// that returned nil survives a crash of the machine. If that sync fails the
// object is in place but may not survive a crash: the error matches
// logstore.ErrOutcomeUnknown. Delete syncs the
// directory as well. WithoutSync turns all syncing off, for benchmarks only.
//
// A failure before the final name is made (the temporary file cannot be
// created, written or synced: a full disk, a read-only file system) or a
// link or rename refused as a whole (ENOSPC, EDQUOT, EROFS, a directory at
// the key) leaves no object: the error matches logstore.ErrNotWritten (or
// logstore.ErrPermission), so that a committer reports it at once instead
// of reading the key back.
//
// Some file systems (FAT, some network and FUSE mounts) have no hard links.
// When link(2) fails with EPERM, ENOTSUP, EOPNOTSUPP, ENOSYS or EXDEV,
// PutIfAbsent falls back to creating the key itself with O_CREATE|O_EXCL
// and writing into it. Exclusivity is kept, but the object is no longer
// atomic to readers: a reader may see it empty or partly written while it
// is being written, and a crash midway leaves a partial object behind that
// readers will see (a failed write removes what it created). Prefer a file
// system with hard links for tables that are committed to.
//
// # Temporary files
//
// Temporary files are named ".godelta-<16 hex digits>.tmp". List never
// yields such names, and every method refuses a key whose last segment has
// that form with logstore.ErrInvalidKey, so they are invisible through the
// Store. A crash can leave one behind; any that is older than the longest
// write in flight may be removed by hand.
//
// # Objects and directories
//
// Only files are objects: Get, GetRange and Stat of a key that names a
// directory give logstore.ErrNotFound, Delete of it does nothing, and List
// skips directories. A key cannot be both a file and a directory here, so a
// write that would need that fails, as the logstore contract warns.
//
// Only regular files are objects: a named pipe, socket or device file (or a
// link to one) is refused with ErrNotRegular by Get, GetRange and Stat
// before it is read, since reading a pipe with no writer blocks forever and
// a device may never end, and List skips it.
//
// # Symbolic links
//
// Reads follow symbolic links, and one to a file counts as that file.
// Writes never go through one: Put, PutIfAbsent and NewWriter reach the
// directory of their key from the root one name at a time, making the
// missing ones, and refuse any name beneath the root that is a symbolic
// link, whether it is a directory on the way or the key itself, and
// whether it leads out of the root, back inside it, or nowhere. The error
// matches deltaerr.ErrPathEscapesRoot and logstore.ErrPermission, names
// the link, and nothing is written. So a metadata/, partition,
// _change_data or _symlink_format_manifest directory linked elsewhere
// cannot make a write land, or replace a file, outside the table. The root
// path itself may contain links: only the names beneath it are checked.
//
// On Unix systems (but AIX and Solaris) each directory is opened with
// openat(2) and O_NOFOLLOW from the one above it, and every file operation
// of the write is made relative to the last one (a writer holds it open
// until it is done), so a link swapped in meanwhile is not followed
// either. Elsewhere (Windows) each name is checked with Lstat, a junction
// counting as a link, and a link swapped in between the check and the
// write, by someone who can write in the table's directories, is not
// caught.
//
// List and Delete never go through a symbolic link that leads out of the
// root. Listing a directory, or deleting a file in a directory, that
// resolves (every link in its path followed) to a place outside the root
// (resolved likewise) fails with logstore.ErrPermission and touches
// nothing, so that log cleanup and VACUUM, which list and delete, cannot
// empty a directory elsewhere through a linked _delta_log/_sidecars or
// data directory. Deleting a key that is itself a symbolic link removes
// the link, never its target.
//
// A Store is safe for concurrent use by multiple goroutines, and any number
// of processes may share one directory. The example writes a commit
// twice (the second is logstore.ErrAlreadyExists) and lists it back through
// logstore.Open.
package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/godelta/delta/logstore"
)

// Temporary file names are tmpPrefix + 16 hex digits + tmpSuffix.
const (
	tmpPrefix = ".godelta-"
	tmpSuffix = ".tmp"
)

// isTemp reports whether name, a file name without directory, has the form
// of this package's temporary files.
func isTemp(name string) bool {
	return strings.HasPrefix(name, tmpPrefix) && strings.HasSuffix(name, tmpSuffix)
}

// Store is a logstore.Store over a directory. See the package doc.
type Store struct {
	root string
	sync bool
	// link is (*dir).link; tests replace it to exercise the fallback.
	link func(d *dir, oldname, newname string) error
}

var (
	_ logstore.Driver     = (*Store)(nil)
	_ logstore.KeyChecker = (*Store)(nil)
)

func init() { logstore.Register("file", Open) }

// Open returns the Store for a file URI or plain path (see the package
// doc). A file URI with a host other than localhost is ErrInvalidKey.
func Open(_ context.Context, uri string) (logstore.Store, error) {
	if logstore.SchemeOf(uri) != "file" {
		return New(uri)
	}
	if !strings.HasPrefix(strings.ToLower(uri), "file://") {
		return New(uri[len("file:"):])
	}
	u, err := url.Parse(uri)
	if err != nil || (u.Host != "" && u.Host != "localhost") || u.Path == "" {
		return nil, fmt.Errorf("logstore/local: file URI %q must be file:///absolute/path: %w", logstore.RedactURI(uri), logstore.ErrInvalidKey)
	}
	return New(u.Path)
}

// Option configures New.
type Option func(*Store)

// WithoutSync makes the Store skip every fsync of files and directories.
// Writes are still atomic and exclusive while the machine runs, but one
// that returned nil may be lost, or seen partly written, after a power
// failure or an operating system crash. It is UNSAFE for real tables and
// meant for benchmarks and throw-away tests only.
func WithoutSync() Option {
	return func(s *Store) { s.sync = false }
}

// New returns a store rooted at the directory root, made absolute. root
// need not exist yet: it is created by the first write. It is an error for
// root to exist and not be a directory.
func New(root string, opts ...Option) (*logstore.Portable, error) {
	d, err := NewDriver(root, opts...)
	if err != nil {
		return nil, err
	}
	return logstore.NewPortable(d), nil
}

// NewDriver is New without the portable layer, for tests of the driver;
// wrap it with logstore.NewPortable to use it as a Store.
func NewDriver(root string, opts ...Option) (*Store, error) {
	if root == "" {
		return nil, fmt.Errorf("logstore/local: empty root: %w", logstore.ErrInvalidKey)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("logstore/local: root %q: %w", root, err)
	}
	if fi, err := os.Stat(abs); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("logstore/local: root %q: %w", abs, syscall.ENOTDIR)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("logstore/local: root %q: %w", abs, err)
	}
	s := &Store{root: abs, sync: true, link: (*dir).link}
	for _, opt := range opts {
		opt(s)
	}
	return s, nil
}

// Root returns the absolute path of the directory the Store is over.
func (s *Store) Root() string { return s.root }

// URI implements logstore.Driver: "file://" + Root().
func (s *Store) URI() string { return "file://" + filepath.ToSlash(s.root) }

// Close implements logstore.Driver; there is nothing to release.
func (s *Store) Close() error { return nil }

// ErrorKind implements logstore.Driver: the kinds the driver's errors
// already wrap, and ErrPermission for a refused file operation.
func (s *Store) ErrorKind(err error) error {
	if k := logstore.KindOf(err); k != nil {
		return k
	}
	if errors.Is(err, fs.ErrPermission) {
		return logstore.ErrPermission
	}
	return nil
}

// CheckKey implements logstore.KeyChecker: it refuses keys whose last
// segment is a temporary file name.
func (s *Store) CheckKey(key string) error {
	if isTemp(key[strings.LastIndexByte(key, '/')+1:]) {
		return fmt.Errorf("%w (reserved for temporary files)", &logstore.KeyError{Key: key})
	}
	return nil
}

// path returns the file of key, which the portable layer has checked.
func (s *Store) path(_ context.Context, _, key string) (string, error) {
	return filepath.Join(s.root, filepath.FromSlash(key)), nil
}

// errLeavesRoot is the cause of a List or Delete refused because a
// symbolic link leads out of the root.
var errLeavesRoot = fmt.Errorf("a symbolic link leads out of the root: %w", logstore.ErrPermission)

// checkInside returns nil when directory dir, a path under the root,
// resolves with every symbolic link in it followed to the root or a
// directory inside it (the root resolved likewise), or does not exist; it
// returns an error wrapping errLeavesRoot when it resolves elsewhere. It is
// checked before each List and Delete; a link changed between the check
// and the operation is not caught, which needs someone with write access
// to the table's directories.
func (s *Store) checkInside(dir string) error {
	gone := func(err error) bool { return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) }
	real, err := filepath.EvalSymlinks(dir)
	if gone(err) {
		return nil
	}
	if err != nil {
		return err
	}
	root, err := filepath.EvalSymlinks(s.root)
	if gone(err) {
		return nil
	}
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(root, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return &fs.PathError{Op: "resolve", Path: dir, Err: errLeavesRoot}
	}
	return nil
}

// wrap marks err as this backend's; it stays reachable with errors.As. The
// operation and key are added by the portable layer.
func wrap(_, _ string, err error) error {
	return fmt.Errorf("logstore/local: %w", err)
}

// unknown is wrap for a write that took effect but whose directory sync
// failed: it may not survive a crash, so its outcome is unknown.
func unknown(err error) error {
	return fmt.Errorf("logstore/local: %w: syncing the directory: %w", logstore.ErrOutcomeUnknown, err)
}

// wrapRead is wrap for reads of an object, which also adds
// logstore.ErrNotFound when err says the file does not exist, or that a
// parent of it is a file (ENOTDIR).
func wrapRead(_, _ string, err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return fmt.Errorf("logstore/local: %w: %w", logstore.ErrNotFound, err)
	}
	return fmt.Errorf("logstore/local: %w", err)
}

// ErrNotRegular is returned (wrapped, with the path) by Get, GetRange and
// Stat for a file that is neither a regular file nor a directory: a named
// pipe, a socket, a device. Such a file is no object; reading it could
// block forever (a pipe with no writer) or never end (/dev/zero), so it is
// refused before it is read. A directory gives ErrNotFound instead, as the
// Store contract says.
var ErrNotRegular = errors.New("not a regular file")

// checkRegular returns the error for fi, the file at p, unless it is a
// regular file.
func checkRegular(op, key, p string, fi fs.FileInfo) error {
	switch {
	case fi.Mode().IsRegular():
		return nil
	case fi.IsDir():
		return wrapRead(op, key, &fs.PathError{Op: op, Path: p, Err: fs.ErrNotExist})
	}
	return wrap(op, key, &fs.PathError{Op: op, Path: p, Err: fmt.Errorf("%w (mode %v)", ErrNotRegular, fi.Mode().Type())})
}

// open opens file p of an object for reading. A directory is not an
// object, and gives ErrNotFound; any other file that is not a regular file
// gives ErrNotRegular, and is not opened in the normal way: the file is
// stat'ed first, then opened with O_NONBLOCK where the system has it (so
// that a named pipe put there in between does not wait for a writer), then
// checked again through the open descriptor.
func open(op, key, p string) (*os.File, fs.FileInfo, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, nil, wrapRead(op, key, err)
	}
	if err := checkRegular(op, key, p, fi); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(p, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, nil, wrapRead(op, key, err)
	}
	if fi, err = f.Stat(); err == nil {
		err = checkRegular(op, key, p, fi)
	} else {
		err = wrapRead(op, key, err)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	// O_NONBLOCK has no effect on the reads of a regular file.
	return f, fi, nil
}

// Get implements logstore.Driver.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	p, err := s.path(ctx, "get", key)
	if err != nil {
		return nil, err
	}
	f, fi, err := open("get", key, p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// The file is never changed in place (writes rename or link a new
	// file), so its size is fixed while it is open.
	b := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, wrap("get", key, err)
	}
	return b, nil
}

// GetRange implements logstore.Driver.
func (s *Store) GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error) {
	p, err := s.path(ctx, "get range", key)
	if err != nil {
		return nil, err
	}
	f, fi, err := open("get range", key, p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := fi.Size()
	if offset >= size {
		return []byte{}, nil
	}
	b := make([]byte, min(length, size-offset))
	if _, err := f.ReadAt(b, offset); err != nil {
		return nil, wrap("get range", key, err)
	}
	return b, nil
}

// Stat implements logstore.Driver.
func (s *Store) Stat(ctx context.Context, key string) (logstore.ObjectInfo, error) {
	p, err := s.path(ctx, "stat", key)
	if err != nil {
		return logstore.ObjectInfo{}, err
	}
	fi, err := os.Stat(p)
	if err != nil {
		return logstore.ObjectInfo{}, wrapRead("stat", key, err)
	}
	if err := checkRegular("stat", key, p, fi); err != nil {
		return logstore.ObjectInfo{}, err
	}
	return logstore.ObjectInfo{Key: key, Size: fi.Size(), ModTime: fi.ModTime()}, nil
}

// List implements logstore.Driver. It reads the whole directory when
// iteration starts; os.ReadDir sorts names by byte order, which is the
// order of the full keys, as they share the prefix dir. Entries are then
// stat'ed one by one as they are yielded, so one deleted meanwhile is
// skipped.
func (s *Store) List(ctx context.Context, dir, startAfter string) iter.Seq2[logstore.ObjectInfo, error] {
	return func(yield func(logstore.ObjectInfo, error) bool) {
		fail := func(err error) { yield(logstore.ObjectInfo{}, fmt.Errorf("logstore/local: %w", err)) }
		p := filepath.Join(s.root, filepath.FromSlash(dir))
		if err := s.checkInside(p); err != nil {
			fail(err)
			return
		}
		entries, err := os.ReadDir(p)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return // no such directory: empty
		}
		if err != nil {
			fail(err)
			return
		}
		for _, e := range entries {
			key := dir + e.Name()
			if key <= startAfter || isTemp(e.Name()) || e.IsDir() {
				continue
			}
			fi, err := e.Info()
			if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
				fi, err = os.Stat(filepath.Join(p, e.Name()))
			}
			if errors.Is(err, fs.ErrNotExist) {
				continue // deleted since ReadDir, or a dangling link
			}
			if err != nil {
				fail(err)
				return
			}
			if !fi.Mode().IsRegular() {
				continue
			}
			if !yield(logstore.ObjectInfo{Key: key, Size: fi.Size(), ModTime: fi.ModTime()}, nil) {
				return
			}
		}
	}
}

// PutIfAbsent implements logstore.Driver. See the package doc for how.
func (s *Store) PutIfAbsent(_ context.Context, key string, data []byte) error {
	d, name, tmp, err := s.writeTemp(key, data)
	if err != nil {
		return notWritten(err) // only a hidden temporary file was touched
	}
	defer d.close()
	err = s.link(d, tmp, name)
	d.remove(tmp) // on success name keeps the file; a leftover name is hidden anyway
	switch {
	case err == nil:
		if err := s.syncD(d); err != nil {
			// The object is there but may not be durable: the outcome is
			// unknown, so not nil.
			return unknown(err)
		}
		return nil
	case errors.Is(err, fs.ErrExist):
		return existing(d, name, "link", err)
	case noLinks(err):
		return s.putExclusive(key, data)
	case linkRefused(err):
		return notWritten(err)
	default:
		return wrap("put if absent", key, err)
	}
}

// existing is the error of a PutIfAbsent whose create or link failed with
// err, EEXIST, because name in d is taken: ErrAlreadyExists for an object,
// a certain failure for a directory or a symbolic link.
func existing(d *dir, name, op string, err error) error {
	switch d.kind(name) {
	case entryDir:
		return notWritten(&fs.PathError{Op: op, Path: d.join(name), Err: syscall.EISDIR})
	case entryLink:
		return notWritten(&symlinkError{path: d.join(name)})
	}
	return fmt.Errorf("logstore/local: %w: %w", logstore.ErrAlreadyExists, err)
}

// linkRefused reports whether err from link(2) or rename(2) says the call
// was refused as a whole, so that the new name certainly does not exist: no
// space or quota for the directory entry, a read-only file system, a
// directory in the way.
func linkRefused(err error) bool {
	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT, syscall.EROFS, syscall.EISDIR} {
		if errors.Is(err, errno) {
			return true
		}
	}
	return false
}

// notWritten is wrap for a write that certainly did not take effect: it
// adds logstore.ErrNotWritten, unless err is a permission error, which
// ErrorKind already classifies (as ErrPermission, just as certain), or
// already is ErrPermission (a *symlinkError).
func notWritten(err error) error {
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, logstore.ErrPermission) {
		return fmt.Errorf("logstore/local: %w", err)
	}
	return fmt.Errorf("logstore/local: %w: %w", logstore.ErrNotWritten, err)
}

// noLinks reports whether err from link(2) says the file system has no
// hard links.
func noLinks(err error) bool {
	for _, errno := range []syscall.Errno{syscall.EPERM, syscall.ENOTSUP, syscall.EOPNOTSUPP, syscall.ENOSYS, syscall.EXDEV} {
		if errors.Is(err, errno) {
			return true
		}
	}
	return false
}

// putExclusive is PutIfAbsent for file systems without hard links: it
// creates the key's file with O_EXCL and writes data into it. On a failure
// after the create it removes the file again, so that no partial object
// stays behind.
func (s *Store) putExclusive(key string, data []byte) error {
	rel, name := splitKey(key)
	var (
		d   *dir
		f   *os.File
		err error
	)
	for i := range mkdirTries {
		walkPause(i)
		if d, err = s.openDir(rel); err == nil {
			if f, err = d.create(name, os.O_WRONLY); err == nil {
				break
			}
			if errors.Is(err, fs.ErrExist) {
				defer d.close()
				return existing(d, name, "open", err)
			}
			d.close()
		}
		// ErrNotExist: the directory was removed as empty (RemoveEmptyDir)
		// meanwhile; walk again.
		if !errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	if err != nil {
		return notWritten(err) // the file was not created
	}
	defer d.close()
	if err := s.writeSyncClose(f, data); err != nil {
		d.remove(name)
		return wrap("put if absent", key, err)
	}
	if err := s.syncD(d); err != nil {
		return unknown(err)
	}
	return nil
}

// Put implements logstore.Driver: a temporary file renamed over the key.
// A symbolic link at the key is refused, not replaced.
func (s *Store) Put(_ context.Context, key string, data []byte) error {
	d, name, tmp, err := s.writeTemp(key, data)
	if err != nil {
		return notWritten(err)
	}
	defer d.close()
	if err := checkNotLink(d, name); err != nil {
		d.remove(tmp)
		return notWritten(err)
	}
	if err := d.rename(tmp, name); err != nil {
		d.remove(tmp)
		if d.kind(name) == entryDir {
			return notWritten(&fs.PathError{Op: "rename", Path: d.join(name), Err: syscall.EISDIR})
		}
		if linkRefused(err) {
			return notWritten(err)
		}
		return wrap("put", key, err)
	}
	if err := s.syncD(d); err != nil {
		return unknown(err)
	}
	return nil
}

// Delete implements logstore.Driver. It removes only the file of key: not a
// directory of that name, and not the parent directory when it becomes
// empty.
func (s *Store) Delete(ctx context.Context, key string) error {
	const op = "delete"
	p, err := s.path(ctx, op, key)
	if err != nil {
		return err
	}
	if err := s.checkInside(filepath.Dir(p)); err != nil {
		return wrap(op, key, err)
	}
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || (err == nil && fi.IsDir()) {
		return nil
	}
	if err != nil {
		return wrap(op, key, err)
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return wrap(op, key, err)
	}
	if err := s.syncDir(filepath.Dir(p)); err != nil {
		return unknown(err)
	}
	return nil
}

// writeTemp writes data to a new, synced temporary file in the directory
// of key, reached beneath the root without following a link and made if
// needed (see tempIn), and returns that directory, which the caller
// closes, the key's last name and the temporary file's name.
func (s *Store) writeTemp(key string, data []byte) (d *dir, name, tmp string, err error) {
	d, name, f, err := s.tempIn(key)
	if err != nil {
		return nil, "", "", err
	}
	tmp = filepath.Base(f.Name())
	if err := s.writeSyncClose(f, data); err != nil {
		d.remove(tmp)
		d.close()
		return nil, "", "", err
	}
	return d, name, tmp, nil
}

// mkdirTries is how many times a write walks to its directory again when
// an empty directory on the way is removed under it (RemoveEmptyDir, as a
// VACUUM does). Between walks it waits (walkPause), so that a remover in a
// tight loop cannot win every race and starve the writer.
const mkdirTries = 24

// walkPause waits before walk i (from 1) of a write to its directory:
// nothing before the second, then a random pause whose bound doubles with
// each walk up to about a millisecond, about 15 ms over all the tries.
func walkPause(i int) {
	if i < 2 {
		return
	}
	bound := time.Microsecond << min(i, 10)
	time.Sleep(rand.N(bound))
}

// writeSyncClose writes data to f, syncs it unless syncing is off, and
// closes it.
func (s *Store) writeSyncClose(f *os.File, data []byte) error {
	_, err := f.Write(data)
	if err == nil && s.sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// mkdirs is os.MkdirAll that also syncs the parent of every directory it
// creates, so that a synced file below is reachable after a crash.
func (s *Store) mkdirs(dir string) error {
	fi, err := os.Stat(dir)
	if err == nil {
		if !fi.IsDir() {
			return &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
		}
		return nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := s.mkdirs(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o777); err != nil {
		// Another writer may have made it meanwhile; it may not have synced
		// the parent yet, so sync it here as well.
		if fi, serr := os.Stat(dir); serr != nil || !fi.IsDir() {
			return err
		}
	}
	return s.syncDir(parent)
}

// syncDir syncs directory dir, so that names made or removed in it are
// durable. Windows cannot sync a directory, and needs not.
func (s *Store) syncDir(dir string) error {
	if !s.sync || runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// Package logstore is the storage layer under every Delta table: one
// interface, Store, over a flat namespace of objects, with a backend per kind
// of storage (local disk, memory, and object stores).
//
// The package knows nothing of Delta. What the Delta protocol needs from
// storage is written here as the Store contract, and every backend must pass
// the shared suite in logstore/storetest, which checks it.
//
// # Two layers
//
// As in gocloud.dev/blob, a backend is a small Driver, and one portable type,
// *Portable, does the shared work once, over any driver:
//
//   - it refuses invalid keys, directories and ranges (CheckKey, CheckDir,
//     CheckRange, and a driver's own KeyChecker), before the driver sees them;
//   - it returns ErrClosed for every call after Close;
//   - it returns the context's error, wrapped, when ctx is already done;
//   - it wraps every error in an *OpError with the operation and key, and
//     adds the portable kind the driver's ErrorKind gives for it, so callers
//     test kinds with errors.Is and still reach the driver's own error (an
//     SDK error, a *fs.PathError) with errors.As.
//
// A driver therefore sees only valid keys and live contexts, and does no
// checks of its own. Every backend constructor (local.New, memory.New,
// s3.New, gcs.New, azblob.New, and their Open functions) returns a
// *Portable; the backend's own type (*local.Store, *s3.Store, ...) is the
// driver, reached with DriverOf when its extras are needed (Root, Client,
// SetClock). A driver must not be used as a Store directly.
//
// # The contract
//
//   - Keys are relative, '/'-separated paths under the store's root, such as
//     "_delta_log/00000000000000000000.json". A key never starts or ends
//     with '/' and has no empty, "." or ".." segments; Store methods refuse
//     other keys with ErrInvalidKey (see CheckKey), so no key escapes the
//     root. A backend may refuse a few more names it reserves for itself
//     (the local backend's temporary files) and documents them. Callers must
//     not use one key both as an object and as a directory of other objects:
//     object stores allow it, the local disk cannot, and Delta never needs it.
//   - Get, GetRange and Stat of a missing object give ErrNotFound. A key
//     that only names a directory is not an object.
//   - PutIfAbsent is atomic: of many concurrent callers for one key, exactly
//     one succeeds and every other gets ErrAlreadyExists. An existing object
//     is never overwritten, not even partly. This is the single point where a
//     Delta commit becomes visible.
//   - Put and a Writer's Close replace an existing object whole; readers see
//     the old content or the new, never a mix.
//   - Delete of a missing object is not an error, so it may be repeated.
//   - List returns the objects directly under a directory, not those in
//     sub-directories, in strictly increasing byte order of key, starting
//     after a given key. A missing directory lists as empty.
//   - A write that returned nil is as durable as the backend's storage: the
//     local backend has synced file and directory to disk.
//   - A cancelled or expired ctx: a call made with it returns its error
//     (wrapped; errors.Is(err, context.Canceled) holds) and does nothing. A
//     write cancelled midway may or may not have landed, and then also
//     matches ErrOutcomeUnknown.
//   - An operation whose outcome is unknown (a timeout, a reset connection,
//     a 5xx answer after the request was sent) returns an error matching
//     ErrOutcomeUnknown, which is never also ErrAlreadyExists nor nil.
//     Callers that need to know whether a PutIfAbsent landed read the
//     object back.
//   - A write that certainly did not take effect, for a reason no other
//     kind names (no space left before anything was written, a directory in
//     the way of the key), gives ErrNotWritten. A write failing with
//     ErrPermission, ErrRootNotFound, ErrInvalidKey or ErrClosed did not
//     take effect either; IsCertainFailure reports all five.
//   - A missing root (bucket, container) gives ErrRootNotFound, from the
//     constructor or from any later call; refused credentials or a denying
//     policy give ErrPermission. The local backend creates its root
//     directory on the first write, so there a missing root is an empty
//     store, not an error.
//   - Close releases what the store holds (SDK clients, connections). Every
//     call after it gives ErrClosed; a second Close returns nil. Closing
//     while calls are in flight lets them fail as the driver fails them.
//   - URI names the root without credentials or query secrets:
//     file:///abs/root, memory://name, s3://bucket/prefix,
//     gs://bucket/prefix, az://container/prefix.
//
// # Adding a backend
//
// Write a type that implements Driver, assuming valid keys and live
// contexts, with an ErrorKind that maps the backend's errors onto the kinds
// below; make its constructor return NewPortable(driver); run
// storetest.Run and storetest.RunWriter (and storetest.RunMissingRoot,
// where a root can be missing) from its tests against a real server; and
// Register its URI schemes in an init function, so that a blank import makes
// Open understand them:
//
//	import _ "github.com/godelta/delta/logstore/s3" // s3://, s3a://
//
// Programs link only the backends they import: the root package delta
// imports local and memory only.
//
// A driver may also implement DirLister (ListDirs: the sub-directories
// under a directory), which VACUUM needs to walk a table's tree (Walk);
// every backend here does. Without it ListDirs and Walk report
// errors.ErrUnsupported, and the storetest case for it is skipped. A
// driver with real directories (local) also implements DirRemover
// (RemoveEmptyDir: remove a directory only if it is empty), with which
// VACUUM deletes the partition directories it empties; without it
// RemoveEmptyDir does nothing, since key prefixes are not objects.
//
// # Errors and concurrency
//
// Every error of a Store is an *OpError (the operation, the key, the kind,
// the driver's error). Callers act on the kind, with errors.Is: ErrNotFound,
// ErrAlreadyExists, ErrInvalidKey, ErrInvalidRange, ErrRootNotFound,
// ErrPermission, ErrOutcomeUnknown and ErrClosed, and a context's error;
// never on the message. Open adds ErrUnknownScheme. KindOf gives the kind
// of an error.
//
// A Store is safe for concurrent use by multiple goroutines; a Writer is
// not. The caller that opened a store (New, Open) owns it and must Close it.
// The examples show PutIfAbsent refusing a second writer, List, a streaming
// Writer, and the errors the portable layer gives.
package logstore

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"strings"
	"time"
)

// Error kinds every backend maps its own errors to. Test them with
// errors.Is; the backend's error stays reachable with errors.As.
var (
	// ErrNotFound is returned when the object does not exist.
	ErrNotFound = errors.New("logstore: object not found")
	// ErrAlreadyExists is returned by PutIfAbsent when the key is taken.
	ErrAlreadyExists = errors.New("logstore: object already exists")
	// ErrInvalidKey is returned for a key refused by CheckKey or a dir
	// refused by CheckDir: empty, absolute, ending in '/', with an empty,
	// "." or ".." segment, or holding '\\' or NUL.
	ErrInvalidKey = errors.New("logstore: invalid key")
	// ErrInvalidRange is returned by GetRange for a negative offset or
	// length (see CheckRange).
	ErrInvalidRange = errors.New("logstore: invalid range")
	// ErrRootNotFound is returned when the store's root does not exist: a
	// missing bucket or container.
	ErrRootNotFound = errors.New("logstore: root not found")
	// ErrPermission is returned when the storage refuses the caller: wrong,
	// unknown or expired credentials, or a policy that denies the request.
	ErrPermission = errors.New("logstore: permission denied")
	// ErrOutcomeUnknown is returned by a write that may or may not have
	// taken effect: a timeout, a reset connection, a cancelled context or a
	// 5xx answer after the request was sent. It never comes with
	// ErrAlreadyExists.
	ErrOutcomeUnknown = errors.New("logstore: outcome of the write unknown")
	// ErrClosed is returned by every call on a store after its Close.
	ErrClosed = errors.New("logstore: store closed")
	// ErrNotWritten is returned by a write that certainly did not take
	// effect, for a cause that has no kind of its own: the local backend
	// gives it for a full disk or quota (ENOSPC, EDQUOT), a read-only file
	// system or a directory at the key, met before the object was linked
	// into place. Retrying will fail the same way until someone acts.
	ErrNotWritten = errors.New("logstore: write failed, nothing was written")
)

// IsCertainFailure reports whether err, from a write, says that the write
// did not take effect: it matches ErrNotWritten, ErrPermission,
// ErrRootNotFound, ErrInvalidKey or ErrClosed, and not ErrOutcomeUnknown.
// A caller can then report err at once instead of reading the object back
// to learn whether it landed (the Delta commit does).
func IsCertainFailure(err error) bool {
	if err == nil || errors.Is(err, ErrOutcomeUnknown) {
		return false
	}
	for _, k := range []error{ErrNotWritten, ErrPermission, ErrRootNotFound, ErrInvalidKey, ErrClosed} {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}

// ObjectInfo describes one stored object.
type ObjectInfo struct {
	Key     string    // full key, relative to the store root
	Size    int64     // bytes
	ModTime time.Time // last modification, as the backend records it
}

// Store is the storage a Delta table lives on. Implementations must be safe
// for concurrent use by multiple goroutines. Each method honours ctx: when it
// is cancelled, the method returns ctx.Err() (wrapped) as soon as it can; a
// write cancelled midway may or may not have landed, exactly like a timeout.
type Store interface {
	// Get returns the whole content of the object at key.
	Get(ctx context.Context, key string) ([]byte, error)

	// GetRange returns length bytes from offset of the object at key. A
	// range that runs past the end returns the bytes up to the end; an
	// offset at or past the end returns no bytes and no error. A negative
	// offset or length is ErrInvalidRange. Used for Parquet footers and
	// deletion vectors, which are read in pieces.
	GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error)

	// Stat returns the size and modification time of the object at key.
	Stat(ctx context.Context, key string) (ObjectInfo, error)

	// List yields the objects directly under dir whose keys sort after
	// startAfter, in increasing byte order of key. dir is "" for the root or
	// a key prefix ending in '/'. startAfter is a full key or ""; it need
	// not exist and is only compared, as bytes. Sub-directories are not
	// descended into and not yielded. An object created or deleted while a
	// listing runs may or may not be yielded. Iteration stops at the first
	// error, which is yielded with a zero ObjectInfo.
	List(ctx context.Context, dir, startAfter string) iter.Seq2[ObjectInfo, error]

	// PutIfAbsent creates the object at key with data, atomically, only if
	// no object exists there; otherwise it returns ErrAlreadyExists and
	// changes nothing.
	PutIfAbsent(ctx context.Context, key string, data []byte) error

	// Put creates or replaces the object at key with data. Readers see either
	// the old content or the new, never a mix.
	Put(ctx context.Context, key string, data []byte) error

	// Delete removes the object at key. A missing object is not an error.
	Delete(ctx context.Context, key string) error

	// NewWriter returns a Writer that streams a new object to key; see
	// Writer. Nothing is visible at key until the Writer's Close returns
	// nil; cancelling ctx aborts the write.
	NewWriter(ctx context.Context, key string) (Writer, error)

	// URI returns the root of the store as a URI, without credentials or
	// query secrets: file:///abs/root, memory://name, s3://bucket/prefix.
	URI() string

	// Close releases what the store holds. Every later call gives
	// ErrClosed; a second Close returns nil.
	Close() error
}

// CheckKey returns ErrInvalidKey (wrapped with the key) unless key is a
// relative, clean, '/'-separated path. The portable layer calls it on every
// key, so drivers need not.
func CheckKey(key string) error {
	bad := func(reason string) error { return &KeyError{Key: key, Reason: reason} }
	switch {
	case key == "":
		return bad("a key is not empty")
	case strings.HasPrefix(key, "/"):
		return bad("a key is relative, it does not start with '/'")
	case strings.HasSuffix(key, "/"):
		return bad("a key does not end with '/'")
	case strings.Contains(key, "\\"):
		return bad("a key holds no backslash ('/' separates its segments)")
	case strings.ContainsRune(key, 0):
		return bad("a key holds no NUL byte")
	}
	for seg := range strings.SplitSeq(key, "/") {
		switch seg {
		case "":
			return bad("a key has no empty segment")
		case ".", "..":
			return bad(`a key has no "." or ".." segment`)
		}
	}
	return nil
}

// CheckDir is CheckKey for the dir argument of List: "" or a valid key
// followed by '/'.
func CheckDir(dir string) error {
	if dir == "" {
		return nil
	}
	if !strings.HasSuffix(dir, "/") {
		return &KeyError{Key: dir}
	}
	return CheckKey(strings.TrimSuffix(dir, "/"))
}

// CheckRange returns ErrInvalidRange (wrapped) if offset or length is
// negative. The portable layer calls it in GetRange.
func CheckRange(offset, length int64) error {
	if offset < 0 || length < 0 {
		return fmt.Errorf("%w: offset %d, length %d", ErrInvalidRange, offset, length)
	}
	return nil
}

// KeyError reports a key refused by CheckKey, and the rule it breaks.
// errors.Is(err, ErrInvalidKey) is true for it.
type KeyError struct {
	Key    string
	Reason string // the rule broken, as CheckKey words it; "" when not given
}

func (e *KeyError) Error() string {
	s := "logstore: invalid key " + quote(e.Key)
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}

func (e *KeyError) Is(target error) bool { return target == ErrInvalidKey }
func quote(s string) string              { return strconv.Quote(s) }

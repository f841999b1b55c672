package logstore

import (
	"context"
	"errors"
	"iter"
)

// Driver is what a backend implements: the Store methods without any of the
// shared checks, which the portable layer (*Portable) makes before calling
// it. A driver may assume that
//
//   - every key passed CheckKey (and the driver's CheckKey, if it is a
//     KeyChecker), every dir passed CheckDir, and every range CheckRange;
//   - ctx was not done when the call began;
//   - the store was not closed when the call began.
//
// It must keep the rest of the contract in the package doc: missing objects,
// PutIfAbsent's atomicity, List's order. Its errors need not name the
// operation or key (the portable layer adds both); they should keep the
// backend's own error reachable with errors.As, and either wrap a portable
// kind themselves, where the kind depends on more than the error (a retried
// put whose first attempt may have landed), or let ErrorKind find it.
//
// A Driver must be safe for concurrent use by multiple goroutines.
type Driver interface {
	Get(ctx context.Context, key string) ([]byte, error)
	GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error)
	Stat(ctx context.Context, key string) (ObjectInfo, error)
	List(ctx context.Context, dir, startAfter string) iter.Seq2[ObjectInfo, error]
	PutIfAbsent(ctx context.Context, key string, data []byte) error
	Put(ctx context.Context, key string, data []byte) error
	Delete(ctx context.Context, key string) error
	// NewWriter is Store.NewWriter: it streams one object (S3 multipart,
	// GCS resumable, Azure blocks, a local temporary file), so that the
	// object is never held whole in memory.
	NewWriter(ctx context.Context, key string) (Writer, error)

	// URI is Store.URI: the root, without credentials or secrets.
	URI() string
	// Close releases the driver's resources. The portable layer calls it
	// at most once.
	Close() error
	// ErrorKind classifies an error of this driver: it returns one of
	// ErrNotFound, ErrAlreadyExists, ErrRootNotFound, ErrPermission,
	// ErrOutcomeUnknown or ErrNotWritten, or nil when err is none of them. It is gocloud's
	// ErrorCode; the portable layer calls it on every error the driver
	// returns.
	ErrorKind(err error) error
}

// KeyChecker is a Driver that reserves some valid keys for itself (the local
// backend's temporary file names). The portable layer calls CheckKey after
// the portable key check, for every key and for dir (without its trailing
// '/') in List; an error should wrap ErrInvalidKey.
type KeyChecker interface {
	CheckKey(key string) error
}

// kinds are the portable kinds KindOf looks for, in order.
var kinds = []error{ErrClosed, ErrInvalidKey, ErrInvalidRange, ErrOutcomeUnknown, ErrAlreadyExists, ErrRootNotFound, ErrPermission, ErrNotFound, ErrNotWritten}

// KindOf returns the first portable kind err matches with errors.Is, or nil.
// Drivers may use it in ErrorKind for errors they have already classified.
func KindOf(err error) error {
	for _, k := range kinds {
		if errors.Is(err, k) {
			return k
		}
	}
	return nil
}

// DriverOf returns the driver of type T under s: s itself, the driver of a
// *Portable, or the same found through a chain of wrappers that have an
// Unwrap() Store method (such as testutil/faultstore). It reports false when
// there is none.
//
//	if l, ok := logstore.DriverOf[*local.Store](st); ok {
//		root := l.Root()
//	}
func DriverOf[T any](s any) (T, bool) {
	for s != nil {
		if t, ok := s.(T); ok {
			return t, true
		}
		switch w := s.(type) {
		case *Portable:
			s = w.d
		case interface{ Unwrap() Store }:
			s = w.Unwrap()
		default:
			s = nil
		}
	}
	var zero T
	return zero, false
}

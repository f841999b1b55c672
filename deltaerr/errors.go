// Package deltaerr holds the error kinds shared by every layer of godelta.
//
// It is a leaf package: it imports nothing of the project, so any package can
// return these kinds without importing upward. The root package delta
// re-exports them, and users match them with errors.Is.
//
// Each sentinel below names a kind of failure. Functions wrap it with detail
// (a path, a version, a feature name) using fmt.Errorf("...: %w", ErrX) or one
// of the structured types in this file, which satisfy errors.Is for their kind.
//
// Storage-level kinds (a missing object, an object that already exists) live
// in package logstore, which knows nothing of Delta.
package deltaerr

import (
	"errors"
	"fmt"
)

// Errors met while opening a table or loading a snapshot.
var (
	// ErrTableNotFound is returned when a path holds no Delta table: there is
	// no _delta_log directory, or it holds no commit or checkpoint.
	ErrTableNotFound = errors.New("table not found")

	// ErrCorrupt marks bytes that cannot be decoded or that break a rule of
	// the protocol: a commit line that is not JSON, a truncated checkpoint,
	// a log without protocol or metaData. It is distinct from an I/O failure.
	ErrCorrupt = errors.New("corrupt table data")

	// ErrUnsupportedFeature is returned when a table needs a protocol version
	// or a table feature this library cannot honour for the operation asked
	// (reading or writing). The *FeatureError carries the feature name.
	ErrUnsupportedFeature = errors.New("unsupported table feature")

	// ErrVersionNotFound is returned when a version asked for does not exist:
	// beyond the latest commit, or older than the earliest version that can
	// be reconstructed from the log that is left.
	ErrVersionNotFound = errors.New("version not found")

	// ErrTimestampOutOfRange is returned by time travel to a timestamp before
	// the earliest commit or after the latest one.
	ErrTimestampOutOfRange = errors.New("timestamp out of range")

	// ErrMissingLogFile is returned when the log has a hole: a commit that the
	// versions around it say must exist is not there, a log with commits
	// has neither commit 0 nor a checkpoint, or a log file a listing named
	// is gone when it is read. Readers list the log again a few times
	// before they return it (deltalog.Relist), so that a listing that
	// raced a writer or log cleanup is not mistaken for a broken log.
	ErrMissingLogFile = errors.New("missing log file")

	// ErrFileNotFound is returned when a file the log names (a data file,
	// a deletion vector, a change data file) is not in storage. The log
	// is sound, but the table's data is not whole: the file was deleted
	// outside the log, by a VACUUM with a retention shorter than a reader
	// needed, or by hand. It is not ErrCorrupt: no bytes are bad. The
	// *MissingFileError carries the path.
	ErrFileNotFound = errors.New("file not found")

	// ErrInvalidArgument is returned for a bad argument from the caller, such
	// as a negative version or a malformed URI.
	ErrInvalidArgument = errors.New("invalid argument")

	// ErrUnsupportedScheme is returned for a table URI whose scheme names no
	// store this library has.
	ErrUnsupportedScheme = errors.New("unsupported URI scheme")

	// ErrPathEscapesRoot is returned when a path in the log or given by a
	// caller would resolve outside the table root.
	ErrPathEscapesRoot = errors.New("path escapes the table root")

	// ErrRootsOverlap is returned by CLONE and CONVERT for a table root
	// that lies inside another table's, or holds one: the outer table's
	// VACUUM would take the inner table's files for its own.
	ErrRootsOverlap = errors.New("table roots overlap")

	// ErrNotEmpty is returned by CLONE for a target that holds files but
	// no table: they would become the clone's orphans, for its VACUUM.
	ErrNotEmpty = errors.New("location is not empty")

	// ErrTableReplaced is returned when the table at a location is no
	// longer the table a reader began with: its metaData carries another
	// table id, as after the table directory was deleted and a table
	// created there again. A reader that followed the location (a stream,
	// or one resumed at a stored offset) would mix the rows of two tables
	// and miss some of each. Spark's streaming source fails the same way
	// (DIFFERENT_DELTA_TABLE_READ_BY_STREAMING_SOURCE).
	ErrTableReplaced = errors.New("table replaced by a different table")

	// ErrCatalogManaged is returned for what a table with the
	// catalogManaged feature allows only through its managing catalog:
	// reading or committing through the directory alone (the catalog, not
	// the listing, says which commits exist), and the maintenance the
	// protocol forbids unless the catalog permits it (VACUUM, OPTIMIZE,
	// REORG, log cleanup). PROTOCOL.md "Catalog-managed tables".
	ErrCatalogManaged = errors.New("table is managed by a catalog")
)

// FeatureError says which feature or protocol version a table needs that
// this library does not support for an operation. errors.Is(err,
// ErrUnsupportedFeature) reports true for it.
type FeatureError struct {
	// Feature is the table feature name as written in the protocol action,
	// or a description such as "minReaderVersion 99".
	Feature string
	// Op is "read" or "write".
	Op string
}

func (e *FeatureError) Error() string {
	return fmt.Sprintf("table requires %s, which godelta does not support for %s", e.Feature, e.Op)
}

// Is reports whether target is ErrUnsupportedFeature.
func (e *FeatureError) Is(target error) bool { return target == ErrUnsupportedFeature }

// CatalogManagedError says what a table with the catalogManaged feature
// allows only through its catalog was asked of it otherwise: Op is "read",
// "write" or a maintenance verb. errors.Is reports true for
// ErrCatalogManaged and, since the table cannot be used this way here, for
// ErrUnsupportedFeature.
type CatalogManagedError struct {
	Op string
}

func (e *CatalogManagedError) Error() string {
	switch e.Op {
	case "read", "write":
		return "table is managed by a catalog (catalogManaged): " + e.Op + " it through its catalog; its directory alone does not say which commits exist"
	}
	return "table is managed by a catalog (catalogManaged): " + e.Op + " needs the catalog's permission, which this client does not have"
}

// Is reports whether target is ErrCatalogManaged or ErrUnsupportedFeature.
func (e *CatalogManagedError) Is(target error) bool {
	return target == ErrCatalogManaged || target == ErrUnsupportedFeature
}

// CorruptError says which file holds data that could not be decoded, and why.
// errors.Is(err, ErrCorrupt) reports true for it; Unwrap gives the cause.
type CorruptError struct {
	Path   string // the file, relative to the table root where known
	Reason string // what rule was broken
	Err    error  // the underlying decode error, if any
}

func (e *CorruptError) Error() string {
	msg := "corrupt " + e.Path
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Is reports whether target is ErrCorrupt.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// Unwrap returns the underlying cause.
func (e *CorruptError) Unwrap() error { return e.Err }

// MissingFileError says which file the log names that storage does not
// hold, and what to do about it. errors.Is(err, ErrFileNotFound) reports
// true for it; Unwrap gives the store's error (logstore.ErrNotFound), whose
// text, which names the path again, the message leaves out.
type MissingFileError struct {
	What string // "data file", "deletion vector file", ...
	Path string // as the log names it
	Err  error  // the store's error
}

func (e *MissingFileError) Error() string {
	return e.What + " " + e.Path + " is in the log but not in storage: it was deleted outside the log " +
		"(by a VACUUM with too short a retention, or by hand); restore it from a backup"
}

// Is reports whether target is ErrFileNotFound.
func (e *MissingFileError) Is(target error) bool { return target == ErrFileNotFound }

// Unwrap returns the store's error.
func (e *MissingFileError) Unwrap() error { return e.Err }

// Mark returns err with its message unchanged that also matches each of
// kinds under errors.Is and errors.As: for a kind whose text would only
// repeat what err says, where fmt.Errorf("%w: ...", kind) would stack the
// kind's text (and that of every kind it wraps) in front of the message.
// A nil err gives nil.
func Mark(err error, kinds ...error) error {
	if err == nil {
		return nil
	}
	return &marked{err: err, kinds: kinds}
}

type marked struct {
	err   error
	kinds []error
}

func (m *marked) Error() string   { return m.err.Error() }
func (m *marked) Unwrap() []error { return append([]error{m.err}, m.kinds...) }

// Corruptf returns a *CorruptError for path with a formatted reason.
func Corruptf(path string, format string, args ...any) error {
	return &CorruptError{Path: path, Reason: fmt.Sprintf(format, args...)}
}

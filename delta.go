// Package delta reads and writes Delta Lake tables: open a table by path or
// URI, then take a snapshot of it at its latest version, at an older
// version, or as it was at a point in time; create a table, append to it,
// overwrite it, or commit files of your own.
//
//	t, err := delta.Open(ctx, "/data/events")
//	snap, err := t.Snapshot(ctx)            // latest
//	old, err := t.SnapshotAt(ctx, 3)        // time travel by version
//	for f, err := range snap.Files(ctx) { ... } // live data files, read on first use
//	res, err := t.AppendRows(ctx, rows, delta.WriteOptions{}) // res.Version
//
// A Table is a handle on a location; it holds no table state and is safe for
// concurrent use. A *Snapshot is immutable and safe for concurrent use; its
// Update method returns a newer one, reading only what was committed since.
//
// # Guarantees
//
// Snapshots follow the Delta protocol's reconciliation rules exactly, the
// same as Spark Delta and delta-kernel: the newest protocol and metaData,
// the newest txn per application, domain metadata with removals, and file
// identity by path plus deletion-vector id. The _last_checkpoint hint is
// checked against the listing; a missing or corrupt checkpoint is skipped in
// favour of an older one or of the commits alone. A table this library
// cannot read (an unknown reader feature, a reader version above 3) is
// refused with an error naming the reason, before any data is read.
//
// # Writes: what is atomic, and when a commit becomes visible
//
// Every write (Create, Append, Overwrite, Update, a Transaction of Begin)
// is one commit, made by package txn: data files are written first, then
// the commit file _delta_log/<version>.json is put with put-if-absent. That
// put is the one atomic switch: before it, nothing of the write is visible;
// after it, a snapshot loaded or updated sees all of it. A snapshot never
// changes: one taken before the commit keeps its version.
//
// Writers isolate each other optimistically: a writer that loses the race
// for a version checks the commits that won (see package txn) at the
// transaction's isolation level, WriteSerializable unless the table or
// TxnOptions say otherwise, and commits on top of them or fails with a
// *ConflictError (errors.Is ErrConflict). Append retries on top of any
// commit that did not change the table's metadata or protocol, Overwrite
// re-plans after a concurrent change outside the rows it replaces, and
// Update runs its function again, so it must be idempotent.
//
// A crash before the put leaves the table as it was (and data files no
// commit names, for VACUUM); a crash after it leaves the whole commit. A
// put whose outcome is unknown (a timeout) is read back; when even that
// fails the error matches txn.ErrCommitUnknown, and the data files are kept.
//
// # After a commit
//
// A landed commit returns a CommitResult: version, timestamp, attempts,
// and the maintenance it made due. Append, Overwrite and Update then run
// that work (PostCommit): a checkpoint every delta.checkpointInterval
// versions (default 10), then the deletion of expired log files (see
// CleanupLog). It never fails the write: a failure is logged and left in
// CommitResult.PostCommit.Err, and readers use the commits until the next
// checkpoint. A program committing a Transaction of Begin calls PostCommit
// itself.
//
// # Errors
//
// Errors wrap the kinds declared below (re-exported from package deltaerr),
// to be tested with errors.Is. *FeatureError and *CorruptError carry detail
// and are reached with errors.As. A message says what failed once, with
// the context each layer adds (the table, the file, the version) and no
// package names.
package delta

import (
	"context"
	"fmt"
	"time"

	"github.com/godelta/delta/catalogmanaged"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/internal/logcache"
	"github.com/godelta/delta/location"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/snapshot"
)

// Error kinds; see package deltaerr for when each is returned.
var (
	ErrTableNotFound       = deltaerr.ErrTableNotFound
	ErrCorrupt             = deltaerr.ErrCorrupt
	ErrUnsupportedFeature  = deltaerr.ErrUnsupportedFeature
	ErrVersionNotFound     = deltaerr.ErrVersionNotFound
	ErrTimestampOutOfRange = deltaerr.ErrTimestampOutOfRange
	ErrMissingLogFile      = deltaerr.ErrMissingLogFile
	ErrFileNotFound        = deltaerr.ErrFileNotFound
	ErrInvalidArgument     = deltaerr.ErrInvalidArgument
	ErrUnsupportedScheme   = deltaerr.ErrUnsupportedScheme
	ErrTableReplaced       = deltaerr.ErrTableReplaced
)

// Structured errors.
type (
	FeatureError = deltaerr.FeatureError
	CorruptError = deltaerr.CorruptError
	// MissingFileError is a file the log names that storage lacks.
	MissingFileError = deltaerr.MissingFileError
)

// Snapshot is the state of a table at one version; see package snapshot.
type Snapshot = snapshot.Snapshot

// Commit is one entry of a table's history.
type Commit = snapshot.Commit

// Table is a Delta table at a location.
//
// Who owns the store: a Table from Open or Create opened its store itself
// (see Resolve) and owns it, so Close closes it. A Table from OpenStore or
// CreateStore uses the store it was given and never closes it; its Close
// does nothing, and the caller closes the store when every Table over it is
// done.
//
// The stores of a shallow clone's source (see CloneTo) are not the Table's:
// it hands scans, DML and OPTIMIZE the source root's URI only, and each
// reading inside them (a run of a Scan or Changes, a file rewrite) opens
// the source's store when it first needs it and closes it when it is done
// (see package scan), so no client of the source outlives the call that
// needed it.
type Table struct {
	uri   string
	store logstore.Store
	owned bool // store was opened by Open or Create: Close closes it
	// closer, when set, is what Close closes instead of store: the store
	// a catalog's view (OpenOptions.Catalog) wraps.
	closer logstore.Store
}

// Open returns the table at uri: a local path, or a URI whose scheme names
// a store (see Resolve). It fails with ErrTableNotFound when the location
// has no Delta log. The Table owns the store it opens: Close it when done.
func Open(ctx context.Context, uri string) (*Table, error) {
	return OpenWith(ctx, uri, OpenOptions{})
}

// OpenOptions tune OpenWith.
type OpenOptions struct {
	// TrustRoots are roots (URIs) outside the table whose files its log
	// may name and that its metadata does not declare: the source of a
	// shallow clone Spark wrote. They are read from, never written or
	// deleted. A clone this library made declares its sources itself (see
	// package location for the rule).
	TrustRoots []string

	// LogCacheDir, when set, names a local directory where the table's
	// immutable log files (commits, checkpoints, sidecars, version
	// checksums) are kept, so that opening the table again, in this
	// process or a later one, reads only what was committed since: on an
	// object store, a warm open no longer reads the checkpoint. Processes
	// may share the directory. A cached file is served only while the
	// store's latest listing reports the same size and modification time
	// for it; _last_checkpoint, listings and data files are never cached.
	// The directory is created if needed; a damaged entry is read again.
	LogCacheDir string
	// LogCacheMaxBytes caps the directory (1 GiB when zero); the least
	// recently used files go first. A log file over a quarter of the cap
	// is not cached.
	LogCacheMaxBytes int64

	// Catalog, when set, is the catalog that manages the table (a table
	// with the catalogManaged feature; package catalogmanaged): the table
	// is read and committed through the catalog's view of its log.
	Catalog catalogmanaged.Client
}

// wrapForTest, when set by a test, wraps the store OpenWith resolves,
// before the log cache: the tests count the requests that reach storage.
var wrapForTest func(logstore.Store) logstore.Store

// OpenWith is Open with options.
func OpenWith(ctx context.Context, uri string, opts OpenOptions) (*Table, error) {
	store, err := ResolveContext(ctx, uri)
	if err != nil {
		return nil, err
	}
	if wrapForTest != nil {
		store = wrapForTest(store)
	}
	if opts.LogCacheDir != "" {
		cached, err := logcache.New(store, opts.LogCacheDir, opts.LogCacheMaxBytes)
		if err != nil {
			store.Close()
			return nil, fmt.Errorf("log cache %s: %w", opts.LogCacheDir, err)
		}
		store = cached
	}
	store = location.Trust(store, opts.TrustRoots...)
	base := store
	if opts.Catalog != nil {
		store = catalogmanaged.New(store, opts.Catalog)
	}
	t, err := OpenStore(ctx, uri, store)
	if err != nil {
		base.Close()
		return nil, err
	}
	t.owned, t.closer = true, base
	return t, nil
}

// Close releases the store of a Table from Open or Create (an SDK client,
// say); later calls on the Table then fail with logstore.ErrClosed. For a
// Table from OpenStore or CreateStore it does nothing: the store belongs to
// the caller. A second Close returns nil.
func (t *Table) Close() error {
	if !t.owned {
		return nil
	}
	if t.closer != nil {
		return t.closer.Close()
	}
	return t.store.Close()
}

// OpenStore returns the table whose root is the root of store. name is used
// in messages only. The Table does not own store: its Close leaves store
// open.
func OpenStore(ctx context.Context, name string, store logstore.Store) (*Table, error) {
	for obj, err := range store.List(ctx, deltalog.LogDir, "") {
		if err != nil {
			return nil, fmt.Errorf("opening %s: %w", logstore.RedactURI(name), err)
		}
		if _, ok := deltalog.ParseName(obj.Key); ok {
			return &Table{uri: name, store: store}, nil
		}
	}
	return nil, fmt.Errorf("%s has no Delta log (%s with a commit or checkpoint): %w", logstore.RedactURI(name), deltalog.LogDir, ErrTableNotFound)
}

// URI returns the location the table was opened at.
func (t *Table) URI() string { return t.uri }

// Store returns the store the table lives on.
func (t *Table) Store() logstore.Store { return t.store }

// Snapshot returns the table at its latest version.
func (t *Table) Snapshot(ctx context.Context) (*Snapshot, error) {
	return snapshot.Load(ctx, t.store, deltalog.Latest)
}

// SnapshotAt returns the table at version. A version after the latest, or
// before the earliest the log can still reconstruct, is ErrVersionNotFound.
func (t *Table) SnapshotAt(ctx context.Context, version int64) (*Snapshot, error) {
	return snapshot.Load(ctx, t.store, version)
}

// SnapshotAtTimestamp returns the table as it was at ts: its newest version
// committed at or before ts. Commit times are in-commit timestamps where the
// table records them, else commit file times made monotonic. A time before
// the earliest or after the latest commit is ErrTimestampOutOfRange. The log
// is listed once, and no checkpoint's file actions are read.
func (t *Table) SnapshotAtTimestamp(ctx context.Context, ts time.Time) (*Snapshot, error) {
	return snapshot.LoadAsOf(ctx, t.store, ts)
}

// History returns up to limit commits, newest first (all for limit <= 0).
func (t *Table) History(ctx context.Context, limit int) ([]Commit, error) {
	return snapshot.History(ctx, t.store, limit)
}

// CanonicalPath returns the form of a file path in the log that identifies
// the file: a relative path percent-decoded, an absolute one as a decoded
// URI with its scheme's aliases merged (see location.Canonical). Adds and
// removes of the same file match by it.
func CanonicalPath(path string) string { return snapshot.CanonicalPath(path) }

// ParsePredicate parses a predicate in the SQL-like text form of package
// expr, such as "year = 2020 AND month >= 2".
func ParsePredicate(text string) (expr.Expr, error) { return expr.Parse(text) }

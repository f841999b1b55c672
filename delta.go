// Package delta reads Delta Lake tables: open a table by path or URI, then
// take a snapshot of it at its latest version, at an older version, or as it
// was at a point in time.
//
//	t, err := delta.Open(ctx, "/data/events")
//	snap, err := t.Snapshot(ctx)            // latest
//	old, err := t.SnapshotAt(ctx, 3)        // time travel by version
//	for f, err := range snap.Files(ctx) { ... } // live data files, read on first use
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
// # Errors
//
// Errors wrap the kinds declared below (re-exported from package deltaerr),
// to be tested with errors.Is. *FeatureError and *CorruptError carry detail
// and are reached with errors.As.
package delta

import (
	"context"
	"fmt"
	"time"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/expr"
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
	ErrInvalidArgument     = deltaerr.ErrInvalidArgument
	ErrUnsupportedScheme   = deltaerr.ErrUnsupportedScheme
)

// Structured errors.
type (
	FeatureError = deltaerr.FeatureError
	CorruptError = deltaerr.CorruptError
)

// Snapshot is the state of a table at one version; see package snapshot.
type Snapshot = snapshot.Snapshot

// Commit is one entry of a table's history.
type Commit = snapshot.Commit

// Table is a Delta table at a location.
type Table struct {
	uri   string
	store logstore.Store
}

// Open returns the table at uri: a local path, or a URI whose scheme names
// a store (see Resolve). It fails with ErrTableNotFound when the location
// has no Delta log.
func Open(ctx context.Context, uri string) (*Table, error) {
	store, err := ResolveContext(ctx, uri)
	if err != nil {
		return nil, err
	}
	return OpenStore(ctx, uri, store)
}

// OpenStore returns the table whose root is the root of store. name is used
// in messages only.
func OpenStore(ctx context.Context, name string, store logstore.Store) (*Table, error) {
	for obj, err := range store.List(ctx, deltalog.LogDir, "") {
		if err != nil {
			return nil, fmt.Errorf("delta: opening %s: %w", logstore.RedactURI(name), err)
		}
		if _, ok := deltalog.ParseName(obj.Key); ok {
			return &Table{uri: name, store: store}, nil
		}
	}
	return nil, fmt.Errorf("delta: %s has no Delta log (%s with a commit or checkpoint): %w", logstore.RedactURI(name), deltalog.LogDir, ErrTableNotFound)
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
// the file: percent-decoded, without a "file:" scheme. Adds and removes of
// the same file match by it.
func CanonicalPath(path string) string { return snapshot.CanonicalPath(path) }

// ParsePredicate parses a predicate in the SQL-like text form of package
// expr, such as "year = 2020 AND month >= 2".
func ParsePredicate(text string) (expr.Expr, error) { return expr.Parse(text) }

// Package sqlite opens the catalog's Store (catalog.SQLStore) on an
// embedded SQLite database, through modernc.org/sqlite: SQLite compiled to
// Go, so no cgo and no shared library. It is a package of its own so that
// only a program that serves a catalog links the database engine.
//
// The database is one file (plus its -wal and -shm files while open) in
// write-ahead-log mode, with foreign keys on, write transactions that take
// the write lock when they begin (BEGIN IMMEDIATE: two writers never
// deadlock upgrading a read lock) and a busy timeout, so that several
// processes may share the file: each change waits for the one before it.
// Reopening the file finds the state as the last committed change left it.
package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/godelta/delta/catalog"
)

// BusyTimeoutMillis is how long a change waits for another connection's
// write transaction (of this process or another) before it fails.
const BusyTimeoutMillis = 30_000

// Open opens, creating it if needed, the catalog database in the file at
// path, and returns the Store over it; the caller closes it. ":memory:"
// gives a database in memory that lives until Close (one connection).
func Open(ctx context.Context, path string) (*catalog.SQLStore, error) {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeoutMillis))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Set("_txlock", "immediate")
	dsn := "file:" + path
	if path != ":memory:" {
		q.Add("_pragma", "journal_mode(WAL)")
		dsn = "file:" + (&url.URL{Path: path}).EscapedPath()
	}
	db, err := sql.Open("sqlite", dsn+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("catalog/sqlite: %s: %w", path, err)
	}
	if path == ":memory:" {
		// Each connection to ":memory:" is a database of its own.
		db.SetMaxOpenConns(1)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("catalog/sqlite: %s: %w", path, err)
	}
	s, err := catalog.OpenSQL(ctx, db, catalog.SQLite)
	if err != nil {
		return nil, fmt.Errorf("catalog/sqlite: %s: %w", path, err)
	}
	return s, nil
}

// Package postgres opens the catalog's Store (catalog.SQLStore) on a
// PostgreSQL database, through the pgx driver: the backend for a catalog
// that runs as several replicas over one database. The SQL is the same
// as on SQLite (package catalog/sqlite); only the dialect differs
// ($n placeholders, names in the "C" collation so that paging orders
// bytes as Go does).
//
// Every change is one transaction at PostgreSQL's default isolation (read
// committed): registrations of one name race on the primary key (ON
// CONFLICT DO NOTHING: one winner, the others ErrAlreadyExists), and a
// namespace's foreign key keeps a table from outliving it. Replicas
// starting at once on an empty database create the schema one after the
// other, under an advisory lock (catalog.Postgres.MigrationLock).
package postgres

import (
	"context"
	"database/sql"
	"fmt"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver

	"github.com/godelta/delta/catalog"
)

// Open connects to the database dsn names (a postgres:// URL or a
// key=value string, as libpq takes) and returns the Store over it,
// creating the schema if the database has none; the caller closes it.
func Open(ctx context.Context, dsn string) (*catalog.SQLStore, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("catalog/postgres: %w", err)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("catalog/postgres: connecting: %w", err)
	}
	s, err := catalog.OpenSQL(ctx, db, catalog.Postgres)
	if err != nil {
		return nil, fmt.Errorf("catalog/postgres: %w", err)
	}
	return s, nil
}

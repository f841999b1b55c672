//go:build catalog_postgres

package main

import (
	"context"

	"github.com/godelta/delta/catalog"
	"github.com/godelta/delta/catalog/postgres"
	"github.com/godelta/delta/catalog/server"
	"github.com/godelta/delta/catalog/sqlite"
)

// Built with -tags catalog_postgres, `delta catalog serve --db
// postgres://...` keeps the catalog in PostgreSQL, which several servers
// may share. The default build links no PostgreSQL driver (see
// bench/RESULTS.md, issue 28: +5.7 MB of binary and +2 MiB of RSS at every
// start, for every command).
func init() {
	openCatalogDB = func(ctx context.Context, db string) (*catalog.SQLStore, error) {
		if server.IsPostgres(db) {
			return postgres.Open(ctx, db)
		}
		return sqlite.Open(ctx, db)
	}
}

// Package catalog is the model and state store of this library's own
// table catalog: namespaces, and the Delta tables registered in them, each
// a name bound to a table root URI. The server that makes the catalog
// reachable (package catalog/server, serving the Iceberg REST catalog API
// of package catalog/icebergrest) sits above it; nothing here speaks HTTP.
//
// # Model
//
// A Namespace is a list of one or more levels ("sales", or "sales",
// "emea"); a table is named by a TableIdent, its namespace and a name. A
// level and a table name are non-empty UTF-8 of at most 255 bytes without
// '/', '\\', control characters, the Iceberg namespace separator 0x1F, and
// are never "." or "..": every name of a warehouse is a directory name.
// Namespaces form a tree: creating "a"."b" needs "a".
//
// A Table is the registration of a Delta table: its identifier, its root
// URI (Location), a stable random ID and the time it was registered. The
// catalog never writes or deletes table files; dropping a table only
// forgets it. What the table holds (its Delta log, its UniForm Iceberg
// metadata) is read from the root at each request by the layers above, so
// a load always reflects the newest commit.
//
// # Store
//
// Store is the interface the server uses; SQLStore implements it over
// database/sql with portable SQL (CREATE TABLE IF NOT EXISTS, INSERT ...
// ON CONFLICT DO NOTHING, keyset paging), a Dialect supplying what
// differs between databases (placeholders, the text type that compares
// byte by byte). Package catalog/sqlite opens one on an embedded SQLite
// database through a pure-Go driver; a PostgreSQL backend is the same
// SQLStore with the Postgres dialect and a driver of its own.
//
// The schema, version 1:
//
//	catalog_meta(key PK, value)            schema_version
//	namespaces(name PK, parent, properties, created_ms)
//	tables(namespace, name, id UNIQUE, location, created_ms, PK(namespace, name))
//
// A namespace's name column joins its levels with 0x1F (parent likewise,
// "" at the top), so that children list with one indexed equality. A
// table's id is the key that survives a rename and that the ratification
// of catalog-managed commits references, in schema version 2:
//
//	managed_tables(table_id PK, latest)    the latest ratified version
//	managed_commits(table_id, version, file_name, file_size, modified_ms, PK(table_id, version))
//	                                       ratified commits not yet published
//
// (SQLStore applies the migration steps a database has not had, in one
// transaction, and refuses a database of a newer version:
// ErrSchemaVersion.) A ratification is a compare-and-set of latest and
// the insert of the commit, in one transaction; RatifyCommits does it for
// several tables in one transaction (a multi-table transaction:
// catalogmanaged.MultiTxn), taking the tables in ID order so that two
// overlapping transactions cannot deadlock: all are ratified or none.
//
// Names are compared byte by byte (the dialect's Text type), so listings
// are in Go's string order on every backend, and a page token (the last
// name of a page, base64url) resumes where the page ended.
//
// # Errors
//
// ErrNoSuchNamespace, ErrNoSuchTable, ErrAlreadyExists,
// ErrNamespaceNotEmpty and ErrInvalidName (which matches
// deltaerr.ErrInvalidArgument), each wrapped with the name concerned, so
// errors.Is tells them apart. Database failures are returned wrapped.
//
// # Concurrency
//
// A Store is safe for concurrent use. Every change is one database
// transaction: two registrations of one name race to one winner, the other
// gets ErrAlreadyExists; a namespace is dropped only if, in the same
// transaction, it has no table and no child.
package catalog

package catalog

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/godelta/delta/deltaerr"
)

// SchemaVersion is the version of the database schema this package
// writes and reads. A database of a newer version is refused
// (ErrSchemaVersion), never changed.
const SchemaVersion = 2

// ErrSchemaVersion: the database was made by a newer version of this
// package, or is not a catalog database.
var ErrSchemaVersion = errors.New("catalog: unknown database schema version")

// Dialect is what differs between the databases SQLStore runs on. Queries
// are written with '?' placeholders and portable SQL; Placeholder rewrites
// the n-th (from 1) for databases that number them.
type Dialect struct {
	// Name names the database in messages ("sqlite", "postgres").
	Name string
	// Placeholder returns the n-th placeholder; nil keeps '?'.
	Placeholder func(n int) string
	// Text is the column type of names: text compared byte by byte, so
	// that keyset paging and ordering agree with Go's string order
	// ("TEXT" in SQLite, `TEXT COLLATE "C"` in PostgreSQL).
	Text string
	// MigrationLock, if set, is the statement that starts the schema's
	// migration transaction and holds a lock until it ends, so that
	// stores opening one empty database at once create its schema one
	// after the other, the later ones finding it made. SQLite needs none:
	// its writers are serialised by the database lock (and the busy
	// timeout), and CREATE TABLE IF NOT EXISTS runs under it.
	MigrationLock string
}

// SQLite is the dialect of SQLite.
var SQLite = Dialect{Name: "sqlite", Text: "TEXT"}

// Postgres is the dialect of PostgreSQL.
// Its migrations take a transaction-scoped advisory lock: without it,
// replicas starting at once on an empty database race in CREATE TABLE IF
// NOT EXISTS (which is not atomic against a concurrent creation in
// PostgreSQL) and the losers fail their start.
var Postgres = Dialect{
	Name:          "postgres",
	Text:          `TEXT COLLATE "C"`,
	Placeholder:   func(n int) string { return "$" + strconv.Itoa(n) },
	MigrationLock: `SELECT pg_advisory_xact_lock(` + migrationLockKey + `)`,
}

// migrationLockKey is the advisory lock key of the catalog's migrations
// in PostgreSQL: a constant of its own (the bytes of "delta ca").
const migrationLockKey = "7234307623542088545"

// SQLStore is a Store over a database/sql database. It is safe for
// concurrent use.
type SQLStore struct {
	db  *sql.DB
	d   Dialect
	now func() time.Time
}

var _ Store = (*SQLStore)(nil)

// OpenSQL returns a Store over db, creating the schema if the database has
// none. The Store owns db from then on: Close closes it (on error too).
// ErrSchemaVersion for a database of a newer schema.
func OpenSQL(ctx context.Context, db *sql.DB, d Dialect) (*SQLStore, error) {
	s := &SQLStore{db: db, d: d, now: time.Now}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// DB returns the database, for a backend's own checks and tests.
func (s *SQLStore) DB() *sql.DB { return s.db }

// Close closes the database.
func (s *SQLStore) Close() error { return s.db.Close() }

// migrations are the schema's steps: migrations[i] takes a database of
// schema version i to version i+1 (version 0: no catalog tables). A
// database is brought to SchemaVersion by the steps it has not had, in
// one transaction with the version's update. Steps are never changed once
// released: a new version appends one (catalog-managed commits will add
// their tables so).
func (s *SQLStore) migrations() [][]string {
	t := s.d.Text
	return [][]string{{
		`CREATE TABLE namespaces (name ` + t + ` PRIMARY KEY, parent ` + t + ` NOT NULL, properties TEXT NOT NULL, created_ms BIGINT NOT NULL)`,
		`CREATE INDEX namespaces_parent ON namespaces (parent, name)`,
		`CREATE TABLE tables (namespace ` + t + ` NOT NULL REFERENCES namespaces (name), name ` + t + ` NOT NULL, id TEXT NOT NULL UNIQUE, location TEXT NOT NULL, created_ms BIGINT NOT NULL, PRIMARY KEY (namespace, name))`,
	}, {
		// Version 2: the ratified commits of catalog-managed tables (see
		// managed.go), by the table's id.
		`CREATE TABLE managed_tables (table_id TEXT PRIMARY KEY, latest BIGINT NOT NULL)`,
		`CREATE TABLE managed_commits (table_id TEXT NOT NULL, version BIGINT NOT NULL, file_name TEXT NOT NULL, file_size BIGINT NOT NULL, modified_ms BIGINT NOT NULL, PRIMARY KEY (table_id, version))`,
	}}
}

// migrate brings the schema to SchemaVersion (see migrations), or refuses
// a newer one.
func (s *SQLStore) migrate(ctx context.Context) error {
	steps := s.migrations()
	if len(steps) != SchemaVersion {
		panic("catalog: SchemaVersion and the migrations disagree")
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		if s.d.MigrationLock != "" {
			if _, err := tx.ExecContext(ctx, s.d.MigrationLock); err != nil {
				return fmt.Errorf("catalog: locking the %s schema: %w", s.d.Name, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS catalog_meta (key `+s.d.Text+` PRIMARY KEY, value TEXT NOT NULL)`); err != nil {
			return fmt.Errorf("catalog: creating the %s schema: %w", s.d.Name, err)
		}
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO catalog_meta (key, value) VALUES (?, ?) ON CONFLICT DO NOTHING`), "schema_version", "0"); err != nil {
			return fmt.Errorf("catalog: %w", err)
		}
		var raw string
		if err := tx.QueryRowContext(ctx, s.q(`SELECT value FROM catalog_meta WHERE key = ?`), "schema_version").Scan(&raw); err != nil {
			return fmt.Errorf("catalog: %w", err)
		}
		v, err := strconv.Atoi(raw)
		if err != nil || v < 0 || v > SchemaVersion {
			return fmt.Errorf("%w: %q (this program knows up to %d)", ErrSchemaVersion, raw, SchemaVersion)
		}
		for ; v < SchemaVersion; v++ {
			for _, q := range steps[v] {
				if _, err := tx.ExecContext(ctx, q); err != nil {
					return fmt.Errorf("catalog: %s schema version %d: %w", s.d.Name, v+1, err)
				}
			}
		}
		if _, err := tx.ExecContext(ctx, s.q(`UPDATE catalog_meta SET value = ? WHERE key = ?`), strconv.Itoa(SchemaVersion), "schema_version"); err != nil {
			return fmt.Errorf("catalog: %w", err)
		}
		return nil
	})
}

// q rewrites the '?' placeholders of query for the dialect.
func (s *SQLStore) q(query string) string {
	if s.d.Placeholder == nil {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString(s.d.Placeholder(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// tx runs fn in a transaction, committed when fn returns nil.
func (s *SQLStore) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("catalog: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("catalog: commit: %w", err)
	}
	return nil
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// nsExists tells whether ns exists; the root always does.
func (s *SQLStore) nsExists(ctx context.Context, q querier, ns Namespace) (bool, error) {
	if len(ns) == 0 {
		return true, nil
	}
	var one int
	err := q.QueryRowContext(ctx, s.q(`SELECT 1 FROM namespaces WHERE name = ?`), ns.Key()).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("catalog: %w", err)
	}
	return true, nil
}

// CreateNamespace implements Store.
func (s *SQLStore) CreateNamespace(ctx context.Context, ns Namespace, props map[string]string) error {
	if err := ns.Check(); err != nil {
		return err
	}
	if props == nil {
		props = map[string]string{}
	}
	raw, err := json.Marshal(props)
	if err != nil {
		return fmt.Errorf("catalog: %w", err)
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		ok, err := s.nsExists(ctx, tx, ns.Parent())
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: %s (the parent of %s)", ErrNoSuchNamespace, ns.Parent(), ns)
		}
		res, err := tx.ExecContext(ctx, s.q(`INSERT INTO namespaces (name, parent, properties, created_ms) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`),
			ns.Key(), ns.Parent().Key(), string(raw), s.now().UnixMilli())
		if err != nil {
			return fmt.Errorf("catalog: creating namespace %s: %w", ns, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("catalog: %w", err)
		} else if n == 0 {
			return fmt.Errorf("%w: namespace %s", ErrAlreadyExists, ns)
		}
		return nil
	})
}

// Namespace implements Store.
func (s *SQLStore) Namespace(ctx context.Context, ns Namespace) (NamespaceInfo, error) {
	if err := ns.Check(); err != nil {
		return NamespaceInfo{}, err
	}
	var raw string
	var ms int64
	err := s.db.QueryRowContext(ctx, s.q(`SELECT properties, created_ms FROM namespaces WHERE name = ?`), ns.Key()).Scan(&raw, &ms)
	if errors.Is(err, sql.ErrNoRows) {
		return NamespaceInfo{}, fmt.Errorf("%w: %s", ErrNoSuchNamespace, ns)
	}
	if err != nil {
		return NamespaceInfo{}, fmt.Errorf("catalog: %w", err)
	}
	info := NamespaceInfo{Name: ns, Created: time.UnixMilli(ms)}
	if err := json.Unmarshal([]byte(raw), &info.Properties); err != nil {
		return NamespaceInfo{}, fmt.Errorf("catalog: properties of namespace %s: %w", ns, err)
	}
	return info, nil
}

// ListNamespaces implements Store.
func (s *SQLStore) ListNamespaces(ctx context.Context, parent Namespace, page Page) ([]Namespace, string, error) {
	if len(parent) > 0 {
		if err := parent.Check(); err != nil {
			return nil, "", err
		}
	}
	after, err := decodeToken(page.Token)
	if err != nil {
		return nil, "", err
	}
	var out []Namespace
	next, err := s.list(ctx, parent, page.Size,
		`SELECT name FROM namespaces WHERE parent = ? AND name > ? ORDER BY name LIMIT ?`,
		parent.Key(), keyAfter(parent, after), func(name string) { out = append(out, NamespaceFromKey(name)) })
	if err != nil {
		return nil, "", err
	}
	if next != "" {
		next = encodeToken(out[len(out)-1][len(parent)])
	}
	return out, next, nil
}

// keyAfter is the namespace key listing resumes after: the last level
// listed under parent (the root key "" sorts first).
func keyAfter(parent Namespace, after string) string {
	if after == "" {
		return ""
	}
	return append(Namespace{}, append(parent, after)...).Key()
}

// list runs query (parent key, after, limit) in ns, which must exist,
// calling add for each name, and says whether a page follows ("+") or not
// (""). It reads outside a transaction (a write transaction on SQLite,
// whose transactions take the write lock): a namespace dropped between
// the check and the query lists as empty.
func (s *SQLStore) list(ctx context.Context, ns Namespace, size int, query, key, after string, add func(string)) (string, error) {
	limit := int64(size) + 1
	if size <= 0 {
		limit = 1 << 62
	}
	ok, err := s.nsExists(ctx, s.db, ns)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("%w: %s", ErrNoSuchNamespace, ns)
	}
	rows, err := s.db.QueryContext(ctx, s.q(query), key, after, limit)
	if err != nil {
		return "", fmt.Errorf("catalog: %w", err)
	}
	defer rows.Close()
	more, n := "", 0
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return "", fmt.Errorf("catalog: %w", err)
		}
		if n++; size > 0 && n > size {
			more = "+"
			break
		}
		add(name)
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("catalog: %w", err)
	}
	return more, nil
}

// Page tokens are the last name listed, base64url-encoded so that they
// pass through URLs and JSON unchanged.
func encodeToken(last string) string { return base64.RawURLEncoding.EncodeToString([]byte(last)) }

func decodeToken(tok string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || (tok != "" && len(b) == 0) {
		return "", fmt.Errorf("%w: page token %q", ErrInvalidPageToken, tok)
	}
	return string(b), nil
}

// ErrInvalidPageToken: a Page.Token that no listing returned. It matches
// deltaerr.ErrInvalidArgument.
var ErrInvalidPageToken = fmt.Errorf("catalog: invalid page token: %w", deltaerr.ErrInvalidArgument)

// DropNamespace implements Store.
func (s *SQLStore) DropNamespace(ctx context.Context, ns Namespace) error {
	if err := ns.Check(); err != nil {
		return err
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		ok, err := s.nsExists(ctx, tx, ns)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: %s", ErrNoSuchNamespace, ns)
		}
		var one int
		err = tx.QueryRowContext(ctx, s.q(`SELECT 1 FROM tables WHERE namespace = ? UNION ALL SELECT 1 FROM namespaces WHERE parent = ? LIMIT 1`), ns.Key(), ns.Key()).Scan(&one)
		if err == nil {
			return fmt.Errorf("%w: %s", ErrNamespaceNotEmpty, ns)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("catalog: %w", err)
		}
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM namespaces WHERE name = ?`), ns.Key()); err != nil {
			return fmt.Errorf("catalog: dropping namespace %s: %w", ns, err)
		}
		return nil
	})
}

// RegisterTable implements Store.
func (s *SQLStore) RegisterTable(ctx context.Context, t Table) (Table, error) {
	if err := t.Ident.Check(); err != nil {
		return Table{}, err
	}
	if t.Location == "" {
		return Table{}, fmt.Errorf("%w: table %s: empty location", ErrInvalidName, t.Ident)
	}
	t.ID = uuid.NewString()
	t.Created = time.UnixMilli(s.now().UnixMilli())
	err := s.tx(ctx, func(tx *sql.Tx) error {
		ok, err := s.nsExists(ctx, tx, t.Ident.Namespace)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: %s", ErrNoSuchNamespace, t.Ident.Namespace)
		}
		res, err := tx.ExecContext(ctx, s.q(`INSERT INTO tables (namespace, name, id, location, created_ms) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`),
			t.Ident.Namespace.Key(), t.Ident.Name, t.ID, t.Location, t.Created.UnixMilli())
		if err != nil {
			return fmt.Errorf("catalog: registering table %s: %w", t.Ident, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("catalog: %w", err)
		} else if n == 0 {
			return fmt.Errorf("%w: table %s", ErrAlreadyExists, t.Ident)
		}
		return nil
	})
	if err != nil {
		return Table{}, err
	}
	return t, nil
}

// Table implements Store.
func (s *SQLStore) Table(ctx context.Context, id TableIdent) (Table, error) {
	if err := id.Check(); err != nil {
		return Table{}, err
	}
	t := Table{Ident: id}
	var ms int64
	err := s.db.QueryRowContext(ctx, s.q(`SELECT id, location, created_ms FROM tables WHERE namespace = ? AND name = ?`), id.Namespace.Key(), id.Name).Scan(&t.ID, &t.Location, &ms)
	if errors.Is(err, sql.ErrNoRows) {
		if ok, err := s.nsExists(ctx, s.db, id.Namespace); err != nil {
			return Table{}, err
		} else if !ok {
			return Table{}, fmt.Errorf("%w: %s", ErrNoSuchNamespace, id.Namespace)
		}
		return Table{}, fmt.Errorf("%w: %s", ErrNoSuchTable, id)
	}
	if err != nil {
		return Table{}, fmt.Errorf("catalog: %w", err)
	}
	t.Created = time.UnixMilli(ms)
	return t, nil
}

// ListTables implements Store.
func (s *SQLStore) ListTables(ctx context.Context, ns Namespace, page Page) ([]TableIdent, string, error) {
	if err := ns.Check(); err != nil {
		return nil, "", err
	}
	after, err := decodeToken(page.Token)
	if err != nil {
		return nil, "", err
	}
	var out []TableIdent
	next, err := s.list(ctx, ns, page.Size,
		`SELECT name FROM tables WHERE namespace = ? AND name > ? ORDER BY name LIMIT ?`,
		ns.Key(), after, func(name string) { out = append(out, TableIdent{Namespace: ns, Name: name}) })
	if err != nil {
		return nil, "", err
	}
	if next != "" {
		next = encodeToken(out[len(out)-1].Name)
	}
	return out, next, nil
}

// DropTable implements Store.
func (s *SQLStore) DropTable(ctx context.Context, id TableIdent) error {
	if err := id.Check(); err != nil {
		return err
	}
	res, err := s.db.ExecContext(ctx, s.q(`DELETE FROM tables WHERE namespace = ? AND name = ?`), id.Namespace.Key(), id.Name)
	if err != nil {
		return fmt.Errorf("catalog: dropping table %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("catalog: %w", err)
	} else if n == 0 {
		return fmt.Errorf("%w: %s", ErrNoSuchTable, id)
	}
	return nil
}

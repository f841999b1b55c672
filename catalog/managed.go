package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/godelta/delta/catalogmanaged"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
)

// The catalog ratifies the commits of its catalog-managed tables
// (PROTOCOL.md "Catalog-managed tables"): managed_tables holds each
// table's latest ratified version, managed_commits the ratified commits
// not yet published. A table's first ratified commit may have any
// version (the versions before it were published by its creator, as a
// table created outside the catalog and then managed by it); each later
// one must follow the latest, and a version is ratified once: the
// compare-and-set on managed_tables.latest, in the transaction that
// stores the commit, makes two ratifications of one version impossible on
// any database, one server or several.

// TableByID returns the registration of the table whose ID is id, or
// ErrNoSuchTable.
func (s *SQLStore) TableByID(ctx context.Context, id string) (Table, error) {
	var t Table
	var ns string
	var ms int64
	err := s.db.QueryRowContext(ctx, s.q(`SELECT namespace, name, id, location, created_ms FROM tables WHERE id = ?`), id).Scan(&ns, &t.Ident.Name, &t.ID, &t.Location, &ms)
	if errors.Is(err, sql.ErrNoRows) {
		return Table{}, fmt.Errorf("%w: id %s", ErrNoSuchTable, id)
	}
	if err != nil {
		return Table{}, fmt.Errorf("catalog: %w", err)
	}
	t.Ident.Namespace = NamespaceFromKey(ns)
	t.Created = time.UnixMilli(ms)
	return t, nil
}

// ManagedCommits returns the latest ratified version of the table with
// ID id (-1 when none) and its ratified commits not yet published. Both
// come from one statement, so that they agree with each other while
// ratifications go on (two queries could see a commit past the latest
// they read).
func (s *SQLStore) ManagedCommits(ctx context.Context, id string) (catalogmanaged.Ratified, error) {
	r := catalogmanaged.Ratified{Latest: -1}
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT t.latest, c.version, c.file_name, c.file_size, c.modified_ms
		FROM managed_tables t LEFT JOIN managed_commits c ON c.table_id = t.table_id
		WHERE t.table_id = ? ORDER BY c.version`), id)
	if err != nil {
		return r, fmt.Errorf("catalog: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			version, size, ms sql.NullInt64
			name              sql.NullString
		)
		if err := rows.Scan(&r.Latest, &version, &name, &size, &ms); err != nil {
			return r, fmt.Errorf("catalog: %w", err)
		}
		if !version.Valid {
			continue // the table has no unpublished commit
		}
		r.Commits = append(r.Commits, catalogmanaged.Commit{Version: version.Int64, Key: deltalog.StagedDir + name.String, Size: size.Int64, Timestamp: ms.Int64})
	}
	if err := rows.Err(); err != nil {
		return r, fmt.Errorf("catalog: %w", err)
	}
	return r, nil
}

// RatifyCommit ratifies the staged commit c as version c.Version of the
// table with ID id: catalogmanaged.ErrConflict when another commit holds
// the version or it does not follow the latest; the same commit sent
// again is ratified already (nil).
func (s *SQLStore) RatifyCommit(ctx context.Context, id string, c catalogmanaged.Commit) error {
	return s.RatifyCommits(ctx, []catalogmanaged.TableCommit{{Table: id, Commit: c}})
}

// RatifyCommits ratifies commits to several tables in one database
// transaction: all of them, or none (catalogmanaged.MultiCommitter). A
// conflict on any table is catalogmanaged.ErrConflict and ratifies
// nothing; commits sent again after a lost answer are ratified already.
// The tables' rows are updated in the order of their IDs, so that two
// transactions over overlapping tables cannot deadlock.
func (s *SQLStore) RatifyCommits(ctx context.Context, commits []catalogmanaged.TableCommit) error {
	if len(commits) == 0 {
		return fmt.Errorf("catalog: no commit to ratify: %w", deltaerr.ErrInvalidArgument)
	}
	ordered := slices.Clone(commits)
	slices.SortFunc(ordered, func(a, b catalogmanaged.TableCommit) int { return strings.Compare(a.Table, b.Table) })
	for i, tc := range ordered {
		c := tc.Commit
		if v, _, ok := deltalog.ParseStagedName(c.Key); !ok || v != c.Version {
			return fmt.Errorf("catalog: %q is not a staged commit of version %d: %w (%w)", c.Key, c.Version, deltaerr.ErrInvalidArgument, logstore.ErrNotWritten)
		}
		if i > 0 && ordered[i-1].Table == tc.Table {
			return fmt.Errorf("catalog: table %s twice in one commit: %w (%w)", tc.Table, deltaerr.ErrInvalidArgument, logstore.ErrNotWritten)
		}
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		for _, tc := range ordered {
			if err := s.ratifyIn(ctx, tx, tc.Table, tc.Commit); err != nil {
				return err
			}
		}
		return nil
	})
}

// ratifyIn ratifies c as a version of table id in tx; a commit sent again
// is left as it is.
func (s *SQLStore) ratifyIn(ctx context.Context, tx *sql.Tx, id string, c catalogmanaged.Commit) error {
	name := c.Key[len(deltalog.StagedDir):]
	var have string
	err := tx.QueryRowContext(ctx, s.q(`SELECT file_name FROM managed_commits WHERE table_id = ? AND version = ?`), id, c.Version).Scan(&have)
	switch {
	case err == nil && have == name:
		return nil // sent again: ratified already
	case err == nil:
		return fmt.Errorf("catalog: version %d of table %s was ratified for %s: %w", c.Version, id, have, catalogmanaged.ErrConflict)
	case !errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("catalog: %w", err)
	}
	res, err := tx.ExecContext(ctx, s.q(`UPDATE managed_tables SET latest = ? WHERE table_id = ? AND latest = ?`), c.Version, id, c.Version-1)
	if err != nil {
		return fmt.Errorf("catalog: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("catalog: %w", err)
	} else if n == 0 {
		// No row moved: the table's first commit, or a version that
		// does not follow the latest.
		res, err := tx.ExecContext(ctx, s.q(`INSERT INTO managed_tables (table_id, latest) VALUES (?, ?) ON CONFLICT DO NOTHING`), id, c.Version)
		if err != nil {
			return fmt.Errorf("catalog: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("catalog: %w", err)
		} else if n == 0 {
			return fmt.Errorf("catalog: version %d of table %s does not follow its latest ratified version: %w", c.Version, id, catalogmanaged.ErrConflict)
		}
	}
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO managed_commits (table_id, version, file_name, file_size, modified_ms) VALUES (?, ?, ?, ?, ?)`),
		id, c.Version, name, c.Size, c.Timestamp); err != nil {
		return fmt.Errorf("catalog: version %d of table %s: %w (%w)", c.Version, id, err, catalogmanaged.ErrConflict)
	}
	return nil
}

// PublishedCommits forgets the ratified commits of the table with ID id
// up to version: they are published in its _delta_log.
func (s *SQLStore) PublishedCommits(ctx context.Context, id string, version int64) error {
	if _, err := s.db.ExecContext(ctx, s.q(`DELETE FROM managed_commits WHERE table_id = ? AND version <= ?`), id, version); err != nil {
		return fmt.Errorf("catalog: %w", err)
	}
	return nil
}

// ManagedClient returns the catalogmanaged.Client by which the catalog
// ratifies the commits of the table with ID id, in process.
func (s *SQLStore) ManagedClient(id string) catalogmanaged.Client {
	return sqlManaged{s: s, id: id}
}

type sqlManaged struct {
	s  *SQLStore
	id string
}

func (m sqlManaged) Commits(ctx context.Context) (catalogmanaged.Ratified, error) {
	if _, err := m.s.TableByID(ctx, m.id); err != nil {
		return catalogmanaged.Ratified{}, fmt.Errorf("%w (%w)", err, deltaerr.ErrTableNotFound)
	}
	return m.s.ManagedCommits(ctx, m.id)
}

func (m sqlManaged) Commit(ctx context.Context, c catalogmanaged.Commit) error {
	if _, err := m.s.TableByID(ctx, m.id); err != nil {
		return fmt.Errorf("%w (%w, %w)", err, deltaerr.ErrTableNotFound, logstore.ErrNotWritten)
	}
	return m.s.RatifyCommit(ctx, m.id, c)
}

func (m sqlManaged) Published(ctx context.Context, version int64) error {
	return m.s.PublishedCommits(ctx, m.id, version)
}

var _ catalogmanaged.MultiCommitter = (*SQLStore)(nil)

// CommitAll ratifies commits to several of the catalog's tables at once,
// all or none (catalogmanaged.MultiCommitter, in process): each table
// must be registered, then RatifyCommits.
func (s *SQLStore) CommitAll(ctx context.Context, commits []catalogmanaged.TableCommit) error {
	for _, tc := range commits {
		if _, err := s.TableByID(ctx, tc.Table); err != nil {
			return fmt.Errorf("%w (%w, %w)", err, deltaerr.ErrTableNotFound, logstore.ErrNotWritten)
		}
	}
	return s.RatifyCommits(ctx, commits)
}

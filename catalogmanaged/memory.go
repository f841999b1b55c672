package catalogmanaged

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"github.com/godelta/delta/deltaerr"
)

// Memory is a catalog held in this process's memory: it ratifies the
// commits of the tables it manages, in version order and each version
// once, and stores the ratified commits until they are published. It
// keeps nothing across processes; it serves tests, tools and programs that
// are the only writer of their tables. Its methods are safe for
// concurrent use.
type Memory struct {
	mu     sync.Mutex
	tables map[string]*memoryTable
}

type memoryTable struct {
	latest int64
	// commits are the ratified commits not yet reported published, in
	// version order.
	commits []Commit
}

// NewMemory returns an empty catalog.
func NewMemory() *Memory {
	return &Memory{tables: map[string]*memoryTable{}}
}

// Manage makes id a table of the catalog whose versions up to latest are
// already published in its _delta_log (-1 for a table yet to be created,
// whose first commit is version 0). A table the catalog already manages is
// deltaerr.ErrInvalidArgument.
func (m *Memory) Manage(id string, latest int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.tables[id]; ok {
		return fmt.Errorf("catalogmanaged: table %q is managed already: %w", id, deltaerr.ErrInvalidArgument)
	}
	if latest < -1 {
		return fmt.Errorf("catalogmanaged: table %q at version %d: %w", id, latest, deltaerr.ErrInvalidArgument)
	}
	m.tables[id] = &memoryTable{latest: latest}
	return nil
}

// Table returns the client of table id, which must be managed (Manage).
func (m *Memory) Table(id string) Client {
	return memoryClient{m: m, id: id}
}

// table returns table id, locked; the caller unlocks m.
func (m *Memory) table(id string) (*memoryTable, error) {
	m.mu.Lock()
	t, ok := m.tables[id]
	if !ok {
		m.mu.Unlock()
		return nil, fmt.Errorf("catalogmanaged: table %q: %w", id, deltaerr.ErrTableNotFound)
	}
	return t, nil
}

type memoryClient struct {
	m  *Memory
	id string
}

func (c memoryClient) Commits(ctx context.Context) (Ratified, error) {
	if err := ctx.Err(); err != nil {
		return Ratified{}, err
	}
	t, err := c.m.table(c.id)
	if err != nil {
		return Ratified{}, err
	}
	defer c.m.mu.Unlock()
	r := Ratified{Latest: t.latest, Commits: make([]Commit, len(t.commits))}
	for i, cm := range t.commits {
		cm.Inline = bytes.Clone(cm.Inline)
		r.Commits[i] = cm
	}
	return r, nil
}

func (c memoryClient) Commit(ctx context.Context, cm Commit) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if (cm.Key == "") == (cm.Inline == nil) {
		return fmt.Errorf("catalogmanaged: a commit is staged (Key) or inline (Inline): %w", deltaerr.ErrInvalidArgument)
	}
	t, err := c.m.table(c.id)
	if err != nil {
		return err
	}
	defer c.m.mu.Unlock()
	// A commit sent again (its answer was lost) is ratified already.
	if t.ratifiedAlready(cm) {
		return nil
	}
	if cm.Version != t.latest+1 {
		return fmt.Errorf("catalogmanaged: table %q: version %d asked for, latest ratified is %d: %w", c.id, cm.Version, t.latest, ErrConflict)
	}
	t.ratify(cm)
	return nil
}

func (c memoryClient) Published(ctx context.Context, version int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t, err := c.m.table(c.id)
	if err != nil {
		return err
	}
	defer c.m.mu.Unlock()
	i := 0
	for i < len(t.commits) && t.commits[i].Version <= version {
		i++
	}
	t.commits = t.commits[i:]
	return nil
}

var _ MultiCommitter = (*Memory)(nil)

// CommitAll ratifies commits to several tables at once, all or none
// (MultiCommitter): under one lock, every commit is checked first, then
// all are stored.
func (m *Memory) CommitAll(ctx context.Context, commits []TableCommit) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := map[string]bool{}
	fresh := make([]bool, len(commits))
	for i, tc := range commits {
		cm := tc.Commit
		if (cm.Key == "") == (cm.Inline == nil) {
			return fmt.Errorf("catalogmanaged: a commit is staged (Key) or inline (Inline): %w", deltaerr.ErrInvalidArgument)
		}
		if seen[tc.Table] {
			return fmt.Errorf("catalogmanaged: table %q twice in one multi-table commit: %w", tc.Table, deltaerr.ErrInvalidArgument)
		}
		seen[tc.Table] = true
		t, ok := m.tables[tc.Table]
		if !ok {
			return fmt.Errorf("catalogmanaged: table %q: %w", tc.Table, deltaerr.ErrTableNotFound)
		}
		if t.ratifiedAlready(cm) {
			continue // sent again after a lost answer
		}
		if cm.Version != t.latest+1 {
			return fmt.Errorf("catalogmanaged: table %q: version %d asked for, latest ratified is %d: %w", tc.Table, cm.Version, t.latest, ErrConflict)
		}
		fresh[i] = true
	}
	for i, tc := range commits {
		if fresh[i] {
			m.tables[tc.Table].ratify(tc.Commit)
		}
	}
	return nil
}

// ratifiedAlready reports whether the staged commit cm is ratified
// already (a request sent again after its answer was lost).
func (t *memoryTable) ratifiedAlready(cm Commit) bool {
	for _, have := range t.commits {
		if have.Version == cm.Version && have.Key != "" && have.Key == cm.Key {
			return true
		}
	}
	return false
}

// ratify stores cm as the table's latest version.
func (t *memoryTable) ratify(cm Commit) {
	cm.Inline = bytes.Clone(cm.Inline)
	t.commits = append(t.commits, cm)
	t.latest = cm.Version
}

package delta

import (
	"bytes"
	"context"
	"errors"
	"sync"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/fileset"
	"github.com/godelta/delta/logstore"
)

// CloneResult says what CloneTo committed; see fileset.CloneResult.
type CloneResult = fileset.CloneResult

// CloneTo makes a shallow clone of snap, a snapshot of t at any version,
// at target (a path or URI, see Resolve), which must not hold a table
// (ErrTableExists): a new table whose version 0 names the files of snap
// by absolute path, with snap's schema, partitioning and properties, as
// Spark's SHALLOW CLONE does (see fileset.Clone). It returns the clone,
// which the caller closes. The source is never written: the clone's own
// writes go under target, and VACUUM of the clone keeps the source's files.
//
// A Table reads a clone's files from the source root that its version 0
// (the CLONE commit) names: scans and the change data feed of t trust that
// root, and no other, for absolute paths outside t's own root. The store
// of the source root is opened by each reading that needs it and closed
// when that reading ends (see Table), never kept by the clone's Table.
func (t *Table) CloneTo(ctx context.Context, snap *Snapshot, target string, opts TxnOptions) (*Table, CloneResult, error) {
	if opts.EngineInfo == "" {
		opts.EngineInfo = EngineInfo
	}
	store, err := ResolveContext(ctx, target)
	if err != nil {
		return nil, CloneResult{}, err
	}
	res, err := fileset.Clone(ctx, snap, store, fileset.CloneOptions{Txn: opts})
	if err != nil {
		store.Close()
		return nil, res, err
	}
	c := &Table{uri: target, store: store, owned: true}
	c.PostCommit(ctx, &res.Commit)
	return c, res, nil
}

// cloneSources are the source roots a table's CLONE commit names. The
// zero value is ready; roots reads version 0 once. They are URIs only:
// the readings they are handed to (scan.Options.ExternalRoots) open and
// close the stores.
type cloneSources struct {
	mu    sync.Mutex
	done  bool
	found []string
}

// roots returns the source root of the table in store when its version 0
// is a CLONE commit (operationParameters.source), else an empty slice. A
// version 0 that is gone (log cleanup) or unreadable trusts nothing, and is
// tried again on the next call.
func (c *cloneSources) roots(ctx context.Context, store logstore.Store) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return c.found
	}
	c.found = []string{}
	b, err := store.Get(ctx, deltalog.CommitKey(0))
	if errors.Is(err, logstore.ErrNotFound) {
		c.done = true
		return c.found
	}
	if err != nil {
		return c.found
	}
	c.done = true
	acts, err := actions.DecodeCommitReader(deltalog.CommitKey(0), bytes.NewReader(b))
	if err != nil {
		return c.found
	}
	for _, a := range acts {
		if ci := a.CommitInfo; ci != nil && ci.Operation == fileset.OperationClone {
			if src, ok := ci.OperationParameters["source"].(string); ok && src != "" {
				c.found = append(c.found, src)
			}
		}
	}
	return c.found
}

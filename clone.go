package delta

import (
	"context"

	"github.com/godelta/delta/fileset"
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
// A Table reads a shallow clone's files from the source roots its
// metadata declares (package location): scans and the change data feed
// trust those roots, and no other, for absolute paths outside its own root. The store
// of the source root is opened by each reading that needs it and closed
// when that reading ends (see Table), never kept by the clone's Table.
func (t *Table) CloneTo(ctx context.Context, snap *Snapshot, target string, opts TxnOptions) (*Table, CloneResult, error) {
	return t.clone(ctx, snap, target, fileset.CloneOptions{Txn: opts})
}

// DeepCloneTo makes a deep clone of snap at target: CloneTo, but every data
// file and deletion vector file of snap is copied under target and named
// by a relative path, so the clone needs nothing of the source (see
// fileset.Clone); CloneResult counts the copies.
func (t *Table) DeepCloneTo(ctx context.Context, snap *Snapshot, target string, opts TxnOptions) (*Table, CloneResult, error) {
	return t.clone(ctx, snap, target, fileset.CloneOptions{Txn: opts, Deep: true})
}

func (t *Table) clone(ctx context.Context, snap *Snapshot, target string, opts fileset.CloneOptions) (*Table, CloneResult, error) {
	if opts.Txn.EngineInfo == "" {
		opts.Txn.EngineInfo = EngineInfo
	}
	store, err := ResolveContext(ctx, target)
	if err != nil {
		return nil, CloneResult{}, err
	}
	res, err := fileset.Clone(ctx, snap, store, opts)
	if err != nil {
		store.Close()
		return nil, res, err
	}
	c := &Table{uri: target, store: store, owned: true}
	c.PostCommit(ctx, &res.Commit)
	return c, res, nil
}

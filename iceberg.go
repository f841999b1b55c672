package delta

import (
	"context"

	"github.com/godelta/delta/iceberg"
)

// UniForm Iceberg; see package iceberg.
type (
	// IcebergStatus is the state of a table's Iceberg metadata: the latest
	// metadata file and the Delta version it was converted from.
	IcebergStatus = iceberg.Status
	// IcebergResult says which Delta versions a conversion turned into
	// Iceberg snapshots.
	IcebergResult = iceberg.Result
)

// IcebergEnableOptions tune EnableIcebergWith: see iceberg.EnableOptions.
type IcebergEnableOptions = iceberg.EnableOptions

// EnableIceberg turns UniForm Iceberg on for the table (see
// iceberg.Enable: delta.universalFormat.enabledFormats=iceberg,
// icebergCompatV2, column mapping, in one checked commit), then writes its
// Iceberg metadata with PostCommit. A table that has it already gives a
// zero CommitResult and no commit. A table with data files Iceberg readers
// would misread gives iceberg.ErrNeedsRewrite; EnableIcebergWith can
// rewrite them.
func (t *Table) EnableIceberg(ctx context.Context, opts TxnOptions) (CommitResult, error) {
	return t.EnableIcebergWith(ctx, IcebergEnableOptions{Txn: opts})
}

// EnableIcebergWith is EnableIceberg with options: with Rewrite, the data
// files Iceberg readers would misread (in a partitioned table, files
// without the partition columns materialized) are rewritten in the
// enabling commit, as Spark's REORG TABLE ... APPLY (UPGRADE UNIFORM
// (ICEBERG_COMPAT_VERSION = 2)) does. See iceberg.EnableWith.
func (t *Table) EnableIcebergWith(ctx context.Context, opts IcebergEnableOptions) (CommitResult, error) {
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return CommitResult{}, err
	}
	if opts.Txn.EngineInfo == "" {
		opts.Txn.EngineInfo = EngineInfo
	}
	res, err := iceberg.EnableWith(ctx, snap, opts)
	if err != nil || res.Config() == nil {
		return res, err
	}
	t.PostCommit(ctx, &res)
	return res, nil
}

// SyncIceberg brings the table's Iceberg metadata (metadata/ beside
// _delta_log/) up to the latest Delta version: one Iceberg snapshot per
// version not converted yet (see iceberg.Convert). Commits through this
// package do it after each commit (PostCommit), so SyncIceberg is for
// catching up after a failed or skipped conversion, or after commits by
// other writers. A table without UniForm Iceberg gives
// iceberg.ErrNotEnabled.
func (t *Table) SyncIceberg(ctx context.Context) (IcebergResult, error) {
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return IcebergResult{}, err
	}
	return iceberg.Convert(ctx, snap, iceberg.Options{})
}

// IcebergStatus reads the state of the table's Iceberg metadata.
func (t *Table) IcebergStatus(ctx context.Context) (IcebergStatus, error) {
	return iceberg.ReadStatus(ctx, t.store)
}

package delta

import (
	"context"

	"github.com/godelta/delta/alter"
	"github.com/godelta/delta/schema"
)

// Schema evolution and table definition changes (ALTER TABLE); see package
// alter. Each is one commit of metadata (and protocol, when a feature is
// needed), never a rewrite of data, followed by the post-commit work.
// Errors are alter's (ErrColumnMappingRequired, ErrTypeWideningDisabled,
// ...), a *ConstraintError for a constraint a row breaks, a
// *tableconfig.PropertyError for a property Spark refuses.

// AlterOptions tune a change of the table's definition.
type AlterOptions struct {
	// Txn configures the commit; the operation is set by each method.
	Txn TxnOptions
}

// alterRun loads a writable snapshot, runs fn and the post-commit work.
func (t *Table) alterRun(ctx context.Context, opts AlterOptions, fn func(*Snapshot, alter.Options) (CommitResult, error)) (CommitResult, error) {
	snap, err := t.writableSnapshot(ctx)
	if err != nil {
		return CommitResult{}, err
	}
	o := opts.Txn
	if o.EngineInfo == "" {
		o.EngineInfo = EngineInfo
	}
	res, err := fn(snap, alter.Options{Txn: o})
	if err != nil {
		return CommitResult{}, err
	}
	if res.Version > 0 {
		t.PostCommit(ctx, &res)
	}
	return res, nil
}

// AddColumn adds a nullable column: at the top level when parent is nil,
// else inside the struct column at parent (alter.AddColumn).
func (t *Table) AddColumn(ctx context.Context, parent []string, field schema.StructField, opts AlterOptions) (CommitResult, error) {
	return t.alterRun(ctx, opts, func(s *Snapshot, o alter.Options) (CommitResult, error) {
		return alter.AddColumn(ctx, s, parent, field, o)
	})
}

// RenameColumn renames the column at path, on a column-mapping table
// (alter.RenameColumn).
func (t *Table) RenameColumn(ctx context.Context, path []string, newName string, opts AlterOptions) (CommitResult, error) {
	return t.alterRun(ctx, opts, func(s *Snapshot, o alter.Options) (CommitResult, error) {
		return alter.RenameColumn(ctx, s, path, newName, o)
	})
}

// DropColumns drops columns, on a column-mapping table
// (alter.DropColumns).
func (t *Table) DropColumns(ctx context.Context, paths [][]string, opts AlterOptions) (CommitResult, error) {
	return t.alterRun(ctx, opts, func(s *Snapshot, o alter.Options) (CommitResult, error) {
		return alter.DropColumns(ctx, s, paths, o)
	})
}

// WidenColumn changes a column's type to a wider one, on a table with
// delta.enableTypeWidening (alter.WidenColumn).
func (t *Table) WidenColumn(ctx context.Context, path []string, to schema.DataType, opts AlterOptions) (CommitResult, error) {
	return t.alterRun(ctx, opts, func(s *Snapshot, o alter.Options) (CommitResult, error) {
		return alter.WidenColumn(ctx, s, path, to, o)
	})
}

// SetColumnDefault sets (or, with sql empty, drops) the default of a
// top-level column (alter.SetColumnDefault).
func (t *Table) SetColumnDefault(ctx context.Context, column, sql string, opts AlterOptions) (CommitResult, error) {
	return t.alterRun(ctx, opts, func(s *Snapshot, o alter.Options) (CommitResult, error) {
		return alter.SetColumnDefault(ctx, s, []string{column}, sql, o)
	})
}

// SetProperties sets table properties (alter.SetProperties).
func (t *Table) SetProperties(ctx context.Context, props map[string]string, opts AlterOptions) (CommitResult, error) {
	return t.alterRun(ctx, opts, func(s *Snapshot, o alter.Options) (CommitResult, error) {
		return alter.SetProperties(ctx, s, props, o)
	})
}

// UnsetProperties removes table properties (alter.UnsetProperties).
func (t *Table) UnsetProperties(ctx context.Context, keys []string, ifExists bool, opts AlterOptions) (CommitResult, error) {
	return t.alterRun(ctx, opts, func(s *Snapshot, o alter.Options) (CommitResult, error) {
		return alter.UnsetProperties(ctx, s, keys, ifExists, o)
	})
}

// AddConstraint adds a CHECK constraint after checking every row
// (alter.AddConstraint).
func (t *Table) AddConstraint(ctx context.Context, name, expression string, opts AlterOptions) (CommitResult, error) {
	return t.alterRun(ctx, opts, func(s *Snapshot, o alter.Options) (CommitResult, error) {
		return alter.AddConstraint(ctx, s, name, expression, o)
	})
}

// DropConstraint drops a CHECK constraint (alter.DropConstraint).
func (t *Table) DropConstraint(ctx context.Context, name string, ifExists bool, opts AlterOptions) (CommitResult, error) {
	return t.alterRun(ctx, opts, func(s *Snapshot, o alter.Options) (CommitResult, error) {
		return alter.DropConstraint(ctx, s, name, ifExists, o)
	})
}

// EnableFeature adds a table feature to the protocol, turning it on when a
// property does (alter.EnableFeature).
func (t *Table) EnableFeature(ctx context.Context, name string, opts AlterOptions) (CommitResult, error) {
	return t.alterRun(ctx, opts, func(s *Snapshot, o alter.Options) (CommitResult, error) {
		return alter.EnableFeature(ctx, s, name, o)
	})
}

// DropFeature removes the writer feature name from the table's protocol,
// as ALTER TABLE ... DROP FEATURE name does (see alter.DropFeature for
// the features it drops and what they need first).
func (t *Table) DropFeature(ctx context.Context, name string, opts AlterOptions) (CommitResult, error) {
	return t.alterRun(ctx, opts, func(s *Snapshot, o alter.Options) (CommitResult, error) {
		return alter.DropFeature(ctx, s, name, o)
	})
}

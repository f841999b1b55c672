package delta

import (
	"context"
	"fmt"
	"iter"

	"github.com/godelta/delta/dml"
	"github.com/godelta/delta/schema"
)

// MERGE; see dml.Merge.
type (
	// MergeSource is the data a merge reads: a schema and its rows.
	MergeSource = dml.Source
	// MergeResult is what a merge did: the DML result, and the merge's
	// own metrics as Spark names them.
	MergeResult = dml.MergeResult
	// MergeMetrics are a merge's figures in commitInfo.operationMetrics.
	MergeMetrics = dml.MergeMetrics
)

// MergeRows is a merge source of rows, each a value per field of sch, in
// order.
func MergeRows(sch *schema.StructType, rows [][]schema.Value) MergeSource {
	return dml.RowsSource(sch, rows)
}

// MergeStructs is a merge source of Go structs, bound to the columns of
// sch as AppendStructs binds them.
func MergeStructs[T any](sch *schema.StructType, rows iter.Seq[T]) MergeSource {
	return dml.StructSource(sch, rows)
}

// MergeTable is a merge source reading the table snap shows, at its
// version (a snapshot of SnapshotAt is a table at a version), with the
// scan options opts.
func MergeTable(ctx context.Context, snap *Snapshot, opts ScanOptions) (MergeSource, error) {
	return dml.TableSource(ctx, snap, opts)
}

// MergeBuilder is a MERGE being described: the source, the join condition
// and the WHEN clauses, added in order (the first clause of a kind whose
// condition holds wins), then run by Execute. The target is t and the
// source s in every expression, unless As says otherwise. A condition ""
// is none (the clause always applies); assignments are "c = expr[, d =
// expr]" over target columns. An error in an argument is kept and
// returned by Execute. A MergeBuilder is not safe for concurrent use.
type MergeBuilder struct {
	t    *Table
	src  MergeSource
	spec dml.MergeSpec
	opts DMLOptions
	err  error
}

// Merge starts a MERGE of source into the table on the condition on
// (t.id = s.id). See dml.Merge for the semantics: clauses in Spark's
// order, SQL nulls, a target row matched twice an error, file skipping
// from the source's join keys, one commit recording what it read.
func (t *Table) Merge(source MergeSource, on string) *MergeBuilder {
	b := &MergeBuilder{t: t, src: source}
	b.spec.On, b.err = parseWhere(on)
	if b.err == nil && b.spec.On == nil {
		b.err = fmt.Errorf("%w: a merge needs a condition", dml.ErrMergeClause)
	}
	return b
}

// As names the target and the source in expressions (default t and s).
func (b *MergeBuilder) As(target, source string) *MergeBuilder {
	b.spec.TargetAlias, b.spec.SourceAlias = target, source
	return b
}

// WithSchemaEvolution is Spark's MERGE WITH SCHEMA EVOLUTION: UPDATE SET *
// and INSERT * add the source's columns the table lacks (nested struct
// fields too) to its schema, in the merge's commit; see
// dml.MergeSpec.SchemaEvolution.
func (b *MergeBuilder) WithSchemaEvolution() *MergeBuilder {
	b.spec.SchemaEvolution = true
	return b
}

// WithMemoryBudget bounds the memory the merge holds its source in
// (bytes; 0: dml.DefaultMergeMemory, 256 MiB): a larger source is spilled
// to temporary files under spillDir (empty: os.TempDir(); never inside
// the table root) and joined partition by partition, with the same
// result. See dml.MergeSpec.MemoryBudget.
func (b *MergeBuilder) WithMemoryBudget(bytes int64, spillDir string) *MergeBuilder {
	b.spec.MemoryBudget, b.spec.SpillDir = bytes, spillDir
	return b
}

// Options sets the options of the merge: strategy, files, commit.
func (b *MergeBuilder) Options(opts DMLOptions) *MergeBuilder {
	b.opts = opts
	return b
}

// WhenMatchedUpdate adds WHEN MATCHED [AND cond] THEN UPDATE SET set.
func (b *MergeBuilder) WhenMatchedUpdate(cond, set string) *MergeBuilder {
	return b.add(&b.spec.Matched, cond, dml.ActionUpdate, set, false)
}

// WhenMatchedUpdateAll adds WHEN MATCHED [AND cond] THEN UPDATE SET *.
func (b *MergeBuilder) WhenMatchedUpdateAll(cond string) *MergeBuilder {
	return b.add(&b.spec.Matched, cond, dml.ActionUpdate, "", true)
}

// WhenMatchedDelete adds WHEN MATCHED [AND cond] THEN DELETE.
func (b *MergeBuilder) WhenMatchedDelete(cond string) *MergeBuilder {
	return b.add(&b.spec.Matched, cond, dml.ActionDelete, "", false)
}

// WhenNotMatchedInsert adds WHEN NOT MATCHED [AND cond] THEN INSERT, with
// the values of the columns given as "c = expr[, d = expr]" over source
// columns; columns not given are null (generated columns computed).
func (b *MergeBuilder) WhenNotMatchedInsert(cond, values string) *MergeBuilder {
	return b.add(&b.spec.NotMatched, cond, dml.ActionInsert, values, false)
}

// WhenNotMatchedInsertAll adds WHEN NOT MATCHED [AND cond] THEN INSERT *.
func (b *MergeBuilder) WhenNotMatchedInsertAll(cond string) *MergeBuilder {
	return b.add(&b.spec.NotMatched, cond, dml.ActionInsert, "", true)
}

// WhenNotMatchedBySourceUpdate adds WHEN NOT MATCHED BY SOURCE [AND cond]
// THEN UPDATE SET set (over target columns only).
func (b *MergeBuilder) WhenNotMatchedBySourceUpdate(cond, set string) *MergeBuilder {
	return b.add(&b.spec.NotMatchedBySource, cond, dml.ActionUpdate, set, false)
}

// WhenNotMatchedBySourceDelete adds WHEN NOT MATCHED BY SOURCE [AND
// cond] THEN DELETE.
func (b *MergeBuilder) WhenNotMatchedBySourceDelete(cond string) *MergeBuilder {
	return b.add(&b.spec.NotMatchedBySource, cond, dml.ActionDelete, "", false)
}

func (b *MergeBuilder) add(list *[]dml.Clause, cond string, a dml.Action, set string, all bool) *MergeBuilder {
	if b.err != nil {
		return b
	}
	c := dml.Clause{Action: a, All: all}
	if c.Condition, b.err = parseWhere(cond); b.err != nil {
		return b
	}
	if set != "" {
		if c.Set, b.err = dml.ParseAssignments(set); b.err != nil {
			return b
		}
	}
	*list = append(*list, c)
	return b
}

// Execute runs the merge on the latest version of the table and commits
// it, then runs the post-commit work. A merge that changes nothing
// commits nothing (Committed false).
func (b *MergeBuilder) Execute(ctx context.Context) (MergeResult, error) {
	if b.err != nil {
		return MergeResult{}, b.err
	}
	snap, err := b.t.Snapshot(ctx)
	if err != nil {
		return MergeResult{}, err
	}
	res, err := dml.Merge(ctx, snap, b.src, b.spec, b.t.dmlOptions(b.opts))
	if err != nil {
		return MergeResult{}, err
	}
	if res.Committed {
		b.t.PostCommit(ctx, &res.Commit)
	}
	return res, nil
}

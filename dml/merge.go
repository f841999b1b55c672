package dml

import (
	"errors"
	"fmt"
	"iter"
	"strconv"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/schema"
)

// Action is what a merge clause does.
type Action uint8

// The merge actions.
const (
	// ActionUpdate changes the target row: Set, or every column with All.
	ActionUpdate Action = iota + 1
	// ActionDelete deletes the target row.
	ActionDelete
	// ActionInsert inserts a row built from the source row: Set, or every
	// column with All.
	ActionInsert
)

func (a Action) String() string {
	switch a {
	case ActionUpdate:
		return "update"
	case ActionDelete:
		return "delete"
	case ActionInsert:
		return "insert"
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// Clause is one WHEN clause of a merge.
type Clause struct {
	// Condition, when not nil, must be TRUE for the clause to apply.
	Condition expr.Expr
	// Action is ActionUpdate, ActionDelete or ActionInsert.
	Action Action
	// Set are the assignments of an update or an insert: Column a
	// top-level target column, optionally qualified (t.col); Value an
	// expression over the columns the clause sees. An insert leaves the
	// columns it does not set null (generated columns computed).
	Set []Assignment
	// All is UPDATE SET * or INSERT *: every target column from the source
	// column of the same name. Set must then be empty.
	All bool
}

// MergeSpec is a merge statement: the join condition On and the WHEN
// clauses, each list applied in order. Merge joins a source with a target table on a
// condition and, for each pair, applies the first clause of the right kind
// whose condition holds, as Spark's MERGE INTO does:
//
//   - WHEN MATCHED [AND c] THEN UPDATE SET ... | UPDATE SET * | DELETE,
//     for a target row the condition pairs with a source row;
//   - WHEN NOT MATCHED [AND c] THEN INSERT (cols) VALUES (...) | INSERT *,
//     for a source row no target row pairs with;
//   - WHEN NOT MATCHED BY SOURCE [AND c] THEN UPDATE SET ... | DELETE, for
//     a target row no source row pairs with.
//
// Names: the target is t and the source s (MergeSpec's aliases), so the
// condition reads t.id = s.id; an unqualified name is the column of
// whichever side has it, and one both sides have is ambiguous
// (ErrMergeColumn). MATCHED clauses may use both sides, NOT MATCHED
// clauses the source only, NOT MATCHED BY SOURCE clauses the target only.
// Assignments name target columns. Values are computed with SQL null
// semantics (expr.EvalValue) and converted to the column's type as the
// package doc's "Assigning values" says (nested struct fields matched by
// name, recursively; a struct field on one side only is ErrMergeColumn
// and expr.ErrAssign); a clause
// condition holds only where it is TRUE; a NULL join key never matches.
// UPDATE SET * and INSERT * take every target column from the source
// column of the same name (case-insensitive); a target column the source
// lacks is ErrMergeColumn, except a generated column, which is computed. A
// source column the target lacks is ignored, or added to the table with
// SchemaEvolution. Updated rows get their generated
// columns computed again; every row written (updated or inserted) goes
// through the row writer's checks: NOT NULL, invariants, CHECK constraints
// and generated columns.
//
// A target row that two source rows match is ErrMultipleMatch, as Spark's
// DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE, counted on the
// join condition alone, whatever the clause conditions say. Spark's
// exception is kept: a merge whose only MATCHED clause is an unconditional
// DELETE deletes the row once. A merge without MATCHED clauses modifies no
// matched row, so many matches are not an error there.
//
// The source is read into memory, up to MemoryBudget bytes of rows and
// hash index (about 40 bytes per source value, plus the index), as in
// Spark's broadcast hash join; memory does not grow with the target, which
// is streamed file by file. When the condition has equality terms between
// a target and a source column (t.a = s.b, ANDed with anything), the
// source rows are hashed on them and each target row looks up its
// candidates (a hash join: time linear in both sides). A source larger
// than the budget is then spilled to local temporary files, partitioned
// by a hash of the join key, and each partition is joined in turn with the
// keys of the target rows that can match it (a grace hash join: the
// source is written once and read twice more, the target's key columns
// read once more); peak memory stays near the budget, whatever the
// source's size, and the result (rows, files, change data, metrics,
// errors) is the same as in memory. Without equality terms each target
// row is tested against every source row (a nested loop: time
// proportional to target rows read times source rows, so keep such
// sources small), and the source stays in memory whatever the budget.
//
// Only the target files that can hold a matched row are read: the
// conditions on target columns alone, the range (min, max) of the source's
// join keys on each equality term, and the source's values of a key that
// is a partition column (up to a thousand distinct values) make a
// predicate that partition values and file statistics skip files with.
// A NOT MATCHED BY SOURCE clause needs the unmatched target rows too, so
// every file is read unless each such clause has a condition, which is
// then ORed into the predicate. The files read are rewritten through
// write.Rewrite, by copy-on-write, or with deletion vectors where the
// table has them on (delta.enableDeletionVectors); inserted rows are
// written through the row writer, with insert change data when the table
// has the change data feed on.
//
// The whole merge is one commit (operation MERGE) that records what it
// read: the predicate above and the files read (the whole table when every
// file is read). So a concurrent delete of a file it read fails it with a
// *txn.ConflictError (errors.Is txn.ErrConflict), and so does a concurrent
// append to a partition the merge read, unless that append is blind and
// the isolation level WriteSerializable (the default), as in Spark;
// concurrent changes elsewhere are rebased over. After a conflict the
// merge is planned again on the new version only when
// Options.ConflictRetries asks for it.
type MergeSpec struct {
	// On pairs target rows with source rows.
	On                 expr.Expr
	Matched            []Clause
	NotMatched         []Clause
	NotMatchedBySource []Clause
	// TargetAlias and SourceAlias qualify names in the expressions; empty
	// means "t" and "s".
	TargetAlias, SourceAlias string
	// SchemaEvolution is Spark's MERGE WITH SCHEMA EVOLUTION: when a
	// clause is UPDATE SET * or INSERT *, the source's columns the target
	// lacks are added to the table's schema (at the end of their struct,
	// nested struct fields too, nullable; widened where the table has type
	// widening on), in the merge's own commit; rows the merge does not
	// write read them as null. Without a * clause the schema is left as it
	// is. See write.MergedMetadata.
	SchemaEvolution bool
	// MemoryBudget bounds the bytes of source rows and hash index the
	// merge holds in memory; past it the source is spilled (see above).
	// 0 means DefaultMergeMemory.
	MemoryBudget int64
	// SpillDir is the local directory under which a spilled source's
	// temporary files go (a directory of their own, removed when Merge
	// returns); empty means os.TempDir(). It may not be inside the table
	// root.
	SpillDir string
}

// Source is the data a merge reads: rows of Schema, in batches holding a
// column per field of Schema, in order. Merge reads Batches once, whole,
// into memory or to its spill files (MergeSpec.MemoryBudget), so a
// batch's slices may be reused once it has been yielded.
type Source struct {
	Schema  *schema.StructType
	Batches iter.Seq2[schema.Batch, error]
}

// MergeMetrics are a merge's counts, named in commitInfo.operationMetrics
// as Spark names them (the field's name with a lower-case first letter).
type MergeMetrics struct {
	NumSourceRows                          int64
	NumTargetRowsInserted                  int64
	NumTargetRowsUpdated                   int64
	NumTargetRowsMatchedUpdated            int64
	NumTargetRowsNotMatchedBySourceUpdated int64
	NumTargetRowsDeleted                   int64
	NumTargetRowsMatchedDeleted            int64
	NumTargetRowsNotMatchedBySourceDeleted int64
	NumTargetRowsCopied                    int64
	NumOutputRows                          int64
	NumTargetFilesAdded                    int64
	NumTargetFilesRemoved                  int64
	NumTargetChangeFilesAdded              int64
	NumTargetBytesAdded                    int64
	NumTargetBytesRemoved                  int64
	NumTargetDeletionVectorsAdded          int64
	NumTargetDeletionVectorsRemoved        int64
	NumTargetDeletionVectorsUpdated        int64
	// Files considered, before and after skipping.
	NumTargetFilesBeforeSkipping int64
	NumTargetFilesAfterSkipping  int64
	ExecutionTimeMs              int64
	MaterializeSourceTimeMs      int64
	ScanTimeMs                   int64
	RewriteTimeMs                int64
}

// Map returns the metrics as commitInfo.operationMetrics holds them:
// Spark's names, values as decimal strings, and only those of
// DeltaOperationMetrics.MERGE (the files before and after skipping are
// SQL metrics Spark does not record in the log).
func (m MergeMetrics) Map() map[string]any {
	d := func(n int64) string { return strconv.FormatInt(n, 10) }
	return map[string]any{
		"numSourceRows":                          d(m.NumSourceRows),
		"numTargetRowsInserted":                  d(m.NumTargetRowsInserted),
		"numTargetRowsUpdated":                   d(m.NumTargetRowsUpdated),
		"numTargetRowsMatchedUpdated":            d(m.NumTargetRowsMatchedUpdated),
		"numTargetRowsNotMatchedBySourceUpdated": d(m.NumTargetRowsNotMatchedBySourceUpdated),
		"numTargetRowsDeleted":                   d(m.NumTargetRowsDeleted),
		"numTargetRowsMatchedDeleted":            d(m.NumTargetRowsMatchedDeleted),
		"numTargetRowsNotMatchedBySourceDeleted": d(m.NumTargetRowsNotMatchedBySourceDeleted),
		"numTargetRowsCopied":                    d(m.NumTargetRowsCopied),
		"numOutputRows":                          d(m.NumOutputRows),
		"numTargetFilesAdded":                    d(m.NumTargetFilesAdded),
		"numTargetFilesRemoved":                  d(m.NumTargetFilesRemoved),
		"numTargetChangeFilesAdded":              d(m.NumTargetChangeFilesAdded),
		"numTargetBytesAdded":                    d(m.NumTargetBytesAdded),
		"numTargetBytesRemoved":                  d(m.NumTargetBytesRemoved),
		"numTargetDeletionVectorsAdded":          d(m.NumTargetDeletionVectorsAdded),
		"numTargetDeletionVectorsRemoved":        d(m.NumTargetDeletionVectorsRemoved),
		"numTargetDeletionVectorsUpdated":        d(m.NumTargetDeletionVectorsUpdated),
		"executionTimeMs":                        d(m.ExecutionTimeMs),
		"materializeSourceTimeMs":                d(m.MaterializeSourceTimeMs),
		"scanTimeMs":                             d(m.ScanTimeMs),
		"rewriteTimeMs":                          d(m.RewriteTimeMs),
	}
}

// MergeResult is what a merge did: Result (Committed false when the
// merge changed nothing and so committed nothing; the commit; the
// strategy), with the merge's own metrics.
type MergeResult struct {
	Result
	Merge MergeMetrics
}

// Errors of Merge. Each matches ErrInvalid and so
// deltaerr.ErrInvalidArgument.
var (
	// ErrMultipleMatch: a target row that a MATCHED clause could modify
	// is matched by more than one source row (Spark's
	// DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE). Nothing is
	// committed.
	ErrMultipleMatch = fmt.Errorf("merge: a target row matches more than one source row; make the source unique on the join keys: %w", ErrInvalid)
	// ErrMergeColumn: a name that is in neither side, in both sides
	// unqualified, on a side the clause cannot see, or a target column
	// that UPDATE SET * / INSERT * cannot find in the source.
	ErrMergeColumn = deltaerr.Mark(errors.New("merge: bad column"), ErrInvalid)
	// ErrMergeClause: a malformed merge: no condition, an action of the
	// wrong kind for its clause list, a clause with both Set and All.
	ErrMergeClause = deltaerr.Mark(errors.New("merge: bad clause"), ErrInvalid)
)

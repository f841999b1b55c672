// Package dml changes rows already in a Delta table: DELETE and UPDATE
// (MERGE lives here too), as a Spark user runs them, committed beside
// other writers with Delta's optimistic concurrency.
//
// # Design
//
// Every operation runs the same pipeline, once per attempt:
//
//  1. The predicate picks the candidate files through partition pruning
//     and statistics skipping (package scan), so an operation reads only
//     the files it may touch. A DELETE whose predicate names only
//     partition columns removes the files it matches whole, without
//     reading them, as Spark does.
//  2. The rewrite core, write.Rewrite, reads each candidate through the
//     one per-file reader (deletion vectors, column mapping, partition
//     values), asks a row function what becomes of each row (keep, drop,
//     update), and writes what changes through the row writer, which
//     checks NOT NULL, CHECK constraints and invariants and computes
//     generated columns for every row it writes. The strategy is the
//     table's, as Spark chooses it (Strategy): with
//     delta.enableDeletionVectors, merge-on-read (deleted and updated rows
//     are marked in deletion vectors, the file stays); otherwise
//     copy-on-write (the file is rewritten without them). Change data
//     (delete, update_preimage, update_postimage) is written either way
//     when the table has the change data feed on.
//  3. One transaction stages the removes, the adds (new files, and files
//     re-added under a new deletion vector), and the cdc files, records
//     what was read (the predicate, the files read or rewritten; the
//     whole table when there is no predicate), and commits with Spark's
//     operation name, operationParameters and operationMetrics.
//
// Recording the read set is what makes concurrent writers safe: package
// txn raises Spark's conflicts from it: a concurrent append into a
// partition the predicate may match (unless it is a blind append and the
// isolation level is WriteSerializable), a concurrent remove of a file
// this operation read (a DELETE, an UPDATE, a compaction, a deletion
// vector update), and a concurrent remove of a file it removes. A
// concurrent commit that breaks none of these is rebased over (txn.Commit
// retries at the next version). A conflict ends the operation with a
// *txn.ConflictError (errors.Is txn.ErrConflict), as Spark's DML ends with
// a ConcurrentModificationException; Options.ConflictRetries plans the
// operation again on the new version instead. Files an attempt wrote are
// deleted when it fails, unless the commit's outcome is unknown
// (txn.ErrCommitUnknown).
//
// Predicates, conditions and values are evaluated per row with Spark SQL
// semantics (expr.EvalValue: SQL nulls, a row is changed only where its
// condition is TRUE), compiled once per attempt against the row layout
// (expr.Compile), so that a row costs no name lookup and no allocation.
//
// # Assigning values
//
// A value UPDATE SET or a MERGE clause (SET, VALUES, UPDATE SET *, INSERT
// *) writes into a column is converted to the column's type as Delta's
// MERGE and UPDATE do it (castIfNeeded, with
// spark.databricks.delta.resolveMergeUpdateStructsByName.enabled, true by
// default), through expr.NewAssigner:
//
//   - Types are compared by structure, not by their schema JSON: field
//     metadata (column mapping ids and physical names, comments) and
//     nullability do not count, so a value of the column's own type is
//     stored as it is, with or without column mapping.
//   - Top-level columns of UPDATE SET * and INSERT * are taken from the
//     source column of the same name (ignoring case). Inside a struct,
//     fields are matched BY NAME too (ignoring case), whatever their
//     order, recursively: through struct fields, array elements, and map
//     keys and values. This is Delta's rule, not plain Spark CAST (by
//     position, which expr.CastValue keeps for CAST).
//   - A struct field on one side only is refused before any row is read
//     (expr.ErrAssign, with ErrInvalid, and ErrMergeColumn in a merge):
//     Delta fills a missing field with null only with schema evolution,
//     which this package does not do, and would lose an extra one.
//     Likewise a struct for an array, a map for a struct, or a nested
//     value for a primitive column and back.
//   - A null struct, array or map stays null; null fields, elements and
//     map values stay null. Leaves of another type go through CAST: a
//     value CAST cannot convert, or a non-null value it makes null (text
//     that is not a number), fails the operation (ErrInvalid and
//     expr.ErrAssign), as with ANSI store assignment.
//   - NOT NULL of nested fields is not checked by the conversion but by
//     the row writer, on every row written (*write.ConstraintError).
//
// The type of a nested value is taken from the expression: a column (of
// the table, or of the source in a merge), or coalesce, nvl or if over
// columns of one type (and NULL). The expression language has no struct
// constructor (named_struct), so a nested column is assigned from another
// nested column, or NULL.
//
// Run is that pipeline for any operation given as an Operation (its name,
// parameters, and a Plan function run on each attempt's snapshot); Delete
// and Update are built on it, and so is MERGE.
//
// A Job is a DELETE or UPDATE split into those three steps for an engine
// that runs the rewrites on several workers (the Beam IO, module beamio):
// PlanDelete or PlanUpdate plan it once (the candidate files, cut into
// groups of one partition up to the target file size), RewriteGroup
// rewrites one group on any worker that planned the same snapshot, and
// Commit commits every group's part in one transaction. Delete and Update
// are a Job rewritten in one call and committed by Run, through the same
// commit step, so both paths stage the same actions under the same
// commitInfo and conflict checks.
//
// A MergeJob is MERGE split the same way (PlanMerge, RewriteGroup, then
// Insert once, then Commit): the groups rewrite by the MATCHED and NOT
// MATCHED BY SOURCE clauses and report which source rows they matched,
// and one step inserts the source rows no group matched. Its source is
// held in memory on every worker (ErrMergeSourceTooLarge past the
// budget; the in-process Merge spills instead). Merge plans a MergeJob on
// each attempt and rewrites all its files in one call that writes the
// inserts with the updated rows, through the same commit step.
//
// # Errors
//
// An append-only table refuses DML with write.ErrAppendOnly. A predicate
// or assignment that names no column of the table, that does not parse,
// or whose value cannot be converted to its column's type (expr.ErrAssign
// too, for types that cannot be stored across) is ErrInvalid
// (deltaerr.ErrInvalidArgument); a predicate that can never be TRUE by its
// form (not boolean) is expr.ErrNotPredicate; a row that breaks a constraint is a
// *write.ConstraintError. A row on which a predicate, a condition or a
// value cannot be evaluated (an integer overflow, expr.ErrOverflow) fails
// the operation, as in Spark with ANSI mode on, rather than leaving the
// row out. Nothing is committed on any error.
//
// # Concurrency
//
// The functions of this package may run at once, in one process or many,
// on one table: the log's put-if-absent is the only coordination they
// need. Options and the snapshots given are not modified.
package dml

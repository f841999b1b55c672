// Package optimize rewrites the layout of a Delta table without changing
// its rows: OPTIMIZE compaction (bin-packing small files), ZORDER BY and
// HILBERT BY (files sorted along a space-filling curve of some columns, so
// that min/max statistics skip more files), and the incremental clustering
// of liquid-clustered tables. It is Delta Spark's OptimizeTableCommand, on
// this library's one rewrite core (write.Rewrite).
//
// # What Run does
//
//  1. Plan. The live files (those Where may match, by partition pruning)
//     are grouped by partition. Compaction takes as candidates the files
//     smaller than MinFileSize (default: the target size) and the files
//     whose deletion vector removes more than MaxDeletedRowsRatio of their
//     rows (default 0.05, Spark's optimize.maxDeletedRowsRatio), packs them,
//     smallest first, into bins of at most the target size, and keeps the
//     bins that reduce the file count or purge a deletion vector: a lone
//     file without a deletion vector stays, which is what makes a second
//     OPTIMIZE a no-op. A curve rewrite takes every file of each partition
//     as one bin (as Spark's ZORDER BY does). On a clustered table OPTIMIZE
//     clusters: the files without clusteringProvider, Hilbert-ordered over
//     the clustering columns (the delta.clustering domain), so that
//     clustered files are never rewritten again.
//  2. Rewrite. Each bin is one write.Rewrite with Copy and NoDataChange:
//     rows are read through scan.FileReader (deletion vectors applied, so the
//     files written carry none; the removes carry the old descriptors) and
//     written through the row writer into files of the target size. A curve
//     rewrite reads the files once: as Rewrite stages the rows, a reservoir
//     samples the curve columns; once every file is read, each column is
//     cut into ranges of equal frequency from its sample (package zorder),
//     each row gets its curve key once, and the rows are sorted by it
//     (write.RewriteOptions.SortKey). Rows are staged as compact records;
//     past SortMemory they spill to disk and are merged as sorted runs, so
//     memory stays bounded whatever the partition's size, and the files
//     written are the same whatever the budget.
//  3. Commit. One transaction removes the files rewritten and adds the new
//     ones, all dataChange=false: the change data feed and streaming readers
//     skip the commit, and txn runs it at SnapshotIsolation, so it commutes
//     with concurrent appends. It records the files it read (ReadFiles), so a
//     concurrent DELETE or UPDATE that removed one is a conflict
//     (*txn.ConflictError, errors.Is txn.ErrConflict), and so is a concurrent
//     OPTIMIZE of the same files (both remove them). commitInfo records
//     Spark's operation parameters (predicate, zOrderBy, clusterBy, auto;
//     isFull when clustering) and operationMetrics (numAddedFiles,
//     numRemovedFiles, numAddedBytes, numRemovedBytes, min/p25/p50/p75/max
//     FileSize, numDeletionVectorsRemoved, as strings as Spark writes them);
//     Result.Metrics holds the full OptimizeMetrics.
//
// Row tracking: the adds get fresh baseRowId and defaultRowCommitVersion
// from txn like any add. Stable row ids survive the rewrite only where the
// rewrite core materializes them in the files it writes (the row-tracking
// materialization of write.Rewrite); OPTIMIZE writes only through that core,
// so it inherits whatever the core preserves.
//
// # Auto compaction
//
// The package registers, from its init, the post-commit hook of Spark's
// auto compaction (txn.RegisterHook at txn.OrderCompaction, named
// HookAutoCompact), so every commit that runs the post-commit chain (the
// delta facade, the CLI, package stream, package dml, which links this
// package for that; a program that commits through package write or txn
// alone imports this package to get it) is followed by it. After a
// commit on a table whose configuration turns it on
// (tableconfig.Config.AutoCompact: delta.autoOptimize.autoCompact, or the
// deprecated delta.autoOptimize):
//
//  1. Only commits that wrote rows count: those with adds of new data
//     (txn.CommitResult.PartitionsWritten: dataChange=true, no deletion
//     vector), except OPTIMIZE, REORG, RESTORE, CLONE and CONVERT, whose
//     files were written before. As in Spark, the compaction's own commit,
//     an OPTIMIZE, never compacts again.
//  2. Of the partitions the commit wrote, those holding at least
//     AutoCompactMinNumFiles live files smaller than
//     AutoCompactMinFileSize are chosen (at most AutoCompactMaxPartitions,
//     those with the most). Spark counts them in the driver's memory
//     since it started (and compacts a partition once per driver whatever
//     its count); this library keeps no state between commits, and counts
//     them in the post-commit snapshot.
//  3. Run compacts them: Where selects the chosen partitions (each column
//     equal to its value, as Spark's predicate; none on an unpartitioned
//     table), TargetSize AutoCompactMaxFileSize, MinFileSize
//     AutoCompactMinFileSize, Auto true, the triggering commit's
//     engineInfo. Deletion vectors and row tracking are handled as by any
//     OPTIMIZE. Its result goes to PostCommitWork.AutoCompacted, and its
//     own post-commit chain runs.
//
// The compaction reads the table at the triggering version. A failure,
// such as a conflict with a writer that removed a file it rewrote in the
// meantime, is the hook's: it is reported in PostCommitWork.Failed, the
// commit that triggered it stands, and a later commit compacts.
//
// # Errors
//
// A Where naming a non-partition column is ErrPredicate; a ZORDER/HILBERT
// BY column that is a partition column is ErrPartitionColumn, one without
// min/max statistics ErrNoStats; both curves at once, or a curve on a
// clustered table, ErrOptions. All match deltaerr.ErrInvalidArgument. On
// any error after files were written they are deleted, unless the commit's
// outcome is unknown (txn.ErrCommitUnknown): nothing is left behind.
//
// # Concurrency
//
// Run holds nothing between calls. Any number of Runs, in one process or
// many, may work on one table: on disjoint partitions they all commit; on
// overlapping files all but one fail with a conflict and delete their files.
package optimize

// Package beamio reads and writes Delta tables from Apache Beam pipelines
// (the Go SDK), so that work too big for one process runs on any Beam
// runner: Prism locally, Dataflow, Flink or Spark in production. It is a
// Go module of its own, so that the core module links no Beam.
//
// Read plans a read once (the snapshot, time travel, partition pruning and
// statistics skipping of package scan), then reads the files on the
// workers with the library's one file reader (scan.FileReader: deletion
// vectors, column mapping, partition values), a large file in parts, one
// row group per task. Write writes rows on the
// workers with the library's row writer (write.Rows: constraints,
// generated columns, partitioning, statistics) and commits them once, in
// one step, through the library's commit pipeline (write.AppendFiles,
// then the post-commit hooks), with a txn action that makes the write
// exactly once across retried bundles, restarted pipelines and
// committers that run again.
//
// Rows travel as Row, a slice of schema.Value with a coder of its own.
//
// Every step opens the table by its URI (delta.OpenWith), so every worker
// must reach it: on a cluster, an object store whose backend the program
// links. Errors fail the step that meets them, and with it the pipeline;
// they are the library's, with their kinds (errors.Is deltaerr.Err...).
//
// Files from ReadOptions.SplitFileSize up are read one row group per task.
//
// ReadChanges reads the change data feed, one file read per task, with the
// rows of the library's change reader (scan.Changes). Optimize runs
// OPTIMIZE: planned once by package optimize, rewritten on the workers (a
// bin per task through the rewrite core; curves range-partitioned by their
// key, each range sorted and written by one worker), committed once with
// the in-process OPTIMIZE's commitInfo and conflict checks.
//
// Delete and Update run copy-on-write DELETE and UPDATE: planned once by
// package dml (dml.Job: partition pruning, statistics skipping, whole
// partitions removed unread), a group of candidate files per task through
// the rewrite core, committed once through the commit step of the
// in-process verbs (same commitInfo, same conflict checks). Tables with
// deletion vectors are rewritten too (see Delete for why).
//
// Merge runs copy-on-write MERGE INTO with a Delta table as the source:
// planned once (dml.MergeJob), a group of candidate files per task
// rewritten by the MATCHED and NOT MATCHED BY SOURCE clauses, the NOT
// MATCHED inserts written once from the union of the groups' matches,
// and one commit through the in-process merge's commit step. MergeRows
// does the same with the rows of a PCollection as the source, a side
// input that every step sorts alike.
//
// Write of an input in fixed or sliding windows (streaming or not)
// commits once per window, in the order of the windows' ends, with the
// window's end as the txn version (see Write). See README.md for running
// on each runner.
package beamio

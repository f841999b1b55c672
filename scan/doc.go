// Package scan reads the rows of a Delta table snapshot: choose columns,
// give a predicate, get rows.
//
//	s, err := scan.New(snap, scan.Options{Columns: []string{"id", "name"}, Predicate: pred})
//	for row, err := range s.Rows(ctx) { ... }
//
// # How a scan runs
//
// A scan is planned from the snapshot alone, then executed file by file:
//
//  1. Planning (Files): every live file of the snapshot is tested against
//     the predicate twice without reading it: on its partition values, then
//     on its statistics (min, max, null count, from the add action's JSON
//     stats or a checkpoint's stats_parsed). A file is skipped only when it
//     certainly holds no matching row (see expr.Stats.MightMatch). Metrics
//     count the files skipped by each test. A scan with a predicate on a
//     snapshot that has not read its files streams them instead
//     (snapshot.Snapshot.StreamFiles): the checkpoint is read batch by
//     batch and only the files that survive are kept, so a selective plan
//     of a table of millions of files costs the memory of its result, not
//     of the table (each such run reads the checkpoint again). Statistics
//     are decoded here, one file at a time, from their JSON text.
//  2. Reading: each surviving file is opened with package datafile, which
//     reads only the columns the output and the predicate need, by physical
//     name or by field id under column mapping, widening types as the table
//     schema allows and reading columns the file lacks as nulls.
//  3. Rows are dropped by position when the file has a deletion vector
//     (package dv), then by the predicate evaluated on each row, so a scan
//     returns exactly the rows that satisfy it.
//  4. Partition values are parsed to their column types and injected as
//     ordinary columns; output columns carry logical names in the order
//     asked for.
//
// Files are read by a small pool of goroutines (Options.Concurrency), and
// their batches are delivered in the snapshot's file order, so a scan's
// output is deterministic.
//
// # One reader of data files
//
// Steps 2 to 4 are the reading of one data file, and every data file the
// library reads goes through the same code for them: a scan, the change
// data feed, and FileReader, which gives that reading to code that picks
// its files itself and needs each row's position in its file (package
// write's Rewrite: today an overwrite with a replaceWhere on data columns;
// DELETE, UPDATE, MERGE and OPTIMIZE are to be built on it). One reader
// means one set of rules for paths, deletion vectors, column mapping,
// widening and partition values, whoever reads.
//
// # Batch form
//
// Internally and in Batches, rows travel column-wise: a Batch
// (schema.Batch, the form package write takes too) is one slice of
// schema.Value per output column. Column-wise batches let the reader
// fill one column at a time from Parquet pages (which are column-wise too)
// and let the filter touch only the columns it needs; schema.Value is a
// small tagged union, so a primitive costs no allocation, and nested values
// (struct, array, map) are Values holding Values. Rows and the typed form
// (All) are views built from batches for programs that want them.
//
// # Row tracking
//
// On a table with row tracking enabled, Options.Columns may name
// MetadataRowID and MetadataRowCommitVersion (Spark's _metadata.row_id and
// _metadata.row_commit_version): each row's stable row id and row commit
// version, read from the file's hidden materialized columns where they
// hold a value, else computed from the add's baseRowId and the row's
// position, or its defaultRowCommitVersion (PROTOCOL.md "Reader
// Requirements for Row Tracking"). FileReader computes them in the same
// place, so package write's Rewrite copies them into the files it writes
// and rewritten rows keep their identity. Change data has none.
//
// # Paths
//
// Data file paths in the log are URIs relative to the table root. Every
// path is resolved by the snapshot's Location (package location), the one
// resolver every reader, writer and maintenance verb uses: an absolute
// path is accepted when it lies under the table root or a root the table
// trusts (a shallow clone's source); any other is refused with
// deltaerr.ErrPathEscapesRoot, as are relative paths that climb out of
// the root.
//
// # Change data feed
//
// NewChanges reads the change data feed of a range of commits (Changes):
// every row each commit inserted, deleted or updated, with _change_type,
// _commit_version and _commit_timestamp, through the same file reader. A
// range over which the table did not have delta.enableChangeDataFeed set
// gives ErrChangeDataFeedDisabled.
//
// # Errors
//
// Errors are tested with errors.Is on the kinds of package deltaerr: New
// gives deltaerr.ErrInvalidArgument for a column or predicate column not in
// the table and deltaerr.ErrUnsupportedFeature for a reader feature the data
// path lacks; reading gives deltaerr.ErrPathEscapesRoot for a path outside
// the table, deltaerr.ErrCorrupt for a data file or deletion vector that
// cannot be decoded, and deltaerr.ErrFileNotFound (a
// *deltaerr.MissingFileError) for one the log names that storage lacks;
// NewChanges gives deltaerr.ErrVersionNotFound for a
// range past the latest version. The snapshot's lazy file state is read when
// the scan plans, so its errors (see package snapshot) come from Rows,
// Batches and Files, as do the store's errors with their logstore kinds.
//
// # Stores of other roots
//
// A shallow clone's files lie under its source's root, named by absolute
// URIs; the snapshot's Location says which roots a reading may open for
// them (logstore.Open, through a location.Stores). Each such store is opened once per reading, on first
// use, and closed by the reading that opened it, never by anyone else: a
// run of a Scan or Changes (one call of Rows or Batches) closes its stores
// when it returns, whether the loop finished, stopped early, or met an
// error or a cancelled context; a FileReader keeps its stores until its
// Close. So a scan leaves no client open behind it, and a FileReader's
// owner must Close it. The table's own store is the snapshot's, and no
// reading closes it.
//
// # Concurrency
//
// A Scan is safe for concurrent use; each call of Rows, Batches or Files
// runs the scan anew. A batch's memory is reused once the loop body that
// received it returns (schema.Batch.Clone keeps one). The examples show a
// scan with columns and a predicate, and typed rows read with All.
package scan

// Package checkpoint reads Delta checkpoints: files that hold the whole
// reconciled state of a table at one version (protocol, metadata, the live
// files, tombstones, transaction ids, domain metadata), so that a reader
// need not replay every commit from version zero. See PROTOCOL.md,
// "Checkpoints" and "Checkpoint Schema".
//
// # Checkpoint kinds
//
// [Read] takes the store keys of one checkpoint, of any of three kinds:
//
//   - Classic: _delta_log/<v>.checkpoint.parquet, one Parquet file. It
//     follows the V1 spec, or the V2 spec when the table has the
//     v2Checkpoint feature (then it has a checkpointMetadata action and
//     may have sidecar actions).
//   - Multi-part: _delta_log/<v>.checkpoint.<i>.<n>.parquet for i in 1..n,
//     the V1 actions of one version split over n Parquet files. Pass all
//     parts, in part order; a missing part is an error, never fewer actions.
//     Which parts make a complete checkpoint is for the caller (package
//     deltalog) to decide.
//   - UUID-named V2: _delta_log/<v>.checkpoint.<uuid>.json or .parquet.
//     It holds the non-file actions and one checkpointMetadata action, and
//     may hold add and remove actions itself or in sidecar files,
//     _delta_log/_sidecars/<name>.parquet, named by its sidecar actions.
//     A .json checkpoint is newline-delimited JSON actions, like a commit.
//
// # Layout
//
// A Parquet checkpoint has one top-level struct column per action kind:
// protocol, metaData, txn, add, remove, domainMetadata, checkpointMetadata,
// sidecar. Each row holds at most one action: the struct of its kind is
// set and all others are null. Writers differ in which optional fields
// they write and in what order (Spark, Databricks, delta-rs, kernel-rs and
// arrow writers are all in the test corpus), so columns are found by name:
// a missing field reads as absent, an unknown column or field is ignored,
// and a known field of the wrong type makes the file corrupt. Maps
// (partitionValues, tags, configuration, format.options) are Parquet MAP
// groups of string keys and nullable string values; a null value reads as
// "". Lists are three-level or legacy two-level LIST groups.
//
// add (and remove) may also carry stats_parsed and partitionValues_parsed,
// typed forms of the stats JSON string and of the partition values, keyed
// by physical column name. Where the string form of a row is null, it is
// built from the typed one: the stats as JSON with numRecords, minValues,
// maxValues, nullCount and tightBounds as the writer nested them,
// timestamps as "2006-01-02T15:04:05.000Z" (without the Z for
// timestamp_ntz), dates as "2006-01-02", decimals as numbers with their
// scale, and binary values left out; the partition values as PROTOCOL.md's
// "Partition Value Serialization" says. Those columns are read only from
// the first row that needs them.
//
// # Writing
//
// Write describes the checkpoint's columns as a Delta schema of nullable
// fields (write_schema.go: the action columns, stats_parsed typed by the
// table's physical schema, partitionValues_parsed) and hands it, with one
// row per action, to the data file writer (internal/datafile). There is
// one Delta-to-Parquet schema writer, internal/datafile's writeschema.go,
// for data files and checkpoints alike: this package builds no Parquet
// schema of its own, so a type is laid out in a checkpoint exactly as in a
// data file. The stats JSON is read into stats_parsed, and stats_parsed
// turned back into JSON, with the one stats codec (internal/statsjson).
//
// # Reading
//
// Read decodes Parquet column by column, one row group at a time, through
// parquet-go's page API: definition and repetition levels and typed value
// arrays, with no per-row reflection. Only the columns of the action kinds
// asked for are fetched, so a Protocol|Metadata read never reads a byte of
// the add or remove columns (bar those at the end of a small file that come
// with its footer), and kinds a row group has none of, by its footer's
// statistics, are not read at all. The column chunks wanted are fetched
// with few large ranged reads from the logstore.Store; chunks over a few
// MiB are read in windows, so memory stays bounded whatever the size of a
// row group. The pages of each column are decoded on their own goroutine,
// a page ahead of the assembly of actions.
//
// Actions reach the callback in batches of at most a few thousand, in file
// order, never spanning row groups, then those of the sidecars. The batch
// slice is reused once the callback returns; the actions it points to are
// not, and may be kept. Their strings share memory with the page they
// were decoded from, and maps with identical entries decoded from one
// file are one map: treat the maps as read-only.
//
// # Errors
//
// Bytes that cannot be decoded, or that break the checkpoint schema, give a
// *deltaerr.CorruptError naming the file (and, for a page, the column); a
// panic of parquet-go on bad input is recovered and reported the same way,
// while a panic of this package's own code is a bug and is not recovered.
// The page cursor, its checks and the ranged reads are shared with the
// data-file reader (internal/parquetio). A failed store read is
// reported as the store's error (a missing file wraps
// logstore.ErrNotFound), and a cancelled context as the context's error,
// never as corruption. An error the callback returns stops the read and is
// returned as is; a panic in the callback is not recovered.
//
// # Concurrency
//
// Read keeps no state between calls: any number of Reads may run at once,
// on one Store or many. One Read calls its callback on the goroutine that
// called Read, one batch at a time, and has returned every goroutine it
// started by the time it returns.
//
// ReadTransient, when GOMAXPROCS is above one, calls its callback on a
// goroutine of its own, still one batch at a time and in order, while the
// caller's goroutine decodes the next batch: decoding and the callback's
// work overlap on two cores. The pages a batch's strings alias travel
// with it and are released once the callback returns; two batches exist
// at a time (one with the callback, one being decoded), so the pipeline
// holds one batch's pages more than a read on one goroutine, and the
// pages the column cursors still hold are released only once the
// callback has caught up, at the end of each row group. An error or a
// panic of the callback, a cancelled context or a decoding error stops
// both sides: the callback sees no batch after the one that failed or
// after the context is cancelled (it then gets the context's error), a
// panic of the callback is raised again on the caller's goroutine, and
// the consumer has ended by the time ReadTransient returns.
// ReadTransientPrepared also calls a second function on the decoding
// goroutine, with each batch before the callback gets it, so that a
// caller can move there the part of its work that needs none of the
// callback's state; what it returns travels with the batch.
package checkpoint

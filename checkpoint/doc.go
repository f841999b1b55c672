// Package checkpoint reads Delta checkpoints: the files that hold the whole
// reconstructed state of a table at one version, so that a reader need not
// replay every commit from version zero.
//
// # Checkpoint kinds
//
// The protocol knows three kinds, all read by [Read]:
//
//   - Classic: one Parquet file, _delta_log/<v>.checkpoint.parquet.
//   - Multi-part: the actions of one version split over n Parquet files,
//     _delta_log/<v>.checkpoint.<i>.<n>.parquet; pass all parts, in order.
//   - V2 (UUID-named): _delta_log/<v>.checkpoint.<uuid>.json or .parquet.
//     It holds the non-file actions and a checkpointMetadata action, and
//     may point with sidecar actions at Parquet files under
//     _delta_log/_sidecars/ that hold its add and remove actions. Sidecars
//     are followed when Add or Remove is wanted.
//
// # Reading
//
// Parquet is read column by column, one row group at a time, through an
// io.ReaderAt over [logstore.Store.GetRange]; the file is never loaded whole.
// Columns are found by name, so the varying schemas written by Spark,
// delta-rs and kernel writers are all accepted: missing optional columns
// read as absent, unknown columns are ignored. Only the columns of the
// action kinds asked for in the [ActionSet] are read, so a Protocol|Metadata
// read never touches the add columns. When add.stats is null and the
// checkpoint has add.stats_parsed, the JSON statistics string is built from
// it; likewise partitionValues from partitionValues_parsed.
//
// Bytes that cannot be decoded give a *deltaerr.CorruptError (errors.Is
// with deltaerr.ErrCorrupt); a decoder panic on bad input is turned into
// one. A missing file gives the store's error, which wraps
// logstore.ErrNotFound.
//
// # Batches
//
// Actions are handed to the callback in batches (at most one row group, and
// at most a few thousand actions, at a time) in file order. The callback
// must not keep the slice, which is reused; the actions' pointers stay
// valid. An error from the callback stops the read and is returned as is.
//
// # Concurrency
//
// Read keeps no state between calls and may be called from many goroutines
// at once on the same Store. A single call reads its parts one after the
// other on the calling goroutine and calls fn on that goroutine.
package checkpoint

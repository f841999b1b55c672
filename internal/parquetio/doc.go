// Package parquetio is the Parquet reading layer shared by the checkpoint
// reader (package checkpoint) and the data-file reader (package datafile):
// the byte ranges a read fetches from a store, the page cursor over a
// column chunk, and the rules that tell bad bytes from our own bugs.
//
// # Reading bytes
//
// An [Object] is one stored file of known size. Its footer is read through
// [Object.ReadAt]; the column chunks a read needs are known from the
// footer, so each is given a [ChunkReader] and [Prefetch] fetches the
// small ones of a row group in a few large requests (neighbours coalesced,
// a few in flight at once), while chunks larger than [Window] are read a
// window at a time as they are decoded. Memory stays bounded by the row
// group's small chunks plus one window per large chunk, and the bytes of
// columns a read does not want are never fetched. An Object remembers the
// first error its source gave, so that a decoding failure caused by I/O is
// reported as the I/O error and not as corruption ([Object.Failed]).
//
// # Decoding pages
//
// A [Cursor] walks the entries of one leaf column in one column chunk, a
// page at a time: definition and repetition levels, dictionary indexes,
// and the page's values, which it hands to the reader's [Loader] once per
// page (once per dictionary). The readers differ only there: the
// checkpoint reader keeps the raw values ([Raw]) and reads strings,
// integers and booleans column-wise without boxing; the data-file reader
// converts each page to schema.Values in one typed loop. The Cursor checks
// every page before any value is taken from it (see [Cursor.Open] for the
// list), so the readers index the page's slices without further checks.
//
// # Errors
//
// Two mechanisms, kept apart on purpose:
//
//   - Bad bytes found by our checks abort the decoding with [Fail] or
//     [Corruptf], a panic carrying a *deltaerr.CorruptError that names the
//     file and the column, so that the per-entry paths need no error
//     returns. [Catch] turns that panic back into the error at the
//     reader's API boundary; it recovers nothing else.
//   - parquet-go itself may panic on malformed input. [Decode] wraps each
//     call of parquet-go on file bytes (opening the footer, reading and
//     decoding a page) and turns any panic of it into a
//     *deltaerr.CorruptError. It never wraps our own logic: a bug of ours
//     (an index out of range in a reader, a nil dereference) is not
//     recovered anywhere and crashes loudly in tests.
package parquetio

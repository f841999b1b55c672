// Package tablecheck checks a Delta table against the invariants of the
// protocol and of this library, the table's fsck: what `delta check` runs,
// and what fault-injection tests run at their end.
//
// Check reads the table through its store and reports every problem it
// finds, each a Problem with a Kind, the version and path it concerns and a
// plain message. It never stops at the first one: a hole in the log, a
// checkpoint that disagrees with its commits and a missing data file are all
// reported by one run. An error is returned only when the check itself
// cannot run (no table there, a store that fails, a cancelled context, a
// protocol this library cannot read).
//
// # What is checked
//
// In order, each step reporting what it finds and the later steps running
// whatever the earlier ones found, unless they need what is broken:
//
//  1. The log (KindLog): the commits are contiguous from the oldest version
//     the log can rebuild (its oldest complete checkpoint, or commit 0) to
//     the latest; a multi-part checkpoint is complete; every commit decodes.
//  2. Each checkpoint (KindCheckpoint): it can be read, it holds one protocol
//     and one metaData, and it equals the replay of the log it replaces (the
//     previous checkpoint, or commit 0, and the commits up to its version),
//     when those files are still there: same live files (path, size,
//     deletion vector), protocol, metadata, transaction ids and domain
//     metadata.
//  3. Each version checksum (KindCRC), newest first and at most
//     Options.MaxChecksums of them: <v>.crc decodes and is consistent in
//     itself, and equals the checksum computed from the replay of version v
//     (never helped by a .crc; internal/checksum/crcwriter): file count and
//     bytes, protocol, metadata, and what both record of the set
//     transactions, domains, histograms and deletion vector counts.
//  4. The files of the latest version: every path resolves under the table
//     root or a root it trusts (KindPathEscapes, through package location,
//     the one resolver); every data file exists (KindMissingFile) with its
//     logged size (KindFileSize); every deletion vector can be read, with
//     its logged size, checksum and cardinality (KindDeletionVector).
//  5. The outside roots the table trusts (a clone's sources) can be opened
//     and listed (KindCloneRoot).
//  6. With Options.Deep, each data file's Parquet footer: its row count and
//     the statistics it holds agree with the stats the log records for the
//     file (KindFooter, KindStats).
//
// # Concurrency
//
// Check holds no state between calls; any number may run at once. It only
// reads: it never writes, repairs or deletes anything.
package tablecheck

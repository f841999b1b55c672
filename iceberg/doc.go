// Package iceberg publishes Apache Iceberg metadata for a Delta table, so
// that Iceberg engines (iceberg-go, PyIceberg, Spark, Trino, DuckDB, ...)
// read the same Parquet files without a copy: what Delta calls UniForm
// Iceberg. A table turns it on with the table property
// delta.universalFormat.enabledFormats=iceberg, which needs the writer
// feature icebergCompatV2 and column mapping (package write turns both on
// at creation; Enable does it for an existing table, in one checked
// commit). Package delta converts after each commit it makes; Convert does
// it on demand and catches up.
//
// # Mapping
//
// Iceberg v2 metadata lives under metadata/ beside _delta_log/:
//
//	metadata/vN.metadata.json      table metadata, one per converted Delta version
//	metadata/snap-<id>-<uuid>.avro manifest list of a snapshot
//	metadata/<uuid>-m0.avro        manifest (data files and their metrics)
//	metadata/version-hint.text     N of the latest metadata file (a hint)
//
// The Delta table maps to Iceberg as follows:
//
//   - table-uuid is the Delta metaData id; location is the table root URI.
//   - The schema keeps the logical column names; every field's Iceberg id
//     is its delta.columnMapping.id, and the ids of array elements and of
//     map keys and values come from delta.columnMapping.nested.ids, which
//     icebergCompatV2 assigns. These are the Parquet field ids of the data
//     files, which Iceberg readers match columns by. Types: byte, short,
//     integer to int; long; float; double; decimal(p, s); string; binary;
//     boolean; date; timestamp to timestamptz; timestamp_ntz to timestamp.
//     A metaData that changes the schema adds a schema (schema-id + 1).
//   - The partition spec has an identity field per Delta partition
//     column, field ids from 1000. icebergCompatV2 writers materialize
//     partition values in the data files, so Iceberg readers find them
//     there too (they read a partition column missing from a file as
//     null): Enable refuses files written before without them, or
//     rewrites them with EnableOptions.Rewrite.
//   - One Iceberg snapshot per Delta version, its parent the snapshot of
//     the version before, its sequence number the previous plus one, its
//     timestamp the commit's (in-commit timestamp, commitInfo.timestamp,
//     or the commit file's time). Its summary carries the operation
//     (append, overwrite, delete, or replace for commits that change no
//     data), the added and deleted files, records and sizes, the totals,
//     and delta-version and delta-timestamp: the Delta version converted.
//     The main branch ref, the snapshot log and the metadata log (the last
//     100 files, as Iceberg keeps) follow.
//   - A data file's entry has its record count from the Delta stats'
//     numRecords, its size, its partition values, value and null counts
//     and lower and upper bounds (Iceberg's single-value binary
//     serialization) of the primitive columns outside arrays and maps,
//     from the Delta stats. String and binary maxima that Delta may have
//     truncated (32 characters or more) give no upper bound, since a
//     truncated prefix is below the values that extend it.
//   - The sort order is the unsorted order 0; the table properties are
//     delta-version and delta-timestamp, and schema.name-mapping.default
//     (PropNameMapping), the name mapping of the current schema that
//     Spark's UniForm writes too: each field mapped by its logical name
//     and, where it differs and no other field of its struct has that
//     name, by its physical name (the column's name in the data files) to
//     its id; list elements, map keys and values as element, key, value.
//
// Manifests and manifest lists are Avro object container files
// (deflate-compressed) written with github.com/hamba/avro/v2, with the
// spec's field ids as field-id properties and the key/value metadata
// readers check (schema, partition-spec, format-version, content).
//
// # Incremental conversion
//
// Each Delta commit is converted from its own actions, never from the
// whole file list: its adds become a new manifest of ADDED entries; a
// manifest that holds one of its removes is rewritten, the removed files
// marked DELETED (by the new snapshot) and the others EXISTING with their
// original snapshot ids and sequence numbers; every other manifest is
// reused as it is. An append therefore writes one manifest, one manifest
// list and one metadata file, whatever the table's size. Only the first
// conversion, and a catch-up over commits already cleaned from the Delta
// log, build a snapshot from the whole file list (by difference with the
// files Iceberg has).
//
// # Idempotence, crashes and concurrency
//
// The Delta version converted is recorded in the metadata (the
// delta-version property and summary), and conversion always starts after
// it: converting twice converts nothing, and a table whose conversion
// failed or was skipped catches up, one snapshot per missed version, at
// its next commit or Convert. UniForm in Spark records the same state in
// the Iceberg metadata and, with a catalog, in the catalog; a path-based
// table has no catalog, and recording it in the Delta log would take a
// Delta commit per conversion (itself to convert), so the Iceberg
// metadata is the record, and Status reads it.
//
// Files are written so that a crash at any point is harmless: manifests
// and the manifest list first, unreferenced until the end; then
// vN.metadata.json with put-if-absent, the one atomic switch that
// publishes the snapshot; then the hint. A crash before the switch leaves
// readers on the previous snapshot (the orphan Avro files are never
// referenced); a crash after it leaves the hint one behind, and both this
// package and readers that probe for v(N+1) find the new file. The hint
// is only ever a hint: one that is not a number, or that names a metadata
// file that does not exist, is set aside and the newest vN.metadata.json
// found by listing metadata/. Two
// converters racing for the same N: one put wins, the other reads the new
// state and goes on from there, so no version is converted twice.
//
// Conversion never blocks or fails a Delta commit: package delta logs a
// failed conversion (log/slog) and the next commit retries it.
//
// # Cost per commit
//
// A conversion makes about ten requests whatever the table's history:
// the hint, a probe for v(N+1), a stat of vN, one manifest, one manifest
// list, one metadata file, the hint (and, for a commit that removes
// files, a stat and a read of each manifest that holds them). The metadata and manifest list it
// published last are remembered per table in the process (they never
// change once written; the size and time of vN confirm it is the same
// file), each snapshot's JSON is encoded once, and once 100 small
// manifests accumulate they are merged into one (Iceberg's
// commit.manifest.min-count-to-merge). What still grows is the metadata
// file, which the Iceberg format rewrites whole with every snapshot it
// keeps: snapshots older than delta.logRetentionDuration (the horizon of
// Delta's own time travel) are expired at each conversion, and
// Options.MaxSnapshots caps their number. Expiring only drops them from
// the metadata; their manifest files stay.
//
// # Limits
//
// The Iceberg files are read whole, so their size is checked before they
// are read (a Stat), and damaged or hostile ones are refused with
// ErrCorruptMetadata naming the file, never read into memory: a
// vN.metadata.json larger than 256 MiB (the file grows by about 1 KiB per
// snapshot kept), a manifest list or manifest larger than 256 MiB, or
// whose Avro blocks inflate to more than 16 times its size (manifests
// compress about threefold; always allowed 64 MiB, never more than 1 GiB).
// The Avro framing is checked before it is decoded: a block larger than
// the file, more records than bytes, a wrong sync marker, a codec other
// than null, deflate and snappy. The inflated size is found by inflating
// into nothing, so a deflate bomb costs the time of inflating to the
// limit, not the memory. A version hint longer than 64 bytes is no hint.
//
// # Errors
//
// ErrNotEnabled: the table does not turn UniForm Iceberg on.
// ErrNotConvertible (deltaerr.ErrUnsupportedFeature): a column without a
// column mapping id or of a type Iceberg v2 has not, a file without
// numRecords. ErrNeedsRewrite (a *NeedsRewriteError): Enable on a table
// whose files Iceberg would misread (no field ids, deletion vectors, no
// numRecords, or in a partitioned table the partition columns not in the
// files, found from their Parquet footers); EnableOptions.Rewrite rewrites
// them in the enabling commit instead. ErrCorruptMetadata
// (deltaerr.ErrCorrupt): Iceberg metadata that does not decode. Store
// errors keep their logstore kinds.
//
// The functions hold no state between calls and may run concurrently on
// one table: the put-if-absent of the metadata file orders them.
package iceberg

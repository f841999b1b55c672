// Package alter changes the definition of an existing Delta table: its
// schema, its properties, its CHECK constraints and the table features its
// protocol supports. It is ALTER TABLE: each change is one transaction
// (package txn) that commits a new metaData action, and a protocol action
// when the change needs a feature the protocol does not support yet,
// without rewriting a data file. CONVERT TO DELTA, which puts an existing
// directory of Parquet files under a new log, is package convert.
//
// # Why metadata only
//
// The Delta protocol lets a schema change without touching data where the
// readers can resolve the files already written against the new schema:
//
//   - an added column is missing from old files, and readers read a
//     missing column as null (so only nullable columns can be added);
//   - under column mapping (delta.columnMapping.mode name or id) files name
//     columns by physical name or field id, never by the display name, so
//     renaming a column is a change of its display name only, and dropping
//     one removes it from the schema while its bytes stay, unread, in old
//     files. Without column mapping files name columns by display name:
//     renaming or dropping would make old files read wrong, so both are
//     refused with ErrColumnMappingRequired, which names the property to
//     set (and EnableColumnMapping sets it, as Spark does: every field keeps
//     its name as physical name, so the files already written still read);
//   - type widening (the typeWidening feature, on when
//     delta.enableTypeWidening is true) lets readers read a narrower type
//     as the wider one: byte, short and int to wider integers, to double
//     and to decimals with room for their digits, float to double, decimals
//     to more precision (and scale, by at most the same amount), date to
//     timestamp_ntz. Each change is recorded in the field's metadata under
//     delta.typeChanges, as the protocol asks.
//
// # Protocol
//
// The new protocol is the smallest one that supports what the table
// already supports plus what the change uses (write.UpgradeProtocol, the
// same choice write.NewTable makes for a new table): a legacy protocol
// stays legacy while every feature has a legacy version, and moves to
// reader 3 / writer 7 with explicit feature lists otherwise. A protocol is
// never downgraded, but by DropFeature, Spark's ALTER TABLE ... DROP
// FEATURE for the writer features checkConstraints, domainMetadata and
// inCommitTimestamp: it leaves the smallest protocol that lists the rest
// (a legacy one when a legacy writer version implies exactly the rest).
// Reader-writer features, whose drop needs the history truncated or
// checkpointProtection, are refused.
//
// # Transactions, retries and conflicts
//
// Every function here runs txn.Update: the change is computed on the
// latest snapshot, and computed again on a newer one after a conflict, so
// a concurrent commit that changed the metadata is seen, never
// overwritten. Adding a CHECK constraint reads the whole table (every row
// is checked) and records it, so a concurrent append conflicts with it. The
// commitInfo operation and parameters are Spark's: ADD COLUMNS, RENAME
// COLUMN, DROP COLUMNS, CHANGE COLUMN, SET TBLPROPERTIES, UNSET
// TBLPROPERTIES, ADD CONSTRAINT, DROP CONSTRAINT, UPGRADE PROTOCOL, ROW
// TRACKING BACKFILL (operation parameter batchId). The
// post-commit work (checkpoints, log cleanup) is the caller's
// (txn.PostCommit).
//
// # Errors
//
// Errors are tested with errors.Is: ErrColumnMappingRequired,
// ErrTypeWideningDisabled, ErrColumnNotFound, ErrInvalidChange (a change
// the protocol or Spark refuses: a column that exists, a NOT NULL column
// added, a partition column dropped, a type change that is not a
// widening, ...), ErrConstraintNotFound, ErrPropertyNotFound; each matches
// deltaerr.ErrInvalidArgument. Adding a constraint that an existing row
// breaks is a *write.ConstraintError (write.ErrConstraint) naming the row.
// A property value Spark refuses, or an unknown delta.* key, is a
// *tableconfig.PropertyError; a feature this library cannot write is a
// *deltaerr.FeatureError. Nothing is committed when an error is returned.
//
// # Turning on row tracking and in-commit timestamps
//
// Row tracking on a table whose files have no row ids is Spark's three
// steps, each its own commit (backfillRowIDs, then SetProperties): the
// protocol gets rowTracking (UPGRADE PROTOCOL), so every writer assigns row
// ids to the files it adds from then on; ROW TRACKING BACKFILL commits
// re-add the files without ids, dataChange false, so that the transaction
// gives them ids above the high-water mark; then SET TBLPROPERTIES turns
// delta.enableRowTracking on, with the materialized column names, once no
// live file lacks ids. A failure part way leaves a table whose protocol
// supports row tracking and whose files have ids in part: a valid table,
// which running the change again completes. Every file needs numRecords in
// its statistics, as the protocol requires for row ids; a file without
// them fails the backfill with deltaerr.ErrInvalidArgument. In-commit
// timestamps turned on after version 0 get their enablement version and
// timestamp from the transaction (package txn), which knows them only when
// the commit lands.
//
// The functions are safe to call concurrently: each works on its own
// transaction; the snapshot given is not modified.
package alter

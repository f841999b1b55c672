// Package write creates Delta tables and writes rows into them as Parquet
// data files, returning the add actions a transaction (package txn) then
// commits. Append and Overwrite also run that transaction (txn.Update) and
// return its txn.CommitResult; running the post-commit work it names
// (txn.PostCommit: checkpoints, log cleanup) is the caller's. Otherwise the
// package writes no log entry: NewTable only builds the actions of version
// 0, which txn.BeginCreate commits (package delta's Create does both).
//
// # Creating a table
//
// NewTable turns a TableSpec (schema, partition columns, properties) into
// the protocol and metaData actions of version 0. The protocol is the
// smallest that supports every feature the table uses:
//
//   - nothing special: legacy (1,2), the default of Delta Spark;
//   - only features with a legacy version: that version, following the
//     protocol's ladder: delta.appendOnly and delta.invariants writer 2,
//     CHECK constraints (delta.constraints.*) 3, change data feed and
//     generated columns 4, column mapping reader 2 and writer 5;
//   - any feature without one (timestampNtz, deletionVectors, rowTracking,
//     domainMetadata, inCommitTimestamp, v2Checkpoint, vacuumProtocolCheck,
//     variantType): writer 7, listing every feature in use, legacy ones
//     included, in writerFeatures; and reader 3 listing the reader-writer
//     features in readerFeatures when there is one (else reader 1, which
//     the protocol allows for writer-only features; reader 2 when column
//     mapping is the only reader-writer feature is not used: it is listed
//     explicitly under reader 3 instead).
//
// A feature may also be asked for with the Spark property
// delta.feature.<name> = supported (or enabled); such properties are
// consumed, not stored. Column mapping in name or id mode gives every field,
// nested ones included, a delta.columnMapping.id and a physical name
// "col-<uuid>" (fields that already carry them keep them) and sets
// delta.columnMapping.maxColumnId. Row tracking sets the materialized
// column name properties as Spark does. A column with identity metadata
// (see Identity columns below) turns identityColumns on (legacy writer
// 6); one with a default (Column defaults) allowColumnDefaults.
// Property values
// are checked with tableconfig.Validate, as Spark checks them when they are
// set; which properties turn which features on is tableconfig.FeaturesFor.
// delta.universalFormat.enabledFormats=iceberg (UniForm, see package
// iceberg) turns on icebergCompatV2 and column mapping in name mode unless
// the properties choose otherwise (tableconfig.IcebergProperties), gives
// array elements and map keys and values their nested ids
// (assignNestedIDs), and checks the feature's rules
// (tableconfig.Config.CheckIcebergCompat). UpgradeProtocol is the same
// protocol choice for a table that turns features on later.
//
// # Writing rows
//
// Rows takes batches of logical rows (column-major, in table schema order)
// and, row by row and before any byte of the row is written: fills
// generated columns (a null is taken as "not given"; a given value must
// equal the computed one), checks NOT NULL at every nesting level, column
// invariants and CHECK constraints, and an optional required predicate
// (replaceWhere). A row that fails is a *ConstraintError naming the
// constraint and the row; the files already written by the call are then
// deleted (best effort) and no add is returned.
//
// Rows are split by partition values into Hive-style directories
// col=value/ (the physical name under column mapping; the value serialized
// as the protocol's partition value rules say, then escaped as Hive and
// Spark escape path names; null and the empty string as
// __HIVE_DEFAULT_PARTITION__), written with package datafile without the
// partition columns (with them, after the data columns, on an
// icebergCompatV2 table, whose rules ask for materialized partition
// values; field ids then include the nested ids of array elements and map
// keys and values), and rolled to a new file at Options.TargetFileSize.
// Each add's path is the file's key relative to the table root,
// percent-encoded as a URI.
//
// A data file streams into the store as it is encoded, through the
// store's logstore.Writer (S3 multipart, GCS resumable, Azure blocks, a
// local temporary file), so a file is never held whole in memory: what a
// write holds is the row groups its open files have not written yet,
// bounded together by Options.MaxBuffered (64 MiB by default; past it the
// largest file writes its row group early, as Spark's Parquet memory
// manager shrinks row groups when many partitions are open), and the
// store's upload buffers. The file becomes visible only when its Writer's
// Close returns nil, and the add's size is the count of bytes written. On
// failure the files being written are aborted and the finished ones
// deleted.
//
// # Identity columns
//
// A top-level BIGINT column whose metadata holds delta.identity.start and
// .step (schema.Identity; schema.ParseDDL reads Spark's GENERATED ALWAYS |
// BY DEFAULT AS IDENTITY (START WITH n INCREMENT BY m)) is an identity
// column (PROTOCOL.md "Identity Columns"). NewTable refuses one that is
// nested, not BIGINT, generated too, a partition column (Spark's
// DELTA_IDENTITY_COLUMNS_PARTITION_NOT_SUPPORTED) or whose step is 0.
// The row writer gives values to new rows only (Rows, Append, Overwrite,
// the inserts of Rewrite, so MERGE's, and stream sinks, which append);
// rows a rewrite keeps or updates keep theirs. In a new row, a null is
// "not given": it gets the next value, start + k*step beyond the
// column's delta.identity.highWaterMark in the step's direction (start
// when there is none; a mark off the grid is rounded forward, as Spark's
// IdentityColumn.roundToNext does), so a value is never one generated
// before. A value given is a *ConstraintError of kind KindIdentity with
// ErrIdentityExplicit for GENERATED ALWAYS (allowExplicitInsert false),
// and is kept as given for BY DEFAULT. A value past the range of a long
// is ErrIdentityOverflow.
//
// The commit that adds the rows also carries a metaData action whose
// schema moves each column's high-water mark to the last value generated
// (never back). Values given do not move it: Spark tracks marks only for
// the columns whose values it generated (ColumnWithDefaultExprUtils
// .addDefaultExprsOrReturnConstraints and WriteIntoDelta add a column to
// trackHighWaterMarks only when the input lacks it), and so here only
// generated values count. Spark decides per statement (a column given is
// given for every row) where this package decides per row; for a column
// generated in every row the two agree. A value given above the mark may
// later be generated again, as in Spark (its SYNC IDENTITY repairs that).
// A write does not upgrade the protocol: the Spark-written corpus table
// whose protocol (1, 2) predates the feature gets values and marks, as
// Spark's IdentityColumnSuite shows it does. A change of its metadata
// (ALTER, an append that merges its schema) upgrades it to writer 6,
// which supports identityColumns, and keeps the columns: there this
// package follows the protocol (identity metadata means an identity
// column) where Spark drops the identity metadata of such a table and
// keeps (1, 2) (IdentityColumnSuite "compatibility").
//
// Two writers that allocate at once: the values are written to data files
// before the commit, from the marks of the version read. A concurrent
// commit that allocated too changed the metadata, which txn's conflict
// rules make a conflict (as Spark's ConflictChecker does: only a
// transaction that changes no metadata tolerates a winner's identity-only
// update), and the attempt runs again on the new version. There Append
// and Overwrite, whose rows were allocated from the old marks, write them
// again (reading their own files, giving new values to exactly the rows
// that got generated ones, keeping the values given) from the new marks,
// and delete the first files; DML plans again from the start. So no two
// commits hold the same generated value, and the mark ends at the largest
// value generated. Spark fails such a transaction instead of allocating
// again. RESTORE keeps the latest marks (KeepHighWaterMarks).
//
// # Column defaults
//
// A top-level column whose metadata holds CURRENT_DEFAULT (SQL text;
// schema.ParseDDL reads Spark's DEFAULT <expression>) has a default
// (PROTOCOL.md "Default Columns"), which turns allowColumnDefaults on
// (writer 7). The row writer fills it into new rows that have no value
// for the column (the same rows as identity values: appends, overwrites,
// MERGE inserts, stream sinks; never rows a rewrite keeps or updates), before
// generated columns and constraints are checked. Only a literal is
// taken, computed once: a number, a string, true or false, NULL, DATE
// '...', TIMESTAMP '...', or CAST of one of them, converted to the
// column's type (a conversion that gives null for a value is refused, as
// Spark's ANSI casts refuse it). Any other expression (current_timestamp(),
// 1 + 1) is a *deltaerr.FeatureError (deltaerr.ErrUnsupportedFeature),
// at create and on writing a table Spark made with one: never guessed.
// A variant column can only default to NULL; a generated or identity
// column, or a nested field, cannot have one.
//
// Where this package differs from the protocol: a row holds no "missing"
// apart from null, so a null counts as no value and gets the default,
// where the protocol keeps an explicit NULL (an input column left out and
// an empty CSV field are both null here). As the protocol requires, a
// column is never added with a default (package alter refuses it; its
// SetColumnDefault sets one later), so rows written before a default
// exists keep reading null. The DEFAULT keyword of UPDATE and MERGE
// assignments is not supported.
//
// # Change data
//
// A commit that holds cdc actions is read by the change data feed from
// those alone, so an operation that records some changes as change data
// must record all of them. An overwrite whose replaceWhere names a data
// column rewrites files, keeping rows unchanged; on a table with
// delta.enableChangeDataFeed on it writes change data (see RewritesRows):
// RowsWithChanges writes the new rows to data files and, as checked and
// completed, to insert change-data files; Replace writes the rows it
// removes to delete change-data files. Change-data files hold the data
// columns and _change_type, and live under _change_data/ in the same
// partition directories, named cdc-<n>-<uuid>.c000.<codec>.parquet as
// Spark names them. Other overwrites remove whole files and need none.
//
// # Rewriting files
//
// Every operation that changes rows already in the table reads files,
// keeps, drops or replaces each row, and writes the survivors: Rewrite does
// that once for all of them. It reads each file through scan.FileReader
// (the reader a scan uses, so paths, deletion vectors, column mapping and
// widening follow the same rules), asks a RowFunc what becomes of each row
// (Keep, Drop, Update; with the row's position in its file, for deletion
// vectors), writes the kept and updated rows with the row writer (checked
// like new rows), and returns removes, adds and change data (delete,
// update_preimage, update_postimage) for a transaction to stage. A file in
// which no row changes is neither rewritten nor removed, unless Copy asks
// for it (compaction, with NoDataChange). Rows stream batch by batch: a
// rewrite never holds a whole file. Replace, the removal half of an
// overwrite, is a Rewrite that drops the rows the replaceWhere matches.
// On a table with row tracking enabled, rewritten rows keep their
// identity: the reader gives each row's stable row id and row commit
// version (scan.MetadataRowID, MetadataRowCommitVersion), and the row
// writer materializes them in the table's hidden columns (a kept row both,
// an updated row its id only), which new appends leave out.
//
// With RewriteOptions.DeletionVectors the same core deletes by position
// instead (merge-on-read, for tables with delta.enableDeletionVectors):
// each file is read once, kept rows are not written again, and a file in
// which rows are dropped or updated is removed and added back under the
// same path with a new deletion vector, the union of its old vector and
// the new positions (its stats keep numRecords, the physical row count,
// and say tightBounds false). A file whose rows are all gone is removed
// outright. Updated rows go to new data files through the row writer,
// checked like any row, and change data is written as in copy-on-write.
// Small vectors are inline in the log; the others share one
// deletion_vector_<uuid>.bin file per rewrite, written with internal/dv,
// the codec the reader decodes with, and put before the actions are
// returned.
//
// # Go values and files written elsewhere
//
// StructBatches turns Go structs into batches for Rows, by the binding
// scan.All reads with (package schema/govalue). FileAdd is for programs
// that write their own Parquet files: it checks such a file against the
// table's schema and returns its add action with the statistics this
// package's writer would give the same rows.
//
// # Errors
//
// Errors are tested with errors.Is: ErrConstraint (every *ConstraintError:
// a row that breaks NOT NULL, an invariant, a CHECK constraint, a generated
// column or the required predicate), ErrBatch (a batch of the wrong shape),
// ErrInvalidSpec (NewTable), ErrAppendOnly (removing rows from an
// append-only table), ErrDVMode (deletion vectors asked for where they
// cannot be used) and ErrFileSchema (every *FileSchemaError of FileAdd);
// each also matches deltaerr.ErrInvalidArgument. Store errors come through
// with their logstore kinds, and commit errors with txn's (txn.ErrConflict).
//
// Nothing here is safe for concurrent use on one call, but independent
// calls may run at once: file names are random UUIDs. The examples show
// NewTable's choice of protocol, a create, and an Append.
package write

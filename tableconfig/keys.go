package tableconfig

// Names of the table properties (metaData.configuration keys) this library
// reads, sets, or checks when they are set. They are part of the on-disk
// format shared with every Delta engine: never change them. Keys are
// matched exactly, as Spark matches them when it reads a table.
//
// Field metadata keys (delta.columnMapping.id, delta.invariants,
// delta.generationExpression, ...) are not table properties: they live in
// package schema and package write, next to the code that reads them.
const (
	// KeyAppendOnly (boolean, default false) forbids removing data:
	// commits may add files, and remove them only with dataChange=false.
	KeyAppendOnly = "delta.appendOnly"

	// KeyCheckpointInterval (positive integer, default 10) is how many
	// commits apart checkpoints are written.
	KeyCheckpointInterval = "delta.checkpointInterval"
	// KeyCheckpointPolicy (classic or v2, default classic) chooses the
	// checkpoint format; v2 needs the v2Checkpoint feature.
	KeyCheckpointPolicy = "delta.checkpointPolicy"
	// KeyCheckpointWriteStatsAsJSON (boolean, default true) writes each
	// file's stats as the JSON string add.stats in checkpoints.
	KeyCheckpointWriteStatsAsJSON = "delta.checkpoint.writeStatsAsJson"
	// KeyCheckpointWriteStatsAsStruct (boolean, default false here) writes
	// add.stats_parsed and add.partitionValues_parsed in checkpoints.
	KeyCheckpointWriteStatsAsStruct = "delta.checkpoint.writeStatsAsStruct"

	// KeyLogRetentionDuration (interval, default 30 days) is how long log
	// files are kept once a checkpoint makes them unneeded.
	KeyLogRetentionDuration = "delta.logRetentionDuration"
	// KeyRequireCheckpointProtectionBeforeVersion is the version below which
	// checkpoints are protected (protocol RFC checkpoint-protection).
	KeyRequireCheckpointProtectionBeforeVersion = "delta.requireCheckpointProtectionBeforeVersion"
	// KeyDeletedFileRetentionDuration (interval, default 7 days) is how
	// long tombstones are kept, and the shortest age VACUUM deletes at.
	KeyDeletedFileRetentionDuration = "delta.deletedFileRetentionDuration"
	// KeySetTransactionRetentionDuration (interval, no default) expires
	// txn actions older than it.
	KeySetTransactionRetentionDuration = "delta.setTransactionRetentionDuration"
	// KeyEnableExpiredLogCleanup (boolean, default true) lets a writer
	// delete expired log files after a checkpoint.
	KeyEnableExpiredLogCleanup = "delta.enableExpiredLogCleanup"

	// KeyEnableChangeDataFeed (boolean, default false) makes writers
	// record change data.
	KeyEnableChangeDataFeed = "delta.enableChangeDataFeed"
	// KeyEnableDeletionVectors (boolean, default false) lets writers
	// delete rows with deletion vectors.
	KeyEnableDeletionVectors = "delta.enableDeletionVectors"

	// KeyEnableRowTracking (boolean, default false) turns row tracking on.
	KeyEnableRowTracking = "delta.enableRowTracking"
	// KeyMaterializedRowIDColumn names the hidden column that holds
	// materialized row ids in data files.
	KeyMaterializedRowIDColumn = "delta.rowTracking.materializedRowIdColumnName"
	// KeyMaterializedRowCommitVersionColumn names the hidden column that
	// holds materialized row commit versions.
	KeyMaterializedRowCommitVersionColumn = "delta.rowTracking.materializedRowCommitVersionColumnName"

	// KeyEnableInCommitTimestamps (boolean, default false) makes commits
	// carry commitInfo.inCommitTimestamp.
	KeyEnableInCommitTimestamps = "delta.enableInCommitTimestamps"
	// KeyInCommitTimestampEnablementVersion (non-negative integer) is the
	// version from which commits carry in-commit timestamps, when they
	// were turned on after the table was created.
	KeyInCommitTimestampEnablementVersion = "delta.inCommitTimestampEnablementVersion"
	// KeyInCommitTimestampEnablementTimestamp (integer, milliseconds) is
	// the in-commit timestamp of that version.
	KeyInCommitTimestampEnablementTimestamp = "delta.inCommitTimestampEnablementTimestamp"

	// KeyColumnMappingMode (none, id or name, default none; any case).
	KeyColumnMappingMode = "delta.columnMapping.mode"
	// KeyColumnMappingMaxColumnID (non-negative integer) is the largest
	// column id assigned so far.
	KeyColumnMappingMaxColumnID = "delta.columnMapping.maxColumnId"

	// KeyDataSkippingNumIndexedCols (integer >= -1, default 32): the first
	// N leaf columns get statistics; -1 means all of them.
	KeyDataSkippingNumIndexedCols = "delta.dataSkippingNumIndexedCols"
	// KeyDataSkippingStatsColumns (comma-separated column names) replaces
	// KeyDataSkippingNumIndexedCols: exactly the named columns get stats.
	KeyDataSkippingStatsColumns = "delta.dataSkippingStatsColumns"

	// KeyTargetFileSize (positive integer, bytes) is the size writers and
	// OPTIMIZE aim for.
	KeyTargetFileSize = "delta.targetFileSize"
	// KeyAutoCompact (true or false, any case; Databricks' auto and
	// legacy too; default off) compacts the small files of the
	// partitions a write touched after it commits (Spark's
	// DeltaConfigs.AUTO_COMPACT). See Config.AutoCompact.
	KeyAutoCompact = "delta.autoOptimize.autoCompact"
	// KeyAutoOptimize (boolean, deprecated) true turns auto compaction on
	// whatever KeyAutoCompact says (Spark's DeltaConfigs.AUTO_OPTIMIZE).
	KeyAutoOptimize = "delta.autoOptimize"
	// KeyIsolationLevel (Serializable, WriteSerializable or
	// SnapshotIsolation) is the default isolation level of writes.
	KeyIsolationLevel = "delta.isolationLevel"
	// KeyRandomizeFilePrefixes (boolean, default false) puts data files
	// under random prefixes instead of partition directories.
	KeyRandomizeFilePrefixes = "delta.randomizeFilePrefixes"
	// KeyRandomPrefixLength (positive integer, default 2) is the length of
	// those prefixes.
	KeyRandomPrefixLength = "delta.randomPrefixLength"

	// KeyEnableTypeWidening (boolean, default false) allows widening
	// column types; it needs the typeWidening feature.
	KeyEnableTypeWidening = "delta.enableTypeWidening"
	// KeyUniversalFormatEnabledFormats (comma-separated, of iceberg and
	// hudi) lists the formats whose metadata is written next to Delta's.
	KeyUniversalFormatEnabledFormats = "delta.universalFormat.enabledFormats"
	// KeyEnableIcebergCompatV1 and KeyEnableIcebergCompatV2 (booleans)
	// restrict the table to what Iceberg readers understand.
	KeyEnableIcebergCompatV1 = "delta.enableIcebergCompatV1"
	KeyEnableIcebergCompatV2 = "delta.enableIcebergCompatV2"

	// KeyConstraintPrefix starts the key of a CHECK constraint:
	// delta.constraints.<name> = <SQL expression>.
	KeyConstraintPrefix = "delta.constraints."
	// KeyFeaturePrefix starts Spark's delta.feature.<name> = supported,
	// which asks for a table feature at creation or ALTER; it is never
	// stored in metaData.
	KeyFeaturePrefix = "delta.feature."
)

// Defaults of the properties that have one.
const (
	DefaultCheckpointInterval = 10
	DefaultNumIndexedCols     = 32
)

package actions

// Table feature names as the protocol writes them in readerFeatures and
// writerFeatures. They are part of the on-disk format: never change them.
// What each feature means to this library (reader or writer feature, the
// legacy versions that imply it, whether it is read and written) is in
// package tableconfig, the one place that answers "can we read or write
// this table".
const (
	FeatureAppendOnly                 = "appendOnly"
	FeatureInvariants                 = "invariants"
	FeatureCheckConstraints           = "checkConstraints"
	FeatureChangeDataFeed             = "changeDataFeed"
	FeatureGeneratedColumns           = "generatedColumns"
	FeatureColumnMapping              = "columnMapping"
	FeatureIdentityColumns            = "identityColumns"
	FeatureAllowColumnDefaults        = "allowColumnDefaults"
	FeatureDeletionVectors            = "deletionVectors"
	FeatureRowTracking                = "rowTracking"
	FeatureTimestampNtz               = "timestampNtz"
	FeatureDomainMetadata             = "domainMetadata"
	FeatureV2Checkpoint               = "v2Checkpoint"
	FeatureCatalogManaged             = "catalogManaged"
	FeatureCatalogOwnedPreview        = "catalogOwned-preview"
	FeatureIcebergCompatV1            = "icebergCompatV1"
	FeatureIcebergCompatV2            = "icebergCompatV2"
	FeatureIcebergCompatV3            = "icebergCompatV3"
	FeatureIcebergWriterCompatV1      = "icebergWriterCompatV1"
	FeatureIcebergWriterCompatV3      = "icebergWriterCompatV3"
	FeatureClustering                 = "clustering"
	FeatureVacuumProtocolCheck        = "vacuumProtocolCheck"
	FeatureInCommitTimestamp          = "inCommitTimestamp"
	FeatureTypeWidening               = "typeWidening"
	FeatureTypeWideningPreview        = "typeWidening-preview"
	FeatureVariantType                = "variantType"
	FeatureVariantTypePreview         = "variantType-preview"
	FeatureVariantShredding           = "variantShredding"
	FeatureVariantShreddingPreview    = "variantShredding-preview"
	FeatureCheckpointProtection       = "checkpointProtection"
	FeatureMaterializePartitionCols   = "materializePartitionColumns"
	FeatureCollations                 = "collations"
	FeatureCollationsPreview          = "collations-preview"
	FeatureTimestampNanos             = "timestampNanos"
	FeatureColumnMappingUsageTracking = "columnMappingUsageTracking"
	FeatureGeospatial                 = "geospatial"
	FeatureCoordinatedCommitsPreview  = "coordinatedCommits-preview"
	FeatureAdaptiveMetadataPreview    = "adaptiveMetadata-preview"
)

// FeatureLiquidPreview is the writer feature of Databricks' preview of
// liquid clustering (Runtime 13), with the delta.liquid domain. Part of
// the on-disk format: never change it.
const FeatureLiquidPreview = "liquid"

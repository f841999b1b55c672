package actions

import (
	"fmt"
	"slices"

	"github.com/godelta/delta/deltaerr"
)

// Table feature names as the protocol writes them in readerFeatures and
// writerFeatures. They are part of the on-disk format: never change them.
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

// FeatureInfo describes one table feature: whether readers must understand
// it, the legacy protocol versions that imply it, and whether this library
// can read tables that use it.
type FeatureInfo struct {
	Name string
	// ReaderWriter is true for a feature readers must understand (listed in
	// both readerFeatures and writerFeatures); false for writer-only ones.
	ReaderWriter bool
	// LegacyReader and LegacyWriter are the legacy protocol versions that
	// imply the feature; 0 when only table-features protocols can enable it.
	LegacyReader, LegacyWriter int32
	// Read is true when this library reads tables that use the feature.
	// Writer-only features never block reading, whatever this says.
	Read bool
}

// features is the support table. A reader-writer feature missing from it is
// unknown and makes a table unreadable.
var features = map[string]FeatureInfo{}

func init() {
	for _, f := range []FeatureInfo{
		{Name: FeatureAppendOnly, LegacyReader: 1, LegacyWriter: 2, Read: true},
		{Name: FeatureInvariants, LegacyReader: 1, LegacyWriter: 2, Read: true},
		{Name: FeatureCheckConstraints, LegacyReader: 1, LegacyWriter: 3, Read: true},
		{Name: FeatureChangeDataFeed, LegacyReader: 1, LegacyWriter: 4, Read: true},
		{Name: FeatureGeneratedColumns, LegacyReader: 1, LegacyWriter: 4, Read: true},
		{Name: FeatureColumnMapping, ReaderWriter: true, LegacyReader: 2, LegacyWriter: 5, Read: true},
		{Name: FeatureIdentityColumns, LegacyReader: 1, LegacyWriter: 6, Read: true},
		{Name: FeatureAllowColumnDefaults, Read: true},
		{Name: FeatureDeletionVectors, ReaderWriter: true, Read: true},
		{Name: FeatureRowTracking, Read: true},
		{Name: FeatureTimestampNtz, ReaderWriter: true, Read: true},
		{Name: FeatureDomainMetadata, Read: true},
		{Name: FeatureV2Checkpoint, ReaderWriter: true, Read: true},
		// Catalog-managed tables: the catalog, not the directory listing,
		// says which commits exist, so a reader of the directory alone would
		// see a wrong table. Refused until a catalog client exists.
		{Name: FeatureCatalogManaged, ReaderWriter: true, Read: false},
		{Name: FeatureCatalogOwnedPreview, ReaderWriter: true, Read: false},
		{Name: FeatureIcebergCompatV1, Read: true},
		{Name: FeatureIcebergCompatV2, Read: true},
		{Name: FeatureIcebergCompatV3, Read: true},
		{Name: FeatureIcebergWriterCompatV1, Read: true},
		{Name: FeatureIcebergWriterCompatV3, Read: true},
		{Name: FeatureClustering, Read: true},
		{Name: FeatureLiquidPreview, Read: true},
		{Name: FeatureVacuumProtocolCheck, ReaderWriter: true, Read: true},
		{Name: FeatureInCommitTimestamp, Read: true},
		{Name: FeatureTypeWidening, ReaderWriter: true, Read: true},
		{Name: FeatureTypeWideningPreview, ReaderWriter: true, Read: true},
		{Name: FeatureVariantType, ReaderWriter: true, Read: true},
		{Name: FeatureVariantTypePreview, ReaderWriter: true, Read: true},
		{Name: FeatureVariantShredding, ReaderWriter: true, Read: true},
		{Name: FeatureVariantShreddingPreview, ReaderWriter: true, Read: true},
		{Name: FeatureCheckpointProtection, Read: true},
		{Name: FeatureMaterializePartitionCols, Read: true},
		{Name: FeatureCollations, Read: true},
		{Name: FeatureCollationsPreview, Read: true},
		// Nanosecond timestamps need a type this library does not decode yet.
		{Name: FeatureTimestampNanos, ReaderWriter: true, Read: false},
		{Name: FeatureColumnMappingUsageTracking, Read: true},
		// Geospatial columns are stored as WKB binary; the log reads as usual.
		{Name: FeatureGeospatial, ReaderWriter: true, Read: true},
		{Name: FeatureCoordinatedCommitsPreview, Read: true},
		{Name: FeatureAdaptiveMetadataPreview, ReaderWriter: true, Read: false},
	} {
		features[f.Name] = f
	}
}

// LookupFeature returns what this library knows of a feature name.
func LookupFeature(name string) (FeatureInfo, bool) {
	f, ok := features[name]
	return f, ok
}

// The highest legacy and table-features protocol versions.
const (
	MaxReaderVersion = 3
	MaxWriterVersion = 7
)

// ReadSupported returns nil when this library can read a table with protocol
// p, else a *deltaerr.FeatureError naming the first version or feature that
// stops it. Unknown reader features are refused; unknown writer-only
// features are not, since readers need not understand them.
func (p *Protocol) ReadSupported() error {
	switch {
	case p.MinReaderVersion < 1:
		return &deltaerr.CorruptError{Path: "protocol", Reason: fmt.Sprintf("minReaderVersion %d is not a valid version", p.MinReaderVersion)}
	case p.MinReaderVersion > MaxReaderVersion:
		return &deltaerr.FeatureError{Feature: fmt.Sprintf("minReaderVersion %d", p.MinReaderVersion), Op: "read"}
	case p.MinReaderVersion < 3:
		return nil // legacy versions 1 and 2: everything they imply is readable
	}
	for _, name := range p.ReaderFeatures {
		f, ok := features[name]
		if !ok || !f.Read {
			return &deltaerr.FeatureError{Feature: "reader feature " + name, Op: "read"}
		}
	}
	return nil
}

// HasReaderFeature reports whether p supports the named reader-writer
// feature, explicitly (reader version 3) or through a legacy reader version.
func (p *Protocol) HasReaderFeature(name string) bool {
	if p.MinReaderVersion >= 3 {
		return slices.Contains(p.ReaderFeatures, name)
	}
	f, ok := features[name]
	return ok && f.ReaderWriter && f.LegacyReader > 0 && p.MinReaderVersion >= f.LegacyReader
}

// HasWriterFeature reports whether p supports the named feature on the
// writer side, explicitly (writer version 7) or through a legacy writer
// version.
func (p *Protocol) HasWriterFeature(name string) bool {
	if p.MinWriterVersion >= 7 {
		return slices.Contains(p.WriterFeatures, name)
	}
	f, ok := features[name]
	return ok && f.LegacyWriter > 0 && p.MinWriterVersion >= f.LegacyWriter
}

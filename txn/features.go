package txn

import (
	"fmt"
	"strings"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
)

// writeSupport says how this package stands towards a writer feature.
type writeSupport int

const (
	// honoured: a commit built here meets the feature's writer
	// requirements, or the feature sets none on commits.
	honoured writeSupport = iota + 1
	// checkedRows: the feature constrains the rows written, which a commit
	// cannot see. A table that supports the feature but does not use it
	// (a legacy writer version that implies it) is writable; one that uses
	// it is writable only by a writer that checks every row itself
	// (package write; the marker is internal/rowcheck, not public API).
	checkedRows
	// refusedWhenActive: as checkedRows, but no writer here checks the
	// rows yet (identity columns, column defaults).
	refusedWhenActive
)

// writerFeatures is the one list of writer features Commit accepts; a
// feature missing from it (unknown, or listed in the comment below) makes
// the table unwritable. Reasons, feature by feature:
//
//   - appendOnly: Commit refuses data-changing removes when delta.appendOnly
//     is true (ErrAppendOnly).
//   - changeDataFeed: the caller stages the cdc actions of its changes
//     (AddCDC); a commit of adds only needs none.
//   - columnMapping: commits carry physical names the caller chose;
//     conflict checks map logical to physical names.
//   - deletionVectors: file actions with deletion vectors are staged as any.
//   - rowTracking, domainMetadata, inCommitTimestamp: implemented here.
//   - timestampNtz, typeWidening, variantType, variantShredding (and their
//     previews): types of the data files, nothing to do in the log.
//   - v2Checkpoint, vacuumProtocolCheck, checkpointProtection: rules for
//     checkpoints, VACUUM and log cleanup, not for commits.
//   - invariants, checkConstraints, generatedColumns: writable when active
//     only with rows checked by the writer (see checkedRows).
//   - identityColumns, allowColumnDefaults: refused when active.
//   - clustering: the writer (package write) collects statistics on the
//     clustering columns, which CLUSTER BY checks are indexed
//     (write.LayoutColumns); files stay unclustered (no clusteringProvider)
//     until OPTIMIZE (package optimize) clusters them, as the protocol
//     allows. liquid, its Databricks preview (domain delta.liquid), has the
//     same rules for writers.
//   - icebergCompatV2: Commit checks its rules on the committed
//     configuration (tableconfig.Config.CheckIcebergCompat) and on the
//     staged adds (numRecords in stats, no deletion vector); package write
//     materializes partition values in the data files it writes.
//
// Refused, because a commit built here would break them: catalogManaged and
// catalogOwned-preview (commits go through the catalog),
// coordinatedCommits-preview, icebergCompatV1, icebergCompatV3 and
// icebergWriterCompat* (rules on schema and files), materializePartitionColumns, collations,
// timestampNanos, geospatial, columnMappingUsageTracking,
// adaptiveMetadata-preview, and every feature this list does not name.
var writerFeatures = map[string]writeSupport{
	actions.FeatureAppendOnly:              honoured,
	actions.FeatureChangeDataFeed:          honoured,
	actions.FeatureColumnMapping:           honoured,
	actions.FeatureDeletionVectors:         honoured,
	actions.FeatureRowTracking:             honoured,
	actions.FeatureDomainMetadata:          honoured,
	actions.FeatureInCommitTimestamp:       honoured,
	actions.FeatureTimestampNtz:            honoured,
	actions.FeatureTypeWidening:            honoured,
	actions.FeatureTypeWideningPreview:     honoured,
	actions.FeatureVariantType:             honoured,
	actions.FeatureVariantTypePreview:      honoured,
	actions.FeatureVariantShredding:        honoured,
	actions.FeatureVariantShreddingPreview: honoured,
	actions.FeatureV2Checkpoint:            honoured,
	actions.FeatureVacuumProtocolCheck:     honoured,
	actions.FeatureCheckpointProtection:    honoured,
	actions.FeatureClustering:              honoured,
	actions.FeatureLiquidPreview:           honoured,
	actions.FeatureIcebergCompatV2:         honoured,
	actions.FeatureInvariants:              checkedRows,
	actions.FeatureCheckConstraints:        checkedRows,
	actions.FeatureGeneratedColumns:        checkedRows,
	actions.FeatureIdentityColumns:         refusedWhenActive,
	actions.FeatureAllowColumnDefaults:     refusedWhenActive,
}

// legacyWriterFeatures are the features legacy writer versions 2 to 6 imply.
var legacyWriterFeatures = []string{
	actions.FeatureAppendOnly, actions.FeatureInvariants, actions.FeatureCheckConstraints,
	actions.FeatureChangeDataFeed, actions.FeatureGeneratedColumns, actions.FeatureColumnMapping,
	actions.FeatureIdentityColumns,
}

// WriteSupported returns nil when this package can commit to a table with
// protocol p and metadata m, else a *deltaerr.FeatureError (errors.Is
// deltaerr.ErrUnsupportedFeature) naming the first writer feature or
// version that stops it. See writerFeatures in features.go for the list
// and the reason behind each entry.
func WriteSupported(p *actions.Protocol, m *actions.Metadata) error {
	return writeSupported(p, m, false)
}

// WriteSupportedChecked is WriteSupported for a writer that checks every
// row it writes against the table's invariants, CHECK constraints and
// generated columns (package write does), so tables that use them are
// writable too.
func WriteSupportedChecked(p *actions.Protocol, m *actions.Metadata) error {
	return writeSupported(p, m, true)
}

func writeSupported(p *actions.Protocol, m *actions.Metadata, rowsChecked bool) error {
	if p.MinWriterVersion < 1 {
		return &deltaerr.CorruptError{Path: "protocol", Reason: fmt.Sprintf("minWriterVersion %d is not a valid version", p.MinWriterVersion)}
	}
	if p.MinWriterVersion > actions.MaxWriterVersion {
		return &deltaerr.FeatureError{Feature: fmt.Sprintf("minWriterVersion %d", p.MinWriterVersion), Op: "write"}
	}
	if err := p.ReadSupported(); err != nil {
		// Writing needs reading: conflict checks and rebases read the log.
		return err
	}
	names := p.WriterFeatures
	if p.MinWriterVersion < 7 {
		names = nil
		for _, f := range legacyWriterFeatures {
			if p.HasWriterFeature(f) {
				names = append(names, f)
			}
		}
	}
	var sch *schema.StructType
	for _, name := range names {
		support := writerFeatures[name]
		if support == checkedRows && rowsChecked {
			support = honoured
		}
		switch support {
		case honoured:
			continue
		case checkedRows, refusedWhenActive:
			if sch == nil {
				s, err := schema.Parse(m.SchemaString)
				if err != nil {
					return &deltaerr.CorruptError{Path: "metaData.schemaString", Reason: "cannot parse the schema", Err: err}
				}
				sch = s
			}
			if !featureActive(name, sch, m) {
				continue
			}
		}
		return &deltaerr.FeatureError{Feature: "writer feature " + name, Op: "write"}
	}
	return nil
}

// featureActive reports whether a table uses a feature that constrains the
// rows written: a column carries its metadata, or (checkConstraints) a
// delta.constraints.* property is set.
func featureActive(name string, sch *schema.StructType, m *actions.Metadata) bool {
	var keyPrefix string
	switch name {
	case actions.FeatureCheckConstraints:
		for k := range m.Configuration {
			if strings.HasPrefix(k, tableconfig.KeyConstraintPrefix) {
				return true
			}
		}
		return false
	case actions.FeatureInvariants:
		keyPrefix = schema.MetadataInvariants
	case actions.FeatureGeneratedColumns:
		keyPrefix = schema.MetadataGenerationExpression
	case actions.FeatureIdentityColumns:
		keyPrefix = schema.MetadataIdentityPrefix
	case actions.FeatureAllowColumnDefaults:
		keyPrefix = "CURRENT_DEFAULT"
	default:
		return true
	}
	active := false
	var walk func(t *schema.StructType)
	walk = func(t *schema.StructType) {
		for i := range t.Fields {
			f := &t.Fields[i]
			for _, e := range f.Metadata {
				if strings.HasPrefix(e.Key, keyPrefix) {
					active = true
				}
			}
			if st, ok := f.Type.(*schema.StructType); ok {
				walk(st)
			}
		}
	}
	walk(sch)
	return active
}

package tableconfig

import (
	"fmt"
	"slices"
	"strings"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
)

// Table features: the one place that says which features exist, which
// protocol versions imply them, and which this library reads and writes.
// Package actions holds the names (the on-disk spelling) and nothing else;
// snapshot, scan, txn and the writers ask this file (ReadSupported,
// WriteSupported, HasReaderFeature, HasWriterFeature, LookupFeature), and a
// Config answers for its own protocol (IsFeatureSupported,
// IsFeatureEnabled), as kernel-rs's TableConfiguration does.

// The highest legacy and table-features protocol versions.
const (
	MaxReaderVersion = 3
	MaxWriterVersion = 7
)

// WriteSupport says how package txn stands towards a writer feature: whether
// a commit built there meets the feature's writer requirements.
type WriteSupport int

const (
	// WriteRefused: a commit built here would break the feature's rules, or
	// the feature is unknown. The table is not writable.
	WriteRefused WriteSupport = iota
	// WriteHonoured: a commit meets the feature's writer requirements, or
	// the feature sets none on commits.
	WriteHonoured
	// WriteCheckedRows: the feature constrains the rows written, which a
	// commit cannot see. A table that supports the feature but does not use
	// it (a legacy writer version that implies it) is writable; one that
	// uses it is writable only by a writer that checks every row itself
	// (package write).
	WriteCheckedRows
	// WriteRefusedWhenActive: as WriteCheckedRows, but no writer here
	// checks the rows yet: writable only while the table does not use it.
	WriteRefusedWhenActive
)

// FeatureInfo describes one table feature: whether readers must understand
// it, the legacy protocol versions that imply it, and whether this library
// reads and writes tables that use it.
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
	// Write is how commits of this library stand towards the feature.
	Write WriteSupport
}

// featureList is the support table, in the order legacy features are
// checked (by legacy writer version). A feature missing from it is
// unknown: a reader-writer one makes a table unreadable, any one makes it
// unwritable.
//
// Write support, feature by feature:
//
//   - appendOnly: Commit refuses data-changing removes when delta.appendOnly
//     is true (txn.ErrAppendOnly).
//
//   - changeDataFeed: the caller stages the cdc actions of its changes
//     (AddCDC); a commit of adds only needs none.
//
//   - columnMapping: commits carry physical names the caller chose;
//     conflict checks map logical to physical names.
//
//   - deletionVectors: file actions with deletion vectors are staged as any.
//
//   - rowTracking, domainMetadata, inCommitTimestamp: implemented by txn.
//
//   - timestampNtz, typeWidening, variantType, variantShredding (and their
//     previews): types of the data files, nothing to do in the log.
//
//   - v2Checkpoint, vacuumProtocolCheck, checkpointProtection: rules for
//     checkpoints, VACUUM and log cleanup, not for commits.
//
//   - invariants, checkConstraints, generatedColumns: writable when active
//     only with rows checked by the writer (WriteCheckedRows).
//
//   - identityColumns: writable when active only by the row writer
//     (WriteCheckedRows), which allocates the values of new rows and
//     commits the high-water marks with them (package write).
//
//   - allowColumnDefaults: writable when active only by the row writer
//     (WriteCheckedRows), which fills the defaults (literals only) of new
//     rows (package write).
//
//   - clustering: the writer (package write) collects statistics on the
//     clustering columns, which CLUSTER BY checks are indexed; files stay
//     unclustered (no clusteringProvider) until OPTIMIZE clusters them, as
//     the protocol allows. liquid, its Databricks preview (domain
//     delta.liquid), has the same rules for writers.
//
//   - icebergCompatV2: Commit checks its rules on the committed
//     configuration (Config.CheckIcebergCompat) and on the staged adds
//     (numRecords in stats, no deletion vector); package write materializes
//     partition values in the data files it writes.
//
//   - catalogManaged: commits go through the catalog's view of the log
//     (deltalog.CatalogView, which stages, ratifies and publishes them);
//     in-commit timestamps must be enabled, and txn refuses a commit
//     through any other store.
//
//   - collations (and its preview): strings are stored alike whatever
//     their collation; the __COLLATIONS field metadata is kept as written,
//     and follows a renamed column (package alter); a table created with
//     it gets the feature and domainMetadata (package write). Statistics
//     stay UTF-8 binary minValues and maxValues, which the protocol allows
//     for any collation, without the optional statsWithCollation (see
//     schema.MetadataCollations); the domain's writeVersions hints are
//     left alone, as no versioned collation is written.
//
// Refused for writing, because a commit built here would break them:
// catalogOwned-preview (commits go through a catalog; catalogManaged, its
// successor, is supported), coordinatedCommits-preview, icebergCompatV1, icebergCompatV3 and
// icebergWriterCompat* (rules on schema and files),
// materializePartitionColumns, timestampNanos, geospatial (its columns
// are read as WKB binaries; the writer has no encoding for them),
// columnMappingUsageTracking, adaptiveMetadata-preview.
var featureList = []FeatureInfo{
	{Name: actions.FeatureAppendOnly, LegacyReader: 1, LegacyWriter: 2, Read: true, Write: WriteHonoured},
	{Name: actions.FeatureInvariants, LegacyReader: 1, LegacyWriter: 2, Read: true, Write: WriteCheckedRows},
	{Name: actions.FeatureCheckConstraints, LegacyReader: 1, LegacyWriter: 3, Read: true, Write: WriteCheckedRows},
	{Name: actions.FeatureChangeDataFeed, LegacyReader: 1, LegacyWriter: 4, Read: true, Write: WriteHonoured},
	{Name: actions.FeatureGeneratedColumns, LegacyReader: 1, LegacyWriter: 4, Read: true, Write: WriteCheckedRows},
	{Name: actions.FeatureColumnMapping, ReaderWriter: true, LegacyReader: 2, LegacyWriter: 5, Read: true, Write: WriteHonoured},
	{Name: actions.FeatureIdentityColumns, LegacyReader: 1, LegacyWriter: 6, Read: true, Write: WriteCheckedRows},
	{Name: actions.FeatureAllowColumnDefaults, Read: true, Write: WriteCheckedRows},
	{Name: actions.FeatureDeletionVectors, ReaderWriter: true, Read: true, Write: WriteHonoured},
	{Name: actions.FeatureRowTracking, Read: true, Write: WriteHonoured},
	{Name: actions.FeatureTimestampNtz, ReaderWriter: true, Read: true, Write: WriteHonoured},
	{Name: actions.FeatureDomainMetadata, Read: true, Write: WriteHonoured},
	{Name: actions.FeatureV2Checkpoint, ReaderWriter: true, Read: true, Write: WriteHonoured},
	// Catalog-managed tables: the catalog, not the directory listing, says
	// which commits exist, so they are read and committed only through a
	// catalog's view of the log (deltalog.CatalogView, package
	// catalogmanaged); snapshot and txn refuse them otherwise
	// (deltaerr.CatalogManagedError).
	{Name: actions.FeatureCatalogManaged, ReaderWriter: true, Read: true, Write: WriteHonoured},
	{Name: actions.FeatureCatalogOwnedPreview, ReaderWriter: true},
	{Name: actions.FeatureIcebergCompatV1, Read: true},
	{Name: actions.FeatureIcebergCompatV2, Read: true, Write: WriteHonoured},
	{Name: actions.FeatureIcebergCompatV3, Read: true},
	{Name: actions.FeatureIcebergWriterCompatV1, Read: true},
	{Name: actions.FeatureIcebergWriterCompatV3, Read: true},
	{Name: actions.FeatureClustering, Read: true, Write: WriteHonoured},
	{Name: actions.FeatureLiquidPreview, Read: true, Write: WriteHonoured},
	{Name: actions.FeatureVacuumProtocolCheck, ReaderWriter: true, Read: true, Write: WriteHonoured},
	{Name: actions.FeatureInCommitTimestamp, Read: true, Write: WriteHonoured},
	{Name: actions.FeatureTypeWidening, ReaderWriter: true, Read: true, Write: WriteHonoured},
	{Name: actions.FeatureTypeWideningPreview, ReaderWriter: true, Read: true, Write: WriteHonoured},
	{Name: actions.FeatureVariantType, ReaderWriter: true, Read: true, Write: WriteHonoured},
	{Name: actions.FeatureVariantTypePreview, ReaderWriter: true, Read: true, Write: WriteHonoured},
	{Name: actions.FeatureVariantShredding, ReaderWriter: true, Read: true, Write: WriteHonoured},
	{Name: actions.FeatureVariantShreddingPreview, ReaderWriter: true, Read: true, Write: WriteHonoured},
	{Name: actions.FeatureCheckpointProtection, Read: true, Write: WriteHonoured},
	{Name: actions.FeatureMaterializePartitionCols, Read: true},
	{Name: actions.FeatureCollations, Read: true, Write: WriteHonoured},
	{Name: actions.FeatureCollationsPreview, Read: true, Write: WriteHonoured},
	// Nanosecond timestamps need a type this library does not decode yet.
	{Name: actions.FeatureTimestampNanos, ReaderWriter: true},
	{Name: actions.FeatureColumnMappingUsageTracking, Read: true},
	// Geospatial columns are stored as WKB binary; the log reads as usual.
	{Name: actions.FeatureGeospatial, ReaderWriter: true, Read: true},
	{Name: actions.FeatureCoordinatedCommitsPreview, Read: true},
	{Name: actions.FeatureAdaptiveMetadataPreview, ReaderWriter: true},
}

// features indexes featureList by name.
var features = func() map[string]FeatureInfo {
	m := make(map[string]FeatureInfo, len(featureList))
	for _, f := range featureList {
		m[f.Name] = f
	}
	return m
}()

// LookupFeature returns what this library knows of a feature name.
func LookupFeature(name string) (FeatureInfo, bool) {
	f, ok := features[name]
	return f, ok
}

// FeatureNames returns the name of every table feature this library knows,
// sorted.
func FeatureNames() []string {
	out := make([]string, 0, len(featureList))
	for _, f := range featureList {
		out = append(out, f.Name)
	}
	slices.Sort(out)
	return out
}

// legacyFeatureNames returns the features legacy writer versions 2 to 6
// imply, by the writer version that implies them.
func legacyFeatureNames() []string {
	var out []string
	for _, f := range featureList {
		if f.LegacyWriter > 0 {
			out = append(out, f.Name)
		}
	}
	return out
}

// HasReaderFeature reports whether p supports the named reader-writer
// feature, explicitly (reader version 3) or through a legacy reader version.
func HasReaderFeature(p *actions.Protocol, name string) bool {
	if p.MinReaderVersion >= 3 {
		return slices.Contains(p.ReaderFeatures, name)
	}
	f, ok := features[name]
	return ok && f.ReaderWriter && f.LegacyReader > 0 && p.MinReaderVersion >= f.LegacyReader
}

// HasWriterFeature reports whether p supports the named feature on the
// writer side, explicitly (writer version 7) or through a legacy writer
// version.
func HasWriterFeature(p *actions.Protocol, name string) bool {
	if p.MinWriterVersion >= 7 {
		return slices.Contains(p.WriterFeatures, name)
	}
	f, ok := features[name]
	return ok && f.LegacyWriter > 0 && p.MinWriterVersion >= f.LegacyWriter
}

// ReadSupported returns nil when this library can read a table with protocol
// p, else a *deltaerr.FeatureError naming the first version or feature that
// stops it. Unknown reader features are refused; unknown writer-only
// features are not, since readers need not understand them.
func ReadSupported(p *actions.Protocol) error {
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

// WriteSupported returns nil when package txn can commit to a table with
// protocol p and metadata m, else a *deltaerr.FeatureError (errors.Is
// deltaerr.ErrUnsupportedFeature) naming the first writer feature or
// version that stops it. rowsChecked says the writer checks every row it
// writes against the table's invariants, CHECK constraints and generated
// columns, and fills identity columns and column defaults (package write
// does), so tables that use them are writable too.
// Writing needs reading (conflict checks and rebases read the log), so a
// table ReadSupported refuses is refused.
func WriteSupported(p *actions.Protocol, m *actions.Metadata, rowsChecked bool) error {
	if p.MinWriterVersion < 1 {
		return &deltaerr.CorruptError{Path: "protocol", Reason: fmt.Sprintf("minWriterVersion %d is not a valid version", p.MinWriterVersion)}
	}
	if p.MinWriterVersion > MaxWriterVersion {
		return &deltaerr.FeatureError{Feature: fmt.Sprintf("minWriterVersion %d", p.MinWriterVersion), Op: "write"}
	}
	if err := ReadSupported(p); err != nil {
		return err
	}
	names := p.WriterFeatures
	if p.MinWriterVersion < 7 {
		names = nil
		for _, f := range legacyFeatureNames() {
			if HasWriterFeature(p, f) {
				names = append(names, f)
			}
		}
	}
	var sch *schema.StructType
	for _, name := range names {
		support := features[name].Write
		if support == WriteCheckedRows && rowsChecked {
			support = WriteHonoured
		}
		switch support {
		case WriteHonoured:
			continue
		case WriteCheckedRows, WriteRefusedWhenActive:
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
	// A catalog publishes commits after ratifying them, so their files'
	// times say nothing: the protocol makes in-commit timestamps a
	// writer requirement of catalogManaged.
	if HasWriterFeature(p, actions.FeatureCatalogManaged) &&
		(!HasWriterFeature(p, actions.FeatureInCommitTimestamp) || !strings.EqualFold(m.Configuration[KeyEnableInCommitTimestamps], "true")) {
		return fmt.Errorf("a catalog-managed table needs in-commit timestamps: the inCommitTimestamp feature and %s=true: %w", KeyEnableInCommitTimestamps, deltaerr.ErrInvalidArgument)
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
			if strings.HasPrefix(k, KeyConstraintPrefix) {
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
		keyPrefix = schema.MetadataCurrentDefault
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

// ReadSupported is ReadSupported of the table's protocol.
func (c *Config) ReadSupported() error { return ReadSupported(&c.protocol) }

// WriteSupported is WriteSupported of the table's protocol and metadata.
func (c *Config) WriteSupported(rowsChecked bool) error {
	return WriteSupported(&c.protocol, &c.metadata, rowsChecked)
}

package write

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
)

// Evolve returns the protocol and metaData of a table whose schema
// becomes sch and whose properties become props, starting from p and m:
// what every change of an existing table's metadata commits (package
// alter's ALTER TABLE, an append that merges its schema). It applies
// the rules NewTable applies to a new table, the same code:
//
//   - props are checked with tableconfig.Validate; delta.feature.<name> =
//     supported asks for a feature and is consumed, not stored, as are
//     delta.minReaderVersion and delta.minWriterVersion, which ask for
//     protocol versions (requireVersions): a version above p's upgrades
//     it, one below p's that adds no feature to it is ErrProtocolDowngrade
//     (one m already stores, written by another engine, is only dropped);
//   - the protocol is upgraded to the smallest one that supports p's
//     features and every feature the schema and the properties use
//     (UpgradeProtocol); it is never downgraded;
//   - CHECK constraints must parse and name columns of sch;
//   - under column mapping, every field without a column id gets the next
//     one and a physical name col-<uuid>, and delta.columnMapping.maxColumnId
//     follows. Fields that have them keep them.
//
// sch is annotated in place (column ids). m's id, name, description,
// format, partition columns and createdTime are kept; every partition
// column must still be a top-level column of sch. Errors match
// ErrInvalidSpec or deltaerr.ErrUnsupportedFeature, as NewTable's.
func Evolve(p actions.Protocol, m actions.Metadata, sch *schema.StructType, props map[string]string) (actions.Protocol, actions.Metadata, error) {
	if sch == nil || len(sch.Fields) == 0 {
		return p, m, specErr("a table needs at least one column")
	}
	if _, err := checkPartitions(sch, m.PartitionColumns); err != nil {
		return p, m, err
	}
	for _, k := range []string{tableconfig.KeyMinReaderVersion, tableconfig.KeyMinWriterVersion} {
		if v, ok := props[k]; ok && m.Configuration[k] == v {
			// Stored by another engine, and carried over: not a request.
			props = maps.Clone(props)
			delete(props, k)
		}
	}
	np, nprops, err := evolve(p, sch, props)
	if err != nil {
		return p, m, err
	}
	out, err := sch.MarshalJSON()
	if err != nil {
		return p, m, specErr("schema: %v", err)
	}
	nm := m
	nm.SchemaString = string(out)
	nm.Configuration = nprops
	nm.PartitionColumns = slices.Clone(m.PartitionColumns)
	return np, nm, nil
}

// EnableColumnMapping turns column mapping on, in name mode, for a table
// whose data files name their columns by the fields' names, as Spark does
// it for ALTER TABLE ... SET TBLPROPERTIES ('delta.columnMapping.mode' =
// 'name'): every field without a column id gets one and a physical name
// equal to its current name, so that the files already written still
// read; then Evolve applies, with the mode set. The protocol becomes one
// that supports columnMapping (reader 2 and writer 5, or the feature
// lists on a table-features protocol).
func EnableColumnMapping(p actions.Protocol, m actions.Metadata, sch *schema.StructType, props map[string]string) (actions.Protocol, actions.Metadata, error) {
	props = maps.Clone(props)
	if props == nil {
		props = map[string]string{}
	}
	props[tableconfig.KeyColumnMappingMode] = string(schema.ColumnMappingByName)
	var maxID int64
	if s, ok := props[tableconfig.KeyColumnMappingMaxColumnID]; ok {
		maxID, _ = strconv.ParseInt(s, 10, 64)
	}
	maxID = assignColumnMapping(sch, maxID, true)
	props[tableconfig.KeyColumnMappingMaxColumnID] = strconv.FormatInt(maxID, 10)
	return Evolve(p, m, sch, props)
}

// evolve is the core of NewTable and Evolve: it checks raw, chooses the
// protocol from base and the features in use, checks the constraints and
// assigns column mapping. It returns the protocol and the properties to
// store.
func evolve(base actions.Protocol, sch *schema.StructType, raw map[string]string) (actions.Protocol, map[string]string, error) {
	if err := tableconfig.Validate(raw); err != nil {
		return base, nil, fmt.Errorf("%w: %w", ErrInvalidSpec, err)
	}
	props := map[string]string{}
	feats := map[string]bool{}
	// Spark's protocol version properties: requests, never stored.
	var r, w int32 = 1, 1
	var rAsked, wAsked bool
	for k, v := range raw {
		if k == tableconfig.KeyMinReaderVersion || k == tableconfig.KeyMinWriterVersion {
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil {
				return base, nil, fmt.Errorf("%w: %w", ErrInvalidSpec, &tableconfig.PropertyError{Key: k, Value: v, Reason: "want a protocol version"})
			}
			if k == tableconfig.KeyMinReaderVersion {
				r, rAsked = int32(n), true
			} else {
				w, wAsked = int32(n), true
			}
			continue
		}
		if name, ok := strings.CutPrefix(k, tableconfig.KeyFeaturePrefix); ok {
			known, ok := featureName(name)
			if !ok {
				return base, nil, &deltaerr.FeatureError{Feature: "table feature " + name, Op: "write"}
			}
			feats[known] = true
			continue
		}
		props[k] = v
	}
	enabled, err := tableconfig.FeaturesFor(props)
	if err != nil {
		return base, nil, fmt.Errorf("%w: %w", ErrInvalidSpec, err)
	}
	for _, name := range enabled {
		feats[name] = true
	}
	if err := checkColumns(sch, feats); err != nil {
		return base, nil, err
	}
	if tableconfig.HasWriterFeature(&base, actions.FeatureCollationsPreview) {
		delete(feats, actions.FeatureCollations) // the preview already covers collated columns
	}
	p, _ := UpgradeProtocol(base, slices.Collect(maps.Keys(feats))...)
	if rAsked || wAsked {
		if r == 3 && w < 7 {
			w = 7
		}
		before := p
		var err error
		if p, err = requireVersions(p, r, w); err != nil {
			return base, nil, err
		}
		// As Spark: the versions asked for are a set of features merged
		// into the protocol; when that adds nothing, a version below the
		// table's asks for a downgrade, which a property cannot make.
		if SameProtocol(before, p) {
			if rAsked && r < base.MinReaderVersion {
				return base, nil, downgradeErr(tableconfig.KeyMinReaderVersion, r, base)
			}
			if wAsked && w < base.MinWriterVersion {
				return base, nil, downgradeErr(tableconfig.KeyMinWriterVersion, w, base)
			}
		}
	}
	if err := tableconfig.ReadSupported(&p); err != nil {
		return p, nil, err
	}
	// The properties as the new protocol reads them, for what the table
	// needs set up: column ids and physical names, row-tracking columns.
	cfg, err := tableconfig.New(p, actions.Metadata{Configuration: props})
	if err != nil {
		return p, nil, fmt.Errorf("%w: %w", ErrInvalidSpec, err)
	}
	if err := CheckConstraints(sch, props); err != nil {
		return p, nil, err
	}
	if mode := cfg.ColumnMappingMode(); mode != schema.ColumnMappingNone {
		maxID, _ := cfg.MaxColumnID()
		maxID = assignColumnMapping(sch, maxID, false)
		if cfg.IcebergCompatV2() {
			// Iceberg names array elements and map keys and values too.
			maxID = assignNestedIDs(sch, maxID)
		}
		props[tableconfig.KeyColumnMappingMaxColumnID] = strconv.FormatInt(maxID, 10)
	}
	if cfg.RowTracking() {
		if _, ok := cfg.MaterializedRowIDColumn(); !ok {
			props[tableconfig.KeyMaterializedRowIDColumn] = "_row-id-col-" + uuid.NewString()
		}
		if _, ok := cfg.MaterializedRowCommitVersionColumn(); !ok {
			props[tableconfig.KeyMaterializedRowCommitVersionColumn] = "_row-commit-version-col-" + uuid.NewString()
		}
	}
	return p, props, nil
}

func downgradeErr(key string, v int32, p actions.Protocol) error {
	return fmt.Errorf("%w: %s = %d is below the table's protocol %d/%d and would downgrade it; "+
		"a property only raises protocol versions", ErrProtocolDowngrade, key, v, p.MinReaderVersion, p.MinWriterVersion)
}

// featureName returns the protocol's spelling of a table feature name
// given in any case, as Spark matches delta.feature.<name> properties
// (delta.feature.timestampntz = supported), and false for an unknown one.
func featureName(name string) (string, bool) {
	if _, ok := tableconfig.LookupFeature(name); ok {
		return name, true
	}
	for _, n := range tableconfig.FeatureNames() {
		if strings.EqualFold(n, name) {
			return n, true
		}
	}
	return "", false
}

// requireVersions returns p upgraded to at least reader version r and
// writer version w, as Spark's delta.minReaderVersion and
// delta.minWriterVersion properties ask (they are not stored): the
// features the legacy versions imply are added (UpgradeProtocol; writer 7
// implies none, reader 2 column mapping); writer 7 moves a legacy protocol to explicit feature lists, and reader 3 lists
// its reader-writer features. Versions out of range, or reader 3 without
// writer 7, are ErrInvalidSpec.
func requireVersions(p actions.Protocol, r, w int32) (actions.Protocol, error) {
	if r < 1 || r > tableconfig.MaxReaderVersion || w < 1 || w > tableconfig.MaxWriterVersion || (r == 3 && w != 7) {
		return p, specErr("protocol versions reader %d, writer %d: want reader 1 to 3 and writer 1 to 7, writer 7 with reader 3", r, w)
	}
	var implied []string
	for _, n := range legacyFeatureNames() {
		info, _ := tableconfig.LookupFeature(n)
		// Writer 7 implies no feature (table features list them); reader
		// 2 implies column mapping.
		byWriter := w < 7 && info.LegacyWriter <= w && (!info.ReaderWriter || info.LegacyReader <= r)
		byReader := info.ReaderWriter && r == 2 && info.LegacyReader == 2
		if byWriter || byReader {
			implied = append(implied, n)
		}
	}
	np, _ := UpgradeProtocol(p, implied...)
	if w == 7 && np.MinWriterVersion < 7 {
		var listed []string
		for _, n := range legacyFeatureNames() {
			if tableconfig.HasWriterFeature(&np, n) {
				listed = append(listed, n)
			}
		}
		np, _ = UpgradeProtocol(actions.Protocol{MinReaderVersion: np.MinReaderVersion, MinWriterVersion: 7, WriterFeatures: listed})
	}
	if r == 3 && np.MinReaderVersion < 3 {
		np.MinReaderVersion = 3
		np.ReaderFeatures = nil
		for _, n := range np.WriterFeatures {
			if info, _ := tableconfig.LookupFeature(n); info.ReaderWriter {
				np.ReaderFeatures = append(np.ReaderFeatures, n)
			}
		}
	}
	np.MinReaderVersion = max(np.MinReaderVersion, r)
	return np, nil
}

// featureNeeds lists the features a feature needs supported with it.
var featureNeeds = map[string][]string{
	actions.FeatureRowTracking:       {actions.FeatureDomainMetadata},
	actions.FeatureClustering:        {actions.FeatureDomainMetadata},
	actions.FeatureCollations:        {actions.FeatureDomainMetadata},
	actions.FeatureCollationsPreview: {actions.FeatureDomainMetadata},
	actions.FeatureIcebergCompatV1:   {actions.FeatureColumnMapping},
	actions.FeatureIcebergCompatV2:   {actions.FeatureColumnMapping},
	actions.FeatureVariantShredding:  {actions.FeatureVariantType},
}

// UpgradeProtocol returns the smallest protocol that supports everything
// p supports and the named features (with the features they need:
// rowTracking, clustering and collations need domainMetadata, icebergCompat
// columnMapping, variantShredding variantType), and whether it differs
// from p. It never removes a feature nor lowers a version:
//
//   - a legacy protocol (reader below 3, writer below 7) stays legacy when
//     every feature has a legacy version, taking the highest one needed
//     (column mapping: reader 2, writer 5); otherwise it becomes writer 7
//     listing every feature it supported implicitly and the new ones, and
//     reader 3 listing the reader-writer ones when there is one (as
//     NewTable chooses: see the package doc);
//   - a table-features protocol gets the new names added to its lists
//     (reader 3 when a reader-writer feature is added to a reader 1 or 2
//     protocol, listing every reader-writer feature of writerFeatures).
//
// Unknown feature names are the caller's to refuse (tableconfig.LookupFeature).
func UpgradeProtocol(p actions.Protocol, names ...string) (actions.Protocol, bool) {
	feats := map[string]bool{}
	var need func(n string)
	need = func(n string) {
		if feats[n] {
			return
		}
		feats[n] = true
		for _, d := range featureNeeds[n] {
			need(d)
		}
	}
	for _, n := range names {
		need(n)
	}
	var np actions.Protocol
	if p.MinWriterVersion < 7 && p.MinReaderVersion < 3 {
		for _, n := range legacyFeatureNames() {
			info, _ := tableconfig.LookupFeature(n)
			if p.MinWriterVersion >= info.LegacyWriter && (!info.ReaderWriter || p.MinReaderVersion >= info.LegacyReader) {
				feats[n] = true
			}
		}
		np = chooseProtocol(feats)
		if np.MinWriterVersion < 7 {
			np.MinReaderVersion = max(np.MinReaderVersion, p.MinReaderVersion)
			np.MinWriterVersion = max(np.MinWriterVersion, p.MinWriterVersion)
		}
	} else {
		np = actions.Protocol{MinReaderVersion: p.MinReaderVersion, MinWriterVersion: max(p.MinWriterVersion, 7),
			ReaderFeatures: slices.Clone(p.ReaderFeatures), WriterFeatures: slices.Clone(p.WriterFeatures)}
		if p.MinWriterVersion < 7 { // reader 3 on a legacy writer: list what the writer implied
			for _, n := range legacyFeatureNames() {
				if info, _ := tableconfig.LookupFeature(n); p.MinWriterVersion >= info.LegacyWriter {
					feats[n] = true
				}
			}
		}
		for n := range feats {
			if !slices.Contains(np.WriterFeatures, n) {
				np.WriterFeatures = append(np.WriterFeatures, n)
			}
		}
		rw := false
		for _, n := range np.WriterFeatures {
			if info, _ := tableconfig.LookupFeature(n); info.ReaderWriter && !tableconfig.HasReaderFeature(&np, n) {
				rw = true
			}
		}
		if rw || np.MinReaderVersion >= 3 {
			np.MinReaderVersion = 3
			for _, n := range np.WriterFeatures {
				if info, _ := tableconfig.LookupFeature(n); info.ReaderWriter && !slices.Contains(np.ReaderFeatures, n) {
					np.ReaderFeatures = append(np.ReaderFeatures, n)
				}
			}
		}
		slices.Sort(np.WriterFeatures)
		slices.Sort(np.ReaderFeatures)
	}
	changed := np.MinReaderVersion != p.MinReaderVersion || np.MinWriterVersion != p.MinWriterVersion ||
		!slices.Equal(sortedCopy(np.ReaderFeatures), sortedCopy(p.ReaderFeatures)) ||
		!slices.Equal(sortedCopy(np.WriterFeatures), sortedCopy(p.WriterFeatures))
	if !changed {
		return p, false
	}
	return np, true
}

// legacyFeatureNames are the features legacy protocol versions imply.
func legacyFeatureNames() []string {
	var out []string
	for _, n := range tableconfig.FeatureNames() {
		if info, _ := tableconfig.LookupFeature(n); info.LegacyWriter > 0 {
			out = append(out, n)
		}
	}
	return out
}

func sortedCopy(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

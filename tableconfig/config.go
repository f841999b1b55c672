package tableconfig

import (
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
)

// CheckpointPolicy is the value of delta.checkpointPolicy. The values are
// those of the property: never change them.
type CheckpointPolicy string

// Checkpoint policies.
const (
	CheckpointClassic CheckpointPolicy = "classic"
	CheckpointV2      CheckpointPolicy = "v2"
)

// IsolationLevel is the value of delta.isolationLevel, as commitInfo
// records it too. The values must never change.
type IsolationLevel string

// Isolation levels, strongest first.
const (
	Serializable      IsolationLevel = "Serializable"
	WriteSerializable IsolationLevel = "WriteSerializable"
	SnapshotIsolation IsolationLevel = "SnapshotIsolation"
)

// Default durations of the interval properties that have one.
const (
	DefaultLogRetention         = 30 * 24 * time.Hour
	DefaultDeletedFileRetention = 7 * 24 * time.Hour
)

// Constraint is one CHECK constraint of a table: the name from its key
// delta.constraints.<name> and its SQL expression, not parsed here.
type Constraint struct {
	Name, Expression string
}

// props are the known properties, parsed.
type props struct {
	appendOnly         bool
	checkpointInterval int64
	checkpointPolicy   CheckpointPolicy
	statsAsJSON        bool
	statsAsStruct      bool
	logRetention       time.Duration
	protectBefore      int64
	deletedRetention   time.Duration
	txnRetention       time.Duration
	hasTxnRetention    bool
	expiredLogCleanup  bool
	changeDataFeed     bool
	deletionVectors    bool
	rowTracking        bool
	rowIDColumn        string
	rowVersionColumn   string
	ict                bool
	ictVersion         int64
	hasICTVersion      bool
	ictTimestamp       int64
	hasICTTimestamp    bool
	mappingMode        schema.ColumnMappingMode
	maxColumnID        int64
	hasMaxColumnID     bool
	numIndexedCols     int64
	statsColumns       []string // nil when not set
	targetFileSize     int64
	hasTargetFileSize  bool
	isolation          IsolationLevel
	typeWidening       bool
	constraints        []Constraint
	icebergCompatV1    bool
	icebergCompatV2    bool
	uniformIceberg     bool
	autoCompact        bool
	autoOptimize       bool
	// deferred are the refusals of properties Spark reads only when the
	// work that uses them runs (see deferred): Validate returns them,
	// New keeps the table readable.
	deferred map[string]*PropertyError
}

// parser parses one property's value into p, or returns the reason it is
// refused. A property no code reads yet has a parser that only checks.
type parser func(p *props, v string) (reason string)

func boolean(set func(p *props, b bool)) parser {
	return func(p *props, v string) string {
		b, ok := parseBool(v)
		if !ok {
			return "want true or false"
		}
		if set != nil {
			set(p, b)
		}
		return ""
	}
}

func integer(lo, hi int64, want string, set func(p *props, n int64)) parser {
	return func(p *props, v string) string {
		n, ok := parseInt(v, lo, hi)
		if !ok {
			return want
		}
		if set != nil {
			set(p, n)
		}
		return ""
	}
}

func interval(set func(p *props, d time.Duration)) parser {
	return func(p *props, v string) string {
		d, err := ParseInterval(v)
		if err != nil {
			return "want a calendar interval such as \"interval 7 days\" or \"2 weeks\" (no months or years)"
		}
		set(p, d)
		return ""
	}
}

// deferred wraps the parser of a property Spark reads only when the
// post-commit work that uses it runs, never when it loads a table (the
// auto compaction properties): a value Spark refuses is refused when it
// is SET (Validate), but a table that carries one, written by another
// engine, stays readable; the method that reads the property returns
// the error, and the work reports it, as Spark's hook fails on it.
func deferred(key string, parse parser) parser {
	return func(p *props, v string) string {
		if reason := parse(p, v); reason != "" {
			if p.deferred == nil {
				p.deferred = map[string]*PropertyError{}
			}
			p.deferred[key] = &PropertyError{Key: key, Value: v, Reason: reason}
		}
		return ""
	}
}

// parsers holds every known property, with Spark's rules (DeltaConfigs):
// booleans in any case, ints within the range Spark checks, intervals as
// CalendarInterval strings without months, enums in any case.
var parsers = map[string]parser{
	KeyAppendOnly:                   boolean(func(p *props, b bool) { p.appendOnly = b }),
	KeyCheckpointWriteStatsAsJSON:   boolean(func(p *props, b bool) { p.statsAsJSON = b }),
	KeyCheckpointWriteStatsAsStruct: boolean(func(p *props, b bool) { p.statsAsStruct = b }),
	KeyEnableExpiredLogCleanup:      boolean(func(p *props, b bool) { p.expiredLogCleanup = b }),
	KeyEnableChangeDataFeed:         boolean(func(p *props, b bool) { p.changeDataFeed = b }),
	KeyEnableDeletionVectors:        boolean(func(p *props, b bool) { p.deletionVectors = b }),
	KeyEnableRowTracking:            boolean(func(p *props, b bool) { p.rowTracking = b }),
	KeyEnableInCommitTimestamps:     boolean(func(p *props, b bool) { p.ict = b }),
	KeyRandomizeFilePrefixes:        boolean(nil),
	KeyEnableTypeWidening:           boolean(func(p *props, b bool) { p.typeWidening = b }),
	KeyEnableIcebergCompatV1:        boolean(func(p *props, b bool) { p.icebergCompatV1 = b }),
	KeyEnableIcebergCompatV2:        boolean(func(p *props, b bool) { p.icebergCompatV2 = b }),

	KeyAutoOptimize: deferred(KeyAutoOptimize, boolean(func(p *props, b bool) { p.autoOptimize = b })),
	// Spark's true and false, and Databricks' auto (it tunes the target
	// size; here it is true) and legacy (an alias of true), which tables
	// Databricks wrote carry.
	KeyAutoCompact: deferred(KeyAutoCompact, func(p *props, v string) string {
		switch strings.ToLower(v) {
		case "true", "auto", "legacy":
			p.autoCompact = true
		case "false":
		default:
			return "want true or false (or Databricks' auto or legacy)"
		}
		return ""
	}),

	KeyCheckpointInterval: integer(1, math.MaxInt32, "want a positive integer",
		func(p *props, n int64) { p.checkpointInterval = n }),
	KeyDataSkippingNumIndexedCols: integer(-1, math.MaxInt32, "want an integer >= -1 (-1: all columns)",
		func(p *props, n int64) { p.numIndexedCols = n }),
	KeyTargetFileSize: integer(1, math.MaxInt64, "want a positive integer (bytes)",
		func(p *props, n int64) { p.targetFileSize, p.hasTargetFileSize = n, true }),
	KeyRandomPrefixLength: integer(1, math.MaxInt32, "want a positive integer", nil),
	KeyColumnMappingMaxColumnID: integer(0, math.MaxInt64, "want a non-negative integer",
		func(p *props, n int64) { p.maxColumnID, p.hasMaxColumnID = n, true }),
	KeyInCommitTimestampEnablementVersion: integer(0, math.MaxInt64, "want a non-negative integer (a version)",
		func(p *props, n int64) { p.ictVersion, p.hasICTVersion = n, true }),
	KeyInCommitTimestampEnablementTimestamp: integer(math.MinInt64, math.MaxInt64, "want an integer (milliseconds since the epoch)",
		func(p *props, n int64) { p.ictTimestamp, p.hasICTTimestamp = n, true }),

	KeyRequireCheckpointProtectionBeforeVersion: integer(0, math.MaxInt64, "want a non-negative integer (a version)",
		func(p *props, n int64) { p.protectBefore = n }),

	KeyLogRetentionDuration:         interval(func(p *props, d time.Duration) { p.logRetention = d }),
	KeyDeletedFileRetentionDuration: interval(func(p *props, d time.Duration) { p.deletedRetention = d }),
	KeySetTransactionRetentionDuration: interval(func(p *props, d time.Duration) {
		p.txnRetention, p.hasTxnRetention = d, true
	}),

	KeyCheckpointPolicy: func(p *props, v string) string {
		switch c := CheckpointPolicy(strings.ToLower(v)); c {
		case CheckpointClassic, CheckpointV2:
			p.checkpointPolicy = c
			return ""
		}
		return "want classic or v2"
	},
	KeyIsolationLevel: func(p *props, v string) string {
		for _, l := range []IsolationLevel{Serializable, WriteSerializable, SnapshotIsolation} {
			if strings.EqualFold(v, string(l)) {
				p.isolation = l
				return ""
			}
		}
		return "want Serializable, WriteSerializable or SnapshotIsolation"
	},
	KeyColumnMappingMode: func(p *props, v string) string {
		if v == "" {
			return "want none, id or name" // absent means none; empty is not a mode
		}
		m, err := schema.ParseColumnMappingMode(v)
		if err != nil {
			return "want none, id or name"
		}
		p.mappingMode = m
		return ""
	},
	KeyDataSkippingStatsColumns: func(p *props, v string) string {
		cols, ok := splitColumnList(v)
		if !ok {
			return "want comma-separated column names (a backquote is not closed)"
		}
		p.statsColumns = cols
		return ""
	},
	KeyMaterializedRowIDColumn: func(p *props, v string) string {
		if v == "" {
			return "want a column name"
		}
		p.rowIDColumn = v
		return ""
	},
	KeyMaterializedRowCommitVersionColumn: func(p *props, v string) string {
		if v == "" {
			return "want a column name"
		}
		p.rowVersionColumn = v
		return ""
	},
	KeyUniversalFormatEnabledFormats: func(p *props, v string) string {
		for f := range strings.SplitSeq(v, ",") {
			switch strings.ToLower(strings.TrimSpace(f)) {
			case "iceberg":
				p.uniformIceberg = true
			case "", "hudi":
			default:
				return "want a comma-separated list of iceberg and hudi"
			}
		}
		return ""
	},
}

// parseProps parses every known property of raw; unknown keys (other
// engines' or future delta.* ones) are kept in the raw map only.
func parseProps(raw map[string]string) (props, error) {
	p := props{
		checkpointInterval: DefaultCheckpointInterval,
		checkpointPolicy:   CheckpointClassic,
		statsAsJSON:        true,
		logRetention:       DefaultLogRetention,
		deletedRetention:   DefaultDeletedFileRetention,
		expiredLogCleanup:  true,
		mappingMode:        schema.ColumnMappingNone,
		numIndexedCols:     DefaultNumIndexedCols,
		isolation:          WriteSerializable,
	}
	// Keys in order, so that the error is the same from run to run.
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := raw[k]
		if parse, ok := parsers[k]; ok {
			if reason := parse(&p, v); reason != "" {
				return p, &PropertyError{Key: k, Value: v, Reason: reason}
			}
			continue
		}
		if name, ok := strings.CutPrefix(k, KeyConstraintPrefix); ok {
			if name == "" || strings.TrimSpace(v) == "" {
				return p, &PropertyError{Key: k, Value: v, Reason: "want delta.constraints.<name> = <SQL expression>"}
			}
			p.constraints = append(p.constraints, Constraint{Name: name, Expression: v})
			continue
		}
		if strings.HasPrefix(k, KeyFeaturePrefix) {
			if !strings.EqualFold(v, "supported") && !strings.EqualFold(v, "enabled") {
				return p, &PropertyError{Key: k, Value: v, Reason: "want supported"}
			}
		}
	}
	return p, nil
}

// Validate checks the values of the known table properties in raw as
// Spark checks them when they are SET: what table creation and ALTER
// TABLE ... SET TBLPROPERTIES call before writing them. An invalid value
// gives a *PropertyError (errors.Is ErrInvalidProperty and
// deltaerr.ErrInvalidArgument). Unknown keys are accepted, and CHECK
// constraint expressions are only checked to be there: parsing SQL is
// the writer's job.
func Validate(raw map[string]string) error {
	p, err := parseProps(raw)
	if err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(p.deferred)) {
		return p.deferred[k]
	}
	return nil
}

// Config is the checked configuration of a table at one version: its
// protocol, its metadata, the schema and the table properties, parsed
// once. It answers every question the rest of the library asks about
// them. A *Config is immutable and safe for concurrent use.
type Config struct {
	protocol actions.Protocol
	metadata actions.Metadata
	schema   *schema.StructType
	p        props
}

// New checks and parses p and m. Every known property is parsed as Spark
// parses it, and a value Spark would refuse gives a *PropertyError; a
// schemaString that does not parse gives a *deltaerr.CorruptError. An
// empty schemaString, which old Spark tests wrote, is an empty schema, as
// Spark reads it.
//
// A table written by another engine with a value Spark refuses is refused
// here too, when its snapshot is loaded: Spark throws as soon as the
// property is read, and a guess (the default? the value ignored?) could
// break the table's rules, such as appendOnly or retention.
func New(p actions.Protocol, m actions.Metadata) (*Config, error) {
	parsed, err := parseProps(m.Configuration)
	if err != nil {
		return nil, err
	}
	schemaString := m.SchemaString
	if schemaString == "" {
		schemaString = `{"type":"struct","fields":[]}`
	}
	sch, err := schema.Parse(schemaString)
	if err != nil {
		return nil, &deltaerr.CorruptError{Path: "metaData.schemaString", Reason: "cannot parse the schema", Err: err}
	}
	slices.SortFunc(parsed.constraints, func(a, b Constraint) int { return strings.Compare(a.Name, b.Name) })
	return &Config{protocol: p, metadata: m, schema: sch, p: parsed}, nil
}

// Protocol returns the table's protocol action.
func (c *Config) Protocol() actions.Protocol { return c.protocol }

// Metadata returns the table's metaData action.
func (c *Config) Metadata() actions.Metadata { return c.metadata }

// Schema returns the logical schema, parsed once. It must not be changed.
func (c *Config) Schema() *schema.StructType { return c.schema }

// PartitionColumns returns the partition columns, in order. The slice is
// shared: callers must not change it.
func (c *Config) PartitionColumns() []string { return c.metadata.PartitionColumns }

// Properties returns the raw table properties, unknown ones included. The
// map is shared: callers must not change it. Read a known property through
// its method, never from this map.
func (c *Config) Properties() map[string]string { return c.metadata.Configuration }

// IsFeatureSupported reports whether the protocol supports the named
// table feature: for a reader-writer feature on both sides, else on the
// writer side; through the feature lists (versions 3 and 7) or the
// legacy versions that imply it.
func (c *Config) IsFeatureSupported(name string) bool {
	if info, ok := LookupFeature(name); ok && info.ReaderWriter {
		return HasReaderFeature(&c.protocol, name) && HasWriterFeature(&c.protocol, name)
	}
	return HasWriterFeature(&c.protocol, name)
}

// IsFeatureEnabled reports whether the table uses the named feature: it
// is supported and, for a feature a property turns on, that property is
// on (appendOnly, changeDataFeed, deletionVectors, rowTracking,
// inCommitTimestamp, columnMapping, typeWidening, checkConstraints).
func (c *Config) IsFeatureEnabled(name string) bool {
	if !c.IsFeatureSupported(name) {
		return false
	}
	switch name {
	case actions.FeatureAppendOnly:
		return c.p.appendOnly
	case actions.FeatureChangeDataFeed:
		return c.p.changeDataFeed
	case actions.FeatureDeletionVectors:
		return c.p.deletionVectors
	case actions.FeatureRowTracking:
		return c.p.rowTracking
	case actions.FeatureInCommitTimestamp:
		return c.p.ict
	case actions.FeatureColumnMapping:
		return c.p.mappingMode != schema.ColumnMappingNone
	case actions.FeatureTypeWidening, actions.FeatureTypeWideningPreview:
		return c.p.typeWidening
	case actions.FeatureCheckConstraints:
		return len(c.p.constraints) > 0
	case actions.FeatureIcebergCompatV1:
		return c.p.icebergCompatV1
	case actions.FeatureIcebergCompatV2:
		return c.p.icebergCompatV2
	}
	return true
}

// AppendOnly reports delta.appendOnly: no commit may remove data (a
// remove with dataChange=true). It is honoured whatever the protocol
// says, as Spark does: refusing a remove is the safe side.
func (c *Config) AppendOnly() bool { return c.p.appendOnly }

// ColumnMappingMode returns the mode data files are read and written
// under: delta.columnMapping.mode when the protocol supports the
// columnMapping feature (reader version 2, or the feature listed in
// readerFeatures), else none, as the protocol says the property counts
// only then.
func (c *Config) ColumnMappingMode() schema.ColumnMappingMode {
	if !HasReaderFeature(&c.protocol, actions.FeatureColumnMapping) {
		return schema.ColumnMappingNone
	}
	return c.p.mappingMode
}

// MaxColumnID returns delta.columnMapping.maxColumnId, and false when it
// is not set.
func (c *Config) MaxColumnID() (int64, bool) { return c.p.maxColumnID, c.p.hasMaxColumnID }

// ChangeDataFeed reports delta.enableChangeDataFeed: writers must record
// change data, and the change data feed can be read.
func (c *Config) ChangeDataFeed() bool { return c.p.changeDataFeed }

// DeletionVectors reports whether writers may delete rows with deletion
// vectors: delta.enableDeletionVectors is true and the protocol supports
// the deletionVectors feature. Readers honour deletion vectors whenever
// files carry them, whatever this says.
func (c *Config) DeletionVectors() bool {
	return c.p.deletionVectors && c.IsFeatureSupported(actions.FeatureDeletionVectors)
}

// RowTracking reports whether row tracking is enabled:
// delta.enableRowTracking is true and the protocol supports rowTracking.
// Writers must assign row ids as soon as the feature is supported, enabled
// or not (IsFeatureSupported).
func (c *Config) RowTracking() bool {
	return c.p.rowTracking && c.IsFeatureSupported(actions.FeatureRowTracking)
}

// MaterializedRowIDColumn and MaterializedRowCommitVersionColumn return
// the names of the hidden columns of materialized row ids and row commit
// versions, and false when the property is not set.
func (c *Config) MaterializedRowIDColumn() (string, bool) {
	return c.p.rowIDColumn, c.p.rowIDColumn != ""
}

// MaterializedRowCommitVersionColumn: see MaterializedRowIDColumn.
func (c *Config) MaterializedRowCommitVersionColumn() (string, bool) {
	return c.p.rowVersionColumn, c.p.rowVersionColumn != ""
}

// InCommitTimestamps reports whether commits carry in-commit timestamps:
// delta.enableInCommitTimestamps is true and the protocol supports the
// inCommitTimestamp feature.
func (c *Config) InCommitTimestamps() bool {
	return c.p.ict && c.IsFeatureSupported(actions.FeatureInCommitTimestamp)
}

// InCommitTimestampEnablementVersion returns
// delta.inCommitTimestampEnablementVersion, and false when it is not set
// (in-commit timestamps were on from the table's creation, or are off).
func (c *Config) InCommitTimestampEnablementVersion() (int64, bool) {
	return c.p.ictVersion, c.p.hasICTVersion
}

// InCommitTimestampEnablementTimestamp returns
// delta.inCommitTimestampEnablementTimestamp in milliseconds, and false
// when it is not set.
func (c *Config) InCommitTimestampEnablementTimestamp() (int64, bool) {
	return c.p.ictTimestamp, c.p.hasICTTimestamp
}

// CheckpointInterval returns delta.checkpointInterval, default 10.
func (c *Config) CheckpointInterval() int64 { return c.p.checkpointInterval }

// CheckpointPolicy returns delta.checkpointPolicy, default classic.
func (c *Config) CheckpointPolicy() CheckpointPolicy { return c.p.checkpointPolicy }

// WriteStatsAsJSON returns delta.checkpoint.writeStatsAsJson, default
// true.
func (c *Config) WriteStatsAsJSON() bool { return c.p.statsAsJSON }

// WriteStatsAsStruct returns delta.checkpoint.writeStatsAsStruct, default
// false. (Recent Spark defaults to true; this library writes the typed
// columns only when asked.)
func (c *Config) WriteStatsAsStruct() bool { return c.p.statsAsStruct }

// CheckpointProtectedBefore returns delta.requireCheckpointProtectionBeforeVersion
// when the protocol has the checkpointProtection writer feature, else 0
// (protocol RFC checkpoint-protection): no checkpoint may be created for
// a version below it, and log cleanup may truncate below it only in one
// go unless it creates no checkpoint while cleaning.
func (c *Config) CheckpointProtectedBefore() int64 {
	if !HasWriterFeature(&c.protocol, actions.FeatureCheckpointProtection) {
		return 0
	}
	return c.p.protectBefore
}

// LogRetention returns delta.logRetentionDuration, default 30 days.
func (c *Config) LogRetention() time.Duration { return c.p.logRetention }

// DeletedFileRetention returns delta.deletedFileRetentionDuration,
// default 7 days.
func (c *Config) DeletedFileRetention() time.Duration { return c.p.deletedRetention }

// SetTransactionRetention returns delta.setTransactionRetentionDuration,
// and false when it is not set (txn actions never expire).
func (c *Config) SetTransactionRetention() (time.Duration, bool) {
	return c.p.txnRetention, c.p.hasTxnRetention
}

// ExpiredLogCleanup reports delta.enableExpiredLogCleanup, default true;
// false on a catalog-managed table, whose log cleanup is the catalog's to
// permit (PROTOCOL.md "Maintenance Operations on Catalog-managed Tables").
func (c *Config) ExpiredLogCleanup() bool { return c.p.expiredLogCleanup && !c.CatalogManaged() }

// CatalogManaged reports whether the table has the catalogManaged
// feature: its commits go through its managing catalog.
func (c *Config) CatalogManaged() bool {
	return HasWriterFeature(&c.protocol, actions.FeatureCatalogManaged)
}

// CheckMaintenance returns nil, or, on a catalog-managed table, a
// *deltaerr.CatalogManagedError for op: the protocol forbids log cleanup,
// VACUUM, OPTIMIZE and REORG there unless the catalog permits them, and no
// catalog API to ask for that permission exists here. Checkpoints, log
// compaction and version checksums stay allowed (of published versions).
func (c *Config) CheckMaintenance(op string) error {
	if c.CatalogManaged() {
		return &deltaerr.CatalogManagedError{Op: op}
	}
	return nil
}

// NumIndexedCols returns delta.dataSkippingNumIndexedCols, default 32;
// -1 means every column. StatsColumns, when set, replaces it.
func (c *Config) NumIndexedCols() int { return int(c.p.numIndexedCols) }

// StatsColumns returns the column names of delta.dataSkippingStatsColumns
// as written (dotted paths, backquotes kept), and false when it is not
// set. The slice must not be changed.
func (c *Config) StatsColumns() ([]string, bool) { return c.p.statsColumns, c.p.statsColumns != nil }

// TargetFileSize returns delta.targetFileSize in bytes, and false when it
// is not set.
func (c *Config) TargetFileSize() (int64, bool) { return c.p.targetFileSize, c.p.hasTargetFileSize }

// AutoCompact reports whether writes to the table are followed by auto
// compaction, as Spark's AutoCompact hook decides (getAutoCompactType
// without its session override): delta.autoOptimize, deprecated, true
// turns it on; otherwise delta.autoOptimize.autoCompact does (true, auto
// or legacy); unset, it is off. A value Spark refuses, which only another
// engine can have written, gives its *PropertyError: Spark's hook fails
// on it, and so does this library's, without failing the write.
func (c *Config) AutoCompact() (bool, error) {
	if err := c.p.deferred[KeyAutoOptimize]; err != nil {
		return false, err
	}
	if c.p.autoOptimize {
		return true, nil
	}
	if err := c.p.deferred[KeyAutoCompact]; err != nil {
		return false, err
	}
	return c.p.autoCompact, nil
}

// IsolationLevel returns delta.isolationLevel, default WriteSerializable.
func (c *Config) IsolationLevel() IsolationLevel { return c.p.isolation }

// Constraints returns the table's CHECK constraints, sorted by name. The
// slice must not be changed.
func (c *Config) Constraints() []Constraint { return c.p.constraints }

// FeaturesFor returns the table features that the properties in raw turn
// on, which a new table's protocol must support (Spark enables them the
// same way when the property is set): appendOnly, changeDataFeed,
// deletionVectors, rowTracking, inCommitTimestamp, icebergCompatV2 for
// their boolean properties set to true, typeWidening for
// delta.enableTypeWidening, columnMapping for mode id or name, v2Checkpoint
// for checkpointPolicy v2, checkConstraints for any CHECK constraint. The
// names are sorted. An invalid value gives Validate's error.
func FeaturesFor(raw map[string]string) ([]string, error) {
	p, err := parseProps(raw)
	if err != nil {
		return nil, err
	}
	var out []string
	add := func(on bool, name string) {
		if on {
			out = append(out, name)
		}
	}
	add(p.appendOnly, actions.FeatureAppendOnly)
	add(p.changeDataFeed, actions.FeatureChangeDataFeed)
	add(p.deletionVectors, actions.FeatureDeletionVectors)
	add(p.rowTracking, actions.FeatureRowTracking)
	add(p.ict, actions.FeatureInCommitTimestamp)
	add(p.mappingMode != schema.ColumnMappingNone, actions.FeatureColumnMapping)
	add(p.checkpointPolicy == CheckpointV2, actions.FeatureV2Checkpoint)
	add(len(p.constraints) > 0, actions.FeatureCheckConstraints)
	add(p.icebergCompatV2, actions.FeatureIcebergCompatV2)
	add(p.typeWidening, actions.FeatureTypeWidening)
	slices.Sort(out)
	return out, nil
}

package tableconfig_test

import (
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
)

const day = 24 * time.Hour

func TestParseInterval(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"interval 7 days", 7 * day},
		{"INTERVAL 7 DAYS", 7 * day},
		{"7 days", 7 * day},
		{"interval 1 week", 7 * day},
		{"2 weeks", 14 * day},
		{"168 hours", 168 * time.Hour},
		{"interval 1 day", day},
		{"  interval   30   days  ", 30 * day},
		{"interval 1 day 12 hours", 36 * time.Hour},
		{"interval 1 day -1 hour", 23 * time.Hour},
		{"+5 minutes", 5 * time.Minute},
		{"interval 90 seconds", 90 * time.Second},
		{"1.5 seconds", 1500 * time.Millisecond},
		{"interval 0.000000001 second", time.Nanosecond},
		{"interval 250 milliseconds", 250 * time.Millisecond},
		{"interval 3 microseconds", 3 * time.Microsecond},
		{"interval 123 nanoseconds", 123 * time.Nanosecond},
		{"interval 0 days", 0},
		{"interval 0 months 2 days", 2 * day}, // Spark refuses months only when there are some
		{"interval 1000000 weeks", time.Duration(math.MaxInt64)},
	} {
		got, err := tableconfig.ParseInterval(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseInterval(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{
		"", "interval", "7", "days", "interval 7", "interval seven days",
		"interval 2 months", "1 year", "interval 1 day 1 month",
		"interval 2 fortnights", "-1 day", "interval 1 hour -2 hours",
		"1.5 days", "1.5.0 seconds", "1. seconds", "1.1234567891 seconds",
		"7days", "interval 99999999999999999999 days",
	} {
		_, err := tableconfig.ParseInterval(in)
		if !errors.Is(err, deltaerr.ErrInvalidArgument) {
			t.Errorf("ParseInterval(%q) = %v; want ErrInvalidArgument", in, err)
		}
	}
}

// config builds a Config of a table-features protocol supporting feats.
func config(t *testing.T, props map[string]string, feats ...string) *tableconfig.Config {
	t.Helper()
	p := actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{}, WriterFeatures: feats}
	for _, f := range feats {
		if info, _ := tableconfig.LookupFeature(f); info.ReaderWriter {
			p.ReaderFeatures = append(p.ReaderFeatures, f)
		}
	}
	c, err := tableconfig.New(p, actions.Metadata{Configuration: props, SchemaString: `{"type":"struct","fields":[{"name":"a","type":"long","nullable":true,"metadata":{}}]}`})
	if err != nil {
		t.Fatalf("New(%v): %v", props, err)
	}
	return c
}

func TestDefaults(t *testing.T) {
	c := config(t, nil)
	checks := []struct {
		name      string
		got, want any
	}{
		{"AppendOnly", c.AppendOnly(), false},
		{"CheckpointInterval", c.CheckpointInterval(), int64(10)},
		{"CheckpointPolicy", c.CheckpointPolicy(), tableconfig.CheckpointClassic},
		{"WriteStatsAsJSON", c.WriteStatsAsJSON(), true},
		{"WriteStatsAsStruct", c.WriteStatsAsStruct(), false},
		{"LogRetention", c.LogRetention(), 30 * day},
		{"DeletedFileRetention", c.DeletedFileRetention(), 7 * day},
		{"ExpiredLogCleanup", c.ExpiredLogCleanup(), true},
		{"ChangeDataFeed", c.ChangeDataFeed(), false},
		{"DeletionVectors", c.DeletionVectors(), false},
		{"RowTracking", c.RowTracking(), false},
		{"InCommitTimestamps", c.InCommitTimestamps(), false},
		{"ColumnMappingMode", c.ColumnMappingMode(), schema.ColumnMappingNone},
		{"NumIndexedCols", c.NumIndexedCols(), 32},
		{"IsolationLevel", c.IsolationLevel(), tableconfig.WriteSerializable},
		{"Constraints", len(c.Constraints()), 0},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s() = %v; want %v", ch.name, ch.got, ch.want)
		}
	}
	if d, ok := c.SetTransactionRetention(); ok {
		t.Errorf("SetTransactionRetention() = %v, true; want unset", d)
	}
	if n, ok := c.TargetFileSize(); ok {
		t.Errorf("TargetFileSize() = %d, true; want unset", n)
	}
	if cols, ok := c.StatsColumns(); ok {
		t.Errorf("StatsColumns() = %v, true; want unset", cols)
	}
	if _, ok := c.MaxColumnID(); ok {
		t.Error("MaxColumnID() set; want unset")
	}
	if _, ok := c.InCommitTimestampEnablementVersion(); ok {
		t.Error("InCommitTimestampEnablementVersion() set; want unset")
	}
	if c.Schema() == nil || len(c.Schema().Fields) != 1 {
		t.Errorf("Schema() = %v; want one column", c.Schema())
	}
}

func TestValues(t *testing.T) {
	c := config(t, map[string]string{
		"delta.appendOnly":                              "TRUE",
		"delta.checkpointInterval":                      "+25",
		"delta.checkpointPolicy":                        "V2",
		"delta.checkpoint.writeStatsAsJson":             "False",
		"delta.checkpoint.writeStatsAsStruct":           "true",
		"delta.logRetentionDuration":                    "interval 2 weeks",
		"delta.deletedFileRetentionDuration":            "interval 1 day",
		"delta.setTransactionRetentionDuration":         "36 hours",
		"delta.enableExpiredLogCleanup":                 "false",
		"delta.enableChangeDataFeed":                    "True",
		"delta.enableDeletionVectors":                   "true",
		"delta.enableRowTracking":                       "true",
		"delta.rowTracking.materializedRowIdColumnName": "_row_id",
		"delta.enableInCommitTimestamps":                "true",
		"delta.inCommitTimestampEnablementVersion":      "4",
		"delta.inCommitTimestampEnablementTimestamp":    "1700000000000",
		"delta.columnMapping.mode":                      "Name",
		"delta.columnMapping.maxColumnId":               "9",
		"delta.dataSkippingNumIndexedCols":              "-1",
		"delta.dataSkippingStatsColumns":                " a, `b,c`.d ,, e ",
		"delta.targetFileSize":                          "134217728",
		"delta.isolationLevel":                          "serializable",
		"delta.constraints.zeta":                        "a > 0",
		"delta.constraints.alpha":                       "a < 10",
		"delta.someFutureProperty":                      "anything",
		"other.engine.key":                              "x",
	}, actions.FeatureDeletionVectors, actions.FeatureRowTracking, actions.FeatureDomainMetadata,
		actions.FeatureInCommitTimestamp, actions.FeatureColumnMapping, actions.FeatureV2Checkpoint)
	checks := []struct {
		name      string
		got, want any
	}{
		{"AppendOnly", c.AppendOnly(), true},
		{"CheckpointInterval", c.CheckpointInterval(), int64(25)},
		{"CheckpointPolicy", c.CheckpointPolicy(), tableconfig.CheckpointV2},
		{"WriteStatsAsJSON", c.WriteStatsAsJSON(), false},
		{"WriteStatsAsStruct", c.WriteStatsAsStruct(), true},
		{"LogRetention", c.LogRetention(), 14 * day},
		{"DeletedFileRetention", c.DeletedFileRetention(), day},
		{"ExpiredLogCleanup", c.ExpiredLogCleanup(), false},
		{"ChangeDataFeed", c.ChangeDataFeed(), true},
		{"DeletionVectors", c.DeletionVectors(), true},
		{"RowTracking", c.RowTracking(), true},
		{"InCommitTimestamps", c.InCommitTimestamps(), true},
		{"ColumnMappingMode", c.ColumnMappingMode(), schema.ColumnMappingByName},
		{"NumIndexedCols", c.NumIndexedCols(), -1},
		{"IsolationLevel", c.IsolationLevel(), tableconfig.Serializable},
		{"IsFeatureEnabled(appendOnly)", c.IsFeatureEnabled(actions.FeatureAppendOnly), false}, // not in the protocol
		{"IsFeatureEnabled(deletionVectors)", c.IsFeatureEnabled(actions.FeatureDeletionVectors), true},
		{"IsFeatureSupported(changeDataFeed)", c.IsFeatureSupported(actions.FeatureChangeDataFeed), false},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v; want %v", ch.name, ch.got, ch.want)
		}
	}
	if d, ok := c.SetTransactionRetention(); !ok || d != 36*time.Hour {
		t.Errorf("SetTransactionRetention() = %v, %v", d, ok)
	}
	if n, ok := c.TargetFileSize(); !ok || n != 128<<20 {
		t.Errorf("TargetFileSize() = %v, %v", n, ok)
	}
	if cols, ok := c.StatsColumns(); !ok || !slices.Equal(cols, []string{"a", "`b,c`.d", "e"}) {
		t.Errorf("StatsColumns() = %q, %v", cols, ok)
	}
	if n, ok := c.MaxColumnID(); !ok || n != 9 {
		t.Errorf("MaxColumnID() = %v, %v", n, ok)
	}
	if v, ok := c.InCommitTimestampEnablementVersion(); !ok || v != 4 {
		t.Errorf("InCommitTimestampEnablementVersion() = %v, %v", v, ok)
	}
	if v, ok := c.InCommitTimestampEnablementTimestamp(); !ok || v != 1700000000000 {
		t.Errorf("InCommitTimestampEnablementTimestamp() = %v, %v", v, ok)
	}
	if v, ok := c.MaterializedRowIDColumn(); !ok || v != "_row_id" {
		t.Errorf("MaterializedRowIDColumn() = %v, %v", v, ok)
	}
	if _, ok := c.MaterializedRowCommitVersionColumn(); ok {
		t.Error("MaterializedRowCommitVersionColumn() set; want unset")
	}
	want := []tableconfig.Constraint{{Name: "alpha", Expression: "a < 10"}, {Name: "zeta", Expression: "a > 0"}}
	if got := c.Constraints(); !slices.Equal(got, want) {
		t.Errorf("Constraints() = %v; want %v", got, want)
	}
	if c.Properties()["other.engine.key"] != "x" {
		t.Error("Properties() lost an unknown key")
	}
}

// TestProtocolGates checks the answers the protocol has a say in: a
// property set without the feature does not count.
func TestProtocolGates(t *testing.T) {
	props := map[string]string{
		"delta.columnMapping.mode":       "id",
		"delta.enableDeletionVectors":    "true",
		"delta.enableRowTracking":        "true",
		"delta.enableInCommitTimestamps": "true",
		"delta.appendOnly":               "true",
	}
	c := config(t, props)
	if c.ColumnMappingMode() != schema.ColumnMappingNone || c.DeletionVectors() || c.RowTracking() || c.InCommitTimestamps() {
		t.Errorf("without features: mode %s, dv %v, rows %v, ict %v; want none and false",
			c.ColumnMappingMode(), c.DeletionVectors(), c.RowTracking(), c.InCommitTimestamps())
	}
	if !c.AppendOnly() {
		t.Error("AppendOnly() = false without the feature; the property is honoured regardless")
	}
	// Legacy protocols: column mapping needs reader version 2.
	for _, tc := range []struct {
		r, w int32
		want schema.ColumnMappingMode
	}{{1, 5, schema.ColumnMappingNone}, {2, 5, schema.ColumnMappingByID}, {1, 2, schema.ColumnMappingNone}} {
		c, err := tableconfig.New(actions.Protocol{MinReaderVersion: tc.r, MinWriterVersion: tc.w}, actions.Metadata{Configuration: props})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.ColumnMappingMode(); got != tc.want {
			t.Errorf("protocol (%d,%d): ColumnMappingMode() = %s; want %s", tc.r, tc.w, got, tc.want)
		}
		if got, want := c.IsFeatureSupported(actions.FeatureAppendOnly), tc.w >= 2; got != want {
			t.Errorf("protocol (%d,%d): IsFeatureSupported(appendOnly) = %v", tc.r, tc.w, got)
		}
	}
}

func TestInvalid(t *testing.T) {
	for _, tc := range []struct{ key, value string }{
		{"delta.appendOnly", "maybe"},
		{"delta.appendOnly", " true"},
		{"delta.appendOnly", "1"},
		{"delta.checkpointInterval", "abc"},
		{"delta.checkpointInterval", "0"},
		{"delta.checkpointInterval", "-3"},
		{"delta.checkpointInterval", "3000000000"},
		{"delta.checkpointPolicy", "v3"},
		{"delta.logRetentionDuration", "interval 1 month"},
		{"delta.logRetentionDuration", "30"},
		{"delta.deletedFileRetentionDuration", "-1 day"},
		{"delta.setTransactionRetentionDuration", "forever"},
		{"delta.enableExpiredLogCleanup", "no"},
		{"delta.columnMapping.mode", "position"},
		{"delta.columnMapping.mode", ""},
		{"delta.columnMapping.maxColumnId", "-1"},
		{"delta.dataSkippingNumIndexedCols", "-2"},
		{"delta.dataSkippingNumIndexedCols", "all"},
		{"delta.dataSkippingStatsColumns", "`a, b"},
		{"delta.targetFileSize", "0"},
		{"delta.targetFileSize", "128mb"},
		{"delta.isolationLevel", "ReadCommitted"},
		{"delta.inCommitTimestampEnablementVersion", "-1"},
		{"delta.randomPrefixLength", "0"},
		{"delta.universalFormat.enabledFormats", "iceberg,parquet"},
		{"delta.constraints.c", " "},
		{"delta.feature.deletionVectors", "on"},
	} {
		props := map[string]string{tc.key: tc.value}
		err := tableconfig.Validate(props)
		var pe *tableconfig.PropertyError
		if !errors.As(err, &pe) || pe.Key != tc.key || pe.Value != tc.value || pe.Reason == "" {
			t.Errorf("Validate(%s=%q) = %v; want a *PropertyError naming them", tc.key, tc.value, err)
			continue
		}
		if !errors.Is(err, tableconfig.ErrInvalidProperty) || !errors.Is(err, deltaerr.ErrInvalidArgument) {
			t.Errorf("Validate(%s=%q) = %v; want ErrInvalidProperty and ErrInvalidArgument", tc.key, tc.value, err)
		}
		if _, err := tableconfig.New(actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}, actions.Metadata{Configuration: props}); !errors.As(err, &pe) {
			t.Errorf("New with %s=%q = %v; want a *PropertyError", tc.key, tc.value, err)
		}
	}
	if err := tableconfig.Validate(map[string]string{"delta.someFutureProperty": "x", "spark.sql.x": "y", "delta.feature.rowTracking": "Supported"}); err != nil {
		t.Errorf("Validate of unknown keys = %v; want nil", err)
	}
}

func TestNewCorruptSchema(t *testing.T) {
	_, err := tableconfig.New(actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}, actions.Metadata{SchemaString: "{not json"})
	if !errors.Is(err, deltaerr.ErrCorrupt) {
		t.Errorf("New with a bad schemaString = %v; want ErrCorrupt", err)
	}
}

func TestFeaturesFor(t *testing.T) {
	got, err := tableconfig.FeaturesFor(map[string]string{
		"delta.appendOnly":               "TRUE",
		"delta.enableChangeDataFeed":     "false",
		"delta.enableDeletionVectors":    "true",
		"delta.columnMapping.mode":       "none",
		"delta.checkpointPolicy":         "v2",
		"delta.constraints.positive":     "a > 0",
		"delta.enableInCommitTimestamps": "true",
	})
	want := []string{actions.FeatureAppendOnly, actions.FeatureCheckConstraints, actions.FeatureDeletionVectors,
		actions.FeatureInCommitTimestamp, actions.FeatureV2Checkpoint}
	slices.Sort(want)
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("FeaturesFor = %v, %v; want %v", got, err, want)
	}
	if _, err := tableconfig.FeaturesFor(map[string]string{"delta.enableRowTracking": "yes"}); !errors.Is(err, tableconfig.ErrInvalidProperty) {
		t.Errorf("FeaturesFor with a bad boolean = %v; want ErrInvalidProperty", err)
	}
}

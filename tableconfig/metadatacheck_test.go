package tableconfig_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
)

// cfgOf is the configuration of a table of the DDL columns and props,
// with column mapping supported by the protocol.
func cfgOf(t *testing.T, ddl string, props map[string]string) *tableconfig.Config {
	t.Helper()
	sch, err := schema.ParseDDL(ddl)
	if err != nil {
		t.Fatal(err)
	}
	js, err := sch.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	p := actions.Protocol{MinReaderVersion: 2, MinWriterVersion: 5}
	c, err := tableconfig.New(p, actions.Metadata{SchemaString: string(js), Configuration: props})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCDCColumnNamesAreScans(t *testing.T) {
	want := []string{scan.ChangeTypeColumn, scan.CommitVersionColumn, scan.CommitTimestampColumn}
	if !slices.Equal(tableconfig.CDCColumnNames, want) {
		t.Fatalf("CDCColumnNames %v, scan's %v", tableconfig.CDCColumnNames, want)
	}
}

func TestCheckMetadataChange(t *testing.T) {
	cdf := map[string]string{tableconfig.KeyEnableChangeDataFeed: "true"}
	mapped := map[string]string{tableconfig.KeyColumnMappingMode: "name"}
	for _, tc := range []struct {
		name      string
		prev, now *tableconfig.Config // prev nil: a new table
		want      error
	}{
		{"plain", nil, cfgOf(t, "id INT, s STRUCT<a: INT>", nil), nil},
		{"space", nil, cfgOf(t, "`a b` INT", nil), tableconfig.ErrInvalidColumnName},
		{"in a map value", nil, cfgOf(t, "m MAP<INT, ARRAY<STRUCT<`a;b`: INT>>>", nil), tableconfig.ErrInvalidColumnName},
		{"dots and dashes are fine", nil, cfgOf(t, "`a.b-c` INT", nil), nil},
		{"under column mapping", nil, cfgOf(t, "`a b` INT", mapped), nil},
		{"had it already", cfgOf(t, "`a b` INT", nil), cfgOf(t, "`a b` INT, c INT", nil), nil},
		{"a new one beside", cfgOf(t, "`a b` INT", nil), cfgOf(t, "`a b` INT, `c d` INT", nil), tableconfig.ErrInvalidColumnName},
		{"had it under column mapping", cfgOf(t, "`a b` INT", mapped), cfgOf(t, "`a b` INT", nil), tableconfig.ErrInvalidColumnName},

		{"feed on at create", nil, cfgOf(t, "_change_type STRING", cdf), tableconfig.ErrReservedColumn},
		{"feed turned on", cfgOf(t, "_COMMIT_VERSION BIGINT", nil), cfgOf(t, "_COMMIT_VERSION BIGINT", cdf), tableconfig.ErrReservedColumn},
		{"column added", cfgOf(t, "id INT", cdf), cfgOf(t, "id INT, _Commit_Timestamp TIMESTAMP", cdf), tableconfig.ErrReservedColumn},
		{"both already", cfgOf(t, "_change_type STRING", cdf), cfgOf(t, "_change_type STRING, x INT", cdf), nil},
		{"nested", nil, cfgOf(t, "s STRUCT<_change_type: STRING>", cdf), nil},
		{"feed off", nil, cfgOf(t, "_change_type STRING", nil), nil},

		{"reader version stored", nil, cfgOf(t, "id INT", map[string]string{tableconfig.KeyMinReaderVersion: "1"}), tableconfig.ErrProtocolProperty},
		{"feature stored", cfgOf(t, "id INT", nil), cfgOf(t, "id INT", map[string]string{"delta.feature.appendOnly": "supported"}), tableconfig.ErrProtocolProperty},
		{"stored before", cfgOf(t, "id INT", map[string]string{tableconfig.KeyMinWriterVersion: "2"}),
			cfgOf(t, "id INT", map[string]string{tableconfig.KeyMinWriterVersion: "2", "x": "y"}), nil},
	} {
		err := tc.now.CheckMetadataChange(tc.prev)
		switch {
		case tc.want == nil && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != nil && (!errors.Is(err, tc.want) || !errors.Is(err, deltaerr.ErrInvalidArgument)):
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

package write

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/location"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
)

func field(name string, t schema.DataType, meta ...string) schema.StructField {
	f := schema.StructField{Name: name, Type: t, Nullable: true}
	for i := 0; i+1 < len(meta); i += 2 {
		f.Metadata = append(f.Metadata, schema.MetadataEntry{Key: meta[i], Value: json.RawMessage(meta[i+1])})
	}
	return f
}

func st(fields ...schema.StructField) *schema.StructType { return &schema.StructType{Fields: fields} }

func TestNewTableProtocol(t *testing.T) {
	base := []schema.StructField{field("id", schema.Long), field("name", schema.String)}
	inv := field("v", schema.Integer, MetaInvariants, strconv.Quote(`{"expression":{"expression":"v > 0"}}`))
	gen := field("g", schema.Long, MetaGenerationExpression, strconv.Quote("id * 2"))
	ntz := field("t", schema.TimestampNTZ)
	tests := []struct {
		name   string
		fields []schema.StructField
		props  map[string]string
		want   actions.Protocol
	}{
		{"plain", nil, nil, actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}},
		{"appendOnly", nil, map[string]string{"delta.appendOnly": "true"}, actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}},
		{"appendOnly false", nil, map[string]string{"delta.appendOnly": "false"}, actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}},
		{"invariants", []schema.StructField{inv}, nil, actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}},
		{"check", nil, map[string]string{"delta.constraints.pos": "id > 0"}, actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 3}},
		{"cdf", nil, map[string]string{"delta.enableChangeDataFeed": "true"}, actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 4}},
		{"generated", []schema.StructField{gen}, nil, actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 4}},
		{"column mapping", nil, map[string]string{"delta.columnMapping.mode": "name"}, actions.Protocol{MinReaderVersion: 2, MinWriterVersion: 5}},
		{"column mapping + check", nil, map[string]string{"delta.columnMapping.mode": "name", "delta.constraints.c": "id > 0"}, actions.Protocol{MinReaderVersion: 2, MinWriterVersion: 5}},
		{"timestamp_ntz", []schema.StructField{ntz}, nil, actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{"timestampNtz"}, WriterFeatures: []string{"appendOnly", "invariants", "timestampNtz"}}},
		{"ict only", nil, map[string]string{"delta.enableInCommitTimestamps": "true"}, actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 7,
			WriterFeatures: []string{"appendOnly", "inCommitTimestamp", "invariants"}}},
		{"dv + appendOnly", nil, map[string]string{"delta.enableDeletionVectors": "true", "delta.appendOnly": "true"}, actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{"deletionVectors"}, WriterFeatures: []string{"appendOnly", "deletionVectors", "invariants"}}},
		{"row tracking", nil, map[string]string{"delta.enableRowTracking": "true"}, actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 7,
			WriterFeatures: []string{"appendOnly", "domainMetadata", "invariants", "rowTracking"}}},
		{"v2 checkpoint", nil, map[string]string{"delta.checkpointPolicy": "v2"}, actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{"v2Checkpoint"}, WriterFeatures: []string{"appendOnly", "invariants", "v2Checkpoint"}}},
		{"feature property", nil, map[string]string{"delta.feature.vacuumProtocolCheck": "supported"}, actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{"vacuumProtocolCheck"}, WriterFeatures: []string{"appendOnly", "invariants", "vacuumProtocolCheck"}}},
		{"everything", []schema.StructField{inv, gen, ntz}, map[string]string{
			"delta.columnMapping.mode": "name", "delta.enableChangeDataFeed": "true", "delta.constraints.c": "id > 0",
			"delta.appendOnly": "true", "delta.enableRowTracking": "true", "delta.enableDeletionVectors": "true",
		}, actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{"columnMapping", "deletionVectors", "timestampNtz"},
			WriterFeatures: []string{"appendOnly", "changeDataFeed", "checkConstraints", "columnMapping", "deletionVectors",
				"domainMetadata", "generatedColumns", "invariants", "rowTracking", "timestampNtz"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := TableSpec{Schema: st(append(slices.Clone(base), tt.fields...)...), Properties: tt.props}
			p, m, err := NewTable(spec)
			if err != nil {
				t.Fatal(err)
			}
			if p.MinReaderVersion != tt.want.MinReaderVersion || p.MinWriterVersion != tt.want.MinWriterVersion ||
				!slices.Equal(p.ReaderFeatures, tt.want.ReaderFeatures) || !slices.Equal(p.WriterFeatures, tt.want.WriterFeatures) {
				t.Errorf("protocol = %+v, want %+v", p, tt.want)
			}
			if err := tableconfig.ReadSupported(&p); err != nil {
				t.Errorf("protocol not readable: %v", err)
			}
			if _, err := schema.Parse(m.SchemaString); err != nil {
				t.Errorf("schema string: %v", err)
			}
			for k := range m.Configuration {
				if len(k) > 14 && k[:14] == tableconfig.KeyFeaturePrefix {
					t.Errorf("feature property %s kept in configuration", k)
				}
			}
		})
	}
}

func TestNewTableColumnMapping(t *testing.T) {
	inner := st(field("x", schema.Integer), field("y", &schema.ArrayType{ElementType: st(field("z", schema.String)), ContainsNull: true}))
	spec := TableSpec{
		Schema:     st(field("a", schema.Long), field("s", inner), field("m", &schema.MapType{KeyType: schema.String, ValueType: st(field("w", schema.Double))})),
		Properties: map[string]string{"delta.columnMapping.mode": "name"},
	}
	_, m, err := NewTable(spec)
	if err != nil {
		t.Fatal(err)
	}
	sch, err := schema.Parse(m.SchemaString)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[int64]bool{}
	names := map[string]bool{}
	var walk func(dt schema.DataType)
	walk = func(dt schema.DataType) {
		switch dt := dt.(type) {
		case *schema.StructType:
			for i := range dt.Fields {
				f := &dt.Fields[i]
				id, ok := f.ColumnMappingID()
				pn := f.PhysicalName(schema.ColumnMappingByName)
				if !ok || ids[id] || pn == f.Name || names[pn] || len(pn) != len("col-")+36 {
					t.Errorf("field %s: id %d (%v), physical name %q: not a fresh mapping", f.Name, id, ok, pn)
				}
				ids[id], names[pn] = true, true
				walk(f.Type)
			}
		case *schema.ArrayType:
			walk(dt.ElementType)
		case *schema.MapType:
			walk(dt.KeyType)
			walk(dt.ValueType)
		}
	}
	walk(sch)
	if len(ids) != 7 {
		t.Errorf("%d fields mapped, want 7", len(ids))
	}
	if got := m.Configuration["delta.columnMapping.maxColumnId"]; got != "7" {
		t.Errorf("maxColumnId = %q, want 7", got)
	}
	// The spec's schema is left alone.
	if _, ok := spec.Schema.Fields[0].ColumnMappingID(); ok {
		t.Error("NewTable modified the spec's schema")
	}
}

func TestNewTableRowTrackingProperties(t *testing.T) {
	_, m, err := NewTable(TableSpec{Schema: st(field("a", schema.Long)), Properties: map[string]string{"delta.enableRowTracking": "true", "delta.someFutureProperty": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	for k, prefix := range map[string]string{tableconfig.KeyMaterializedRowIDColumn: "_row-id-col-", tableconfig.KeyMaterializedRowCommitVersionColumn: "_row-commit-version-col-"} {
		if v := m.Configuration[k]; len(v) != len(prefix)+36 || v[:len(prefix)] != prefix {
			t.Errorf("%s = %q", k, v)
		}
	}
	if m.Configuration["delta.someFutureProperty"] != "x" {
		t.Error("unknown delta.* property dropped")
	}
}

func TestNewTableInvalid(t *testing.T) {
	tests := []struct {
		name string
		spec TableSpec
		kind error
	}{
		{"no schema", TableSpec{}, ErrInvalidSpec},
		{"missing partition", TableSpec{Schema: st(field("a", schema.Long), field("b", schema.Long)), PartitionColumns: []string{"c"}}, ErrInvalidSpec},
		{"struct partition", TableSpec{Schema: st(field("a", schema.Long), field("s", st(field("x", schema.Long)))), PartitionColumns: []string{"s"}}, ErrInvalidSpec},
		{"all partitions", TableSpec{Schema: st(field("a", schema.Long)), PartitionColumns: []string{"a"}}, ErrInvalidSpec},
		{"duplicate partition", TableSpec{Schema: st(field("a", schema.Long), field("b", schema.Long)), PartitionColumns: []string{"a", "A"}}, ErrInvalidSpec},
		{"names equal ignoring case", TableSpec{Schema: st(field("a", schema.Long), field("A", schema.Long))}, ErrInvalidSpec},
		{"bad bool", TableSpec{Schema: st(field("a", schema.Long)), Properties: map[string]string{"delta.appendOnly": "yes"}}, ErrInvalidSpec},
		{"bad mode", TableSpec{Schema: st(field("a", schema.Long)), Properties: map[string]string{"delta.columnMapping.mode": "path"}}, ErrInvalidSpec},
		{"bad constraint", TableSpec{Schema: st(field("a", schema.Long)), Properties: map[string]string{"delta.constraints.c": "a >"}}, ErrInvalidSpec},
		{"bad invariant", TableSpec{Schema: st(field("a", schema.Long, MetaInvariants, `"nope"`))}, ErrInvalidSpec},
		// Constraints no row could be checked against (issue 19, item 18).
		{"constraint on a missing column", TableSpec{Schema: st(field("a", schema.Long)), Properties: map[string]string{"delta.constraints.c": "b > 0"}}, ErrInvalidSpec},
		{"constraint not boolean", TableSpec{Schema: st(field("a", schema.Long)), Properties: map[string]string{"delta.constraints.c": "a + 1"}}, ErrInvalidSpec},
		{"constraint a bare column", TableSpec{Schema: st(field("a", schema.Long)), Properties: map[string]string{"delta.constraints.c": "a"}}, ErrInvalidSpec},
		{"constraint without a name", TableSpec{Schema: st(field("a", schema.Long)), Properties: map[string]string{"delta.constraints.": "a > 0"}}, ErrInvalidSpec},
		{"constraint names equal ignoring case", TableSpec{Schema: st(field("a", schema.Long)), Properties: map[string]string{"delta.constraints.c1": "a > 0", "delta.constraints.C1": "a < 9"}}, ErrInvalidSpec},
		{"constraint on a missing nested field", TableSpec{Schema: st(field("s", st(field("x", schema.Long)))), Properties: map[string]string{"delta.constraints.c": "s.y > 0"}}, ErrInvalidSpec},
		{"unknown feature", TableSpec{Schema: st(field("a", schema.Long)), Properties: map[string]string{"delta.feature.noSuchThing": "supported"}}, deltaerr.ErrUnsupportedFeature},
		{"identity without a step", TableSpec{Schema: st(field("a", schema.Long, "delta.identity.start", "1"))}, ErrInvalidSpec},
		{"identity step 0", TableSpec{Schema: st(field("a", schema.Long, "delta.identity.start", "1", "delta.identity.step", "0"))}, ErrInvalidSpec},
		{"identity not a long", TableSpec{Schema: st(field("a", schema.Integer, "delta.identity.start", "1", "delta.identity.step", "1"))}, ErrInvalidSpec},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := NewTable(tt.spec)
			if !errors.Is(err, tt.kind) {
				t.Fatalf("err = %v, want %v", err, tt.kind)
			}
		})
	}
}

func TestNewTablePartitionNormalized(t *testing.T) {
	_, m, err := NewTable(TableSpec{Schema: st(field("Year", schema.Integer), field("v", schema.String)), PartitionColumns: []string{"year"}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.PartitionColumns, []string{"Year"}) {
		t.Errorf("partition columns %v", m.PartitionColumns)
	}
}

func TestEscapePathName(t *testing.T) {
	tests := []struct{ in, dir, uri string }{
		{"bar+%21", "p=bar+%2521", "p=bar+%252521"},
		{"2021-09-08 11:11:11", "p=2021-09-08 11%3A11%3A11", "p=2021-09-08%2011%253A11%253A11"},
		{"a/b=c", "p=a%2Fb%3Dc", "p=a%252Fb%253Dc"},
		{"", "p=" + HiveDefaultPartition, "p=" + HiveDefaultPartition},
		{"é", "p=é", "p=%C3%A9"},
		{"x\ny", "p=x%0Ay", "p=x%250Ay"},
	}
	for _, tt := range tests {
		dir := partitionDir("p", tt.in)
		if dir != tt.dir {
			t.Errorf("partitionDir(%q) = %q, want %q", tt.in, dir, tt.dir)
		}
		if got := location.EncodePath(dir); got != tt.uri {
			t.Errorf("EncodePath(%q) = %q, want %q", dir, got, tt.uri)
		}
	}
}

// Constraints that name columns by any case, nested fields and functions
// are accepted.
func TestNewTableConstraintsAccepted(t *testing.T) {
	sch := st(field("a", schema.Long), field("ok", schema.Boolean), field("s", st(field("x", schema.Long))), field("d", schema.Date))
	for _, c := range []string{"A > 0", "ok", "NOT ok OR a > 1", "s.x IS NOT NULL", "year(d) >= 2020", "d >= '2020-01-01'", "a IN (1, 2)"} {
		if _, _, err := NewTable(TableSpec{Schema: sch, Properties: map[string]string{"delta.constraints.c": c}}); err != nil {
			t.Errorf("%s: %v", c, err)
		}
	}
}

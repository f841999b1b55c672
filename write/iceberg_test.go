package write

import (
	"errors"
	"slices"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
)

// TestNewTableUniformIceberg: asking for Iceberg turns on icebergCompatV2
// and column mapping, and gives nested ids to array elements and map keys
// and values, unique and above the column ids.
func TestNewTableUniformIceberg(t *testing.T) {
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.Long},
		{Name: "tags", Type: &schema.ArrayType{ElementType: &schema.ArrayType{ElementType: schema.Integer}}, Nullable: true},
		{Name: "attrs", Type: &schema.MapType{KeyType: schema.String, ValueType: &schema.StructType{Fields: []schema.StructField{
			{Name: "xs", Type: &schema.ArrayType{ElementType: schema.Long}, Nullable: true},
		}}}, Nullable: true},
	}}
	p, m, err := NewTable(TableSpec{Schema: sch, Properties: map[string]string{tableconfig.KeyUniversalFormatEnabledFormats: "iceberg"}})
	if err != nil {
		t.Fatal(err)
	}
	if !tableconfig.HasWriterFeature(&p, actions.FeatureIcebergCompatV2) || !tableconfig.HasReaderFeature(&p, actions.FeatureColumnMapping) || p.MinWriterVersion != 7 {
		t.Fatalf("protocol %+v", p)
	}
	cfg, err := tableconfig.New(p, m)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.UniversalFormatIceberg() || cfg.ColumnMappingMode() != schema.ColumnMappingByName {
		t.Fatalf("config: iceberg %v, mode %s", cfg.UniversalFormatIceberg(), cfg.ColumnMappingMode())
	}
	got, err := schema.Parse(m.SchemaString)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[int64]string{}
	use := func(id int64, what string) {
		if prev, dup := ids[id]; dup {
			t.Errorf("id %d used by %s and %s", id, prev, what)
		}
		ids[id] = what
	}
	wantKeys := map[string][]string{
		"tags":  {".element", ".element.element"},
		"attrs": {".key", ".value"},
		"xs":    {".element"},
	}
	var walk func(st *schema.StructType)
	walk = func(st *schema.StructType) {
		for i := range st.Fields {
			f := &st.Fields[i]
			id, _ := f.ColumnMappingID()
			use(id, f.Name)
			nested, _ := f.NestedIDs()
			phys := f.PhysicalName(schema.ColumnMappingByName)
			var keys []string
			for k, id := range nested {
				use(id, k)
				keys = append(keys, k)
			}
			var want []string
			for _, suffix := range wantKeys[f.Name] {
				want = append(want, phys+suffix)
			}
			slices.Sort(keys)
			slices.Sort(want)
			if !slices.Equal(keys, want) {
				t.Errorf("field %s: nested ids %v, want keys %v", f.Name, keys, want)
			}
			if mt, ok := f.Type.(*schema.MapType); ok {
				walk(mt.ValueType.(*schema.StructType))
			}
		}
	}
	walk(got)
	maxID, _ := cfg.MaxColumnID()
	for id := range ids {
		if id > maxID || id <= 0 {
			t.Errorf("id %d outside 1..maxColumnId %d", id, maxID)
		}
	}
	if len(ids) != 4+5 {
		t.Errorf("%d ids, want 9", len(ids))
	}
}

func TestNewTableUniformIcebergRefused(t *testing.T) {
	sch := &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long}}}
	for name, props := range map[string]map[string]string{
		"deletion vectors": {tableconfig.KeyUniversalFormatEnabledFormats: "iceberg", tableconfig.KeyEnableDeletionVectors: "true"},
		"no mapping":       {tableconfig.KeyUniversalFormatEnabledFormats: "iceberg", tableconfig.KeyColumnMappingMode: "none"},
	} {
		if _, _, err := NewTable(TableSpec{Schema: sch, Properties: props}); !errors.Is(err, ErrInvalidSpec) || !errors.Is(err, deltaerr.ErrUnsupportedFeature) {
			t.Errorf("%s: %v", name, err)
		}
	}
	variant := &schema.StructType{Fields: []schema.StructField{{Name: "v", Type: schema.Variant, Nullable: true}}}
	if _, _, err := NewTable(TableSpec{Schema: variant, Properties: map[string]string{tableconfig.KeyUniversalFormatEnabledFormats: "iceberg"}}); err == nil {
		t.Error("a variant column was accepted with icebergCompatV2")
	}
}

func TestUpgradeProtocolIcebergCompat(t *testing.T) {
	legacy := actions.Protocol{MinReaderVersion: 2, MinWriterVersion: 5}
	p, _ := UpgradeProtocol(legacy, actions.FeatureIcebergCompatV2)
	for _, f := range []string{actions.FeatureIcebergCompatV2, actions.FeatureColumnMapping, actions.FeatureAppendOnly,
		actions.FeatureInvariants, actions.FeatureCheckConstraints, actions.FeatureChangeDataFeed, actions.FeatureGeneratedColumns} {
		if !tableconfig.HasWriterFeature(&p, f) {
			t.Errorf("upgraded protocol lacks %s: %+v", f, p)
		}
	}
	if !tableconfig.HasReaderFeature(&p, actions.FeatureColumnMapping) || p.MinReaderVersion != 3 {
		t.Errorf("reader side %+v", p)
	}
	if q, changed := UpgradeProtocol(p, actions.FeatureIcebergCompatV2); changed || !slices.Equal(q.WriterFeatures, p.WriterFeatures) {
		t.Errorf("an upgrade to features already there changed the protocol: %+v", q)
	}
}

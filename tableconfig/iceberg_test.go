package tableconfig_test

import (
	"errors"
	"maps"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/tableconfig"
)

func TestIcebergProperties(t *testing.T) {
	const formats, compat, mode = tableconfig.KeyUniversalFormatEnabledFormats, tableconfig.KeyEnableIcebergCompatV2, tableconfig.KeyColumnMappingMode
	cases := []struct {
		name string
		raw  map[string]string
		want map[string]string // nil: nothing to add
		err  error
	}{
		{"not asked", map[string]string{"delta.appendOnly": "true"}, nil, nil},
		{"hudi only", map[string]string{formats: "hudi"}, nil, nil},
		{"iceberg", map[string]string{formats: "iceberg"}, map[string]string{compat: "true", mode: "name"}, nil},
		{"iceberg in a list, any case", map[string]string{formats: "hudi, ICEBERG"}, map[string]string{compat: "true", mode: "name"}, nil},
		{"id mode kept", map[string]string{formats: "iceberg", mode: "id"}, map[string]string{compat: "true"}, nil},
		{"compat already on", map[string]string{formats: "iceberg", compat: "true", mode: "name"}, map[string]string{}, nil},
		{"compat alone", map[string]string{compat: "true"}, map[string]string{mode: "name"}, nil},
		{"compat off", map[string]string{formats: "iceberg", compat: "false"}, nil, deltaerr.ErrUnsupportedFeature},
		{"mapping none", map[string]string{formats: "iceberg", mode: "none"}, nil, deltaerr.ErrUnsupportedFeature},
		{"deletion vectors", map[string]string{formats: "iceberg", tableconfig.KeyEnableDeletionVectors: "true"}, nil, deltaerr.ErrUnsupportedFeature},
		{"compat v1", map[string]string{formats: "iceberg", tableconfig.KeyEnableIcebergCompatV1: "true"}, nil, deltaerr.ErrUnsupportedFeature},
		{"bad format", map[string]string{formats: "orc"}, nil, tableconfig.ErrInvalidProperty},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tableconfig.IcebergProperties(tc.raw)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, tc.want) || (got == nil) != (tc.want == nil) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestIcebergCompatConfig(t *testing.T) {
	proto := actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
		ReaderFeatures: []string{actions.FeatureColumnMapping},
		WriterFeatures: []string{actions.FeatureColumnMapping, actions.FeatureIcebergCompatV2}}
	good := map[string]string{
		tableconfig.KeyUniversalFormatEnabledFormats: "iceberg", tableconfig.KeyEnableIcebergCompatV2: "true",
		tableconfig.KeyColumnMappingMode: "name",
	}
	sch := `{"type":"struct","fields":[{"name":"a","type":"long","nullable":true,"metadata":{}}]}`
	cfg, err := tableconfig.New(proto, actions.Metadata{SchemaString: sch, Configuration: good})
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.IcebergCompatV2() || !cfg.UniversalFormatIceberg() || !cfg.IsFeatureEnabled(actions.FeatureIcebergCompatV2) {
		t.Fatal("iceberg not enabled")
	}
	if err := cfg.CheckIcebergCompat(); err != nil {
		t.Fatal(err)
	}
	feats, err := tableconfig.FeaturesFor(good)
	if err != nil || len(feats) != 2 || feats[0] != actions.FeatureColumnMapping || feats[1] != actions.FeatureIcebergCompatV2 {
		t.Fatalf("FeaturesFor: %v, %v", feats, err)
	}
	// Without the feature in the protocol the property does not count.
	legacy := actions.Protocol{MinReaderVersion: 2, MinWriterVersion: 5}
	cfg, err = tableconfig.New(legacy, actions.Metadata{SchemaString: sch, Configuration: good})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.IcebergCompatV2() || cfg.UniversalFormatIceberg() {
		t.Fatal("enabled without the protocol feature")
	}
	if err := cfg.CheckIcebergCompat(); !errors.Is(err, deltaerr.ErrUnsupportedFeature) {
		t.Fatalf("iceberg listed without icebergCompatV2: %v", err)
	}
	onlyFormats := map[string]string{tableconfig.KeyUniversalFormatEnabledFormats: "iceberg", tableconfig.KeyColumnMappingMode: "name"}
	if cfg, err = tableconfig.New(proto, actions.Metadata{SchemaString: sch, Configuration: onlyFormats}); err != nil {
		t.Fatal(err)
	}
	if err := cfg.CheckIcebergCompat(); !errors.Is(err, deltaerr.ErrUnsupportedFeature) {
		t.Fatalf("iceberg listed with delta.enableIcebergCompatV2 unset: %v", err)
	}
	// Broken rules.
	bad := []struct {
		name   string
		change map[string]string
		schema string
	}{
		{"no column mapping", map[string]string{tableconfig.KeyColumnMappingMode: "none"}, sch},
		{"deletion vectors", map[string]string{tableconfig.KeyEnableDeletionVectors: "true"}, sch},
		{"variant column", nil, `{"type":"struct","fields":[{"name":"v","type":"variant","nullable":true,"metadata":{}}]}`},
		{"void in an array", nil, `{"type":"struct","fields":[{"name":"v","type":{"type":"array","elementType":"void","containsNull":true},"nullable":true,"metadata":{}}]}`},
	}
	for _, b := range bad {
		conf := maps.Clone(good)
		maps.Copy(conf, b.change)
		p := proto
		if b.change[tableconfig.KeyEnableDeletionVectors] != "" {
			p.ReaderFeatures = append(p.ReaderFeatures, actions.FeatureDeletionVectors)
			p.WriterFeatures = append(p.WriterFeatures, actions.FeatureDeletionVectors)
		}
		cfg, err := tableconfig.New(p, actions.Metadata{SchemaString: b.schema, Configuration: conf})
		if err != nil {
			t.Fatalf("%s: %v", b.name, err)
		}
		if err := cfg.CheckIcebergCompat(); !errors.Is(err, deltaerr.ErrUnsupportedFeature) {
			t.Errorf("%s: CheckIcebergCompat = %v", b.name, err)
		}
	}
}

package alter_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/alter"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/schema"
)

// TestCollatedStrings writes to a table with a collated column (the
// collations feature): created with the feature and domainMetadata, rows
// appended with UTF-8 binary statistics (the protocol allows them for any
// collation), and a rename that carries the collation to the new name.
func TestCollatedStrings(t *testing.T) {
	sch, err := schema.Parse(`{"type":"struct","fields":[
		{"name":"id","type":"long","nullable":true,"metadata":{}},
		{"name":"s","type":"string","nullable":true,"metadata":{"__COLLATIONS":{"s":"spark.UTF8_LCASE"}}},
		{"name":"m","type":{"type":"map","keyType":"string","valueType":"long","valueContainsNull":true},"nullable":true,
		 "metadata":{"__COLLATIONS":{"m.key":"ICU.de_DE"}}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	store, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := createIn(t, store, sch, map[string]string{"delta.columnMapping.mode": "name"})
	p := s.Protocol()
	for _, f := range []string{actions.FeatureCollations, actions.FeatureDomainMetadata} {
		if !slices.Contains(p.WriterFeatures, f) {
			t.Fatalf("writer features %v lack %s", p.WriterFeatures, f)
		}
	}
	m := schema.MapValue([]schema.Value{schema.StringValue("k"), schema.LongValue(1)})
	s = appendRows(t, s,
		[]schema.Value{schema.LongValue(1), schema.StringValue("b"), m},
		[]schema.Value{schema.LongValue(2), schema.StringValue("A"), m},
		[]schema.Value{schema.LongValue(3), schema.StringValue("a"), {}},
	)
	var stats struct {
		MinValues          map[string]any `json:"minValues"`
		MaxValues          map[string]any `json:"maxValues"`
		StatsWithCollation any            `json:"statsWithCollation"`
	}
	n := 0
	for add, err := range s.Files(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if err := json.Unmarshal([]byte(add.Stats), &stats); err != nil {
			t.Fatal(err)
		}
	}
	// The stats are keyed by physical name: find the collated column's.
	phys := s.Schema().Fields[1].PhysicalName(schema.ColumnMappingByName)
	if n != 1 || stats.MinValues[phys] != "A" || stats.MaxValues[phys] != "b" || stats.StatsWithCollation != nil {
		t.Fatalf("%d files, stats %+v: want binary min A, max b, no statsWithCollation", n, stats)
	}

	res, err := alter.RenameColumn(ctx, s, path("s"), "t", alter.Options{})
	s = must(t, s, res, err)
	res, err = alter.RenameColumn(ctx, s, path("m"), "mm", alter.Options{})
	s = must(t, s, res, err)
	for i, want := range map[int]string{1: `{"t":"spark.UTF8_LCASE"}`, 2: `{"mm.key":"ICU.de_DE"}`} {
		got, ok := s.Schema().Fields[i].Metadata.Get(schema.MetadataCollations)
		if !ok || string(got) != want {
			t.Fatalf("field %s: collations %s, want %s", s.Schema().Fields[i].Name, got, want)
		}
	}
	equal(t, read(t, s), []string{"id=1 t=b mm={k: 1}", "id=2 t=A mm={k: 1}", "id=3 t=a mm=null"})
}

package schema_test

import (
	"errors"
	"testing"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
)

// collatedSchema is the example schema of the collations RFC
// (protocol_rfcs/collated-string-type.md), with a third, plain column.
const collatedSchema = `{"type":"struct","fields":[
 {"name":"col1","type":"string","nullable":true,"metadata":{"__COLLATIONS":{"col1":"ICU.de_DE"}}},
 {"name":"col2","type":{"type":"array","elementType":{"type":"map","keyType":"string","valueType":{"type":"struct","fields":[
   {"name":"f1","type":"string","nullable":true,"metadata":{"__COLLATIONS":{"f1":"ICU.de_DE"}}}]},"valueContainsNull":true},"containsNull":true},
  "nullable":true,"metadata":{"__COLLATIONS":{"col2.element.key":"ICU.en_US"},"comment":"c"}},
 {"name":"col3","type":"string","nullable":true,"metadata":{}}]}`

func TestHasCollations(t *testing.T) {
	sch, err := schema.Parse(collatedSchema)
	if err != nil {
		t.Fatal(err)
	}
	if !schema.HasCollations(sch) {
		t.Fatal("the RFC's example has collations")
	}
	// Only the struct nested in col2's map carries them.
	nested := &schema.StructType{Fields: []schema.StructField{sch.Fields[1]}}
	nested.Fields[0].Metadata = nil
	if !schema.HasCollations(nested) {
		t.Fatal("collations of a struct inside an array of maps are missed")
	}
	plain := &schema.StructType{Fields: []schema.StructField{sch.Fields[2]}}
	if schema.HasCollations(plain) || schema.HasCollations(nil) {
		t.Fatal("collations found where there are none")
	}
}

// TestRenameCollations: a renamed field's collation paths follow its name,
// other metadata and other paths stay as written.
func TestRenameCollations(t *testing.T) {
	sch, err := schema.Parse(collatedSchema)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name     string
		m        schema.Metadata
		old, new string
		want     string // the metadata's JSON
	}{
		{"own path", sch.Fields[0].Metadata, "col1", "c1", `{"__COLLATIONS":{"c1":"ICU.de_DE"}}`},
		{"nested path, other keys kept", sch.Fields[1].Metadata, "col2", "x.y", `{"__COLLATIONS":{"x.y.element.key":"ICU.en_US"},"comment":"c"}`},
		{"no collations", sch.Fields[2].Metadata, "col3", "c3", `{}`},
		{"another field's path", sch.Fields[0].Metadata, "col", "c", `{"__COLLATIONS":{"col1":"ICU.de_DE"}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := string(metaJSON(tt.m))
			got, err := schema.RenameCollations(tt.m, tt.old, tt.new)
			if err != nil {
				t.Fatal(err)
			}
			if s := string(metaJSON(got)); s != tt.want {
				t.Fatalf("got %s, want %s", s, tt.want)
			}
			if string(metaJSON(tt.m)) != before {
				t.Fatal("the metadata given was modified")
			}
		})
	}
	bad := schema.Metadata{{Key: schema.MetadataCollations, Value: []byte(`{"a":1}`)}}
	if _, err := schema.RenameCollations(bad, "a", "b"); !errors.Is(err, deltaerr.ErrCorrupt) {
		t.Fatalf("a collation that is not a string: %v", err)
	}
}

// metaJSON is the JSON of a field's metadata, as the schema writes it.
func metaJSON(m schema.Metadata) []byte {
	st := &schema.StructType{Fields: []schema.StructField{{Name: "f", Type: schema.String, Metadata: m}}}
	s := st.String()
	const prefix = `{"type":"struct","fields":[{"name":"f","type":"string","nullable":false,"metadata":`
	return []byte(s[len(prefix) : len(s)-3])
}

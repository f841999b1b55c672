package iceberggo_test

import (
	"context"
	"slices"
	"testing"

	icebergpkg "github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
)

// TestIcebergGoNameMapping: iceberg-go parses the table's
// schema.name-mapping.default, and it holds every entry of the mapping
// iceberg-go derives from the schema itself (as Iceberg's Java library and
// Spark's UniForm do), at every depth, with the same ids: the physical
// names it adds are extra names only.
func TestIcebergGoNameMapping(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	inner := &schema.StructType{Fields: []schema.StructField{
		{Name: "a", Type: schema.Integer, Nullable: true},
		{Name: "ys", Type: &schema.ArrayType{ElementType: schema.Long, ContainsNull: true}, Nullable: true},
	}}
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.Long},
		{Name: "pt", Type: inner, Nullable: true},
		{Name: "xs", Type: &schema.ArrayType{ElementType: &schema.ArrayType{ElementType: schema.Long, ContainsNull: true}, ContainsNull: true}, Nullable: true},
		{Name: "m", Type: &schema.MapType{KeyType: schema.String, ValueType: inner, ValueContainsNull: true}, Nullable: true},
		{Name: "p", Type: schema.String, Nullable: true},
	}}
	tbl, err := delta.Create(ctx, "file://"+dir, delta.TableSpec{Schema: sch, PartitionColumns: []string{"p"},
		Properties: map[string]string{tableconfig.KeyUniversalFormatEnabledFormats: "iceberg"}})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	st, err := tbl.IcebergStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	it, err := table.NewFromLocation(ctx, table.Identifier{"mapping"}, st.MetadataLocation, icebergio.LoadFSFunc(nil, st.MetadataLocation), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := it.NameMapping()
	if got == nil {
		t.Fatalf("iceberg-go finds no name mapping in %s: %v", st.MetadataLocation, it.Properties())
	}
	want := it.Schema().NameMapping()
	var covers func(path string, got, want []icebergpkg.MappedField)
	covers = func(path string, got, want []icebergpkg.MappedField) {
		if len(got) != len(want) {
			t.Fatalf("%s: %d mapped fields, want %d: %v", path, len(got), len(want), got)
		}
		for i := range want {
			g, w := got[i], want[i]
			if g.ID() != w.ID() {
				t.Fatalf("%s%v: field id %d, want %d", path, w.Names, g.ID(), w.ID())
			}
			for _, n := range w.Names {
				if !slices.Contains(g.Names, n) {
					t.Fatalf("%s: field %d has names %v, not %s", path, g.ID(), g.Names, n)
				}
			}
			covers(path+w.Names[0]+".", g.Fields, w.Fields)
		}
	}
	covers("", got, want)
	t.Logf("name mapping: %s", got)
}

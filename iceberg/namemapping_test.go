package iceberg_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strconv"
	"testing"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/iceberg"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
)

// mappedField is an entry of an Iceberg name mapping (spec: "Column
// Projection", schema.name-mapping.default).
type mappedField struct {
	FieldID *int          `json:"field-id"`
	Names   []string      `json:"names"`
	Fields  []mappedField `json:"fields"`
}

// expectMapping is the name mapping of a Delta schema under column
// mapping, built here independently of the package: each field mapped
// from its logical name and, when different, its physical name (the name
// in the data files) to its column mapping id; array elements as
// "element", map keys and values as "key" and "value", with their nested
// ids.
func expectMapping(t *testing.T, st *schema.StructType) []mappedField {
	t.Helper()
	var typ func(dt schema.DataType, nested map[string]int64, key string) []mappedField
	nestedField := func(name string, id int64, dt schema.DataType, nested map[string]int64, key string) mappedField {
		n := int(id)
		return mappedField{FieldID: &n, Names: []string{name}, Fields: typ(dt, nested, key)}
	}
	var fields func(st *schema.StructType) []mappedField
	typ = func(dt schema.DataType, nested map[string]int64, key string) []mappedField {
		switch dt := dt.(type) {
		case *schema.StructType:
			return fields(dt)
		case *schema.ArrayType:
			return []mappedField{nestedField("element", nested[key+".element"], dt.ElementType, nested, key+".element")}
		case *schema.MapType:
			return []mappedField{
				nestedField("key", nested[key+".key"], dt.KeyType, nested, key+".key"),
				nestedField("value", nested[key+".value"], dt.ValueType, nested, key+".value"),
			}
		}
		return nil
	}
	fields = func(st *schema.StructType) []mappedField {
		var out []mappedField
		for i := range st.Fields {
			f := &st.Fields[i]
			id, ok := f.ColumnMappingID()
			if !ok {
				t.Fatalf("field %s has no column mapping id", f.Name)
			}
			nested, _ := f.NestedIDs()
			phys := f.PhysicalName(schema.ColumnMappingByName)
			m := nestedField(f.Name, id, f.Type, nested, phys)
			if phys != f.Name {
				m.Names = append(m.Names, phys)
			}
			out = append(out, m)
		}
		return out
	}
	return fields(st)
}

// nameMapping decodes schema.name-mapping.default of the latest metadata.
func nameMapping(t *testing.T, ctx context.Context, store logstore.Store) []mappedField {
	t.Helper()
	m := latestMetadata(t, ctx, store)
	props, _ := m["properties"].(map[string]any)
	raw, ok := props["schema.name-mapping.default"].(string)
	if !ok {
		t.Fatalf("no schema.name-mapping.default in the metadata properties: %v", props)
	}
	var out []mappedField
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		t.Fatalf("name mapping %q: %v", raw, err)
	}
	return out
}

func checkMapping(t *testing.T, what string, got, want []mappedField) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Fatalf("%s: name mapping\n%s\nwant\n%s", what, g, w)
	}
}

// TestNameMapping: every metadata file carries the table's name mapping,
// as Spark's UniForm writes it, so that Iceberg readers can read data
// files without field ids; nested structs, arrays (of arrays) and maps
// (of structs) included. A schema change changes it, and a conversion
// that starts from metadata without one (written before it existed)
// writes it too.
func TestNameMapping(t *testing.T) {
	ctx := context.Background()
	point := &schema.StructType{Fields: []schema.StructField{
		{Name: "x", Type: schema.Integer, Nullable: true}, {Name: "label", Type: schema.String, Nullable: true},
	}}
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.Long},
		{Name: "pt", Type: point, Nullable: true},
		{Name: "xs", Type: &schema.ArrayType{ElementType: &schema.ArrayType{ElementType: schema.Long, ContainsNull: true}, ContainsNull: true}, Nullable: true},
		{Name: "m", Type: &schema.MapType{KeyType: schema.String, ValueType: &schema.StructType{Fields: []schema.StructField{
			{Name: "a", Type: schema.Integer, Nullable: true},
			{Name: "ys", Type: &schema.ArrayType{ElementType: schema.Integer, ContainsNull: true}, Nullable: true},
		}}, ValueContainsNull: true}, Nullable: true},
		{Name: "p", Type: schema.String, Nullable: true},
	}}
	store := memory.New()
	tbl, err := delta.CreateStore(ctx, "mapping", store, delta.TableSpec{
		Schema: sch, PartitionColumns: []string{"p"},
		Properties: map[string]string{tableconfig.KeyUniversalFormatEnabledFormats: "iceberg"},
	})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := expectMapping(t, snap.Schema())
	if len(want) != 5 || len(want[3].Fields) != 2 || len(want[3].Fields[1].Fields) != 2 || len(want[0].Names) != 2 {
		t.Fatalf("expected mapping %+v", want)
	}
	checkMapping(t, "created", nameMapping(t, ctx, store), want)

	// A column added: the mapping follows the new schema.
	addField(t, ctx, tbl, schema.StructField{Name: "extra", Type: &schema.ArrayType{ElementType: schema.String, ContainsNull: true}, Nullable: true})
	if snap, err = tbl.Snapshot(ctx); err != nil {
		t.Fatal(err)
	}
	want = expectMapping(t, snap.Schema())
	checkMapping(t, "after adding a column", nameMapping(t, ctx, store), want)

	// Metadata from before the mapping: the next conversion, of a commit
	// that changes no schema, writes it.
	st, err := iceberg.ReadStatus(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	key := iceberg.MetadataKey(st.MetadataVersion)
	raw, err := store.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	delete(m["properties"].(map[string]any), "schema.name-mapping.default")
	if raw, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := store.Put(ctx, key, append(raw, ' ')); err != nil { // a new size: not the file this process wrote
		t.Fatal(err)
	}
	row := []schema.Value{schema.LongValue(1), {}, {}, {}, schema.StringValue("a"), {}}
	if _, err := tbl.AppendRows(ctx, [][]schema.Value{row}, delta.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if st2, err := iceberg.ReadStatus(ctx, store); err != nil || st2.MetadataVersion != st.MetadataVersion+1 {
		t.Fatalf("the append was not converted: %+v, %v", st2, err)
	}
	checkMapping(t, "converted from metadata without one", nameMapping(t, ctx, store), want)
}

// TestNameMappingPhysicalNameClash: a physical name is mapped only when
// no other field of its struct is named so (a column renamed, then a new
// column given the old name): a name maps to one field, or readers refuse
// the mapping; the logical names, which Spark maps, stay.
func TestNameMappingPhysicalNameClash(t *testing.T) {
	ctx := context.Background()
	field := func(name, phys string, id int) schema.StructField {
		return schema.StructField{Name: name, Type: schema.Long, Nullable: true, Metadata: schema.Metadata{
			{Key: schema.MetadataColumnMappingID, Value: []byte(strconv.Itoa(id))},
			{Key: schema.MetadataPhysicalName, Value: []byte(strconv.Quote(phys))},
		}}
	}
	store := memory.New()
	_, err := delta.CreateStore(ctx, "clash", store, delta.TableSpec{
		Schema: &schema.StructType{Fields: []schema.StructField{field("b", "a", 1), field("a", "col-2", 2), field("c", "c", 3)}},
		Properties: map[string]string{
			tableconfig.KeyUniversalFormatEnabledFormats: "iceberg",
			tableconfig.KeyColumnMappingMode:             "name",
			tableconfig.KeyColumnMappingMaxColumnID:      "3",
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	one, two, three := 1, 2, 3
	checkMapping(t, "clash", nameMapping(t, ctx, store), []mappedField{
		{FieldID: &one, Names: []string{"b"}},
		{FieldID: &two, Names: []string{"a", "col-2"}},
		{FieldID: &three, Names: []string{"c"}},
	})
}

// addField commits a nullable column with the next column id, a physical
// name and, for an array, its nested id, as ALTER TABLE ADD COLUMN does on
// an icebergCompatV2 table.
func addField(t *testing.T, ctx context.Context, tbl *delta.Table, f schema.StructField) {
	t.Helper()
	_, err := tbl.Update(ctx, delta.TxnOptions{Operation: "ADD COLUMNS"}, func(tx *delta.Transaction) error {
		snap := tx.Snapshot()
		m := snap.Metadata()
		sch, err := schema.Parse(m.SchemaString)
		if err != nil {
			return err
		}
		maxID, _ := snap.Config().MaxColumnID()
		phys := "col-extra"
		f.Metadata = schema.Metadata{
			{Key: schema.MetadataColumnMappingID, Value: []byte(strconv.FormatInt(maxID+1, 10))},
			{Key: schema.MetadataPhysicalName, Value: []byte(strconv.Quote(phys))},
			{Key: schema.MetadataNestedIDs, Value: []byte(`{"` + phys + `.element":` + strconv.FormatInt(maxID+2, 10) + `}`)},
		}
		sch.Fields = append(sch.Fields, f)
		raw, err := sch.MarshalJSON()
		if err != nil {
			return err
		}
		conf := map[string]string{}
		for k, v := range m.Configuration {
			conf[k] = v
		}
		conf[tableconfig.KeyColumnMappingMaxColumnID] = strconv.FormatInt(maxID+2, 10)
		m.SchemaString, m.Configuration = string(raw), conf
		tx.SetMetadata(m)
		return nil
	})
	if err != nil {
		t.Fatalf("adding column %s: %v", f.Name, err)
	}
}

package iceberggo_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
)

// TestIcebergGoReadsNested: struct, array and map columns, whose Parquet
// fields (list elements, map keys and values included) carry the ids of
// Iceberg's schema, read the same through iceberg-go.
func TestIcebergGoReadsNested(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	point := &schema.StructType{Fields: []schema.StructField{
		{Name: "x", Type: schema.Integer, Nullable: true}, {Name: "label", Type: schema.String, Nullable: true},
	}}
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.Long},
		{Name: "pt", Type: point, Nullable: true},
		{Name: "xs", Type: &schema.ArrayType{ElementType: schema.Long, ContainsNull: true}, Nullable: true},
		{Name: "m", Type: &schema.MapType{KeyType: schema.String, ValueType: schema.Integer, ValueContainsNull: true}, Nullable: true},
	}}
	tbl, err := delta.Create(ctx, "file://"+dir, delta.TableSpec{Schema: sch,
		Properties: map[string]string{tableconfig.KeyUniversalFormatEnabledFormats: "iceberg"}})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	var rows [][]schema.Value
	for n := range int64(6) {
		r := []schema.Value{
			schema.LongValue(n),
			schema.StructValue([]schema.Value{schema.IntegerValue(int32(n * 2)), schema.StringValue("p" + strconv.FormatInt(n, 10))}),
			schema.ArrayValue([]schema.Value{schema.LongValue(n), schema.Value{}, schema.LongValue(n * 10)}),
			schema.MapValue([]schema.Value{schema.StringValue("a"), schema.IntegerValue(int32(n)), schema.StringValue("b"), schema.Value{}}),
		}
		if n == 3 {
			r[1], r[2], r[3] = schema.Value{}, schema.Value{}, schema.Value{}
		}
		rows = append(rows, r)
	}
	if _, err := tbl.AppendRows(ctx, rows, delta.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s, err := tbl.Scan(snap, delta.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for r, err := range s.Rows(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		var parts []string
		for j, v := range r.Values() {
			parts = append(parts, nestedDelta(r.Schema().Fields[j].Type, v))
		}
		want = append(want, strings.Join(parts, " "))
	}
	slices.Sort(want)

	st, err := tbl.IcebergStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	it, err := table.NewFromLocation(ctx, table.Identifier{"nested"}, st.MetadataLocation, icebergio.LoadFSFunc(nil, st.MetadataLocation), nil)
	if err != nil {
		t.Fatal(err)
	}
	at, err := it.Scan().ToArrowTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	rd := array.NewTableReader(at, 1024)
	defer rd.Release()
	var got []string
	for rd.Next() {
		rec := rd.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			var parts []string
			for _, f := range sch.Fields {
				idx := rec.Schema().FieldIndices(f.Name)
				if len(idx) != 1 {
					t.Fatalf("no column %s in %s", f.Name, rec.Schema())
				}
				parts = append(parts, nestedArrow(t, rec.Column(idx[0]), i))
			}
			got = append(got, strings.Join(parts, " "))
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("iceberg-go read\n%q\nDelta\n%q", got, want)
	}
}

func nestedDelta(t schema.DataType, v schema.Value) string {
	if v.IsNull() {
		return "NULL"
	}
	switch t := t.(type) {
	case *schema.StructType:
		var parts []string
		for j, fv := range v.Fields() {
			parts = append(parts, nestedDelta(t.Fields[j].Type, fv))
		}
		return "{" + strings.Join(parts, ",") + "}"
	case *schema.ArrayType:
		var parts []string
		for _, e := range v.Elements() {
			parts = append(parts, nestedDelta(t.ElementType, e))
		}
		return "[" + strings.Join(parts, ",") + "]"
	case *schema.MapType:
		var parts []string
		for i := range v.MapLen() {
			k, val := v.MapEntry(i)
			parts = append(parts, nestedDelta(t.KeyType, k)+":"+nestedDelta(t.ValueType, val))
		}
		return "<" + strings.Join(parts, ",") + ">"
	}
	return renderDelta(t, v)
}

func nestedArrow(t *testing.T, col arrow.Array, i int) string {
	if col.IsNull(i) {
		return "NULL"
	}
	switch a := col.(type) {
	case *array.Struct:
		var parts []string
		for j := 0; j < a.NumField(); j++ {
			parts = append(parts, nestedArrow(t, a.Field(j), i))
		}
		return "{" + strings.Join(parts, ",") + "}"
	case *array.Map:
		start, end := a.ValueOffsets(i)
		var parts []string
		for k := start; k < end; k++ {
			parts = append(parts, nestedArrow(t, a.Keys(), int(k))+":"+nestedArrow(t, a.Items(), int(k)))
		}
		return "<" + strings.Join(parts, ",") + ">"
	case *array.List:
		start, end := a.ValueOffsets(i)
		var parts []string
		for k := start; k < end; k++ {
			parts = append(parts, nestedArrow(t, a.ListValues(), int(k)))
		}
		return "[" + strings.Join(parts, ",") + "]"
	case *array.LargeList:
		start, end := a.ValueOffsets(i)
		var parts []string
		for k := start; k < end; k++ {
			parts = append(parts, nestedArrow(t, a.ListValues(), int(k)))
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	return renderArrow(t, col, i)
}

package deltaarrow_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/deltaarrow"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/testutil"
)

// The all-types tables of the corpus, and tables with partition columns,
// column mapping, deletion vectors and variants.
var corpusTables = []string{
	"golden/parquet-all-types/delta",
	"golden/parquet-all-types-legacy-format/delta",
	"golden/data-skipping-basic-stats-all-types/delta",
	"golden/data-skipping-basic-stats-all-types-columnmapping-id/delta",
	"golden/table-with-columnmapping-mode-name/delta",
	"golden/data-reader-partition-values/delta",
	"golden/data-reader-map/delta",
	"golden/data-reader-array-primitives/delta",
	"golden/decimal-various-scale-precision/delta",
	"golden/data-reader-timestamp_ntz/delta",
	"kernel-rs/stats-writing-all-types/delta",
	"kernel-rs/table-with-dv-small",
	"kernel-rs/unshredded-variant",
}

// rowStrings is the display form of every row: one string per row, the
// cells' Value.String joined, sorted so that rows compare as a multiset.
func rowStrings(b []schema.Batch) []string {
	var out []string
	for _, bt := range b {
		for i := range bt.Len {
			cells := make([]string, len(bt.Columns))
			for j, c := range bt.Columns {
				if c[i].IsNull() {
					cells[j] = "NULL"
				} else {
					cells[j] = c[i].String()
				}
			}
			out = append(out, strings.Join(cells, " | "))
		}
	}
	slices.Sort(out)
	return out
}

// rowScan is the row scan of the table, the reference.
func rowScan(t *testing.T, tb *delta.Table) (*schema.StructType, []schema.Batch) {
	t.Helper()
	ctx := context.Background()
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s, err := tb.Scan(snap, delta.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []schema.Batch
	for b, err := range s.Batches(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, *b.Clone())
	}
	return s.Schema(), out
}

// arrowScan reads the table through Arrow and converts each record back.
func arrowScan(t *testing.T, tb *delta.Table) (*arrow.Schema, []arrow.RecordBatch, []schema.Batch) {
	t.Helper()
	ctx := context.Background()
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// nil: the package's recycling allocator, as most callers use it.
	r, err := deltaarrow.Scan(ctx, tb, snap, delta.ScanOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	var recs []arrow.RecordBatch
	var out []schema.Batch
	for r.Next() {
		rec := r.RecordBatch()
		if err := array.RecordEqual(rec, rec); !err {
			t.Fatal("record not equal to itself")
		}
		b, err := deltaarrow.FromRecord(snap.Schema(), rec)
		if err != nil {
			t.Fatal(err)
		}
		rec.Retain()
		recs = append(recs, rec)
		out = append(out, b)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return r.Schema(), recs, out
}

func TestCorpusRoundTrip(t *testing.T) {
	dir := testutil.CorpusDir(t)
	ctx := context.Background()
	for _, name := range corpusTables {
		t.Run(name, func(t *testing.T) {
			tb, err := delta.Open(ctx, filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			sch, want := rowScan(t, tb)
			as, recs, got := arrowScan(t, tb)
			defer func() {
				for _, r := range recs {
					r.Release()
				}
			}()
			wantRows, gotRows := rowStrings(want), rowStrings(got)
			if len(wantRows) == 0 {
				t.Fatal("table has no rows: the test would assert nothing")
			}
			if !slices.Equal(wantRows, gotRows) {
				t.Fatalf("arrow scan differs from the row scan:\nwant %q\ngot  %q", head(wantRows), head(gotRows))
			}
			checkTypes(t, sch, as)
			// Small batches, each record released before the next, so that
			// the recycling allocator hands the next record the last one's
			// buffers: nothing of it may show through.
			if got := rowStrings(smallBatches(t, tb)); !slices.Equal(wantRows, got) {
				t.Fatalf("arrow scan in small batches differs:\nwant %q\ngot  %q", head(wantRows), head(got))
			}

			// Write the records to a new table of the same schema and
			// read it back: the rows are the same.
			out, err := delta.Create(ctx, t.TempDir(), delta.TableSpec{Schema: sch})
			if err != nil {
				t.Fatal(err)
			}
			defer out.Close()
			rr, err := array.NewRecordReader(as, recs)
			if err != nil {
				t.Fatal(err)
			}
			defer rr.Release()
			if _, err := deltaarrow.Append(ctx, out, rr, delta.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			_, back := rowScan(t, out)
			if backRows := rowStrings(back); !slices.Equal(wantRows, backRows) {
				t.Fatalf("rows written through arrow differ:\nwant %q\ngot  %q", head(wantRows), head(backRows))
			}
		})
	}
}

// smallBatches reads the table through Arrow in batches of 3 rows,
// converting each record back and releasing it before the next.
func smallBatches(t *testing.T, tb *delta.Table) []schema.Batch {
	t.Helper()
	ctx := context.Background()
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, err := deltaarrow.Scan(ctx, tb, snap, delta.ScanOptions{BatchSize: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	var out []schema.Batch
	for r.Next() {
		b, err := deltaarrow.FromRecord(snap.Schema(), r.RecordBatch())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func head(s []string) []string { return s[:min(len(s), 3)] }

// checkTypes checks the Arrow type of every column against the mapping the
// package doc gives, written out here independently.
func checkTypes(t *testing.T, sch *schema.StructType, as *arrow.Schema) {
	t.Helper()
	if as.NumFields() != len(sch.Fields) {
		t.Fatalf("arrow schema has %d fields, table %d", as.NumFields(), len(sch.Fields))
	}
	for i, f := range sch.Fields {
		af := as.Field(i)
		if af.Name != f.Name || af.Nullable != f.Nullable {
			t.Errorf("field %d: arrow %s nullable %v, table %s nullable %v", i, af.Name, af.Nullable, f.Name, f.Nullable)
		}
		checkType(t, f.Name, f.Type, af.Type)
	}
}

func checkType(t *testing.T, path string, dt schema.DataType, at arrow.DataType) {
	t.Helper()
	want := map[schema.PrimitiveType]string{
		schema.Boolean: "bool", schema.Byte: "int8", schema.Short: "int16", schema.Integer: "int32",
		schema.Long: "int64", schema.Float: "float32", schema.Double: "float64", schema.String: "utf8",
		schema.Binary: "binary", schema.Date: "date32", schema.Timestamp: "timestamp[us, tz=UTC]",
		schema.TimestampNTZ: "timestamp[us]", schema.Void: "null",
		schema.Variant: "struct<metadata: binary, value: binary>",
	}
	switch dt := dt.(type) {
	case schema.PrimitiveType:
		if at.String() != want[dt] {
			t.Errorf("%s: %s maps to %s, want %s", path, dt, at, want[dt])
		}
	case schema.DecimalType:
		d, ok := at.(*arrow.Decimal128Type)
		if !ok || int(d.Precision) != dt.Precision || int(d.Scale) != dt.Scale {
			t.Errorf("%s: %s maps to %s", path, dt, at)
		}
	case *schema.StructType:
		st, ok := at.(*arrow.StructType)
		if !ok || st.NumFields() != len(dt.Fields) {
			t.Fatalf("%s: %s maps to %s", path, dt, at)
		}
		for i, f := range dt.Fields {
			checkType(t, path+"."+f.Name, f.Type, st.Field(i).Type)
		}
	case *schema.ArrayType:
		lt, ok := at.(*arrow.ListType)
		if !ok || lt.ElemField().Nullable != dt.ContainsNull {
			t.Fatalf("%s: %s maps to %s", path, dt, at)
		}
		checkType(t, path+".element", dt.ElementType, lt.Elem())
	case *schema.MapType:
		mt, ok := at.(*arrow.MapType)
		if !ok || mt.ItemField().Nullable != dt.ValueContainsNull {
			t.Fatalf("%s: %s maps to %s", path, dt, at)
		}
		checkType(t, path+".key", dt.KeyType, mt.KeyType())
		checkType(t, path+".value", dt.ValueType, mt.ItemType())
	}
}

// TestArrowProgram is a program that speaks only arrow-go: it builds
// records with arrow builders, appends them, overwrites, and reads them
// back with a projection and a predicate.
func TestArrowProgram(t *testing.T) {
	ctx := context.Background()
	sch, err := schema.ParseDDL("id BIGINT NOT NULL, name STRING, price DECIMAL(10,2), at TIMESTAMP, day DATE, tags ARRAY<STRING>, part STRING")
	if err != nil {
		t.Fatal(err)
	}
	tb, err := delta.Create(ctx, t.TempDir(), delta.TableSpec{Schema: sch, PartitionColumns: []string{"part"}})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()

	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	// The program's own schema: columns in another order, names in
	// another case, timestamps in milliseconds in another zone.
	as := arrow.NewSchema([]arrow.Field{
		{Name: "PART", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "id", Type: arrow.PrimitiveTypes.Int32},
		{Name: "name", Type: arrow.BinaryTypes.LargeString, Nullable: true},
		{Name: "price", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true},
		{Name: "at", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "Europe/Paris"}, Nullable: true},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
	}, nil)
	const n = 1000
	bld := array.NewRecordBuilder(mem, as)
	defer bld.Release()
	for i := range n {
		bld.Field(0).(*array.StringBuilder).Append([]string{"a", "b", "c"}[i%3])
		bld.Field(1).(*array.Int32Builder).Append(int32(i))
		if i%10 == 0 {
			bld.Field(2).AppendNull()
		} else {
			bld.Field(2).(*array.LargeStringBuilder).Append("name-" + string(rune('a'+i%26)))
		}
		bld.Field(3).(*array.Decimal128Builder).Append(decimal128FromInt(int64(i*100 + 99)))
		bld.Field(4).(*array.TimestampBuilder).Append(arrow.Timestamp(int64(i) * 1000))
		lb := bld.Field(5).(*array.ListBuilder)
		lb.Append(true)
		for k := range i % 3 {
			lb.ValueBuilder().(*array.StringBuilder).Append(strings.Repeat("x", k+1))
		}
	}
	rec := bld.NewRecordBatch()
	defer rec.Release()
	rr, err := array.NewRecordReader(as, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	if _, err := deltaarrow.Append(ctx, tb, rr, delta.WriteOptions{}); err != nil {
		t.Fatal(err)
	}

	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pred, err := delta.ParsePredicate("part = 'b' AND id >= 500")
	if err != nil {
		t.Fatal(err)
	}
	r, err := deltaarrow.Scan(ctx, tb, snap, delta.ScanOptions{Columns: []string{"id", "price", "at", "tags", "day"}, Predicate: pred}, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	var ids []int64
	for r.Next() {
		rec := r.RecordBatch()
		idc := rec.Column(0).(*array.Int64)
		price := rec.Column(1).(*array.Decimal128)
		at := rec.Column(2).(*array.Timestamp)
		tags := rec.Column(3).(*array.List)
		day := rec.Column(4)
		for i := range int(rec.NumRows()) {
			id := idc.Value(i)
			ids = append(ids, id)
			if got := price.Value(i).LowBits(); got != uint64(id*100+99) {
				t.Errorf("id %d: price %d", id, got)
			}
			if got := int64(at.Value(i)); got != id*1000*1000 {
				t.Errorf("id %d: at %d µs, want %d", id, got, id*1_000_000)
			}
			s, e := tags.ValueOffsets(i)
			if e-s != id%3 {
				t.Errorf("id %d: %d tags", id, e-s)
			}
			if !day.IsNull(i) {
				t.Errorf("id %d: day not null, the records lacked it", id)
			}
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	var want []int64
	for i := range int64(n) {
		if i%3 == 1 && i >= 500 {
			want = append(want, i)
		}
	}
	slices.Sort(ids)
	if !slices.Equal(ids, want) {
		t.Fatalf("ids %v, want %v", head64(ids), head64(want))
	}
	if typ := r.Schema().Field(2).Type.String(); typ != "timestamp[us, tz=UTC]" {
		t.Errorf("at is %s", typ)
	}

	// Overwrite with the first 10 rows only.
	small := rec.NewSlice(0, 10)
	defer small.Release()
	rr2, err := array.NewRecordReader(as, []arrow.RecordBatch{small})
	if err != nil {
		t.Fatal(err)
	}
	defer rr2.Release()
	if _, err := deltaarrow.Overwrite(ctx, tb, rr2, delta.OverwriteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, rows := rowScan(t, tb)
	if got := len(rowStrings(rows)); got != 10 {
		t.Fatalf("%d rows after overwrite, want 10", got)
	}
}

func head64(s []int64) []int64 { return s[:min(len(s), 5)] }

func TestSchemaErrors(t *testing.T) {
	ctx := context.Background()
	sch, err := schema.ParseDDL("id BIGINT NOT NULL, at TIMESTAMP, ntz TIMESTAMP_NTZ, d DECIMAL(5,2), s STRUCT<a: INT>")
	if err != nil {
		t.Fatal(err)
	}
	f := func(name string, typ arrow.DataType) arrow.Field {
		return arrow.Field{Name: name, Type: typ, Nullable: true}
	}
	id := arrow.Field{Name: "id", Type: arrow.PrimitiveTypes.Int64}
	cases := []struct {
		name   string
		fields []arrow.Field
		column string
	}{
		{"extra column", []arrow.Field{id, f("nope", arrow.PrimitiveTypes.Int64)}, "nope"},
		{"missing NOT NULL", []arrow.Field{f("at", &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"})}, "id"},
		{"wider int", []arrow.Field{f("id", arrow.PrimitiveTypes.Uint64)}, "id"},
		{"string for long", []arrow.Field{f("id", arrow.BinaryTypes.String)}, "id"},
		{"ntz for timestamp", []arrow.Field{id, f("at", &arrow.TimestampType{Unit: arrow.Microsecond})}, "at"},
		{"zoned for ntz", []arrow.Field{id, f("ntz", &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"})}, "ntz"},
		{"decimal scale", []arrow.Field{id, f("d", &arrow.Decimal128Type{Precision: 5, Scale: 3})}, "d"},
		{"decimal precision", []arrow.Field{id, f("d", &arrow.Decimal128Type{Precision: 6, Scale: 2})}, "d"},
		{"nested extra", []arrow.Field{id, f("s", arrow.StructOf(f("a", arrow.PrimitiveTypes.Int32), f("b", arrow.PrimitiveTypes.Int32)))}, "s.b"},
		{"nested type", []arrow.Field{id, f("s", arrow.StructOf(f("a", arrow.PrimitiveTypes.Float64)))}, "s.a"},
	}
	tb, err := delta.Create(ctx, t.TempDir(), delta.TableSpec{Schema: sch})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			as := arrow.NewSchema(c.fields, nil)
			rr, err := array.NewRecordReader(as, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer rr.Release()
			_, err = deltaarrow.Append(ctx, tb, rr, delta.WriteOptions{})
			var se *deltaarrow.SchemaError
			if !errors.As(err, &se) || !errors.Is(err, deltaarrow.ErrSchemaMismatch) || !errors.Is(err, deltaerr.ErrInvalidArgument) {
				t.Fatalf("err = %v, want a *SchemaError", err)
			}
			if se.Column != c.column {
				t.Fatalf("error names %q, want %q: %v", se.Column, c.column, err)
			}
		})
	}
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Version() != 0 {
		t.Fatalf("a refused append committed version %d", snap.Version())
	}
}

package scan_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/schema/variant"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/testutil"
)

// Nanosecond timestamps: INT64 TIMESTAMP(NANOS) under timestamp and
// timestamp_ntz columns (pandas, arrow and delta-rs write them), and a
// shredded variant: a table of one file holding both, written with
// parquet-go, read end to end.
const (
	typesTS1 = 1_700_000_000_123_456_789 // 2023-11-14T22:13:20.123456789Z
	typesTS2 = -1_500                    // 1969-12-31T23:59:59.9999985Z: floors to -2µs
)

// typesTable commits a table with columns id, v (variant), ts and ntz,
// and one file whose v is shredded as an object {a: long} and whose
// timestamps are in nanoseconds.
func typesTable(t *testing.T, store logstore.Store) *snapshot.Snapshot {
	t.Helper()
	meta := variant.AppendMetadata(nil, []string{"a", "b"})
	vfield := parquet.Group{"value": parquet.Optional(parquet.Leaf(parquet.ByteArrayType)),
		"typed_value": parquet.Optional(parquet.Int(64))}
	root := parquet.Group{
		"id": parquet.Int(64),
		"v": parquet.Optional(parquet.Group{
			"metadata":    parquet.Leaf(parquet.ByteArrayType),
			"value":       parquet.Optional(parquet.Leaf(parquet.ByteArrayType)),
			"typed_value": parquet.Optional(parquet.Group{"a": vfield}),
		}),
		"ts":  parquet.Optional(parquet.TimestampAdjusted(parquet.Nanosecond, true)),
		"ntz": parquet.Optional(parquet.TimestampAdjusted(parquet.Nanosecond, false)),
	}
	residual, err := variant.AppendObject(nil, []variant.Field{{Name: "b", ID: 1, Value: variant.AppendString(nil, "x")}})
	if err != nil {
		t.Fatal(err)
	}
	rows := []map[string]any{
		{"id": int64(1), "ts": int64(typesTS1), "ntz": int64(-1),
			"v": map[string]any{"metadata": meta, "value": residual,
				"typed_value": map[string]any{"a": map[string]any{"value": nil, "typed_value": int64(7)}}}},
		{"id": int64(2), "ts": int64(typesTS2), "ntz": nil,
			"v": map[string]any{"metadata": meta, "value": []byte{0}, "typed_value": nil}},
	}
	var buf bytes.Buffer
	w := parquet.NewWriter(&buf, parquet.NewSchema("spark_schema", root))
	for _, r := range rows {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := store.Put(context.Background(), "f.parquet", buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	features := []string{"variantType", "variantShredding", "timestampNtz"}
	p := actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: features, WriterFeatures: features}
	newTable(t, store, p, structJSON(fieldJSON("id", `"long"`, ""), fieldJSON("v", `"variant"`, ""),
		fieldJSON("ts", `"timestamp"`, ""), fieldJSON("ntz", `"timestamp_ntz"`, "")), nil, nil)
	// Stats as a writer keeping nanoseconds would write them.
	stats := `{"numRecords":2,"minValues":{"id":1,"ts":"1969-12-31T23:59:59.9999985Z","ntz":"1969-12-31T23:59:59.999999999"},` +
		`"maxValues":{"id":2,"ts":"2023-11-14T22:13:20.123456789Z","ntz":"1969-12-31T23:59:59.999999999"},"nullCount":{"id":0,"v":0,"ts":0,"ntz":1}}`
	return commitAndLoad(t, store, 1, []actions.Action{{Add: &actions.Add{Path: "f.parquet", Size: int64(buf.Len()),
		DataChange: true, Stats: stats}}})
}

func TestShreddedVariantAndNanos(t *testing.T) {
	snap := typesTable(t, memory.New())
	meta := variant.AppendMetadata(nil, []string{"a", "b"})
	obj, err := variant.AppendObject(nil, []variant.Field{
		{Name: "a", ID: 0, Value: variant.AppendInt(nil, variant.TypeInt64, 7)},
		{Name: "b", ID: 1, Value: variant.AppendString(nil, "x")},
	})
	if err != nil {
		t.Fatal(err)
	}
	hexOf := func(b []byte) string { return schema.BinaryValue(b).String() }
	all := []string{
		"1 {" + hexOf(meta) + ", " + hexOf(obj) + "} 2023-11-14T22:13:20.123456Z 1969-12-31T23:59:59.999999",
		"2 {" + hexOf(meta) + ", 00} 1969-12-31T23:59:59.999998Z null",
	}
	// files is how many files the stats (in nanoseconds) leave to read.
	cases := []struct {
		pred  string
		want  []string
		files int
	}{
		{"", all, 1},
		{"ts = TIMESTAMP '2023-11-14T22:13:20.123456Z'", all[:1], 1},
		{"ts < TIMESTAMP '1970-01-01T00:00:00Z'", all[1:], 1},
		{"ntz IS NULL", all[1:], 1},
		{"ts > TIMESTAMP '2024-01-01T00:00:00Z'", nil, 0},
		{"ts < TIMESTAMP '1969-12-31T23:59:59Z'", nil, 0},
	}
	for _, c := range cases {
		t.Run(c.pred, func(t *testing.T) {
			opts := scan.Options{}
			if c.pred != "" {
				p, err := expr.Parse(c.pred)
				if err != nil {
					t.Fatal(err)
				}
				opts.Predicate = p
			}
			s, err := scan.New(snap, opts)
			if err != nil {
				t.Fatal(err)
			}
			files := 0
			for _, err := range s.Files(context.Background()) {
				if err != nil {
					t.Fatal(err)
				}
				files++
			}
			if files != c.files {
				t.Errorf("%d files to read, want %d", files, c.files)
			}
			var got []string
			for row, err := range s.Rows(context.Background()) {
				if err != nil {
					t.Fatal(err)
				}
				var parts []string
				for _, name := range []string{"id", "v", "ts", "ntz"} {
					v, _ := row.Get(name)
					parts = append(parts, v.String())
				}
				got = append(got, strings.Join(parts, " "))
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Fatalf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

// TestCorpusSparkVariants compares every variant Spark wrote in the
// corpus's spark-shredded-variant-preview-delta (a variantShredding-preview
// table whose files hold unshredded variants, at the top level and in
// arrays, structs and maps) with the value encoded directly by package
// variant: row id holds {"key": id}, id an int8. It pins the object and
// metadata encoding of package variant to Spark's bytes.
func TestCorpusSparkVariants(t *testing.T) {
	store, err := local.New(filepath.Join(testutil.CorpusDir(t), "delta-rs/spark-shredded-variant-preview-delta"))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.Load(context.Background(), store, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	s, err := scan.New(snap, scan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	meta := variant.AppendMetadata(nil, []string{"key"})
	meta[0] &^= 1 << 4 // Spark leaves sorted_strings unset
	rows, variants := 0, 0
	for row, err := range s.Rows(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		rows++
		id, _ := row.Get("id")
		want, err := variant.AppendObject(nil, []variant.Field{{Name: "key", Value: variant.AppendInt(nil, variant.TypeInt8, id.Int64())}})
		if err != nil {
			t.Fatal(err)
		}
		var check func(v schema.Value, typ schema.DataType)
		check = func(v schema.Value, typ schema.DataType) {
			if v.IsNull() {
				return
			}
			switch typ := typ.(type) {
			case *schema.StructType:
				for i, f := range v.Fields() {
					check(f, typ.Fields[i].Type)
				}
			case *schema.ArrayType:
				for _, e := range v.Elements() {
					check(e, typ.ElementType)
				}
			case *schema.MapType:
				for i := range v.MapLen() {
					_, mv := v.MapEntry(i)
					check(mv, typ.ValueType)
				}
			default:
				if typ != schema.Variant {
					return
				}
				variants++
				f := v.Fields()
				if !bytes.Equal(f[0].Bytes(), meta) || !bytes.Equal(f[1].Bytes(), want) {
					t.Fatalf("row %d: variant {% x, % x}, want {% x, % x}", id.Int64(), f[0].Bytes(), f[1].Bytes(), meta, want)
				}
			}
		}
		for _, f := range s.Schema().Fields {
			v, _ := row.Get(f.Name)
			check(v, f.Type)
		}
	}
	if rows != 102 || variants != 1020 {
		t.Fatalf("%d rows, %d variants compared", rows, variants)
	}
}

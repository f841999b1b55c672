package deltaarrow_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/schema/variant"
)

// localTable writes, in a new directory, a table of version 0 with the
// given protocol and schema (JSON, as the log holds them) and one data
// file of rows written with parquet-go; edit, if set, changes the file's
// schema elements before the footer is written.
func localTable(t *testing.T, protocol, schemaJSON string, root parquet.Group, rows []map[string]any, edit func(*format.FileMetaData)) *delta.Table {
	t.Helper()
	dir := t.TempDir()
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
	data := buf.Bytes()
	if edit != nil {
		data = editFooter(t, data, edit)
	}
	if err := os.WriteFile(filepath.Join(dir, "f.parquet"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	log := `{"protocol":` + protocol + "}\n" +
		`{"metaData":{"id":"t","format":{"provider":"parquet","options":{}},"schemaString":` + strconv.Quote(schemaJSON) +
		`,"partitionColumns":[],"configuration":{},"createdTime":0}}` + "\n" +
		`{"add":{"path":"f.parquet","partitionValues":{},"size":` + strconv.Itoa(len(data)) + `,"modificationTime":0,"dataChange":true}}` + "\n"
	if err := os.MkdirAll(filepath.Join(dir, "_delta_log"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "_delta_log", "00000000000000000000.json"), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	tb, err := delta.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	return tb
}

// editFooter rewrites a Parquet file's footer after edit.
func editFooter(t *testing.T, b []byte, edit func(*format.FileMetaData)) []byte {
	t.Helper()
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	md := *f.Metadata()
	edit(&md)
	meta, err := thrift.Marshal(new(thrift.CompactProtocol), &md)
	if err != nil {
		t.Fatal(err)
	}
	n := len(b)
	flen := int(binary.LittleEndian.Uint32(b[n-8:]))
	out := append([]byte(nil), b[:n-8-flen]...)
	out = append(out, meta...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(meta)))
	return append(out, "PAR1"...)
}

// scanOne reads the table through Arrow into one record.
func scanOne(t *testing.T, tb *delta.Table) arrow.RecordBatch {
	t.Helper()
	_, recs, _ := arrowScan(t, tb)
	t.Cleanup(func() {
		for _, r := range recs {
			r.Release()
		}
	})
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	return recs[0]
}

// TestShreddedVariantAndNanos reads, through Arrow, a table whose one
// file holds a shredded variant and timestamps in nanoseconds: the variant
// arrives as the struct of metadata and the value put back together, the
// timestamps in microseconds, floored.
func TestShreddedVariantAndNanos(t *testing.T) {
	meta := variant.AppendMetadata(nil, nil)
	root := parquet.Group{
		"id": parquet.Int(64),
		"v": parquet.Optional(parquet.Group{
			"metadata":    parquet.Leaf(parquet.ByteArrayType),
			"value":       parquet.Optional(parquet.Leaf(parquet.ByteArrayType)),
			"typed_value": parquet.Optional(parquet.String()),
		}),
		"ts": parquet.Optional(parquet.TimestampAdjusted(parquet.Nanosecond, true)),
	}
	rows := []map[string]any{
		{"id": int64(1), "ts": int64(1_700_000_000_123_456_789), "v": map[string]any{"metadata": meta, "value": nil, "typed_value": "hi"}},
		{"id": int64(2), "ts": int64(-1), "v": map[string]any{"metadata": meta, "value": []byte{0x0c, 0x05}, "typed_value": nil}},
	}
	tb := localTable(t,
		`{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["variantType","variantShredding"],"writerFeatures":["variantType","variantShredding"]}`,
		`{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{}},{"name":"v","type":"variant","nullable":true,"metadata":{}},{"name":"ts","type":"timestamp","nullable":true,"metadata":{}}]}`,
		root, rows, nil)
	rec := scanOne(t, tb)
	vals := rec.Column(1).(*array.Struct).Field(1).(*array.Binary)
	metas := rec.Column(1).(*array.Struct).Field(0).(*array.Binary)
	ts := rec.Column(2).(*array.Timestamp)
	if u := rec.Schema().Field(2).Type.(*arrow.TimestampType).Unit; u != arrow.Microsecond {
		t.Fatalf("ts unit %v", u)
	}
	wantV := [][]byte{variant.AppendString(nil, "hi"), {0x0c, 0x05}}
	wantTS := []arrow.Timestamp{1_700_000_000_123_456, -1}
	for i := range 2 {
		if !bytes.Equal(vals.Value(i), wantV[i]) || !bytes.Equal(metas.Value(i), meta) {
			t.Errorf("row %d: variant {% x, % x}, want {% x, % x}", i, metas.Value(i), vals.Value(i), meta, wantV[i])
		}
		if ts.Value(i) != wantTS[i] {
			t.Errorf("row %d: ts %d, want %d", i, ts.Value(i), wantTS[i])
		}
	}
}

// TestGeospatial reads the geometry and geography columns of the
// corpus's kernel-rs/table-with-geo schema from a file (the corpus table
// has only a log; the library's writer refuses geospatial columns) as
// Arrow binaries holding the WKB.
func TestGeospatial(t *testing.T) {
	point := []byte{1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0x40} // POINT(1 2)
	root := parquet.Group{
		"geom": parquet.Optional(parquet.Leaf(parquet.ByteArrayType)),
		"geog": parquet.Optional(parquet.Leaf(parquet.ByteArrayType)),
	}
	rows := []map[string]any{{"geom": point, "geog": point}, {"geom": nil, "geog": point}}
	annotate := func(md *format.FileMetaData) {
		for i := range md.Schema {
			switch md.Schema[i].Name {
			case "geom":
				md.Schema[i].LogicalType = format.LogicalType{Value: &format.GeometryType{CRS: "OGC:CRS84"}}
			case "geog":
				md.Schema[i].LogicalType = format.LogicalType{Value: &format.GeographyType{CRS: "OGC:CRS84"}}
			}
		}
	}
	tb := localTable(t,
		`{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["geospatial"],"writerFeatures":["geospatial"]}`,
		`{"type":"struct","fields":[{"name":"geom","type":"geometry(OGC:CRS84)","nullable":true,"metadata":{}},{"name":"geog","type":"geography(OGC:CRS84, spherical)","nullable":true,"metadata":{}}]}`,
		root, rows, annotate)
	rec := scanOne(t, tb)
	geom, geog := rec.Column(0).(*array.Binary), rec.Column(1).(*array.Binary)
	if !bytes.Equal(geom.Value(0), point) || !geom.IsNull(1) || !bytes.Equal(geog.Value(0), point) || !bytes.Equal(geog.Value(1), point) {
		t.Fatalf("geom %v, geog %v", geom, geog)
	}
}

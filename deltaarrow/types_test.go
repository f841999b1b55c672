package deltaarrow_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/parquet-go/parquet-go"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/schema/variant"
)

// TestShreddedVariantAndNanos reads, through Arrow, a table whose one
// file (written with parquet-go) holds a shredded variant and timestamps
// in nanoseconds: the variant arrives as the struct of metadata and the
// value put back together, the timestamps in microseconds, floored.
func TestShreddedVariantAndNanos(t *testing.T) {
	dir := t.TempDir()
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
	if err := os.WriteFile(filepath.Join(dir, "f.parquet"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	log := `{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["variantType","variantShredding"],"writerFeatures":["variantType","variantShredding"]}}
{"metaData":{"id":"t","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\",\"nullable\":false,\"metadata\":{}},{\"name\":\"v\",\"type\":\"variant\",\"nullable\":true,\"metadata\":{}},{\"name\":\"ts\",\"type\":\"timestamp\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":[],"configuration":{},"createdTime":0}}
{"add":{"path":"f.parquet","partitionValues":{},"size":` + strconv.Itoa(buf.Len()) + `,"modificationTime":0,"dataChange":true}}
`
	if err := os.MkdirAll(filepath.Join(dir, "_delta_log"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "_delta_log", "00000000000000000000.json"), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tb, err := delta.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	_, recs, _ := arrowScan(t, tb)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	if len(recs) != 1 || recs[0].NumRows() != 2 {
		t.Fatalf("%d records", len(recs))
	}
	rec := recs[0]
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

package iceberg

import (
	"math/big"
	"testing"

	"github.com/godelta/delta/schema"
)

// TestManifestRoundTrip writes a manifest entry with every partition type
// and reads it back through the generic form that rewriting uses.
func TestManifestRoundTrip(t *testing.T) {
	types := []schema.DataType{schema.Integer, schema.Long, schema.Date, schema.Timestamp, schema.String,
		schema.Binary, schema.Boolean, schema.Float, schema.Double, schema.DecimalType{Precision: 10, Scale: 2}}
	dec, _ := schema.DecimalValue(big.NewInt(-12345), 10, 2)
	vals := []schema.Value{schema.IntegerValue(7), schema.LongValue(8), schema.DateValue(19000), schema.TimestampValue(123456789),
		schema.StringValue("x"), schema.BinaryValue([]byte{1, 2}), schema.BooleanValue(true), schema.FloatValue(1.5), schema.DoubleValue(2.5), dec}
	var fields []map[string]any
	part := map[string]any{}
	for i, typ := range types {
		name := "p" + itoa(int64(i))
		f, branch, err := partitionAvro(name, 1000+i, typ)
		if err != nil {
			t.Fatal(err)
		}
		fields = append(fields, f)
		part[name] = partitionDatum(branch, typ, vals[i])
	}
	_, sch, err := manifestSchema(fields)
	if err != nil {
		t.Fatal(err)
	}
	rec := map[string]any{
		"status": int32(statusAdded), "snapshot_id": unionLong(5), "sequence_number": unionLong(1), "file_sequence_number": unionLong(1),
		"data_file": map[string]any{
			"content": int32(0), "file_path": "file:///x.parquet", "file_format": "PARQUET", "partition": part,
			"record_count": int64(3), "file_size_in_bytes": int64(100),
			"column_sizes": nil, "value_counts": nil, "nan_value_counts": nil, "key_metadata": nil, "split_offsets": nil, "equality_ids": nil, "sort_order_id": nil,
			"null_value_counts": map[string]any{"array": []any{map[string]any{"key": int32(1), "value": int64(0)}}},
			"lower_bounds":      map[string]any{"array": []any{map[string]any{"key": int32(1), "value": []byte{1, 0, 0, 0}}}},
			"upper_bounds":      nil,
		},
	}
	data, err := encodeOCF(sch, map[string]string{"format-version": "2"}, []any{rec})
	if err != nil {
		t.Fatal(err)
	}
	recs, meta, err := decodeOCF("m.avro", data, checkEntry)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || string(meta["format-version"]) != "2" {
		t.Fatalf("got %d records, meta %v", len(recs), meta)
	}
	t.Logf("%#v", recs[0])
	again, err := encodeOCF(sch, nil, []any{recs[0]})
	if err != nil {
		t.Fatalf("re-encoding the decoded record: %v", err)
	}
	_ = again
}

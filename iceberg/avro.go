package iceberg

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"sync"

	"github.com/hamba/avro/v2"
	"github.com/hamba/avro/v2/ocf"

	"github.com/godelta/delta/schema"
)

// The Avro schemas of manifest lists and manifests are those of the
// Iceberg spec's tables ("Manifest Lists", "Manifests"), with each
// field's id as the "field-id" property, maps of column ids as arrays of
// key/value records (logicalType map) and record names as the reference
// implementation gives them (manifest_file, r508, manifest_entry, r2,
// r102, k117_v118, ...), so readers resolve them by name or by id. They
// are part of the format: never change an id.

// Entry and file status and content values (spec: manifest_entry.status,
// data_file.content, manifest_file.content).
const (
	statusExisting = 0
	statusAdded    = 1
	statusDeleted  = 2

	contentData = 0
)

func fld(name string, typ any, id int) map[string]any {
	return map[string]any{"name": name, "type": typ, "field-id": id}
}

func opt(typ any) []any { return []any{"null", typ} }

func optFld(name string, typ any, id int) map[string]any {
	m := fld(name, opt(typ), id)
	m["default"] = nil
	return m
}

func intMap(name string, value any, kid, vid int) map[string]any {
	return map[string]any{
		"type": "array", "logicalType": "map",
		"items": map[string]any{"type": "record", "name": name, "fields": []any{
			fld("key", "int", kid), fld("value", value, vid),
		}},
	}
}

// manifestListSchema returns the v2 manifest_file record (field ids
// 500-519). It is built and checked on first use, not at init, so a program
// that links this package but writes no Iceberg metadata does not pay for
// parsing it at start.
var manifestListSchema = sync.OnceValue(func() string {
	return mustSchema(map[string]any{
		"type": "record", "name": "manifest_file", "fields": []any{
			fld("manifest_path", "string", 500),
			fld("manifest_length", "long", 501),
			fld("partition_spec_id", "int", 502),
			fld("content", "int", 517),
			fld("sequence_number", "long", 515),
			fld("min_sequence_number", "long", 516),
			fld("added_snapshot_id", "long", 503),
			fld("added_files_count", "int", 504),
			fld("existing_files_count", "int", 505),
			fld("deleted_files_count", "int", 506),
			fld("added_rows_count", "long", 512),
			fld("existing_rows_count", "long", 513),
			fld("deleted_rows_count", "long", 514),
			optFld("partitions", map[string]any{
				"type": "array", "element-id": 508,
				"items": map[string]any{"type": "record", "name": "r508", "fields": []any{
					fld("contains_null", "boolean", 509),
					optFld("contains_nan", "boolean", 518),
					optFld("lower_bound", "bytes", 510),
					optFld("upper_bound", "bytes", 511),
				}},
			}, 507),
			optFld("key_metadata", "bytes", 519),
		},
	})
})

// manifestSchema returns the v2 manifest_entry schema for a partition
// record of the given fields (ids 1000 and up).
func manifestSchema(part []map[string]any) (avro.Schema, string, error) {
	partFields := make([]any, len(part))
	for i := range part {
		partFields[i] = part[i]
	}
	dataFile := map[string]any{"type": "record", "name": "r2", "fields": []any{
		fld("content", "int", 134),
		fld("file_path", "string", 100),
		fld("file_format", "string", 101),
		fld("partition", map[string]any{"type": "record", "name": "r102", "fields": partFields}, 102),
		fld("record_count", "long", 103),
		fld("file_size_in_bytes", "long", 104),
		optFld("column_sizes", intMap("k117_v118", "long", 117, 118), 108),
		optFld("value_counts", intMap("k119_v120", "long", 119, 120), 109),
		optFld("null_value_counts", intMap("k121_v122", "long", 121, 122), 110),
		optFld("nan_value_counts", intMap("k138_v139", "long", 138, 139), 137),
		optFld("lower_bounds", intMap("k126_v127", "bytes", 126, 127), 125),
		optFld("upper_bounds", intMap("k129_v130", "bytes", 129, 130), 128),
		optFld("key_metadata", "bytes", 131),
		optFld("split_offsets", map[string]any{"type": "array", "items": "long", "element-id": 133}, 132),
		optFld("equality_ids", map[string]any{"type": "array", "items": "int", "element-id": 136}, 135),
		optFld("sort_order_id", "int", 140),
	}}
	entry := map[string]any{"type": "record", "name": "manifest_entry", "fields": []any{
		fld("status", "int", 0),
		optFld("snapshot_id", "long", 1),
		optFld("sequence_number", "long", 3),
		optFld("file_sequence_number", "long", 4),
		fld("data_file", dataFile, 2),
	}}
	raw, err := json.Marshal(entry)
	if err != nil {
		return nil, "", err
	}
	s, err := parsedSchema(string(raw))
	return s, string(raw), err
}

func mustSchema(m map[string]any) string {
	raw, err := json.Marshal(m)
	if err != nil {
		panic(err) // a literal above; caught by every test
	}
	if _, err := avro.Parse(string(raw)); err != nil {
		panic(fmt.Sprintf("iceberg: bad built-in Avro schema: %v", err))
	}
	return string(raw)
}

// partitionAvro returns the Avro field of one partition field: a union of
// null and the Avro type of its Iceberg type (spec Appendix A).
func partitionAvro(name string, id int, t schema.DataType) (map[string]any, string, error) {
	var typ any
	var branch string
	switch t := t.(type) {
	case schema.DecimalType:
		fname := fmt.Sprintf("decimal_%d_%d", t.Precision, t.Scale)
		typ = map[string]any{"type": "fixed", "name": fname, "size": decimalSize(t.Precision),
			"logicalType": "decimal", "precision": t.Precision, "scale": t.Scale}
		branch = fname
	default:
		switch t {
		case schema.Byte, schema.Short, schema.Integer:
			typ, branch = "int", "int"
		case schema.Long:
			typ, branch = "long", "long"
		case schema.Float:
			typ, branch = "float", "float"
		case schema.Double:
			typ, branch = "double", "double"
		case schema.Boolean:
			typ, branch = "boolean", "boolean"
		case schema.String:
			typ, branch = "string", "string"
		case schema.Binary:
			typ, branch = "bytes", "bytes"
		case schema.Date:
			typ, branch = map[string]any{"type": "int", "logicalType": "date"}, "int.date"
		case schema.Timestamp:
			typ, branch = map[string]any{"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": true}, "long.timestamp-micros"
		case schema.TimestampNTZ:
			typ, branch = map[string]any{"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": false}, "long.timestamp-micros"
		default:
			return nil, "", fmt.Errorf("%w: partition column %s has type %s", ErrNotConvertible, name, t)
		}
	}
	return optFld(name, typ, id), branch, nil
}

// decimalSize is the fewest bytes that hold every unscaled value of a
// decimal of the precision (spec: decimal(P,S) as fixed(minBytesRequired(P))).
func decimalSize(precision int) int {
	limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(precision)), nil)
	for n := 1; ; n++ {
		if new(big.Int).Lsh(big.NewInt(1), uint(8*n-1)).Cmp(limit) >= 0 {
			return n
		}
	}
}

// partitionDatum returns the Avro value of a partition value: nil for
// null, else the union branch holding it.
func partitionDatum(branch string, t schema.DataType, v schema.Value) any {
	if v.IsNull() {
		return nil
	}
	var x any
	switch t := t.(type) {
	case schema.DecimalType:
		unscaled, _, scale := v.Decimal()
		x = new(big.Rat).SetFrac(unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil))
		_ = t
	default:
		switch t {
		case schema.Byte, schema.Short, schema.Integer, schema.Date:
			x = int32(v.Int64())
		case schema.Long, schema.Timestamp, schema.TimestampNTZ:
			x = v.Int64()
		case schema.Float:
			x = float32(v.Float64())
		case schema.Double:
			x = v.Float64()
		case schema.Boolean:
			x = v.Bool()
		case schema.String:
			x = v.String()
		case schema.Binary:
			x = v.Bytes()
		}
	}
	return map[string]any{branch: x}
}

// parsed caches parsed Avro schemas by their JSON: a table's manifests
// share one, and parsing it per file costs more than encoding the file.
var parsed sync.Map // string -> avro.Schema

func parsedSchema(js string) (avro.Schema, error) {
	if s, ok := parsed.Load(js); ok {
		return s.(avro.Schema), nil
	}
	s, err := avro.ParseWithCache(js, "", &avro.SchemaCache{})
	if err != nil {
		return nil, err
	}
	parsed.Store(js, s)
	return s, nil
}

// encodeOCF writes records as an Avro object container file with the
// given schema and key-value metadata, deflate-compressed.
func encodeOCF(schemaJSON string, meta map[string]string, records []any) ([]byte, error) {
	var buf bytes.Buffer
	md := make(map[string][]byte, len(meta))
	for k, v := range meta {
		md[k] = []byte(v)
	}
	sch, err := parsedSchema(schemaJSON)
	if err != nil {
		return nil, err
	}
	enc, err := ocf.NewEncoderWithSchema(sch, &buf, ocf.WithMetadata(md), ocf.WithCodec(ocf.Deflate),
		ocf.WithSchemaMarshaler(ocf.FullSchemaMarshaler)) // keep the field-id properties readers need
	if err != nil {
		return nil, err
	}
	for _, r := range records {
		if err := enc.Encode(r); err != nil {
			return nil, err
		}
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// decodeOCF reads every record of an Avro object container file as
// generic values (records as map[string]any, unions as map[string]any of
// one branch), the form encodeOCF writes back unchanged. The file's
// framing and the size its blocks inflate to are checked first (checkOCF,
// inflateLimit); check, when not nil, is called with each record as it is
// decoded, and stops the reading with its error. Every error is an
// ErrCorruptMetadata that names the file (name) once.
func decodeOCF(name string, data []byte, check func(map[string]any) error) ([]map[string]any, map[string][]byte, error) {
	if err := checkOCF(data, inflateLimit(len(data))); err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %v", ErrCorruptMetadata, name, err)
	}
	dec, err := ocf.NewDecoder(bytes.NewReader(data))
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %v", ErrCorruptMetadata, name, err)
	}
	var out []map[string]any
	for dec.HasNext() {
		var rec map[string]any
		if err := dec.Decode(&rec); err != nil {
			return nil, nil, fmt.Errorf("%w: %s: %v", ErrCorruptMetadata, name, err)
		}
		if check != nil {
			if err := check(rec); err != nil {
				return nil, nil, fmt.Errorf("%w: %s: record %d: %v", ErrCorruptMetadata, name, len(out), err)
			}
		}
		out = append(out, rec)
	}
	if err := dec.Error(); err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %v", ErrCorruptMetadata, name, err)
	}
	return out, dec.Metadata(), nil
}

func unionLong(x int64) any { return map[string]any{"long": x} }

// longOf and intOf read a long or int field of a decoded record, through
// a union when the field is optional.
func longOf(rec map[string]any, key string) (int64, bool) {
	v := rec[key]
	if u, ok := v.(map[string]any); ok {
		v = u["long"]
	}
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	}
	return 0, false
}

func strOf(rec map[string]any, key string) string {
	s, _ := rec[key].(string)
	return s
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

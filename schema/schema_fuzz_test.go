package schema_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
)

func typed(err error) bool {
	return errors.Is(err, deltaerr.ErrCorrupt) || errors.Is(err, deltaerr.ErrInvalidArgument) || errors.Is(err, deltaerr.ErrUnsupportedFeature) ||
		errors.Is(err, schema.ErrInvalidSchema) || errors.Is(err, schema.ErrUnknownType)
}

// sharedSchemas returns schema strings from metaData actions of the shared
// corpus, read at test time.
func sharedSchemas(max int) []string {
	var out []string
	_ = filepath.WalkDir("../../shared/testdata", func(p string, d fs.DirEntry, err error) error {
		if err != nil || len(out) >= max {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.Contains(p, "_delta_log") || !strings.HasSuffix(p, ".json") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(data, []byte("schemaString")) {
			return nil
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var line struct {
				MetaData *struct {
					SchemaString string `json:"schemaString"`
				} `json:"metaData"`
			}
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.MetaData != nil {
				out = append(out, line.MetaData.SchemaString)
			}
		}
		return nil
	})
	return out
}

func FuzzParseSchema(f *testing.F) {
	for _, s := range sharedSchemas(200) {
		f.Add(s)
	}
	f.Add(`{"type":"struct","fields":[{"name":"a","type":"decimal(38,38)","nullable":true,"metadata":{}}]}`)
	f.Add(`{"type":"struct","fields":[{"name":"m","type":{"type":"map","keyType":"string","valueType":{"type":"array","elementType":"long","containsNull":true},"valueContainsNull":true},"nullable":true,"metadata":{}}]}`)
	f.Fuzz(func(t *testing.T, s string) {
		st, err := schema.Parse(s)
		if err != nil {
			if !typed(err) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		raw, err := st.MarshalJSON()
		if err != nil {
			t.Fatalf("a parsed schema does not encode: %v", err)
		}
		if _, err := schema.Parse(string(raw)); err != nil {
			t.Fatalf("a schema does not parse again: %v\n%s", err, raw)
		}
	})
}

func FuzzParseDDL(f *testing.F) {
	for _, s := range []string{
		"id BIGINT NOT NULL, name STRING, ts TIMESTAMP",
		"a DECIMAL(10,2) COMMENT 'x', b ARRAY<STRUCT<c: INT, d: MAP<STRING, DOUBLE>>>",
		"`we``ird` STRING GENERATED ALWAYS AS (upper(name))",
		"x INT DEFAULT 1, y VARCHAR(3), z CHAR(2)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if _, err := schema.ParseDDL(s); err != nil && !typed(err) {
			t.Fatalf("untyped error: %v", err)
		}
	})
}

var partitionTypes = []schema.DataType{
	schema.PrimitiveType("string"), schema.PrimitiveType("long"), schema.PrimitiveType("integer"), schema.PrimitiveType("short"),
	schema.PrimitiveType("byte"), schema.PrimitiveType("float"), schema.PrimitiveType("double"), schema.PrimitiveType("boolean"),
	schema.PrimitiveType("binary"), schema.PrimitiveType("date"), schema.PrimitiveType("timestamp"), schema.PrimitiveType("timestamp_ntz"),
	schema.PrimitiveType("decimal(10,2)"), schema.PrimitiveType("decimal(38,0)"),
}

func FuzzPartitionValue(f *testing.F) {
	for i, s := range []string{"", "1", "-9223372036854775808", "1.5e308", "NaN", "true", "2024-02-29", "2024-01-01 10:00:00.123456",
		"2024-01-01T10:00:00Z", "12345678.99", "\x00\xff", "%2F"} {
		f.Add(uint8(i), s)
	}
	f.Fuzz(func(t *testing.T, k uint8, s string) {
		typ := partitionTypes[int(k)%len(partitionTypes)]
		if _, err := schema.ParsePartitionValue(typ, s); err != nil && !typed(err) {
			t.Fatalf("%v %q: untyped error: %v", typ, s, err)
		}
	})
}

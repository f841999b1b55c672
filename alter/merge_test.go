package alter_test

import (
	"errors"
	"testing"

	"github.com/godelta/delta/alter"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
	"github.com/godelta/delta/write"
)

// TestAppendMergeSchema: write.Append with MergeSchema adds the rows' new
// columns in the same commit as the rows.
func TestAppendMergeSchema(t *testing.T) {
	for _, mode := range []string{"none", "name"} {
		t.Run(mode, func(t *testing.T) {
			s := create(t, "id BIGINT, s STRUCT<a: INT>", map[string]string{tableconfig.KeyColumnMappingMode: mode})
			s = appendRows(t, s, []schema.Value{long(1), strct(integer(1))})
			src, err := schema.ParseDDL("extra STRING, s STRUCT<b: STRING, a: INT>, id BIGINT")
			if err != nil {
				t.Fatal(err)
			}
			res, err := write.Append(ctx, s, rows([]schema.Value{str("e"), strct(str("bb"), integer(2)), long(2)}),
				write.CommitOptions{MergeSchema: src})
			if err != nil {
				t.Fatal(err)
			}
			n := must(t, s, res, err)
			if n.Version() != s.Version()+1 {
				t.Fatalf("version %d: schema and rows are not one commit", n.Version())
			}
			equal(t, read(t, n), []string{"id=1 s={1, null} extra=null", "id=2 s={2, bb} extra=e"})
			if op, params := lastOperation(t, n); op != "WRITE" || params["canMergeSchema"] != true {
				t.Fatalf("commitInfo %s %v", op, params)
			}
			// A type mismatch is refused and commits nothing.
			bad, _ := schema.ParseDDL("id STRING")
			if _, err := write.Append(ctx, n, rows([]schema.Value{str("x")}), write.CommitOptions{MergeSchema: bad}); !errors.Is(err, write.ErrSchemaMismatch) {
				t.Fatalf("mismatch: %v", err)
			}
			// Rows without some columns: nulls.
			few, _ := schema.ParseDDL("id BIGINT")
			res, err = write.Append(ctx, n, rows([]schema.Value{long(3)}), write.CommitOptions{MergeSchema: few})
			n = must(t, n, res, err)
			equal(t, read(t, n), []string{"id=1 s={1, null} extra=null", "id=2 s={2, bb} extra=e", "id=3 s=null extra=null"})
		})
	}
}

// TestAppendMergeSchemaWidens: with type widening on, merging rows of a
// wider type widens the column, as Spark's mergeSchema does (the
// kernel-rs/type-widening table was written so).
func TestAppendMergeSchemaWidens(t *testing.T) {
	s := create(t, "id INT, f FLOAT", nil)
	s = appendRows(t, s, []schema.Value{integer(1), schema.FloatValue(0.5)})
	src, _ := schema.ParseDDL("id BIGINT, f DOUBLE")
	if _, err := write.Append(ctx, s, rows([]schema.Value{long(1 << 40), schema.DoubleValue(0.25)}), write.CommitOptions{MergeSchema: src}); !errors.Is(err, write.ErrSchemaMismatch) {
		t.Fatalf("widening without delta.enableTypeWidening: %v", err)
	}
	res, err := alter.SetProperties(ctx, s, map[string]string{tableconfig.KeyEnableTypeWidening: "true"}, alter.Options{})
	s = must(t, s, res, err)
	res, err = write.Append(ctx, s, rows([]schema.Value{long(1 << 40), schema.DoubleValue(0.25)}), write.CommitOptions{MergeSchema: src})
	s = must(t, s, res, err)
	equal(t, read(t, s), []string{"id=1 f=0.5", "id=1099511627776 f=0.25"})
	f, _ := s.Schema().Field("id")
	if raw, _ := f.Metadata.Get(alter.MetadataTypeChanges); f.Type != schema.Long || string(raw) != `[{"fromType":"integer","toType":"long"}]` {
		t.Fatalf("id: %s %s", f.Type, raw)
	}
}

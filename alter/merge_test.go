package alter_test

import (
	"errors"
	"testing"

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
			if op, params := lastOperation(t, n); op != "WRITE" || params["mergeSchema"] != "true" {
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

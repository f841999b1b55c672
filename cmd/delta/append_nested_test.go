package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// A plain append of a Parquet file with an array of structs into a table
// with column mapping: the types are the same but for the table's field
// metadata (column-mapping ids and physical names), which the schema
// check used to compare as text and refuse.
func TestAppendNestedColumnMapping(t *testing.T) {
	type elem struct {
		A int32 `parquet:"a,optional"`
	}
	type rec struct {
		ID int64  `parquet:"id,optional"`
		SA []elem `parquet:"sa,optional,list"`
	}
	dir := filepath.Join(t.TempDir(), "t")
	mustRun(t, "create", dir, "--schema", "id BIGINT, sa ARRAY<STRUCT<a: INT>>", "--property", "delta.columnMapping.mode=name")
	f := filepath.Join(t.TempDir(), "rows.parquet")
	if err := parquet.WriteFile(f, []rec{{1, []elem{{1}, {2}}}, {2, nil}}); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "append", dir, f)
	out := mustRun(t, "scan", dir, "--format", "jsonl").stdout
	if !strings.Contains(out, `"a":2`) || strings.Count(out, "\n") != 2 {
		t.Errorf("scan after the append:\n%s", out)
	}
}

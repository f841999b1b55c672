package delta

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/schema"
)

// namesTable creates a table of the DDL columns with props in a new
// directory.
func namesTable(t *testing.T, ddl string, props map[string]string) (*Table, error) {
	t.Helper()
	sch, err := schema.ParseDDL(ddl)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := Create(context.Background(), t.TempDir(), TableSpec{Schema: sch, Properties: props})
	if err == nil {
		t.Cleanup(func() { tbl.Close() })
	}
	return tbl, err
}

func mustNamesTable(t *testing.T, ddl string, props map[string]string) *Table {
	t.Helper()
	tbl, err := namesTable(t, ddl, props)
	if err != nil {
		t.Fatalf("create %s %v: %v", ddl, props, err)
	}
	return tbl
}

// refused checks that err is an invalid-argument error whose message
// holds every one of words.
func refused(t *testing.T, what string, err error, words ...string) {
	t.Helper()
	if !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("%s: %v, want ErrInvalidArgument", what, err)
		return
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: message %q does not name %q", what, err, w)
		}
	}
}

// version returns the table's latest version.
func version(t *testing.T, tbl *Table) int64 {
	t.Helper()
	snap, err := tbl.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return snap.Version()
}

var cdfOn = map[string]string{"delta.enableChangeDataFeed": "true"}

// TestCDCReservedColumns: a table cannot have both the change data feed on
// and a column named as one the feed adds (_change_type, _commit_version,
// _commit_timestamp, in any case): turning the feed on over such a column
// is refused at create and ALTER, and adding such a column while it is on
// (ADD COLUMN, append with a merged schema) too, as Spark refuses them
// (DELTA_TABLE_ALREADY_CONTAINS_CDC_COLUMNS, RESERVED_CDC_COLUMNS_ON_WRITE).
func TestCDCReservedColumns(t *testing.T) {
	ctx := context.Background()
	for _, ddl := range []string{"id BIGINT, _change_type STRING", "id BIGINT, _Commit_Version BIGINT", "_COMMIT_TIMESTAMP TIMESTAMP"} {
		_, err := namesTable(t, ddl, cdfOn)
		refused(t, "create "+ddl+" with the change data feed", err, "change data feed")
	}
	// The column first, then the feed.
	tbl := mustNamesTable(t, "id BIGINT, _commit_version BIGINT", nil)
	_, err := tbl.SetProperties(ctx, cdfOn, AlterOptions{})
	refused(t, "turning the feed on", err, "_commit_version", "delta.enableChangeDataFeed")
	if v := version(t, tbl); v != 0 {
		t.Errorf("version %d after the refused ALTER", v)
	}
	// The feed first, then the column.
	tbl = mustNamesTable(t, "id BIGINT", cdfOn)
	_, err = tbl.AddColumn(ctx, nil, schema.StructField{Name: "_change_type", Type: schema.String, Nullable: true}, AlterOptions{})
	refused(t, "ADD COLUMN _change_type", err, "_change_type", "change data feed")
	merged := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.Long, Nullable: true},
		{Name: "_Commit_Timestamp", Type: schema.Long, Nullable: true},
	}}
	_, err = tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(1), schema.LongValue(2)}}, WriteOptions{MergeSchema: merged})
	refused(t, "append with a merged _Commit_Timestamp", err, "_Commit_Timestamp")
	if v := version(t, tbl); v != 0 {
		t.Errorf("version %d after the refused changes", v)
	}
	// Other columns, and the reserved names without the feed, are fine;
	// so is a nested field of that name.
	if _, err := tbl.AddColumn(ctx, nil, schema.StructField{Name: "change_type", Type: schema.String, Nullable: true}, AlterOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := namesTable(t, "id BIGINT, s STRUCT<_change_type: STRING>", cdfOn); err != nil {
		t.Errorf("nested _change_type: %v", err)
	}
	plain := mustNamesTable(t, "id BIGINT", nil)
	if _, err := plain.AddColumn(ctx, nil, schema.StructField{Name: "_change_type", Type: schema.String, Nullable: true}, AlterOptions{}); err != nil {
		t.Errorf("_change_type without the feed: %v", err)
	}
}

// TestColumnNamesSparkCannotWrite: without column mapping, a column name
// with one of the characters " ,;{}()\n\t=" (Parquet's, which Spark
// refuses: DELTA_INVALID_CHARACTERS_IN_COLUMN_NAMES) is refused, at any
// depth, at create, ADD COLUMN and append with a merged schema, and the
// message names the column and column mapping. With column mapping the
// names are allowed.
func TestColumnNamesSparkCannotWrite(t *testing.T) {
	ctx := context.Background()
	for _, ddl := range []string{
		"`a b` INT", "`a,b` INT", "`a;b` INT", "`a{b` INT", "`a}b` INT", "`a(b` INT", "`a)b` INT",
		"`a\nb` INT", "`a\tb` INT", "`a=b` INT",
		"id INT, s STRUCT<`x y`: INT>",
		"id INT, arr ARRAY<STRUCT<`x=y`: INT>>",
		"id INT, m MAP<STRING, STRUCT<ok: STRUCT<`(x)`: INT>>>",
	} {
		_, err := namesTable(t, ddl, nil)
		refused(t, "create "+ddl, err, "delta.columnMapping.mode")
		if _, err := namesTable(t, ddl, map[string]string{"delta.columnMapping.mode": "name"}); err != nil {
			t.Errorf("create %s with column mapping: %v", ddl, err)
		}
	}
	_, err := namesTable(t, "id INT, s STRUCT<`x y`: INT>", nil)
	refused(t, "nested", err, `"s.x y"`)

	tbl := mustNamesTable(t, "id BIGINT", nil)
	_, err = tbl.AddColumn(ctx, nil, schema.StructField{Name: "a b", Type: schema.String, Nullable: true}, AlterOptions{})
	refused(t, "ADD COLUMN `a b`", err, `"a b"`, "delta.columnMapping.mode")
	merged := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.Long, Nullable: true},
		{Name: "x;y", Type: schema.Long, Nullable: true},
	}}
	_, err = tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(1), schema.LongValue(2)}}, WriteOptions{MergeSchema: merged})
	refused(t, "append with a merged `x;y`", err, `"x;y"`)
	if v := version(t, tbl); v != 0 {
		t.Errorf("version %d after the refused changes", v)
	}

	mapped := mustNamesTable(t, "id BIGINT", map[string]string{"delta.columnMapping.mode": "name"})
	if _, err := mapped.AddColumn(ctx, nil, schema.StructField{Name: "a b", Type: schema.String, Nullable: true}, AlterOptions{}); err != nil {
		t.Fatalf("ADD COLUMN `a b` with column mapping: %v", err)
	}
	if _, err := mapped.RenameColumn(ctx, []string{"a b"}, "c=d", AlterOptions{}); err != nil {
		t.Fatalf("RENAME to `c=d` with column mapping: %v", err)
	}
}

// TestColumnNamesOfOtherWriters: a table another writer made with such a
// name and no column mapping stays readable and writable: rows are
// appended, properties set, and column mapping turned on (the way out);
// only a new such name is refused.
func TestColumnNamesOfOtherWriters(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	commit := `{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}` + "\n" +
		`{"metaData":{"id":"a","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}},{\"name\":\"my col\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":[],"configuration":{},"createdTime":1}}` + "\n"
	if err := os.MkdirAll(filepath.Join(dir, deltalog.LogDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, deltalog.CommitKey(0)), []byte(commit), 0o644); err != nil {
		t.Fatal(err)
	}
	tbl, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	if _, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(1), schema.LongValue(2)}}, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.SetProperties(ctx, map[string]string{"delta.appendOnly": "true"}, AlterOptions{}); err != nil {
		t.Fatalf("SET TBLPROPERTIES on a table that has the name already: %v", err)
	}
	_, err = tbl.AddColumn(ctx, nil, schema.StructField{Name: "other col", Type: schema.Long, Nullable: true}, AlterOptions{})
	refused(t, "a new such name", err, `"other col"`)
	if _, err := tbl.SetProperties(ctx, map[string]string{"delta.columnMapping.mode": "name"}, AlterOptions{}); err != nil {
		t.Fatalf("turning column mapping on: %v", err)
	}
	if _, err := tbl.AddColumn(ctx, nil, schema.StructField{Name: "other col", Type: schema.Long, Nullable: true}, AlterOptions{}); err != nil {
		t.Fatalf("a new such name under column mapping: %v", err)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := tbl.Scan(snap, ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for r, err := range sc.Rows(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := r.Get("my col"); v.Int64() != 2 {
			t.Errorf("my col = %v", v)
		}
		n++
	}
	if n != 1 {
		t.Errorf("%d rows", n)
	}
}

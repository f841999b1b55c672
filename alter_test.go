package delta_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/godelta/delta"
	"github.com/godelta/delta/alter"
	"github.com/godelta/delta/schema"
)

func TestAlterFacade(t *testing.T) {
	ctx := context.Background()
	sch, _ := schema.ParseDDL("id BIGINT, v STRING")
	tbl, err := delta.Create(ctx, filepath.Join(t.TempDir(), "t"), delta.TableSpec{Schema: sch})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	if _, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(1), schema.StringValue("x")}}, delta.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.RenameColumn(ctx, []string{"v"}, "w", delta.AlterOptions{}); !errors.Is(err, alter.ErrColumnMappingRequired) {
		t.Fatalf("rename: %v", err)
	}
	steps := []func() (delta.CommitResult, error){
		func() (delta.CommitResult, error) {
			return tbl.EnableFeature(ctx, "columnMapping", delta.AlterOptions{})
		},
		func() (delta.CommitResult, error) {
			return tbl.RenameColumn(ctx, []string{"v"}, "w", delta.AlterOptions{})
		},
		func() (delta.CommitResult, error) {
			return tbl.AddColumn(ctx, nil, schema.StructField{Name: "n", Type: schema.Integer, Nullable: true}, delta.AlterOptions{})
		},
		func() (delta.CommitResult, error) {
			return tbl.SetProperties(ctx, map[string]string{"delta.enableTypeWidening": "true"}, delta.AlterOptions{})
		},
		func() (delta.CommitResult, error) {
			return tbl.WidenColumn(ctx, []string{"n"}, schema.Long, delta.AlterOptions{})
		},
		func() (delta.CommitResult, error) {
			return tbl.AddConstraint(ctx, "pos", "id > 0", delta.AlterOptions{})
		},
		func() (delta.CommitResult, error) { return tbl.DropConstraint(ctx, "pos", false, delta.AlterOptions{}) },
		func() (delta.CommitResult, error) {
			return tbl.DropColumns(ctx, [][]string{{"w"}}, delta.AlterOptions{})
		},
		func() (delta.CommitResult, error) {
			return tbl.UnsetProperties(ctx, []string{"nope"}, true, delta.AlterOptions{})
		},
	}
	for i, step := range steps {
		res, err := step()
		if err != nil || res.Version != int64(i+2) {
			t.Fatalf("step %d: version %d, %v", i, res.Version, err)
		}
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := snap.Schema().String(); got != `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"id"}},{"name":"n","type":"long","nullable":true,"metadata":{"delta.columnMapping.id":3,"delta.columnMapping.physicalName":"`+physical(snap.Schema(), "n")+`","delta.typeChanges":[{"fromType":"integer","toType":"long"}]}}]}` {
		t.Fatalf("schema %s", got)
	}
}

func physical(s *schema.StructType, name string) string {
	f, _ := s.Field(name)
	return f.PhysicalName(schema.ColumnMappingByName)
}

func TestConvertFacade(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	type row struct {
		ID int64 `parquet:"id"`
	}
	if err := parquet.WriteFile(filepath.Join(dir, "a.parquet"), []row{{1}, {2}}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "_SUCCESS"), nil, 0o644)
	tbl, res, err := delta.Convert(ctx, dir, delta.ConvertOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	if res.Files != 1 || res.Version != 0 {
		t.Fatalf("result %+v", res)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := tbl.Scan(snap, delta.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, err := range sc.Rows(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 2 {
		t.Fatalf("%d rows, want 2", n)
	}
}

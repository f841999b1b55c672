package iceberg_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/iceberg"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
)

// TestDataFilesForIceberg opens a data file of a UniForm table with
// parquet-go: the partition column is materialized after the data
// columns, and every field, the list element included, carries the id
// Iceberg's schema gives it.
func TestDataFilesForIceberg(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	tbl, err := delta.Create(ctx, "file://"+dir, delta.TableSpec{
		Schema: &schema.StructType{Fields: []schema.StructField{
			{Name: "id", Type: schema.Long},
			{Name: "xs", Type: &schema.ArrayType{ElementType: schema.Integer, ContainsNull: true}, Nullable: true},
			{Name: "p", Type: schema.String, Nullable: true},
		}},
		PartitionColumns: []string{"p"},
		Properties:       map[string]string{tableconfig.KeyUniversalFormatEnabledFormats: "iceberg"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	if _, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(1), schema.ArrayValue([]schema.Value{schema.IntegerValue(5)}), schema.StringValue("a")}}, delta.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var add *actions.Add
	for a, err := range snap.Files(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		add = a
	}
	if add == nil {
		t.Fatal("no file")
	}
	f, err := os.Open(filepath.Join(dir, filepath.FromSlash(add.Path)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	info, _ := f.Stat()
	pf, err := parquet.OpenFile(f, info.Size())
	if err != nil {
		t.Fatal(err)
	}
	fields := pf.Schema().Fields()
	if len(fields) != 3 {
		t.Fatalf("file has %d columns, want 3 (the partition column materialized): %v", len(fields), pf.Schema())
	}
	for i, sf := range snap.Schema().Fields {
		id, _ := sf.ColumnMappingID()
		if fields[i].Name() != sf.PhysicalName(schema.ColumnMappingByName) || fields[i].ID() != int(id) {
			t.Errorf("column %d: %s id %d, want %s id %d", i, fields[i].Name(), fields[i].ID(), sf.PhysicalName(schema.ColumnMappingByName), id)
		}
	}
	xs := snap.Schema().Fields[1]
	nested, _ := xs.NestedIDs()
	elem := fields[1].Fields()[0].Fields()[0] // xs > list > element
	if want := nested[xs.PhysicalName(schema.ColumnMappingByName)+".element"]; want == 0 || elem.ID() != int(want) {
		t.Errorf("list element id %d, want %d", elem.ID(), want)
	}
}

// TestEnable turns Iceberg on for existing tables: one with column
// mapping and data (converted at once), an empty one without (column
// mapping turned on), and one with data written without column mapping
// (refused: its files have no field ids).
func TestEnable(t *testing.T) {
	ctx := context.Background()
	sch := &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long}, {Name: "s", Type: schema.String, Nullable: true}}}
	rows := [][]schema.Value{{schema.LongValue(1), schema.StringValue("a")}, {schema.LongValue(2), schema.Value{}}}
	open := func(props map[string]string, withRows bool) *delta.Table {
		tbl, err := delta.CreateStore(ctx, "enable", memory.New(), delta.TableSpec{Schema: sch, Properties: props})
		if err != nil {
			t.Fatal(err)
		}
		if withRows {
			if _, err := tbl.AppendRows(ctx, rows, delta.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		return tbl
	}

	tbl := open(map[string]string{tableconfig.KeyColumnMappingMode: "name"}, true)
	if _, err := tbl.SyncIceberg(ctx); !errors.Is(err, iceberg.ErrNotEnabled) {
		t.Fatalf("sync before enabling: %v", err)
	}
	res, err := tbl.EnableIceberg(ctx, delta.TxnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	proto := snap.Protocol()
	if res.Version != 2 || !snap.Config().UniversalFormatIceberg() || !tableconfig.HasWriterFeature(&proto, actions.FeatureIcebergCompatV2) {
		t.Fatalf("after enabling: version %d, protocol %+v", res.Version, proto)
	}
	if ci, _ := snap.CommitInfo(); ci.Operation != "SET TBLPROPERTIES" {
		t.Errorf("operation %q", ci.Operation)
	}
	st, err := tbl.IcebergStatus(ctx)
	if err != nil || st.ConvertedVersion != 2 || st.Records != 2 {
		t.Fatalf("status %+v, %v", st, err)
	}
	if again, err := tbl.EnableIceberg(ctx, delta.TxnOptions{}); err != nil || again.Config() != nil {
		t.Fatalf("enabling twice: %+v, %v", again, err)
	}

	empty := open(nil, false)
	if _, err := empty.EnableIceberg(ctx, delta.TxnOptions{}); err != nil {
		t.Fatal(err)
	}
	snap, err = empty.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Config().ColumnMappingMode() != schema.ColumnMappingByName || !snap.Config().UniversalFormatIceberg() {
		t.Fatal("column mapping not turned on")
	}
	if _, err := empty.AppendRows(ctx, rows, delta.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if st, err := empty.IcebergStatus(ctx); err != nil || st.Records != 2 {
		t.Fatalf("status %+v, %v", st, err)
	}

	old := open(nil, true)
	if _, err := old.EnableIceberg(ctx, delta.TxnOptions{}); !errors.Is(err, iceberg.ErrNeedsRewrite) {
		t.Fatalf("enabling on files without field ids: %v", err)
	}
}

// TestCommitChecksIcebergCompat: a commit to an icebergCompatV2 table of
// a file without numRecords is refused, and nothing is committed.
func TestCommitChecksIcebergCompat(t *testing.T) {
	ctx := context.Background()
	tbl, err := delta.CreateStore(ctx, "checks", memory.New(), uniformSpec())
	if err != nil {
		t.Fatal(err)
	}
	_, err = tbl.Update(ctx, delta.TxnOptions{}, func(tx *delta.Transaction) error {
		tx.Add(actions.Add{Path: "x.parquet", Size: 1, ModificationTime: 1, DataChange: true, PartitionValues: map[string]string{}, Stats: `{"minValues":{}}`})
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "numRecords") {
		t.Fatalf("commit of a file without numRecords: %v", err)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil || snap.Version() != 0 {
		t.Fatalf("version %d, %v", snap.Version(), err)
	}
}

// TestSetFormatsWithoutCompatRefused: a metadata commit that only sets
// delta.universalFormat.enabledFormats=iceberg (a generic ALTER TABLE SET
// TBLPROPERTIES) is refused, as Spark refuses it: Enable is the way.
func TestSetFormatsWithoutCompatRefused(t *testing.T) {
	ctx := context.Background()
	tbl, err := delta.CreateStore(ctx, "set", memory.New(), delta.TableSpec{
		Schema: &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = tbl.Update(ctx, delta.TxnOptions{Operation: "SET TBLPROPERTIES"}, func(tx *delta.Transaction) error {
		m := tx.Snapshot().Metadata()
		m.Configuration = map[string]string{tableconfig.KeyUniversalFormatEnabledFormats: "iceberg"}
		tx.SetMetadata(m)
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "icebergCompatV2") {
		t.Fatalf("setting iceberg without icebergCompatV2: %v", err)
	}
}

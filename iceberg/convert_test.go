package iceberg_test

import (
	"context"
	"encoding/json"
	"testing"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/iceberg"
	"github.com/godelta/delta/schema"
)

func uniformSpec() delta.TableSpec {
	return delta.TableSpec{
		Schema: &schema.StructType{Fields: []schema.StructField{
			{Name: "id", Type: schema.Long},
			{Name: "name", Type: schema.String, Nullable: true},
			{Name: "day", Type: schema.Date, Nullable: true},
		}},
		PartitionColumns: []string{"day"},
		Properties:       map[string]string{"delta.universalFormat.enabledFormats": "iceberg"},
	}
}

func TestSmoke(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	tbl, err := delta.Create(ctx, "file://"+dir, uniformSpec())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	for i := range 3 {
		rows := [][]schema.Value{{schema.LongValue(int64(i)), schema.StringValue("n"), schema.DateValue(int32(19000 + i%2))}}
		if _, err := tbl.AppendRows(ctx, rows, delta.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := tbl.IcebergStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(st)
	t.Logf("%s", b)
	if st.ConvertedVersion != 3 || st.Records != 3 || st.Snapshots != 4 {
		t.Fatalf("status %s", b)
	}
	_ = iceberg.MetadataDir
}

package iceberg_test

import (
	"context"
	"fmt"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/iceberg"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
)

// A table created with delta.universalFormat.enabledFormats=iceberg gets
// Iceberg metadata after every commit; ReadStatus says which Delta version
// the current Iceberg snapshot was converted from, and Convert catches up
// (here there is nothing left to convert).
func Example() {
	ctx := context.Background()
	store := memory.New()
	tbl, err := delta.CreateStore(ctx, "example", store, delta.TableSpec{
		Schema:     &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long}}},
		Properties: map[string]string{tableconfig.KeyUniversalFormatEnabledFormats: "iceberg"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(1)}, {schema.LongValue(2)}}, delta.WriteOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	st, err := iceberg.ReadStatus(ctx, store)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("metadata", iceberg.MetadataKey(st.MetadataVersion), "converted from Delta version", st.ConvertedVersion)
	fmt.Println("snapshots", st.Snapshots, "records", st.Records)

	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := iceberg.Convert(ctx, snap, iceberg.Options{})
	fmt.Println("converted now:", res.Snapshots, err)
	// Output:
	// metadata metadata/v2.metadata.json converted from Delta version 1
	// snapshots 2 records 2
	// converted now: 0 <nil>
}

package catalogmanaged_test

import (
	"context"
	"fmt"
	"slices"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/catalogmanaged"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/schema"
)

// A table managed by a catalog is created, written and read through the
// catalog's view of its store: each commit is staged, ratified by the
// catalog and published.
func Example() {
	ctx := context.Background()
	storage := memory.New()
	defer storage.Close()

	catalog := catalogmanaged.NewMemory()
	if err := catalog.Manage("events", -1); err != nil { // a table yet to be created
		fmt.Println(err)
		return
	}
	view := catalogmanaged.New(storage, catalog.Table("events"))

	tbl, err := delta.CreateStore(ctx, "events", view, delta.TableSpec{
		Schema: &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long}}},
		Properties: map[string]string{
			"delta.feature.catalogManaged":   "supported",
			"delta.enableInCommitTimestamps": "true",
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	type row struct {
		ID int64 `parquet:"id"`
	}
	if _, err := delta.AppendStructs(ctx, tbl, slices.Values([]row{{1}, {2}}), delta.WriteOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	staged := 0
	for obj, err := range storage.List(ctx, deltalog.StagedDir, "") {
		if err != nil {
			fmt.Println(err)
			return
		}
		if _, _, ok := deltalog.ParseStagedName(obj.Key); ok {
			staged++
		}
	}
	r, _ := catalog.Table("events").Commits(ctx)
	fmt.Println("version", snap.Version(), "staged commits", staged, "catalog latest", r.Latest)

	// The directory alone is not the table.
	direct, _ := delta.OpenStore(ctx, "events", storage)
	_, err = direct.Snapshot(ctx)
	fmt.Println(err)
	// Output:
	// version 1 staged commits 2 catalog latest 1
	// table is managed by a catalog (catalogManaged): read it through its catalog; its directory alone does not say which commits exist
}

// Two tables of one catalog committed as one transaction: the catalog
// ratifies both commits together, or neither.
func ExampleMultiTxn() {
	ctx := context.Background()
	catalog := catalogmanaged.NewMemory()
	spec := delta.TableSpec{
		Schema:     &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long}}},
		Properties: map[string]string{"delta.feature.catalogManaged": "supported", "delta.enableInCommitTimestamps": "true"},
	}
	stores := map[string]*logstore.Portable{}
	for _, name := range []string{"orders", "stock"} {
		stores[name] = memory.New()
		defer stores[name].Close()
		if err := catalog.Manage(name, -1); err != nil {
			fmt.Println(err)
			return
		}
		if _, err := delta.CreateStore(ctx, name, catalogmanaged.New(stores[name], catalog.Table(name)), spec); err != nil {
			fmt.Println(err)
			return
		}
	}
	type row struct {
		ID int64 `parquet:"id"`
	}
	m := delta.NewMultiTableTxn(catalog)
	for _, name := range []string{"orders", "stock"} {
		m.TableStore(name, stores[name], name, catalog.Table(name), func(ctx context.Context, t *delta.Table) error {
			_, err := delta.AppendStructs(ctx, t, slices.Values([]row{{7}}), delta.WriteOptions{})
			return err
		})
	}
	if err := m.Commit(ctx); err != nil {
		fmt.Println(err)
		return
	}
	for _, name := range []string{"orders", "stock"} {
		r, _ := catalog.Table(name).Commits(ctx)
		fmt.Println(name, "at version", r.Latest)
	}
	// Output:
	// orders at version 1
	// stock at version 1
}

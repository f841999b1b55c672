package ucrest_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/catalog"
	"github.com/godelta/delta/catalog/server"
	"github.com/godelta/delta/catalogmanaged"
	"github.com/godelta/delta/catalogmanaged/ucrest"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/schema"
)

// A catalog-managed table created and appended to through the
// Delta-Tables API of this library's catalog server, as through Unity
// Catalog's: a staging table, version 0 written published, the table
// finalized, then commits ratified by update_table.
func ExampleClient() {
	ctx := context.Background()
	wh, _ := os.MkdirTemp("", "warehouse")
	defer os.RemoveAll(wh)
	srv, err := server.Open(ctx, server.Config{Warehouse: wh, DB: ":memory:", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	// The table main.default.orders lives in the namespace main.default.
	_ = srv.Store().CreateNamespace(ctx, catalog.Namespace{"main"}, nil)
	_ = srv.Store().CreateNamespace(ctx, catalog.Namespace{"main", "default"}, nil)
	hs := httptest.NewServer(srv)
	defer hs.Close()

	client := ucrest.NewClient(hs.URL+server.UCRoot, "", nil)
	staged, err := client.CreateStagingTable(ctx, "main", "default", "orders")
	if err != nil {
		panic(err)
	}
	u, _ := url.Parse(staged.Location)
	_ = os.MkdirAll(u.Path, 0o755)
	storage, _ := local.New(u.Path)
	defer storage.Close()
	props := map[string]string{"delta.feature.catalogManaged": "supported"}
	for k, v := range staged.RequiredProperties {
		if v != nil { // nil: any valid value
			props[k] = *v
		}
	}
	sch := &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long}}}
	if _, err := delta.CreateStore(ctx, "orders", catalogmanaged.New(storage, client.StagingClient()), delta.TableSpec{Schema: sch, Properties: props}); err != nil {
		panic(err)
	}
	if _, err := client.CreateTable(ctx, "main", "default", ucrest.CreateTableRequest{Name: "orders", Location: staged.Location, TableType: ucrest.Managed,
		Columns:  []byte(`{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}`),
		Protocol: staged.RequiredProtocol, Properties: props}); err != nil {
		panic(err)
	}

	name := ucrest.TableName{Catalog: "main", Schema: "default", Table: "orders"}
	tbl, err := delta.OpenStore(ctx, "orders", catalogmanaged.New(storage, client.Table(name, staged.TableID)))
	if err != nil {
		panic(err)
	}
	type row struct {
		ID int64 `parquet:"id"`
	}
	if _, err := delta.AppendStructs(ctx, tbl, slices.Values([]row{{1}, {2}}), delta.WriteOptions{}); err != nil {
		panic(err)
	}
	loaded, _ := client.LoadTable(ctx, name)
	fmt.Println(loaded.Metadata.TableType, *loaded.LatestTableVersion, len(loaded.Commits))
	// Output:
	// MANAGED 1 0
}

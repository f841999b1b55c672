package server_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/catalog"
	"github.com/godelta/delta/catalog/icebergrest"
	"github.com/godelta/delta/catalog/server"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
)

// A warehouse with one UniForm table, served on loopback and listed and
// loaded through the Iceberg REST API.
func ExampleOpen() {
	ctx := context.Background()
	wh, _ := os.MkdirTemp("", "warehouse")
	defer os.RemoveAll(wh)
	tbl, err := delta.Create(ctx, filepath.Join(wh, "sales", "orders"), delta.TableSpec{
		Schema:     &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long}}},
		Properties: map[string]string{tableconfig.KeyUniversalFormatEnabledFormats: "iceberg"},
	})
	if err != nil {
		panic(err)
	}
	tbl.Close()

	srv, err := server.Open(ctx, server.Config{Warehouse: wh, Token: "secret", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(srv) // or srv.Serve(ctx, listener)
	defer hs.Close()

	cl, _ := icebergrest.NewClient(hs.URL, "secret", nil)
	ids, _ := cl.ListTables(ctx, catalog.Namespace{"sales"})
	fmt.Println(ids[0])
	res, _ := cl.LoadTable(ctx, ids[0])
	fmt.Println(filepath.Base(res.MetadataLocation))
	// Output:
	// sales.orders
	// v1.metadata.json
}

package server_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/catalog"
	"github.com/godelta/delta/catalog/icebergrest"
	"github.com/godelta/delta/catalog/server"
	_ "github.com/godelta/delta/logstore/s3"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
	"github.com/godelta/delta/testutil/testserver"
)

// TestS3Warehouse serves a warehouse on the S3 test server (versitygw on
// loopback), named by a URI whose query carries the endpoint: the tables
// found keep it, so the server reads their metadata where they are, and
// the metadata-location it serves is the table's plain s3:// URI. A
// commit after the start shows in the next load.
func TestS3Warehouse(t *testing.T) {
	srv, cfg, err := testserver.StartS3()
	testserver.Require(t, srv, err)
	t.Cleanup(srv.Stop)
	t.Setenv("AWS_ACCESS_KEY_ID", cfg.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", cfg.SecretKey)
	query := fmt.Sprintf("?endpoint=%s&region=%s&path_style=true", cfg.Endpoint, cfg.Region)
	wh := fmt.Sprintf("s3://%s/wh", cfg.Bucket)
	ctx := context.Background()
	tbl, err := delta.Create(ctx, wh+"/sales/orders"+query, delta.TableSpec{
		Schema:     &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long}}},
		Properties: map[string]string{tableconfig.KeyUniversalFormatEnabledFormats: "iceberg"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()

	s, base := serve(t, server.Config{Warehouse: wh + query, DB: filepath.Join(t.TempDir(), "c.db")})
	if s.Registered.Tables != 1 {
		t.Fatalf("warehouse scan: %+v", s.Registered)
	}
	c, err := icebergrest.NewClient(base, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	id := catalog.TableIdent{Namespace: catalog.Namespace{"sales"}, Name: "orders"}
	res, err := c.LoadTable(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if res.MetadataLocation != wh+"/sales/orders/metadata/v1.metadata.json" {
		t.Fatalf("metadata-location %s", res.MetadataLocation)
	}
	if _, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(1)}}, delta.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if res, err = c.LoadTable(ctx, id); err != nil || !strings.HasSuffix(res.MetadataLocation, "/v2.metadata.json") {
		t.Fatalf("after a commit: %s %v", res.MetadataLocation, err)
	}
	// A table registered by a URI with a query, as `delta catalog
	// register` sends it.
	other, err := delta.Create(ctx, wh+"/elsewhere/t"+query, delta.TableSpec{
		Schema:     &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long}}},
		Properties: map[string]string{tableconfig.KeyUniversalFormatEnabledFormats: "iceberg"},
	})
	if err != nil {
		t.Fatal(err)
	}
	other.Close()
	reg, err := c.RegisterTable(ctx, catalog.TableIdent{Namespace: catalog.Namespace{"sales"}, Name: "other"}, wh+"/elsewhere/t"+query)
	if err != nil {
		t.Fatal(err)
	}
	if reg.MetadataLocation != wh+"/elsewhere/t/metadata/v1.metadata.json" {
		t.Fatalf("registered: %s", reg.MetadataLocation)
	}
}

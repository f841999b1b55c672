package iceberggo_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/catalog/server"
	"github.com/godelta/delta/tableconfig"
)

// TestRESTCatalog serves a warehouse of Delta tables with the library's
// catalog server (the Iceberg REST catalog API) on loopback, and reads it
// through iceberg-go's REST catalog client: it lists the namespaces and
// tables, loads a UniForm table and scans exactly the rows the Delta
// reader returns, at the latest snapshot and again after each new commit
// (appends, a delete). It also registers a table through the client and
// reads it, checks that a client without the bearer token is refused, and
// that a Delta table without UniForm is listed but loads as no such table.
func TestRESTCatalog(t *testing.T) {
	ctx := context.Background()
	wh := t.TempDir()
	newTable := func(dir string) *delta.Table {
		tbl, err := delta.Create(ctx, "file://"+dir, delta.TableSpec{
			Schema:           allTypes(),
			PartitionColumns: []string{"region"},
			Properties:       map[string]string{tableconfig.KeyUniversalFormatEnabledFormats: "iceberg"},
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tbl.Close() })
		return tbl
	}
	events := newTable(filepath.Join(wh, "sales", "events"))
	if _, err := events.AppendRows(ctx, rows(0, 20), delta.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	// A Delta table without UniForm: listed, but no Iceberg table to load.
	plain, err := delta.Create(ctx, "file://"+filepath.Join(wh, "sales", "plain"), delta.TableSpec{Schema: allTypes()})
	if err != nil {
		t.Fatal(err)
	}
	plain.Close()
	if err := os.MkdirAll(filepath.Join(wh, "ops"), 0o755); err != nil {
		t.Fatal(err)
	}

	otherDir := t.TempDir() // outside the warehouse, where the server lets clients register
	srv, err := server.Open(ctx, server.Config{Warehouse: wh, DB: filepath.Join(t.TempDir(), "catalog.db"), Token: "tok", Logger: slog.New(slog.DiscardHandler), AllowLocations: []string{otherDir}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer func() { hs.Close(); srv.Close() }()

	if _, err := rest.NewCatalog(ctx, "delta", hs.URL); err == nil {
		t.Fatal("iceberg-go connected without the token")
	}
	cat, err := rest.NewCatalog(ctx, "delta", hs.URL, rest.WithOAuthToken("tok"))
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()

	nss, err := cat.ListNamespaces(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(nss) != 1 || !slices.Equal(nss[0], table.Identifier{"sales"}) {
		t.Fatalf("namespaces: %v", nss)
	}
	if ok, err := cat.CheckNamespaceExists(ctx, table.Identifier{"sales"}); err != nil || !ok {
		t.Fatalf("namespace sales exists: %v %v", ok, err)
	}
	if ok, err := cat.CheckNamespaceExists(ctx, table.Identifier{"nope"}); err != nil || ok {
		t.Fatalf("namespace nope exists: %v %v", ok, err)
	}
	var ids []table.Identifier
	for id, err := range cat.ListTables(ctx, table.Identifier{"sales"}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if len(ids) != 2 || !slices.Equal(ids[0], table.Identifier{"sales", "events"}) || !slices.Equal(ids[1], table.Identifier{"sales", "plain"}) {
		t.Fatalf("tables: %v", ids)
	}
	if _, err := cat.LoadTable(ctx, table.Identifier{"sales", "plain"}); !errors.Is(err, catalog.ErrNoSuchTable) {
		t.Fatalf("loading a Delta table without Iceberg metadata: %v", err)
	}
	if ok, err := cat.CheckTableExists(ctx, table.Identifier{"sales", "events"}); err != nil || !ok {
		t.Fatalf("sales.events exists: %v %v", ok, err)
	}
	if _, err := cat.LoadTable(ctx, table.Identifier{"sales", "nope"}); !errors.Is(err, catalog.ErrNoSuchTable) {
		t.Fatalf("loading a missing table: %v", err)
	}
	if err := cat.CreateNamespace(ctx, table.Identifier{"sales"}, nil); !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
		t.Fatalf("creating an existing namespace: %v", err)
	}
	if err := cat.DropNamespace(ctx, table.Identifier{"sales"}); !errors.Is(err, catalog.ErrNamespaceNotEmpty) {
		t.Fatalf("dropping a namespace with a table: %v", err)
	}

	// check loads sales.events through the catalog and scans its current
	// snapshot: the rows of the Delta table's latest version.
	check := func(step string, id table.Identifier, tbl *delta.Table) {
		t.Helper()
		it, err := cat.LoadTable(ctx, id)
		if err != nil {
			t.Fatalf("%s: loading %v: %v", step, id, err)
		}
		snap, err := tbl.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		st, err := tbl.IcebergStatus(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if it.MetadataLocation() != st.MetadataLocation {
			t.Fatalf("%s: the catalog serves %s, the newest metadata is %s", step, it.MetadataLocation(), st.MetadataLocation)
		}
		at, err := it.Scan().ToArrowTable(ctx)
		if err != nil {
			t.Fatalf("%s: iceberg-go scan: %v", step, err)
		}
		defer at.Release()
		got := renderTable(t, at, columnNames(snap.Schema()))
		want := deltaRows(t, ctx, tbl, snap.Version())
		if !slices.Equal(got, want) {
			t.Fatalf("%s: iceberg-go read %d rows through the catalog, Delta %d at version %d\niceberg: %q\ndelta:   %q", step, len(got), len(want), snap.Version(), head(got), head(want))
		}
		t.Logf("%s: Delta version %d, %d rows, the same through the catalog", step, snap.Version(), len(got))
	}
	check("first append", table.Identifier{"sales", "events"}, events)
	if _, err := events.AppendRows(ctx, rows(20, 35), delta.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	check("second append", table.Identifier{"sales", "events"}, events)
	if _, err := events.AppendRows(ctx, rows(35, 40), delta.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := events.Delete(ctx, "id % 3 = 0", delta.DMLOptions{}); err != nil {
		t.Fatal(err)
	}
	check("append and delete", table.Identifier{"sales", "events"}, events)

	// A table outside the warehouse joins through iceberg-go's register,
	// by the metadata file of an older version: the catalog serves the
	// newest.
	other := newTable(otherDir)
	if _, err := other.AppendRows(ctx, rows(100, 110), delta.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cat.CreateNamespace(ctx, table.Identifier{"ops"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cat.RegisterTable(ctx, table.Identifier{"ops", "other"}, "file://"+otherDir+"/metadata/v1.metadata.json"); err != nil {
		t.Fatal(err)
	}
	if _, err := cat.RegisterTable(ctx, table.Identifier{"ops", "other"}, "file://"+otherDir+"/metadata/v1.metadata.json"); !errors.Is(err, catalog.ErrTableAlreadyExists) {
		t.Fatalf("registering a name twice: %v", err)
	}
	check("registered", table.Identifier{"ops", "other"}, other)
	if _, err := other.AppendRows(ctx, rows(110, 115), delta.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	check("registered, after an append", table.Identifier{"ops", "other"}, other)
}

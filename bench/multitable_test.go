package bench

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/catalog"
	"github.com/godelta/delta/catalog/catalogtest"
	"github.com/godelta/delta/catalog/server"
	"github.com/godelta/delta/catalogmanaged"
	"github.com/godelta/delta/catalogmanaged/uc"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/logstore/s3"
	"github.com/godelta/delta/testutil/testserver"
)

// BenchmarkCatalogCommitS3 is BenchmarkCatalogCommit on the S3 test
// server (versitygw on loopback): a direct commit (put-if-absent with
// If-None-Match) against one through a catalog (staged put, ratify,
// published put).
func BenchmarkCatalogCommitS3(b *testing.B) {
	srv, cfg, err := testserver.StartS3()
	testserver.Require(b, srv, err)
	defer srv.Stop()
	var n atomic.Int64
	store := func(b *testing.B) logstore.Store {
		st, err := s3.New(context.Background(), cfg.Bucket, fmt.Sprintf("bench%d", n.Add(1)), s3.Options{
			Region: cfg.Region, Endpoint: cfg.Endpoint, PathStyle: true, AccessKey: cfg.AccessKey, SecretKey: cfg.SecretKey})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		return st
	}
	props := map[string]string{"delta.enableInCommitTimestamps": "true"}
	managed := map[string]string{"delta.enableInCommitTimestamps": "true", "delta.feature.catalogManaged": "supported"}
	b.Run("direct", func(b *testing.B) {
		benchCatalogCommitOn(b, store(b), props, func(base logstore.Store) logstore.Store { return base })
	})
	b.Run("memory-catalog", func(b *testing.B) {
		cat := catalogmanaged.NewMemory()
		if err := cat.Manage("t", -1); err != nil {
			b.Fatal(err)
		}
		benchCatalogCommitOn(b, store(b), managed, func(base logstore.Store) logstore.Store { return catalogmanaged.New(base, cat.Table("t")) })
	})
	b.Run("uc-http", func(b *testing.B) {
		cat := catalogmanaged.NewMemory()
		if err := cat.Manage("t", -1); err != nil {
			b.Fatal(err)
		}
		tables := uc.CatalogFunc(func(ctx context.Context, id, uri string) (catalogmanaged.Client, error) { return cat.Table(id), nil })
		hs := httptest.NewServer(http.StripPrefix("/api", uc.Handler(tables, "")))
		defer hs.Close()
		client := uc.NewClient(hs.URL+"/api", "", hs.Client())
		benchCatalogCommitOn(b, store(b), managed, func(base logstore.Store) logstore.Store {
			return catalogmanaged.New(base, client.Table("t", "file://t"))
		})
	})
}

// BenchmarkMultiTableCommit commits one file to each of N catalog-managed
// tables on local disk through the catalog server (SQLite database,
// commits API over loopback HTTP): "multi" as one multi-table
// transaction (the tables' commits run concurrently and are ratified in
// one database transaction), "single" as N one-table commits one after
// the other, the same work without the atomicity. Each table is opened
// through the catalog and its latest snapshot loaded in every operation,
// as a service handling one request would. ns/op is per transaction (N
// commits); transactions per second = 1e9 / ns/op.
func BenchmarkMultiTableCommit(b *testing.B) {
	for _, n := range []int{1, 2, 4} {
		for _, mode := range []string{"multi", "single"} {
			b.Run(fmt.Sprintf("tables=%d/%s", n, mode), func(b *testing.B) { benchMultiTable(b, n, mode == "multi") })
		}
	}
}

func benchMultiTable(b *testing.B, n int, multi bool) {
	ctx := context.Background()
	wh := b.TempDir()
	srv, err := server.Open(ctx, server.Config{Warehouse: "file://" + wh, DB: filepath.Join(b.TempDir(), "catalog.db"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(srv)
	defer hs.Close()
	st := srv.Store().(*catalog.SQLStore)
	if err := st.CreateNamespace(ctx, catalog.Namespace{"b"}, nil); err != nil {
		b.Fatal(err)
	}
	client := uc.NewClient(hs.URL+server.UCRoot, "", hs.Client())
	type table struct {
		store logstore.Store
		id    string
		c     catalogmanaged.Client
	}
	var tables []table
	for i := range n {
		dir := filepath.Join(wh, "b", fmt.Sprint("t", i))
		reg := catalogtest.ManagedTable(b, st, catalog.TableIdent{Namespace: catalog.Namespace{"b"}, Name: fmt.Sprint("t", i)}, dir)
		base, err := local.New(dir)
		if err != nil {
			b.Fatal(err)
		}
		defer base.Close()
		tables = append(tables, table{base, reg.ID, client.Table(reg.ID, reg.Location)})
	}
	k := 0
	commitOne := func(ctx context.Context, t *delta.Table) error {
		tx, err := t.Begin(ctx, delta.TxnOptions{Operation: "WRITE", NoCheckpoint: true})
		if err != nil {
			return err
		}
		tx.Add(benchAdd(k))
		_, err = tx.Commit(ctx)
		return err
	}
	for b.Loop() {
		k++
		if multi {
			m := delta.NewMultiTableTxn(client)
			for _, t := range tables {
				m.TableStore("t", t.store, t.id, t.c, commitOne)
			}
			if err := m.Commit(ctx); err != nil {
				b.Fatal(err)
			}
			continue
		}
		for _, t := range tables {
			tbl, err := delta.OpenStore(ctx, "t", catalogmanaged.New(t.store, t.c))
			if err != nil {
				b.Fatal(err)
			}
			if err := commitOne(ctx, tbl); err != nil {
				b.Fatal(err)
			}
		}
	}
}

package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/catalogmanaged"
	"github.com/godelta/delta/catalogmanaged/uc"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/txn"
)

// BenchmarkCatalogCommit is BenchmarkCommit's blind append of one file on
// local disk (synced), side by side: "direct" commits by put-if-absent of
// <v>.json; "memory-catalog" through catalogmanaged with an in-process
// catalog (stage, ratify, publish: two synced puts); "uc-http" the same
// with the catalog behind Unity Catalog's commits API on a loopback HTTP
// server (two requests more: ratify and backfill). Every table has
// in-commit timestamps on, as a catalog-managed one must.
func BenchmarkCatalogCommit(b *testing.B) {
	props := map[string]string{"delta.enableInCommitTimestamps": "true"}
	managed := map[string]string{"delta.enableInCommitTimestamps": "true", "delta.feature.catalogManaged": "supported"}
	b.Run("direct", func(b *testing.B) {
		benchCatalogCommit(b, props, func(base logstore.Store) logstore.Store { return base })
	})
	b.Run("memory-catalog", func(b *testing.B) {
		cat := catalogmanaged.NewMemory()
		if err := cat.Manage("t", -1); err != nil {
			b.Fatal(err)
		}
		benchCatalogCommit(b, managed, func(base logstore.Store) logstore.Store { return catalogmanaged.New(base, cat.Table("t")) })
	})
	b.Run("uc-http", func(b *testing.B) {
		cat := catalogmanaged.NewMemory()
		if err := cat.Manage("t", -1); err != nil {
			b.Fatal(err)
		}
		tables := uc.CatalogFunc(func(ctx context.Context, id, uri string) (catalogmanaged.Client, error) { return cat.Table(id), nil })
		srv := httptest.NewServer(http.StripPrefix("/api", uc.Handler(tables, "")))
		defer srv.Close()
		client := uc.NewClient(srv.URL+"/api", "", srv.Client())
		benchCatalogCommit(b, managed, func(base logstore.Store) logstore.Store {
			return catalogmanaged.New(base, client.Table("t", "file://t"))
		})
	})
}

func benchCatalogCommit(b *testing.B, props map[string]string, view func(logstore.Store) logstore.Store) {
	base, err := local.New(filepath.Join(b.TempDir(), "t"))
	if err != nil {
		b.Fatal(err)
	}
	defer base.Close()
	benchCatalogCommitOn(b, base, props, view)
}

// benchCatalogCommitOn is benchCatalogCommit on the store base.
func benchCatalogCommitOn(b *testing.B, base logstore.Store, props map[string]string, view func(logstore.Store) logstore.Store) {
	ctx := context.Background()
	store := view(base)
	sch, err := schema.Parse(scanSchema)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := delta.CreateStore(ctx, "t", store, delta.TableSpec{Schema: sch, Properties: props}); err != nil {
		b.Fatal(err)
	}
	snap, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		tx := txn.Begin(snap, txn.Options{Operation: "WRITE", NoCheckpoint: true})
		tx.Add(benchAdd(i))
		if _, err := tx.Commit(ctx); err != nil {
			b.Fatal(err)
		}
		i++
		b.StopTimer()
		if snap, err = snap.Update(ctx); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

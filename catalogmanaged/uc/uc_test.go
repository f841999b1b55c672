package uc_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/catalogmanaged"
	"github.com/godelta/delta/catalogmanaged/uc"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/testutil"
)

const apiRoot = "/api/2.1/unity-catalog"

// server starts the Delta commits API over cat on loopback and returns
// its API root URL.
func server(t *testing.T, cat *catalogmanaged.Memory, token string) string {
	t.Helper()
	tables := uc.CatalogFunc(func(ctx context.Context, id, uri string) (catalogmanaged.Client, error) {
		return cat.Table(id), nil
	})
	mux := http.NewServeMux()
	mux.Handle(apiRoot+"/", http.StripPrefix(apiRoot, uc.Handler(tables, token)))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + apiRoot
}

type item struct {
	ID int64 `parquet:"id"`
}

var spec = delta.TableSpec{
	Schema: &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long}}},
	Properties: map[string]string{
		"delta.feature.catalogManaged":   "supported",
		"delta.enableInCommitTimestamps": "true",
	},
}

func ids(t *testing.T, tbl *delta.Table) []int64 {
	t.Helper()
	ctx := context.Background()
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s, err := tbl.Scan(snap, delta.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for r, err := range scan.All[item](ctx, s) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r.ID)
	}
	slices.Sort(out)
	return out
}

// A table created and written through the commits API: every commit is
// ratified over HTTP and published, and writers of separate views that
// race for versions each land once.
func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	cat := catalogmanaged.NewMemory()
	if err := cat.Manage("tid", -1); err != nil {
		t.Fatal(err)
	}
	url := server(t, cat, "secret")
	client := uc.NewClient(url, "secret", nil)
	base := memory.New()
	defer base.Close()
	view := func() *catalogmanaged.Store { return catalogmanaged.New(base, client.Table("tid", "memory://t")) }
	tbl, err := delta.CreateStore(ctx, "t", view(), spec)
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 3, 4
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Go(func() {
			tw, err := delta.OpenStore(ctx, "t", view())
			if err != nil {
				errs <- err
				return
			}
			for i := range each {
				if _, err := delta.AppendStructs(ctx, tw, slices.Values([]item{{int64(w*each + i)}}), delta.WriteOptions{}); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got := ids(t, tbl)
	if len(got) != writers*each {
		t.Fatalf("ids %v", got)
	}
	for i, id := range got {
		if id != int64(i) {
			t.Fatalf("ids %v: a lost or duplicated append", got)
		}
	}
	// Every version was published, and reported: the catalog holds none.
	r, err := cat.Table("tid").Commits(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.Latest != writers*each || len(r.Commits) != 0 {
		t.Fatalf("catalog: latest %d, %d commits held", r.Latest, len(r.Commits))
	}
	for v := range int64(writers*each + 1) {
		if _, err := base.Stat(ctx, deltalog.CommitKey(v)); err != nil {
			t.Fatalf("version %d not published: %v", v, err)
		}
	}
}

// The corpus table kernel-rs/catalog_managed_0, its staged commits
// ratified through the API: version 2, 200 rows.
func TestCorpusOverHTTP(t *testing.T) {
	ctx := context.Background()
	src := filepath.Join(testutil.CorpusDir(t), "kernel-rs", "catalog_managed_0")
	dir := t.TempDir()
	if err := testutil.CopyTree(src, dir); err != nil {
		t.Fatal(err)
	}
	base, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer base.Close()
	cat := catalogmanaged.NewMemory()
	if err := cat.Manage("64dcd182-b3b4-4ee0-88e0-63c159a4121c", 0); err != nil {
		t.Fatal(err)
	}
	client := uc.NewClient(server(t, cat, ""), "", nil).Table("64dcd182-b3b4-4ee0-88e0-63c159a4121c", "file://"+dir)
	names, _ := filepath.Glob(filepath.Join(dir, "_delta_log", "_staged_commits", "*.json"))
	slices.Sort(names)
	for i, n := range names {
		key := deltalog.StagedDir + filepath.Base(n)
		if err := client.Commit(ctx, catalogmanaged.Commit{Version: int64(i + 1), Key: key, Size: 1, Timestamp: 1}); err != nil {
			t.Fatal(err)
		}
	}
	tbl, err := delta.OpenStore(ctx, "catalog_managed_0", catalogmanaged.New(base, client))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s, err := tbl.Scan(snap, delta.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, err := range s.Rows(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if snap.Version() != 2 || n != 200 {
		t.Fatalf("version %d, %d rows; want 2 and 200", snap.Version(), n)
	}
}

// The answers of the API, kind by kind.
func TestAnswers(t *testing.T) {
	ctx := context.Background()
	cat := catalogmanaged.NewMemory()
	if err := cat.Manage("tid", 0); err != nil {
		t.Fatal(err)
	}
	url := server(t, cat, "secret")
	tc := uc.NewClient(url, "secret", nil).Table("tid", "memory://t")
	first := catalogmanaged.Commit{Version: 1, Key: deltalog.StagedCommitKey(1, "7d17ac10-5cc3-401b-bd1a-9c82dd2ea032"), Size: 10, Timestamp: 5}
	other := catalogmanaged.Commit{Version: 1, Key: deltalog.StagedCommitKey(1, "b91807ba-fe18-488c-a15e-c4807dbd2174"), Size: 10, Timestamp: 6}
	if err := tc.Commit(ctx, first); err != nil {
		t.Fatal(err)
	}
	if err := tc.Commit(ctx, first); err != nil {
		t.Fatalf("the same commit sent again: %v, want success", err)
	}
	if err := tc.Commit(ctx, other); !errors.Is(err, catalogmanaged.ErrConflict) || logstore.IsCertainFailure(err) {
		t.Fatalf("another commit of version 1: %v, want ErrConflict", err)
	}
	r, err := tc.Commits(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.Latest != 1 || len(r.Commits) != 1 || r.Commits[0].Key != first.Key || r.Commits[0].Size != 10 {
		t.Fatalf("commits %+v", r)
	}
	if err := tc.Published(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if r, err = tc.Commits(ctx); err != nil || r.Latest != 1 || len(r.Commits) != 0 {
		t.Fatalf("after publication: %+v %v", r, err)
	}

	wrong := uc.NewClient(url, "nope", nil).Table("tid", "memory://t")
	if _, err := wrong.Commits(ctx); err == nil {
		t.Fatal("a wrong token was accepted")
	}
	if err := wrong.Commit(ctx, catalogmanaged.Commit{Version: 2, Key: deltalog.StagedCommitKey(2, "x"), Timestamp: 1}); !logstore.IsCertainFailure(err) {
		t.Fatalf("commit with a wrong token: %v, want a certain failure", err)
	}
	missing := uc.NewClient(url, "secret", nil).Table("no-such-table", "memory://t")
	if _, err := missing.Commits(ctx); !errors.Is(err, deltaerr.ErrTableNotFound) {
		t.Fatalf("unknown table: %v", err)
	}
	if err := tc.Commit(ctx, catalogmanaged.Commit{Version: 2, Key: "_delta_log/00000000000000000002.json"}); !errors.Is(err, deltaerr.ErrInvalidArgument) {
		t.Fatalf("a commit that is not staged: %v", err)
	}
}

// A server whose answers break the API's rules is refused, and nothing
// outside the staging directory is named.
func TestHostileServer(t *testing.T) {
	ctx := context.Background()
	answers := map[string]string{
		"escaping file name": `{"commits":[{"version":1,"timestamp":1,"file_name":"../../../etc/passwd","file_size":1,"file_modification_timestamp":1}],"latest_table_version":1}`,
		"version mismatch":   `{"commits":[{"version":1,"timestamp":1,"file_name":"00000000000000000002.a.json","file_size":1,"file_modification_timestamp":1}],"latest_table_version":2}`,
		"past the latest":    `{"commits":[{"version":5,"timestamp":1,"file_name":"00000000000000000005.a.json","file_size":1,"file_modification_timestamp":1}],"latest_table_version":2}`,
		"negative latest":    `{"commits":[],"latest_table_version":-3}`,
		"not json":           `<html>`,
		"negative file size": `{"commits":[{"version":1,"timestamp":1,"file_name":"00000000000000000001.a.json","file_size":-1,"file_modification_timestamp":1}],"latest_table_version":1}`,
	}
	for name, body := range answers {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, body)
			}))
			defer srv.Close()
			_, err := uc.NewClient(srv.URL, "", nil).Table("t", "memory://t").Commits(ctx)
			if !errors.Is(err, deltaerr.ErrCorrupt) {
				t.Fatalf("got %v, want ErrCorrupt", err)
			}
		})
	}
}

package delta

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/internal/logcache"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/testutil/countstore"
	"github.com/godelta/delta/testutil/testserver"
)

// logCacheBackends start each cloud backend's loopback server and return
// the URI of a table on it, with the environment set as a user would set
// it for that URI.
var logCacheBackends = []struct {
	name  string
	start func(t *testing.T) string
}{
	{"s3", func(t *testing.T) string {
		srv, cfg, err := testserver.StartS3()
		testserver.Require(t, srv, err)
		t.Cleanup(srv.Stop)
		t.Setenv("AWS_ACCESS_KEY_ID", cfg.AccessKey)
		t.Setenv("AWS_SECRET_ACCESS_KEY", cfg.SecretKey)
		return fmt.Sprintf("s3://%s/cached/t?endpoint=%s&region=%s&path_style=true", cfg.Bucket, cfg.Endpoint, cfg.Region)
	}},
	{"gcs", func(t *testing.T) string {
		srv, err := testserver.StartGCS()
		testserver.Require(t, srv, err)
		t.Cleanup(srv.Stop)
		t.Setenv("STORAGE_EMULATOR_HOST", srv.Addr)
		return "gs://" + testserver.GCSBucket + "/cached/t"
	}},
	{"azblob", func(t *testing.T) string {
		srv, cfg, err := testserver.StartAzurite()
		testserver.Require(t, srv, err)
		t.Cleanup(srv.Stop)
		t.Setenv("AZURE_STORAGE_CONNECTION_STRING", cfg.ConnectionString)
		return "az://" + cfg.Container + "/cached/t"
	}},
}

// The log cache through OpenWith, on each cloud backend's test server: a
// second open of the table, as a new process would make it, reads the
// checkpoint from the cache and only the new commits from the store, and
// sees the same rows; a table deleted and created again at the same path
// is read anew, not from the cache.
func TestLogCacheCloud(t *testing.T) {
	for _, b := range logCacheBackends {
		t.Run(b.name, func(t *testing.T) { testLogCache(t, b.start(t)) })
	}
}

func testLogCache(t *testing.T, uri string) {
	ctx := context.Background()
	cacheDir := t.TempDir()

	var counter *countstore.Store
	wrapForTest = func(st logstore.Store) logstore.Store {
		counter = countstore.New(st, logcache.Cacheable) // log files only
		return counter
	}
	t.Cleanup(func() { wrapForTest = nil })

	write := func(first int64) {
		t.Helper()
		tbl, err := OpenWith(ctx, uri, OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer tbl.Close()
		for i := first; i < first+3; i++ {
			if _, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(i), schema.StringValue("p"), schema.StringValue("w")}}, WriteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	create := func() {
		t.Helper()
		st, err := ResolveContext(ctx, uri)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if _, err := CreateStore(ctx, uri, st, TableSpec{Schema: concSchema()}); err != nil {
			t.Fatal(err)
		}
	}
	// open opens the table with the cache, reads every row, and returns
	// them with what reached the store.
	open := func() ([]int64, countstore.Counts) {
		t.Helper()
		tbl, err := OpenWith(ctx, uri, OpenOptions{LogCacheDir: cacheDir})
		if err != nil {
			t.Fatal(err)
		}
		defer tbl.Close()
		counter.Reset()
		snap, err := tbl.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ids := scanIDs(t, tbl, snap)
		return ids, counter.Counts()
	}
	checkpoint := func() {
		t.Helper()
		tbl, err := OpenWith(ctx, uri, OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer tbl.Close()
		if _, err := tbl.Checkpoint(ctx); err != nil {
			t.Fatal(err)
		}
	}

	create()
	write(0)
	checkpoint()
	write(100)

	coldIDs, cold := open()
	warmIDs, warm := open()
	if !slices.Equal(coldIDs, warmIDs) || len(coldIDs) != 6 {
		t.Fatalf("rows cold %v, warm %v", coldIDs, warmIDs)
	}
	if cold.Bytes == 0 || warm.Gets+warm.Ranges != 0 {
		t.Errorf("log files read: cold %+v, warm %+v; want none read warm", cold, warm)
	}
	write(200)
	ids, after := open()
	if want := append(slices.Clone(coldIDs), 200, 201, 202); !slices.Equal(ids, slices.Sorted(slices.Values(want))) {
		t.Errorf("after 3 commits: rows %v", ids)
	}
	t.Logf("log reads: cold %+v, warm %+v, after 3 commits %+v", cold, warm, after)
	// Only the files of the new versions are read (the Stat of the
	// checkpoint is the snapshot checking it is still there).
	for _, r := range counter.Requests() {
		if f, ok := deltalog.ParseName(r.Key); (r.Op == "get" || r.Op == "range") && (!ok || f.Version < 7) {
			t.Errorf("after 3 commits, warm: %s; want only versions 7 to 9 read", r)
		}
	}

	// The table is deleted and created again at the same path: the cache
	// must not give the old table's log.
	st, err := ResolveContext(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for info, err := range logstore.Walk(ctx, st, "", nil) {
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, info.Key)
	}
	for _, k := range keys {
		if err := st.Delete(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	// The same history, so the same keys: versions 0 to 6, a checkpoint
	// at 3, other rows.
	create()
	write(1000)
	checkpoint()
	write(1100)
	ids, _ = open()
	if !slices.Equal(ids, []int64{1000, 1001, 1002, 1100, 1101, 1102}) {
		t.Errorf("re-created table: rows %v, want [1000 1001 1002 1100 1101 1102]", ids)
	}
}

func scanIDs(t *testing.T, tbl *Table, snap *Snapshot) []int64 {
	t.Helper()
	s, err := tbl.Scan(snap, ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for row, err := range s.Rows(t.Context()) {
		if err != nil {
			t.Fatal(err)
		}
		v, ok := row.Get("id")
		if !ok {
			t.Fatal("row without id")
		}
		ids = append(ids, v.Int64())
	}
	slices.Sort(ids)
	return ids
}

package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/catalog"
	"github.com/godelta/delta/catalog/catalogtest"
	"github.com/godelta/delta/catalog/server"
	"github.com/godelta/delta/catalogmanaged"
	"github.com/godelta/delta/catalogmanaged/ucrest"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
)

// localPath is the directory of a file:// location.
func localPath(t *testing.T, loc string) string {
	t.Helper()
	u, err := url.Parse(loc)
	if err != nil || u.Scheme != "file" {
		t.Fatalf("location %q is not a local one", loc)
	}
	return filepath.FromSlash(u.Path)
}

// A catalog-managed table created through the Delta-Tables API (staging
// table, version 0 written published, create table), then appended to by
// writers racing through ucrest's client: the server ratifies each
// version once, and every append lands once.
func TestDeltaAPIManagedTable(t *testing.T) {
	ctx := context.Background()
	wh := t.TempDir()
	srv, base := serve(t, server.Config{Warehouse: wh, DB: filepath.Join(t.TempDir(), "catalog.db"), Token: "tok"})
	st := srv.Store().(*catalog.SQLStore)
	for _, ns := range []catalog.Namespace{{"sales"}, {"sales", "eu"}} {
		if err := st.CreateNamespace(ctx, ns, nil); err != nil {
			t.Fatal(err)
		}
	}
	client := ucrest.NewClient(base+server.UCRoot, "tok", nil)

	cfg, err := client.Config(ctx, "sales")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ProtocolVersion != "1.0" || !slices.Contains(cfg.Endpoints, "POST /v1/catalogs/{catalog}/schemas/{schema}/tables/{table}") {
		t.Fatalf("config %+v", cfg)
	}
	if _, err := client.Config(ctx, "nope"); !errors.Is(err, deltaerr.ErrTableNotFound) {
		t.Fatalf("config of a missing catalog: %v", err)
	}
	if _, err := ucrest.NewClient(base+server.UCRoot, "wrong", nil).Config(ctx, "sales"); !errorsAsStatus(err, 401) {
		t.Fatalf("a wrong token: %v", err)
	}

	staged, err := client.CreateStagingTable(ctx, "sales", "eu", "orders")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.CreateStagingTable(ctx, "sales", "eu", "orders"); !errors.Is(err, catalogmanaged.ErrConflict) {
		t.Fatalf("staging a taken name: %v", err)
	}
	// Staged, the table has no version yet, and cannot be finalized
	// before its version 0 is written.
	name := ucrest.TableName{Catalog: "sales", Schema: "eu", Table: "orders"}
	if early, err := client.LoadTable(ctx, name); err != nil || early.LatestTableVersion != nil || early.Metadata.TableUUID != staged.TableID {
		t.Fatalf("load of a staged table: %+v, %v", early, err)
	}
	if _, err := client.CreateTable(ctx, "sales", "eu", ucrest.CreateTableRequest{Name: "orders", Location: staged.Location, TableType: ucrest.Managed,
		Columns: json.RawMessage(`{"type":"struct","fields":[]}`), Protocol: staged.RequiredProtocol, LastCommitTimestampMs: 1}); !errorsAsStatus(err, 400) || !errors.Is(err, logstore.ErrNotWritten) {
		t.Fatalf("create before version 0: %v", err)
	}
	dir := localPath(t, staged.Location)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	storage, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer storage.Close()
	props := map[string]string{"delta.feature.catalogManaged": "supported"}
	for k, v := range staged.RequiredProperties {
		if v != nil {
			props[k] = *v
		}
	}
	sch := &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long}}}
	if _, err := delta.CreateStore(ctx, "orders", catalogmanaged.New(storage, client.StagingClient()), delta.TableSpec{Schema: sch, Properties: props}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "_delta_log", "00000000000000000000.json")); err != nil {
		t.Fatalf("version 0 is not published: %v", err)
	}
	columns, err := json.Marshal(sch)
	if err != nil {
		t.Fatal(err)
	}
	created, err := client.CreateTable(ctx, "sales", "eu", ucrest.CreateTableRequest{Name: "orders", Location: staged.Location, TableType: ucrest.Managed,
		Columns: columns, Protocol: staged.RequiredProtocol, Properties: props, LastCommitTimestampMs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if created.Metadata.TableUUID != staged.TableID || created.LatestTableVersion == nil || *created.LatestTableVersion != 0 || created.Metadata.TableType != ucrest.Managed {
		t.Fatalf("created %+v", created)
	}

	view := func() *catalogmanaged.Store { return catalogmanaged.New(storage, client.Table(name, staged.TableID)) }
	const writers, each = 4, 3
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Go(func() {
			tw, err := delta.OpenStore(ctx, "orders", view())
			if err != nil {
				errs <- err
				return
			}
			for i := range each {
				if _, err := delta.AppendStructs(ctx, tw, slices.Values([]managedRow{{int64(w*each + i)}}), delta.WriteOptions{}); err != nil {
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
	tbl, err := delta.OpenStore(ctx, "orders", view())
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
	var ids []int64
	for r, err := range scan.All[managedRow](ctx, s) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	slices.Sort(ids)
	want := make([]int64, writers*each)
	for i := range want {
		want[i] = int64(i)
	}
	if snap.Version() != writers*each || !slices.Equal(ids, want) {
		t.Fatalf("version %d, ids %v; want version %d and each of 0..%d once", snap.Version(), ids, writers*each, writers*each-1)
	}

	loaded, err := client.LoadTable(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if *loaded.LatestTableVersion != writers*each || len(loaded.Commits) != 0 || loaded.Metadata.TableType != ucrest.Managed {
		t.Fatalf("loaded: latest %d, %d unpublished commits, type %s", *loaded.LatestTableVersion, len(loaded.Commits), loaded.Metadata.TableType)
	}
	creds, err := client.Credentials(ctx, name, ucrest.Read)
	if err != nil {
		t.Fatal(err)
	}
	if len(creds) != 1 || creds[0].Prefix != staged.Location || len(creds[0].Config) != 0 {
		t.Fatalf("credentials %v", creds)
	}

	// A taken version, a version past the next, and a table asserted
	// under another ID are conflicts; the catalog's view is unchanged.
	tc := client.Table(name, staged.TableID)
	for _, v := range []int64{3, writers*each + 5} {
		c := catalogmanaged.Commit{Version: v, Key: deltalog.StagedCommitKey(v, "11111111-1111-1111-1111-111111111111"), Size: 1, Timestamp: 1}
		if err := tc.Commit(ctx, c); !errors.Is(err, catalogmanaged.ErrConflict) {
			t.Fatalf("commit of version %d: %v", v, err)
		}
	}
	other := client.Table(name, "00000000-0000-0000-0000-000000000000")
	next := catalogmanaged.Commit{Version: writers*each + 1, Key: deltalog.StagedCommitKey(writers*each+1, "22222222-2222-2222-2222-222222222222"), Size: 1, Timestamp: 1}
	if err := other.Commit(ctx, next); !errors.Is(err, catalogmanaged.ErrConflict) {
		t.Fatalf("commit to a table asserted under another ID: %v", err)
	}
	if _, err := other.Commits(ctx); !errors.Is(err, deltaerr.ErrTableReplaced) {
		t.Fatalf("load of a table asserted under another ID: %v", err)
	}
	if _, err := client.Table(ucrest.TableName{Catalog: "sales", Schema: "eu", Table: "nope"}, "").Commits(ctx); !errors.Is(err, deltaerr.ErrTableNotFound) {
		t.Fatalf("a missing table: %v", err)
	}
	r, err := tc.Commits(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.Latest != writers*each || len(r.Commits) != 0 {
		t.Fatalf("after refused commits: %+v", r)
	}
}

func errorsAsStatus(err error, status int) bool {
	var e *ucrest.APIError
	return errors.As(err, &e) && e.Status == status
}

// kernel-rs's catalog_managed_0 (version 0 published, versions 1 and 2
// staged), registered in the catalog with its staged commits ratified,
// reads through the Delta-Tables API at version 2 with its 200 rows.
func TestDeltaAPICorpusTable(t *testing.T) {
	root := os.Getenv("GODELTA_TESTDATA")
	if root == "" {
		root = filepath.Join("..", "..", "..", "shared", "testdata")
	}
	dir, err := filepath.Abs(filepath.Join(root, "kernel-rs", "catalog_managed_0"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("corpus not found (set GODELTA_TESTDATA): %v", err)
	}
	ctx := context.Background()
	srv, base := serve(t, server.Config{Warehouse: t.TempDir(), DB: ":memory:"})
	st := srv.Store().(*catalog.SQLStore)
	for _, ns := range []catalog.Namespace{{"kernel"}, {"kernel", "rs"}} {
		if err := st.CreateNamespace(ctx, ns, nil); err != nil {
			t.Fatal(err)
		}
	}
	reg, err := st.RegisterTable(ctx, catalog.Table{Ident: catalog.TableIdent{Namespace: catalog.Namespace{"kernel", "rs"}, Name: "cm0"}, Location: "file://" + dir})
	if err != nil {
		t.Fatal(err)
	}
	client := ucrest.NewClient(base+server.UCRoot, "", nil)
	name := ucrest.TableName{Catalog: "kernel", Schema: "rs", Table: "cm0"}
	// Before the catalog ratifies anything, the table is its published
	// version 0.
	if r, err := client.Table(name, reg.ID).Commits(ctx); err != nil || r.Latest != 0 || len(r.Commits) != 0 {
		t.Fatalf("before ratification: %+v, %v", r, err)
	}
	staged, err := os.ReadDir(filepath.Join(dir, "_delta_log", "_staged_commits"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range staged {
		key := deltalog.StagedDir + e.Name()
		v, _, ok := deltalog.ParseStagedName(key)
		if !ok {
			t.Fatalf("%s is not a staged commit", e.Name())
		}
		if err := st.RatifyCommit(ctx, reg.ID, catalogmanaged.Commit{Version: v, Key: key, Timestamp: 1}); err != nil {
			t.Fatal(err)
		}
	}
	loaded, err := client.LoadTable(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if len(loaded.Commits) != 2 || loaded.Commits[0].Version != 2 {
		t.Fatalf("load_table answers commits %+v; want versions 2 and 1, newest first", loaded.Commits)
	}
	storage, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer storage.Close()
	tbl, err := delta.OpenStore(ctx, "cm0", catalogmanaged.New(storage, client.Table(name, reg.ID)))
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
	type row struct {
		Part1 *int32 `parquet:"part1"`
		Col1  *int32 `parquet:"col1"`
	}
	rows := 0
	for _, err := range scan.All[row](ctx, s) {
		if err != nil {
			t.Fatal(err)
		}
		rows++
	}
	if snap.Version() != 2 || rows != 200 {
		t.Fatalf("version %d with %d rows; want version 2 with 200", snap.Version(), rows)
	}
}

// The server's answers to requests of the Delta-Tables API, written as
// Unity Catalog's spec shows them, and to requests that break it: each
// refusal is the spec's error model with its DeltaErrorType.
func TestDeltaAPIRequests(t *testing.T) {
	ctx := context.Background()
	wh := t.TempDir()
	empty := t.TempDir() // allowed, and holds no table
	srv, base := serve(t, server.Config{Warehouse: wh, DB: ":memory:", Token: "tok", AllowLocations: []string{empty}})
	st := srv.Store().(*catalog.SQLStore)
	for _, ns := range []catalog.Namespace{{"sales"}, {"sales", "eu"}} {
		if err := st.CreateNamespace(ctx, ns, nil); err != nil {
			t.Fatal(err)
		}
	}
	reg := catalogtest.ManagedTable(t, st, catalog.TableIdent{Namespace: catalog.Namespace{"sales", "eu"}, Name: "t1"}, filepath.Join(wh, "sales", "t1"))
	api := base + server.UCRoot + ucrest.V1Path
	tbl := api + "/catalogs/sales/schemas/eu/tables/t1"
	staged := "00000000000000000001.a0b6ad8c-8d5d-4b0f-a1ff-5f1f7c3c7e01.json"
	addCommit := func(v int, name string) string {
		return fmt.Sprintf(`{"action": "add-commit", "commit": {"version": %d, "timestamp": 1700000001000, "file-name": %q, "file-size": 100, "file-modification-timestamp": 1700000001001}}`, v, name)
	}
	update := func(reqs string, updates ...string) string {
		return `{"requirements": [` + reqs + `], "updates": [` + strings.Join(updates, ",") + `]}`
	}
	uuidReq := fmt.Sprintf(`{"type": "assert-table-uuid", "uuid": %q}`, reg.ID)
	for _, tc := range []struct {
		name, method, url, body string
		status                  int
		typ                     string
	}{
		{"no token", "GET", tbl, "", 401, ""},
		{"config without catalog", "GET", api + "/config?protocol-versions=1.0", "", 400, "InvalidParameterValueException"},
		{"config of version 2 only", "GET", api + "/config?catalog=sales&protocol-versions=2.3", "", 400, "InvalidParameterValueException"},
		{"missing catalog", "GET", api + "/catalogs/nope/schemas/eu/tables/t1", "", 404, "NoSuchCatalogException"},
		{"missing schema", "GET", api + "/catalogs/sales/schemas/nope/tables/t1", "", 404, "NoSuchSchemaException"},
		{"missing table", "GET", api + "/catalogs/sales/schemas/eu/tables/nope", "", 404, "NoSuchTableException"},
		{"update not JSON", "POST", tbl, "{", 400, "BadRequestException"},
		{"update too large", "POST", tbl, `{"requirements": [], "updates": [], "x": "` + strings.Repeat("x", 1<<20) + `"}`, 413, "BadRequestException"},
		{"unsupported action", "POST", tbl, update("", `{"action": "set-properties", "updates": {"a": "b"}}`), 501, "NotImplementedException"},
		{"two commits", "POST", tbl, update("", addCommit(1, staged), addCommit(1, staged)), 400, "BadRequestException"},
		{"unknown requirement", "POST", tbl, update(`{"type": "assert-nothing"}`, addCommit(1, staged)), 400, "BadRequestException"},
		{"another table's uuid", "POST", tbl, update(`{"type": "assert-table-uuid", "uuid": "00000000-0000-0000-0000-000000000000"}`, addCommit(1, staged)), 409, "UpdateRequirementConflictException"},
		{"stale etag", "POST", tbl, update(`{"type": "assert-etag", "etag": "old"}`, addCommit(1, staged)), 409, "UpdateRequirementConflictException"},
		{"commit outside _staged_commits", "POST", tbl, update(uuidReq, addCommit(1, "../../00000000000000000001.json")), 400, "InvalidParameterValueException"},
		{"commit of a taken version", "POST", tbl, update(uuidReq, addCommit(0, "00000000000000000000.a0b6ad8c-8d5d-4b0f-a1ff-5f1f7c3c7e01.json")), 409, "CommitVersionConflictException"},
		{"backfill past latest", "POST", tbl, update(uuidReq, `{"action": "set-latest-backfilled-version", "latest-published-version": 5}`), 400, "InvalidParameterValueException"},
		{"credentials for writing only", "GET", tbl + "/credentials?operation=WRITE", "", 400, "InvalidParameterValueException"},
		{"create an unstaged managed table", "POST", api + "/catalogs/sales/schemas/eu/tables",
			`{"name": "t2", "location": "file:///nowhere", "table-type": "MANAGED", "columns": {"type": "struct", "fields": []}, "protocol": {"min-reader-version": 3, "min-writer-version": 7}, "properties": {}, "last-commit-timestamp-ms": 1}`, 404, "NoSuchTableException"},
		{"create an external table where none is", "POST", api + "/catalogs/sales/schemas/eu/tables",
			`{"name": "t2", "location": "file://` + filepath.ToSlash(empty) + `", "table-type": "EXTERNAL", "columns": {"type": "struct", "fields": []}, "protocol": {"min-reader-version": 1, "min-writer-version": 2}, "properties": {}, "last-commit-timestamp-ms": 1}`, 400, "InvalidParameterValueException"},
		{"stage in a missing schema", "POST", api + "/catalogs/sales/schemas/nope/staging-tables", `{"name": "t3"}`, 404, "NoSuchSchemaException"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			token := "tok"
			if tc.status == 401 {
				token = ""
			}
			a := call(t, tc.method, tc.url, token, tc.body)
			if a.status != tc.status {
				t.Fatalf("status %d, want %d: %s", a.status, tc.status, a.body)
			}
			if tc.typ == "" {
				return
			}
			var e struct {
				Error struct {
					Message string `json:"message"`
					Type    string `json:"type"`
					Code    int    `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(a.body), &e); err != nil || e.Error.Type != tc.typ || e.Error.Code != tc.status || e.Error.Message == "" {
				t.Fatalf("error %q (%v), want type %s", a.body, err, tc.typ)
			}
		})
	}

	// A commit as delta-kernel-rs's committer sends it: ratified, and
	// answered in the table's state.
	before := call(t, "GET", tbl, "tok", "")
	a := call(t, "POST", tbl, "tok", update(uuidReq, addCommit(1, staged)))
	if a.status != 200 {
		t.Fatalf("commit: %d %s", a.status, a.body)
	}
	var after, was ucrest.LoadTableResponse
	if err := json.Unmarshal([]byte(a.body), &after); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(before.body), &was); err != nil {
		t.Fatal(err)
	}
	if *after.LatestTableVersion != 1 || len(after.Commits) != 1 || after.Commits[0].FileName != staged || after.Metadata.Etag == was.Metadata.Etag ||
		after.Metadata.TableUUID != reg.ID || after.Metadata.TableType != ucrest.Managed {
		t.Fatalf("after the commit: %s (before: %s)", a.body, before.body)
	}
	// Publication reported: the catalog forgets the commit.
	a = call(t, "POST", tbl, "tok", update(uuidReq, `{"action": "set-latest-backfilled-version", "latest-published-version": 1}`))
	if err := json.Unmarshal([]byte(a.body), &after); err != nil || a.status != 200 || *after.LatestTableVersion != 1 || len(after.Commits) != 0 {
		t.Fatalf("after publication: %d %s", a.status, a.body)
	}
}

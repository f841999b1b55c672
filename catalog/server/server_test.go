package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/catalog"
	"github.com/godelta/delta/catalog/icebergrest"
	"github.com/godelta/delta/catalog/postgres"
	"github.com/godelta/delta/catalog/postgres/pgtest"
	"github.com/godelta/delta/catalog/server"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
)

// makeTable creates a Delta table at dir with a few rows; with UniForm
// Iceberg on when uniform.
func makeTable(t *testing.T, dir string, uniform bool) *delta.Table {
	t.Helper()
	ctx := context.Background()
	props := map[string]string{}
	if uniform {
		props[tableconfig.KeyUniversalFormatEnabledFormats] = "iceberg"
	}
	tbl, err := delta.Create(ctx, "file://"+dir, delta.TableSpec{
		Schema:     &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long}, {Name: "name", Type: schema.String, Nullable: true}}},
		Properties: props,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(1), schema.StringValue("a")}}, delta.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tbl.Close() })
	return tbl
}

// warehouse lays out a warehouse: sales.orders (UniForm), sales.plain
// (no Iceberg metadata), and directories that are no table.
func warehouse(t *testing.T) (string, *delta.Table) {
	t.Helper()
	wh := t.TempDir()
	orders := makeTable(t, filepath.Join(wh, "sales", "orders"), true)
	makeTable(t, filepath.Join(wh, "sales", "plain"), false)
	makeTable(t, filepath.Join(wh, "_hidden", "t"), true)
	for _, d := range []string{"sales/notatable/x", "empty"} {
		if err := os.MkdirAll(filepath.Join(wh, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return wh, orders
}

// serve opens a Server over the warehouse and serves it on loopback.
func serve(t *testing.T, cfg server.Config) (*server.Server, string) {
	t.Helper()
	cfg.Logger = quiet
	srv, err := server.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { hs.Close(); srv.Close() })
	return srv, hs.URL
}

var quiet = slog.New(slog.DiscardHandler)

type answer struct {
	status int
	body   string
}

func call(t *testing.T, method, url, token, body string) answer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rsp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer rsp.Body.Close()
	b, err := io.ReadAll(rsp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{rsp.StatusCode, string(b)}
}

// errorType checks that body is the Iceberg error model and returns its
// type.
func errorType(t *testing.T, a answer) string {
	t.Helper()
	var e icebergrest.ErrorResponse
	if err := json.Unmarshal([]byte(a.body), &e); err != nil || e.Error.Code != a.status || e.Error.Message == "" {
		t.Fatalf("status %d: not the error model: %q (%v)", a.status, a.body, err)
	}
	return e.Error.Type
}

func TestIcebergREST(t *testing.T) {
	wh, orders := warehouse(t)
	elsewhere := t.TempDir() // outside the warehouse, allowed
	srv, base := serve(t, server.Config{Warehouse: wh, AllowLocations: []string{elsewhere}})
	if r := srv.Registered; r.Namespaces != 1 || r.Tables != 2 || r.Skipped != 1 {
		t.Fatalf("warehouse scan: %+v", r)
	}
	other := filepath.Join(elsewhere, "other")
	makeTable(t, other, true)

	cases := []struct {
		name, method, path, body string
		status                   int
		errType                  string // for error answers
		contains                 string // in the body of others
	}{
		{"config", "GET", "/v1/config", "", 200, "", `"GET /v1/{prefix}/namespaces/{namespace}/tables/{table}"`},
		{"config with warehouse", "GET", "/v1/config?warehouse=x", "", 200, "", `"defaults":{}`},
		{"list namespaces", "GET", "/v1/namespaces", "", 200, "", `{"namespaces":[["sales"]]}`},
		{"list children of missing", "GET", "/v1/namespaces?parent=nope", "", 404, "NoSuchNamespaceException", ""},
		{"list tables", "GET", "/v1/namespaces/sales/tables", "", 200, "", `{"identifiers":[{"namespace":["sales"],"name":"orders"},{"namespace":["sales"],"name":"plain"}]}`},
		{"list tables page 1", "GET", "/v1/namespaces/sales/tables?pageSize=1", "", 200, "", `"next-page-token":"b3JkZXJz"`},
		{"list tables page 2", "GET", "/v1/namespaces/sales/tables?pageSize=1&pageToken=b3JkZXJz", "", 200, "", `{"identifiers":[{"namespace":["sales"],"name":"plain"}]}`},
		{"bad page size", "GET", "/v1/namespaces/sales/tables?pageSize=0", "", 400, "BadRequestException", ""},
		{"bad page token", "GET", "/v1/namespaces/sales/tables?pageToken=%21%21", "", 400, "BadRequestException", ""},
		{"list tables of missing", "GET", "/v1/namespaces/nope/tables", "", 404, "NoSuchNamespaceException", ""},
		{"load namespace", "GET", "/v1/namespaces/sales", "", 200, "", `"location":"file://`},
		{"load missing namespace", "GET", "/v1/namespaces/nope", "", 404, "NoSuchNamespaceException", ""},
		{"namespace exists", "HEAD", "/v1/namespaces/sales", "", 204, "", ""},
		{"namespace missing", "HEAD", "/v1/namespaces/nope", "", 404, "", ""},
		{"load table", "GET", "/v1/namespaces/sales/tables/orders", "", 200, "", `"metadata-location":"file://` + filepath.ToSlash(wh) + `/sales/orders/metadata/v2.metadata.json"`},
		{"load table without Iceberg metadata", "GET", "/v1/namespaces/sales/tables/plain", "", 404, "NoSuchTableException", ""},
		{"load missing table", "GET", "/v1/namespaces/sales/tables/nope", "", 404, "NoSuchTableException", ""},
		{"load table of missing namespace", "GET", "/v1/namespaces/nope/tables/orders", "", 404, "NoSuchNamespaceException", ""},
		{"table exists", "HEAD", "/v1/namespaces/sales/tables/orders", "", 204, "", ""},
		{"table missing", "HEAD", "/v1/namespaces/sales/tables/nope", "", 404, "", ""},
		{"create namespace", "POST", "/v1/namespaces", `{"namespace":["ops"],"properties":{"owner":"me"}}`, 200, "", `{"namespace":["ops"],"properties":{"owner":"me"}}`},
		{"create nested namespace", "POST", "/v1/namespaces", `{"namespace":["ops","eu"]}`, 200, "", `"namespace":["ops","eu"]`},
		{"list nested", "GET", "/v1/namespaces?parent=ops", "", 200, "", `[["ops","eu"]]`},
		{"load nested (%1F)", "GET", "/v1/namespaces/ops%1Feu", "", 200, "", `"namespace":["ops","eu"]`},
		{"create existing namespace", "POST", "/v1/namespaces", `{"namespace":["sales"]}`, 409, "AlreadyExistsException", ""},
		{"create under missing parent", "POST", "/v1/namespaces", `{"namespace":["x","y"]}`, 404, "NoSuchNamespaceException", ""},
		{"create invalid name", "POST", "/v1/namespaces", `{"namespace":[".."]}`, 400, "BadRequestException", ""},
		{"create empty namespace", "POST", "/v1/namespaces", `{"namespace":[]}`, 400, "BadRequestException", ""},
		{"create malformed JSON", "POST", "/v1/namespaces", `{"namespace":`, 400, "BadRequestException", ""},
		{"create trailing data", "POST", "/v1/namespaces", `{"namespace":["q"]} {}`, 400, "BadRequestException", ""},
		{"drop non-empty namespace", "DELETE", "/v1/namespaces/sales", "", 409, "NamespaceNotEmptyException", ""},
		{"drop namespace with a child", "DELETE", "/v1/namespaces/ops", "", 409, "NamespaceNotEmptyException", ""},
		{"drop nested namespace", "DELETE", "/v1/namespaces/ops%1Feu", "", 204, "", ""},
		{"drop missing namespace", "DELETE", "/v1/namespaces/nope", "", 404, "NoSuchNamespaceException", ""},
		{"register from metadata file", "POST", "/v1/namespaces/ops/register", `{"name":"other","metadata-location":"file://` + filepath.ToSlash(other) + `/metadata/v1.metadata.json"}`, 200, "", `/metadata/v2.metadata.json"`},
		{"register table root", "POST", "/v1/namespaces/ops/register", `{"name":"plain2","metadata-location":"file://` + filepath.ToSlash(wh) + `/sales/plain"}`, 200, "", `{"config":{}}`},
		{"register taken name", "POST", "/v1/namespaces/sales/register", `{"name":"orders","metadata-location":"file://` + filepath.ToSlash(other) + `"}`, 409, "AlreadyExistsException", ""},
		{"register in missing namespace", "POST", "/v1/namespaces/nope/register", `{"name":"t","metadata-location":"file://` + filepath.ToSlash(other) + `"}`, 404, "NoSuchNamespaceException", ""},
		{"register no Delta table", "POST", "/v1/namespaces/ops/register", `{"name":"t","metadata-location":"file://` + filepath.ToSlash(wh) + `/empty"}`, 400, "BadRequestException", ""},
		{"register metadata outside metadata/", "POST", "/v1/namespaces/ops/register", `{"name":"t","metadata-location":"file:///x/v1.metadata.json"}`, 400, "BadRequestException", ""},
		{"register without location", "POST", "/v1/namespaces/ops/register", `{"name":"t"}`, 400, "BadRequestException", ""},
		{"register overwrite", "POST", "/v1/namespaces/ops/register", `{"name":"t","metadata-location":"file://` + filepath.ToSlash(other) + `","overwrite":true}`, 400, "BadRequestException", ""},
		{"register invalid name", "POST", "/v1/namespaces/ops/register", `{"name":"a/b","metadata-location":"file://` + filepath.ToSlash(other) + `"}`, 400, "BadRequestException", ""},
		{"list after registrations", "GET", "/v1/namespaces/ops/tables", "", 200, "", `[{"namespace":["ops"],"name":"other"},{"namespace":["ops"],"name":"plain2"}]`},
		{"create table (not supported)", "POST", "/v1/namespaces/sales/tables", `{}`, 406, "UnsupportedOperationException", ""},
		{"commit (not supported)", "POST", "/v1/namespaces/sales/tables/orders", `{}`, 406, "UnsupportedOperationException", ""},
		{"drop table (not supported)", "DELETE", "/v1/namespaces/sales/tables/orders", ``, 406, "UnsupportedOperationException", ""},
		{"wrong method", "PUT", "/v1/namespaces", `{}`, 405, "UnsupportedOperationException", ""},
		{"unknown route", "GET", "/v2/anything", "", 404, "NotFoundException", ""},
	}
	for _, c := range cases {
		a := call(t, c.method, base+c.path, "", c.body)
		if a.status != c.status {
			t.Fatalf("%s: status %d, want %d: %s", c.name, a.status, c.status, a.body)
		}
		switch {
		case c.method == "HEAD":
			if a.body != "" {
				t.Fatalf("%s: HEAD with a body %q", c.name, a.body)
			}
		case c.errType != "":
			if got := errorType(t, a); got != c.errType {
				t.Fatalf("%s: error type %s, want %s: %s", c.name, got, c.errType, a.body)
			}
		case !strings.Contains(a.body, c.contains):
			t.Fatalf("%s: body %s\nwant it to contain %s", c.name, a.body, c.contains)
		}
	}

	// A commit to the table: the next load serves the metadata it
	// converted.
	a := call(t, "GET", base+"/v1/namespaces/sales/tables/orders", "", "")
	var before icebergrest.LoadTableResult
	if err := json.Unmarshal([]byte(a.body), &before); err != nil {
		t.Fatal(err)
	}
	if _, err := orders.AppendRows(context.Background(), [][]schema.Value{{schema.LongValue(2), schema.StringValue("b")}}, delta.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	a = call(t, "GET", base+"/v1/namespaces/sales/tables/orders", "", "")
	var after icebergrest.LoadTableResult
	if err := json.Unmarshal([]byte(a.body), &after); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(after.MetadataLocation, "/v3.metadata.json") || after.MetadataLocation == before.MetadataLocation {
		t.Fatalf("after a commit: %s, before %s", after.MetadataLocation, before.MetadataLocation)
	}
	var md struct {
		FormatVersion int `json:"format-version"`
		Snapshots     []struct {
			Summary map[string]string `json:"summary"`
		} `json:"snapshots"`
		Properties map[string]string `json:"properties"`
	}
	if err := json.Unmarshal(after.Metadata, &md); err != nil {
		t.Fatal(err)
	}
	if md.FormatVersion != 2 || md.Properties["delta-version"] != "2" {
		t.Fatalf("served metadata: format %d, properties %v", md.FormatVersion, md.Properties)
	}
}

func TestAuth(t *testing.T) {
	wh, _ := warehouse(t)
	_, base := serve(t, server.Config{Warehouse: wh, Token: "s3cret"})
	cases := []struct {
		name, path, token string
		status            int
	}{
		{"config without token", "/v1/config", "", 401},
		{"config with a wrong token", "/v1/config", "s3cre", 401},
		{"config with the token", "/v1/config", "s3cret", 200},
		{"load without token", "/v1/namespaces/sales/tables/orders", "", 401},
		{"load with the token", "/v1/namespaces/sales/tables/orders", "s3cret", 200},
		{"unknown route without token", "/nope", "", 401},
	}
	for _, c := range cases {
		a := call(t, "GET", base+c.path, c.token, "")
		if a.status != c.status {
			t.Fatalf("%s: %d, want %d", c.name, a.status, c.status)
		}
		if c.status == 401 && errorType(t, a) != "NotAuthorizedException" {
			t.Fatalf("%s: %s", c.name, a.body)
		}
	}
	// A scheme other than Bearer.
	req, _ := http.NewRequest("GET", base+"/v1/config", nil)
	req.Header.Set("Authorization", "Basic s3cret")
	rsp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	rsp.Body.Close()
	if rsp.StatusCode != 401 || rsp.Header.Get("WWW-Authenticate") == "" {
		t.Fatalf("Basic auth: %d %v", rsp.StatusCode, rsp.Header)
	}
}

// TestConcurrentRegistration registers one name from many clients at
// once over HTTP: one registration succeeds, the others get 409.
func TestConcurrentRegistration(t *testing.T) {
	wh, _ := warehouse(t)
	elsewhere := t.TempDir()
	_, base := serve(t, server.Config{Warehouse: wh, AllowLocations: []string{"file://" + filepath.ToSlash(elsewhere)}})
	var tables []string
	for i := range 4 {
		dir := filepath.Join(elsewhere, fmt.Sprint(i))
		makeTable(t, dir, i%2 == 0)
		tables = append(tables, "file://"+filepath.ToSlash(dir))
	}
	const clients = 8
	var wg sync.WaitGroup
	statuses := make(chan int, clients*2)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := icebergrest.NewClient(base, "", nil)
			if err != nil {
				t.Error(err)
				return
			}
			for _, name := range []string{"shared", fmt.Sprint("own", i)} {
				_, err = c.RegisterTable(context.Background(), catalog.TableIdent{Namespace: catalog.Namespace{"sales"}, Name: name}, tables[i%len(tables)])
				switch {
				case err == nil:
					statuses <- 200
				case errors.Is(err, catalog.ErrAlreadyExists):
					statuses <- 409
				default:
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for s := range statuses {
		count[s]++
	}
	if count[200] != clients+1 || count[409] != clients-1 {
		t.Fatalf("registrations: %v, want %d successes and %d conflicts", count, clients+1, clients-1)
	}
	c, err := icebergrest.NewClient(base, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := c.ListTables(context.Background(), catalog.Namespace{"sales"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 2+clients+1 {
		t.Fatalf("listed %d tables: %v", len(ids), ids)
	}
}

// TestRestart stops a server and opens the same database again: what was
// registered and created is still there, the warehouse is not registered
// twice, and a table added to the warehouse meanwhile joins.
func TestRestart(t *testing.T) {
	wh, _ := warehouse(t)
	db := filepath.Join(t.TempDir(), "catalog.db")
	ctx := context.Background()
	other := t.TempDir()
	srv, err := server.Open(ctx, server.Config{Warehouse: wh, DB: db, Logger: quiet, AllowLocations: []string{other}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(sctx, ln) }()
	c, err := icebergrest.NewClient("http://"+ln.Addr().String(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CreateNamespace(ctx, catalog.Namespace{"ops"}, map[string]string{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	makeTable(t, other, true)
	if _, err := c.RegisterTable(ctx, catalog.TableIdent{Namespace: catalog.Namespace{"ops"}, Name: "other"}, "file://"+other); err != nil {
		t.Fatal(err)
	}
	stop()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}

	makeTable(t, filepath.Join(wh, "sales", "late"), true)
	srv, base := serve(t, server.Config{Warehouse: wh, DB: db})
	if r := srv.Registered; r.Tables != 1 || r.Known != 2 || r.Namespaces != 0 {
		t.Fatalf("scan after restart: %+v", r)
	}
	c, err = icebergrest.NewClient(base, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	nss, err := c.ListNamespaces(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprintf("%d %s %s", len(nss), nss[0], nss[1]) != "2 ops sales" {
		t.Fatalf("namespaces after restart: %v", nss)
	}
	for _, id := range []string{"ops.other", "sales.orders", "sales.late"} {
		tid, _ := catalog.ParseTableIdent(id)
		res, err := c.LoadTable(ctx, tid)
		if err != nil {
			t.Fatalf("%s after restart: %v", id, err)
		}
		if res.MetadataLocation == "" {
			t.Fatalf("%s: no metadata location", id)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := server.Open(ctx, server.Config{}); !errors.Is(err, server.ErrConfig) {
		t.Fatalf("no warehouse: %v", err)
	}
	if _, err := server.Open(ctx, server.Config{Warehouse: "mem://wh"}); !errors.Is(err, server.ErrConfig) {
		t.Fatalf("no database for a warehouse that is not local: %v", err)
	}
	srv, err := server.Open(ctx, server.Config{Warehouse: "mem://wh", DB: ":memory:", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	srv.Close()
}

// TestReplicasOnPostgres runs two servers over one PostgreSQL database
// (started on loopback), as two replicas behind a balancer: what one
// registers, the other serves, and both scanned the warehouse without
// registering a table twice.
func TestReplicasOnPostgres(t *testing.T) {
	pg := pgtest.Start(t)
	dsn := pg.NewDB(t)
	wh, _ := warehouse(t)
	if _, err := server.Open(context.Background(), server.Config{Warehouse: wh, DB: dsn, Logger: quiet}); !errors.Is(err, server.ErrConfig) {
		t.Fatalf("a PostgreSQL URL without OpenDB: %v", err)
	}
	other := t.TempDir()
	a, baseA := serve(t, server.Config{Warehouse: wh, DB: dsn, OpenDB: postgres.Open, AllowLocations: []string{other}})
	b, baseB := serve(t, server.Config{Warehouse: wh, DB: dsn, OpenDB: postgres.Open, AllowLocations: []string{other}})
	if a.Registered.Tables != 2 || b.Registered.Known != 2 || b.Registered.Tables != 0 {
		t.Fatalf("warehouse scans: %+v then %+v", a.Registered, b.Registered)
	}
	if strings.Contains(b.DBPath, "postgres@") {
		t.Fatalf("DBPath shows credentials: %s", b.DBPath)
	}
	makeTable(t, other, true)
	ca, _ := icebergrest.NewClient(baseA, "", nil)
	cb, _ := icebergrest.NewClient(baseB, "", nil)
	ctx := context.Background()
	if err := ca.CreateNamespace(ctx, catalog.Namespace{"ops"}, nil); err != nil {
		t.Fatal(err)
	}
	id := catalog.TableIdent{Namespace: catalog.Namespace{"ops"}, Name: "other"}
	if _, err := cb.RegisterTable(ctx, id, "file://"+other); err != nil {
		t.Fatal(err)
	}
	if _, err := ca.RegisterTable(ctx, id, "file://"+other); !errors.Is(err, catalog.ErrAlreadyExists) {
		t.Fatalf("second registration through the other replica: %v", err)
	}
	res, err := ca.LoadTable(ctx, id)
	if err != nil || !strings.HasSuffix(res.MetadataLocation, "/metadata/v2.metadata.json") {
		t.Fatalf("load through the other replica: %+v %v", res.MetadataLocation, err)
	}
}

package ucrest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/godelta/delta/catalogmanaged"
	"github.com/godelta/delta/catalogmanaged/ucrest"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
)

// recorded is one request a test server saw.
type recorded struct {
	method, path, query, auth string
	body                      map[string]any
}

// fixed serves the same answer to every request and records them.
type fixed struct {
	status int
	body   string
	mu     sync.Mutex
	seen   []recorded
}

func (f *fixed) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	rec := recorded{method: r.Method, path: r.URL.EscapedPath(), query: r.URL.RawQuery, auth: r.Header.Get("Authorization")}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &rec.body)
	}
	f.mu.Lock()
	f.seen = append(f.seen, rec)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(f.status)
	_, _ = io.WriteString(w, f.body)
}

func (f *fixed) last(t *testing.T) recorded {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.seen) == 0 {
		t.Fatal("no request")
	}
	return f.seen[len(f.seen)-1]
}

func serve(t *testing.T, status int, body string) (*fixed, *ucrest.Client) {
	t.Helper()
	f := &fixed{status: status, body: body}
	hs := httptest.NewServer(f)
	t.Cleanup(hs.Close)
	return f, ucrest.NewClient(hs.URL+"/api/2.1/unity-catalog", "tok", nil)
}

var orders = ucrest.TableName{Catalog: "main", Schema: "default", Table: "orders"}

// A load_table answer written after the DeltaLoadTableResponse of Unity
// Catalog's api/delta.yaml: kebab-case names, commits newest first.
const loadAnswer = `{
  "metadata": {
    "etag": "e1",
    "table-type": "MANAGED",
    "table-uuid": "123e4567-e89b-12d3-a456-426614174000",
    "location": "s3://bucket/warehouse/catalog/schema/orders",
    "created-time": 1700000000000,
    "updated-time": 1700000001000,
    "columns": {"type": "struct", "fields": [{"name": "id", "type": "long", "nullable": false, "metadata": {}}]},
    "partition-columns": [],
    "properties": {"delta.enableInCommitTimestamps": "true"},
    "last-commit-version": 0,
    "last-commit-timestamp-ms": 1700000000000
  },
  "commits": [
    {"version": 7, "timestamp": 1700000007000, "file-name": "00000000000000000007.a0b6ad8c-8d5d-4b0f-a1ff-5f1f7c3c7e01.json", "file-size": 700, "file-modification-timestamp": 1700000007001},
    {"version": 6, "timestamp": 1700000006000, "file-name": "00000000000000000006.4d6a5b3f-0a51-4d5c-9f0e-1f1c7e9b5a02.json", "file-size": 600, "file-modification-timestamp": 1700000006001}
  ],
  "latest-table-version": 7
}`

func TestLoadTableWire(t *testing.T) {
	f, c := serve(t, 200, loadAnswer)
	ctx := context.Background()
	resp, err := c.LoadTable(ctx, orders)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Metadata.TableType != "MANAGED" || resp.Metadata.Location != "s3://bucket/warehouse/catalog/schema/orders" ||
		resp.Metadata.CreatedTime != 1700000000000 || *resp.Metadata.LastCommitVersion != 0 || *resp.LatestTableVersion != 7 || len(resp.Commits) != 2 {
		t.Fatalf("decoded %+v", resp)
	}
	got := f.last(t)
	if got.method != "GET" || got.path != "/api/2.1/unity-catalog/delta/v1/catalogs/main/schemas/default/tables/orders" || got.auth != "Bearer tok" {
		t.Fatalf("request %+v", got)
	}
	r, err := c.Table(orders, "123e4567-e89b-12d3-a456-426614174000").Commits(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []catalogmanaged.Commit{
		{Version: 6, Key: deltalog.StagedDir + "00000000000000000006.4d6a5b3f-0a51-4d5c-9f0e-1f1c7e9b5a02.json", Size: 600, Timestamp: 1700000006001},
		{Version: 7, Key: deltalog.StagedDir + "00000000000000000007.a0b6ad8c-8d5d-4b0f-a1ff-5f1f7c3c7e01.json", Size: 700, Timestamp: 1700000007001},
	}
	if r.Latest != 7 || len(r.Commits) != 2 || !reflect.DeepEqual(r.Commits, want) {
		t.Fatalf("ratified %+v; want latest 7 and %+v", r, want)
	}
	// A name with characters of a path is one escaped segment.
	_, _ = c.LoadTable(ctx, ucrest.TableName{Catalog: "a/b", Schema: "c d", Table: "t?"})
	if got := f.last(t).path; got != "/api/2.1/unity-catalog/delta/v1/catalogs/a%2Fb/schemas/c%20d/tables/t%3F" {
		t.Fatalf("escaped path %s", got)
	}
}

// Answers that break the API are deltaerr.ErrCorrupt (or, for another
// table under the name, deltaerr.ErrTableReplaced): the Store never reads
// outside _staged_commits/ on a server's word.
func TestHostileLoadAnswers(t *testing.T) {
	commit := func(v int, name string) string {
		return fmt.Sprintf(`{"version": %d, "timestamp": 1, "file-name": %q, "file-size": 1, "file-modification-timestamp": 1}`, v, name)
	}
	load := func(latest string, commits ...string) string {
		return `{"metadata": {"etag": "e", "table-type": "MANAGED", "table-uuid": "u1", "location": "file:///t", "created-time": 1, "updated-time": 1,
			"columns": {"type": "struct", "fields": []}, "properties": {}}, "commits": [` + strings.Join(commits, ",") + `]` + latest + `}`
	}
	staged1 := "00000000000000000001.a0b6ad8c-8d5d-4b0f-a1ff-5f1f7c3c7e01.json"
	for _, tc := range []struct {
		name, body string
		want       error
	}{
		{"commit outside _staged_commits", load(`, "latest-table-version": 1`, commit(1, "../../00000000000000000001.json")), deltaerr.ErrCorrupt},
		{"commit in a subdirectory", load(`, "latest-table-version": 1`, commit(1, "x/"+staged1)), deltaerr.ErrCorrupt},
		{"commit named for another version", load(`, "latest-table-version": 2`, commit(2, staged1)), deltaerr.ErrCorrupt},
		{"commit past latest", load(`, "latest-table-version": 0`, commit(1, staged1)), deltaerr.ErrCorrupt},
		{"commit without latest", load(``, commit(1, staged1)), deltaerr.ErrCorrupt},
		{"negative latest", load(`, "latest-table-version": -3`), deltaerr.ErrCorrupt},
		{"two commits of one version", load(`, "latest-table-version": 1`, commit(1, staged1), commit(1, "00000000000000000001.4d6a5b3f-0a51-4d5c-9f0e-1f1c7e9b5a02.json")), deltaerr.ErrCorrupt},
		{"not JSON", "<html>gateway</html>", deltaerr.ErrCorrupt},
		{"truncated", load(`, "latest-table-version": 1`)[:40], deltaerr.ErrCorrupt},
		{"oversized", `{"metadata": {"etag": "` + strings.Repeat("x", ucrest.MaxResponse) + `"}}`, deltaerr.ErrCorrupt},
		{"another table", strings.Replace(load(`, "latest-table-version": 0`), `"u1"`, `"u2"`, 1), deltaerr.ErrTableReplaced},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, c := serve(t, 200, tc.body)
			_, err := c.Table(orders, "u1").Commits(context.Background())
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
}

// update_table's answers map to what the commit pipeline acts on.
func TestCommitOutcomes(t *testing.T) {
	errBody := func(status int, typ string) string {
		return fmt.Sprintf(`{"error": {"message": "m", "type": %q, "code": %d}}`, typ, status)
	}
	for _, tc := range []struct {
		name        string
		status      int
		body        string
		conflict    bool
		notWritten  bool
		unknown     bool
		wantTypeErr string
	}{
		{"ratified", 200, loadAnswer, false, false, false, ""},
		{"version taken", 409, errBody(409, "CommitVersionConflictException"), true, false, false, "CommitVersionConflictException"},
		{"table replaced", 409, errBody(409, "UpdateRequirementConflictException"), true, false, false, "UpdateRequirementConflictException"},
		{"bad request", 400, errBody(400, "InvalidParameterValueException"), false, true, false, "InvalidParameterValueException"},
		{"no such table", 404, errBody(404, "NoSuchTableException"), false, true, false, "NoSuchTableException"},
		{"too many unpublished", 429, errBody(429, "ResourceExhaustedException"), false, false, true, "ResourceExhaustedException"},
		{"state unknown", 500, errBody(500, "CommitStateUnknownException"), false, false, true, "CommitStateUnknownException"},
		{"proxy page", 502, "<html>bad gateway</html>", false, false, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, c := serve(t, tc.status, tc.body)
			v := int64(7)
			err := c.Table(orders, "u1").Commit(context.Background(), catalogmanaged.Commit{Version: v, Key: deltalog.StagedCommitKey(v, "a0b6ad8c-8d5d-4b0f-a1ff-5f1f7c3c7e01"), Size: 700, Timestamp: 1700000007000})
			if errors.Is(err, catalogmanaged.ErrConflict) != tc.conflict || errors.Is(err, logstore.ErrNotWritten) != tc.notWritten ||
				errors.Is(err, logstore.ErrOutcomeUnknown) != tc.unknown || (tc.status == 200) != (err == nil) {
				t.Fatalf("err %v: conflict %v, not written %v, unknown %v", err, errors.Is(err, catalogmanaged.ErrConflict), errors.Is(err, logstore.ErrNotWritten), errors.Is(err, logstore.ErrOutcomeUnknown))
			}
			var ae *ucrest.APIError
			if tc.wantTypeErr != "" && (!errors.As(err, &ae) || ae.Type != tc.wantTypeErr) {
				t.Fatalf("err %v: want type %s", err, tc.wantTypeErr)
			}
			// The request is UC's DeltaUpdateTableRequest.
			got := f.last(t)
			want := `{"requirements":[{"type":"assert-table-uuid","uuid":"u1"}],"updates":[{"action":"add-commit","commit":{"file-modification-timestamp":1700000007000,"file-name":"00000000000000000007.a0b6ad8c-8d5d-4b0f-a1ff-5f1f7c3c7e01.json","file-size":700,"timestamp":1700000007000,"version":7}}]}`
			if b, _ := json.Marshal(got.body); got.method != "POST" || string(b) != want {
				t.Fatalf("request %s %s", got.method, b)
			}
		})
	}
	// No answer at all is an unknown outcome.
	hs := httptest.NewServer(http.NotFoundHandler())
	url := hs.URL
	hs.Close()
	err := ucrest.NewClient(url, "", nil).Table(orders, "").Commit(context.Background(), catalogmanaged.Commit{Version: 1, Key: deltalog.StagedCommitKey(1, "a0b6ad8c-8d5d-4b0f-a1ff-5f1f7c3c7e01")})
	if !errors.Is(err, logstore.ErrOutcomeUnknown) {
		t.Fatalf("no answer: %v", err)
	}
	// An inline commit, or a key that is not a staged commit of its
	// version, is refused before anything is sent.
	_, c := serve(t, 200, loadAnswer)
	for _, cm := range []catalogmanaged.Commit{{Version: 1, Inline: []byte("{}")}, {Version: 2, Key: deltalog.StagedCommitKey(1, "x")}, {Version: 1, Key: "_delta_log/00000000000000000001.json"}} {
		if err := c.Table(orders, "").Commit(context.Background(), cm); !errors.Is(err, logstore.ErrNotWritten) {
			t.Fatalf("commit %+v: %v", cm, err)
		}
	}
}

// The other requests and answers, as Unity Catalog's spec shows them.
func TestWireShapes(t *testing.T) {
	ctx := context.Background()

	f, c := serve(t, 200, `{"endpoints": ["GET /v1/catalogs/{catalog}/schemas/{schema}/tables/{table}", "POST /v1/catalogs/{catalog}/schemas/{schema}/tables/{table}"], "protocol-version": "1.0"}`)
	cfg, err := c.Config(ctx, "main")
	if err != nil || cfg.ProtocolVersion != "1.0" || len(cfg.Endpoints) != 2 {
		t.Fatalf("config %+v, %v", cfg, err)
	}
	if got := f.last(t); got.path != "/api/2.1/unity-catalog/delta/v1/config" || got.query != "catalog=main&protocol-versions=1.0" {
		t.Fatalf("config request %+v", got)
	}

	// The DeltaStagingTableResponse example of the spec.
	f, c = serve(t, 200, `{
	  "table-id": "123e4567-e89b-12d3-a456-426614174000",
	  "table-type": "MANAGED",
	  "location": "s3://bucket/warehouse/catalog/schema/table",
	  "storage-credentials": [{"prefix": "s3://bucket/warehouse/catalog/schema/table/", "operation": "READ_WRITE", "expiration-time-ms": 1234567890000,
	    "config": {"s3.access-key-id": "AK...example", "s3.secret-access-key": "ExampleKey", "s3.session-token": "token"}}],
	  "required-protocol": {"min-reader-version": 3, "min-writer-version": 7, "reader-features": ["deletionVectors", "vacuumProtocolCheck"],
	    "writer-features": ["catalogManaged", "deletionVectors", "inCommitTimestamp", "v2Checkpoint", "vacuumProtocolCheck"]},
	  "suggested-protocol": {"reader-features": ["typeWidening"], "writer-features": ["domainMetadata", "rowTracking", "typeWidening"]},
	  "required-properties": {"delta.checkpointPolicy": "v2"},
	  "suggested-properties": {"delta.rowTracking.materializedRowIdColumnName": null}
	}`)
	staged, err := c.CreateStagingTable(ctx, "main", "default", "sales")
	if err != nil {
		t.Fatal(err)
	}
	cred := staged.StorageCredentials[0]
	if staged.TableID != "123e4567-e89b-12d3-a456-426614174000" || staged.RequiredProtocol.MinWriterVersion != 7 || len(staged.RequiredProtocol.WriterFeatures) != 5 ||
		*staged.RequiredProperties["delta.checkpointPolicy"] != "v2" || staged.SuggestedProperties["delta.rowTracking.materializedRowIdColumnName"] != nil ||
		cred.Operation != ucrest.ReadWrite || *cred.ExpirationTimeMs != 1234567890000 || cred.Config["s3.session-token"] != "token" {
		t.Fatalf("staging table %+v", staged)
	}
	if strings.Contains(cred.String(), "ExampleKey") {
		t.Fatalf("a credential's String shows its secret: %s", cred)
	}
	if got := f.last(t); got.method != "POST" || got.path != "/api/2.1/unity-catalog/delta/v1/catalogs/main/schemas/default/staging-tables" || got.body["name"] != "sales" {
		t.Fatalf("staging request %+v", got)
	}

	// The DeltaCreateTableRequest example of the spec, as sent.
	f, c = serve(t, 200, loadAnswer)
	_, err = c.CreateTable(ctx, "main", "default", ucrest.CreateTableRequest{
		Name: "sales", Location: "s3://bucket/warehouse/catalog/schema/sales", TableType: ucrest.Managed,
		Columns:          json.RawMessage(`{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{}}]}`),
		PartitionColumns: []string{"id"},
		Protocol:         ucrest.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"deletionVectors"}, WriterFeatures: []string{"deletionVectors", "invariants"}},
		Properties:       map[string]string{"delta.enableDeletionVectors": "true"}, LastCommitTimestampMs: 42,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"columns":{"fields":[{"metadata":{},"name":"id","nullable":false,"type":"long"}],"type":"struct"},"last-commit-timestamp-ms":42,"location":"s3://bucket/warehouse/catalog/schema/sales","name":"sales","partition-columns":["id"],"properties":{"delta.enableDeletionVectors":"true"},"protocol":{"min-reader-version":3,"min-writer-version":7,"reader-features":["deletionVectors"],"writer-features":["deletionVectors","invariants"]},"table-type":"MANAGED"}`
	if b, _ := json.Marshal(f.last(t).body); string(b) != want {
		t.Fatalf("create table request\n%s\nwant\n%s", b, want)
	}

	// Publication is set-latest-backfilled-version.
	f, c = serve(t, 200, loadAnswer)
	if err := c.Table(orders, "").Published(ctx, 5); err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(f.last(t).body); string(b) != `{"requirements":[],"updates":[{"action":"set-latest-backfilled-version","latest-published-version":5}]}` {
		t.Fatalf("published request %s", b)
	}

	// Credentials: the DeltaCredentialsResponse, and a local path's, with
	// no expiry and an empty config.
	f, c = serve(t, 200, `{"storage-credentials": [{"prefix": "file:///tmp/t/", "operation": "READ", "config": {}}]}`)
	creds, err := c.Credentials(ctx, orders, ucrest.Read)
	if err != nil || len(creds) != 1 || creds[0].ExpirationTimeMs != nil || len(creds[0].Config) != 0 || creds[0].Operation != ucrest.Read {
		t.Fatalf("credentials %v, %v", creds, err)
	}
	if got := f.last(t); got.path != "/api/2.1/unity-catalog/delta/v1/catalogs/main/schemas/default/tables/orders/credentials" || got.query != "operation=READ" {
		t.Fatalf("credentials request %+v", got)
	}
}

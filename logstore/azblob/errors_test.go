package azblob_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/azblob"
	"github.com/godelta/delta/logstore/storetest"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/testutil/testserver"
)

// A valid base64 key that is not the account's.
const wrongKey = "V3JvbmdLZXlXcm9uZ0tleVdyb25nS2V5V3JvbmdLZXlXcm9uZ0tleVdyb25nS2V5V3Jvbmc="

func TestWrongCredentials(t *testing.T) {
	cfg := azurite(t)
	for name, opts := range map[string]azblob.Options{
		"account key":       {ServiceURL: cfg.ServiceURL, AccountName: cfg.AccountName, AccountKey: wrongKey},
		"connection string": {ConnectionString: strings.Replace(cfg.ConnectionString, cfg.AccountKey, wrongKey, 1)},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := azblob.New(t.Context(), cfg.Container, "p", opts)
			var re *azblob.ResponseError
			if !errors.Is(err, logstore.ErrPermission) || errors.Is(err, logstore.ErrNotFound) || !errors.As(err, &re) || re.StatusCode != http.StatusForbidden {
				t.Fatalf("New with a wrong key = %v; want ErrPermission over a 403 *azblob.ResponseError", err)
			}
			if strings.Contains(err.Error(), wrongKey) || strings.Contains(err.Error(), cfg.AccountKey) {
				t.Errorf("error shows a key: %v", err)
			}
			t.Log(err)
		})
	}
	if _, err := azblob.New(t.Context(), cfg.Container, "", azblob.Options{ServiceURL: cfg.ServiceURL, AccountName: cfg.AccountName, AccountKey: "not base64!" + cfg.AccountKey}); err == nil || strings.Contains(err.Error(), cfg.AccountKey) {
		t.Errorf("New with a malformed key = %v", err)
	}
}

func TestMissingContainer(t *testing.T) {
	cfg := azurite(t)
	_, err := azblob.New(t.Context(), "no-such-container", "", options(cfg))
	if !errors.Is(err, logstore.ErrRootNotFound) || errors.Is(err, logstore.ErrNotFound) {
		t.Fatalf("New on a missing container = %v, want ErrRootNotFound", err)
	}
	t.Log(err)

	// A container deleted under a Store: reads and writes fail with
	// ErrContainerNotFound, never as a missing object or a lost race.
	name := unique("gone")
	if err := testserver.CreateAzureContainer(t.Context(), cfg, name); err != nil {
		t.Fatal(err)
	}
	s, err := azblob.New(t.Context(), name, "", options(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if err := driver(s).DeleteContainer(t.Context()); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	_, getErr := s.Get(ctx, "k")
	_, statErr := s.Stat(ctx, "k")
	var listErr error
	for _, err := range s.List(ctx, "", "") {
		listErr = err
	}
	for op, err := range map[string]error{
		"Get": getErr, "Stat": statErr, "List": listErr,
		"PutIfAbsent": s.PutIfAbsent(ctx, "k", []byte("x")),
		"Put":         s.Put(ctx, "k", []byte("x")),
	} {
		if !errors.Is(err, logstore.ErrRootNotFound) || errors.Is(err, logstore.ErrNotFound) || errors.Is(err, logstore.ErrAlreadyExists) {
			t.Errorf("%s in a deleted container = %v, want ErrRootNotFound", op, err)
		}
	}
}

// A SAS token in the service URL never shows in an error.
func TestErrorsHideSAS(t *testing.T) {
	const sig = "c2VjcmV0LXNpZ25hdHVyZQ%3D%3D"
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	_, err := azblob.New(ctx, "c", "", azblob.Options{ServiceURL: "http://127.0.0.1:1/acct?sv=2024-01-01&sp=rl&sig=" + sig})
	if err == nil {
		t.Fatal("New against a closed port succeeded")
	}
	if msg := err.Error(); strings.Contains(msg, sig) || strings.Contains(msg, "c2VjcmV0") {
		t.Errorf("error shows the SAS signature: %s", msg)
	}
	t.Log(err)
}

// dropProxy forwards requests to Azurite. When armed, it forwards the next
// conditional PUT (If-None-Match: *) whose path contains match, lets it land,
// and then drops the connection instead of answering: the client cannot
// know whether the write happened.
type dropProxy struct {
	*httptest.Server
	target  *url.URL
	armed   atomic.Bool
	match   string
	dropped atomic.Int64
}

func newDropProxy(t *testing.T, serviceURL, match string) *dropProxy {
	target, err := url.Parse(serviceURL)
	if err != nil {
		t.Fatal(err)
	}
	target.Path = ""
	p := &dropProxy{target: target, match: match}
	rp := httputil.NewSingleHostReverseProxy(target)
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && r.Header.Get("If-None-Match") == "*" && strings.Contains(r.URL.Path, p.match) && p.armed.CompareAndSwap(true, false) {
			out := r.Clone(r.Context())
			out.URL.Scheme, out.URL.Host, out.RequestURI = target.Scheme, target.Host, ""
			resp, err := http.DefaultTransport.RoundTrip(out)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			p.dropped.Add(1)
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

// A PutIfAbsent whose answer is lost is reported as unknown, never as nil
// or ErrAlreadyExists, and is not retried into a false conflict.
func TestAmbiguousPutIfAbsent(t *testing.T) {
	cfg := azurite(t)
	p := newDropProxy(t, cfg.ServiceURL, "/amb-")
	s, err := azblob.New(t.Context(), cfg.Container, unique("amb"), azblob.Options{
		ServiceURL: p.URL + "/" + cfg.AccountName, AccountName: cfg.AccountName, AccountKey: cfg.AccountKey})
	if err != nil {
		t.Fatal(err)
	}
	p.armed.Store(true)
	err = s.PutIfAbsent(t.Context(), "_delta_log/00000000000000000001.json", []byte("mine"))
	var ae *azblob.Error
	if err == nil || errors.Is(err, logstore.ErrAlreadyExists) || !errors.As(err, &ae) || !ae.Unknown {
		t.Fatalf("PutIfAbsent with its answer lost = %v; want an *Error with Unknown set, not ErrAlreadyExists", err)
	}
	t.Log(err)
	if b, err := s.Get(t.Context(), "_delta_log/00000000000000000001.json"); err != nil || string(b) != "mine" {
		t.Fatalf("the write landed: Get = %q, %v", b, err)
	}
}

// An append whose commit put loses its answer still commits exactly once:
// txn reads the version back and finds its own txnId.
func TestAmbiguousCommit(t *testing.T) {
	cfg := azurite(t)
	prefix := unique("ambtbl")
	p := newDropProxy(t, cfg.ServiceURL, "/"+prefix+"/_delta_log/")
	s, err := azblob.New(t.Context(), cfg.Container, prefix, azblob.Options{
		ServiceURL: p.URL + "/" + cfg.AccountName, AccountName: cfg.AccountName, AccountKey: cfg.AccountKey})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	tbl, err := delta.CreateStore(ctx, "az://"+prefix, s, delta.TableSpec{Schema: ddl(t, "id BIGINT NOT NULL")})
	if err != nil {
		t.Fatal(err)
	}
	p.armed.Store(true)
	res, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(1)}, {schema.LongValue(2)}}, delta.WriteOptions{})
	v := res.Version
	if err != nil {
		t.Fatalf("AppendRows with the commit's answer lost: %v", err)
	}
	if p.dropped.Load() != 1 || v != 1 {
		t.Fatalf("dropped %d answers, committed version %d; want 1 and 1", p.dropped.Load(), v)
	}
	n := 0
	for info, err := range s.List(ctx, deltalog.LogDir, "") {
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(info.Key, ".json") {
			n++
		}
	}
	if n != 2 {
		t.Errorf("the log has %d commits, want 2 (create, append)", n)
	}
	if ids := scanIDs(t, tbl); len(ids) != 2 || ids[0] != 1 || ids[1] != 2 {
		t.Errorf("scan = %v, want [1 2]", ids)
	}
}

// The server dies while writers commit: every append after that fails,
// none reports a false success, nothing panics.
func TestServerStoppedMidCommit(t *testing.T) {
	srv, cfg, err := testserver.StartAzurite()
	srv = testserver.Require(t, srv, err)
	defer srv.Stop()
	s, err := azblob.New(t.Context(), cfg.Container, "t", options(cfg))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	tbl, err := delta.CreateStore(ctx, "az://t", s, delta.TableSpec{Schema: ddl(t, "id BIGINT NOT NULL")})
	if err != nil {
		t.Fatal(err)
	}
	var (
		committed atomic.Int64
		stopped   atomic.Bool
		mu        sync.Mutex
		after     []error // results of appends begun after the stop
		versions  = map[int64]string{}
	)
	var once sync.Once
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				wasStopped := stopped.Load()
				actx, cancel := context.WithTimeout(ctx, 30*time.Second)
				res, err := tbl.AppendRows(actx, [][]schema.Value{{schema.LongValue(int64(w*1000 + i))}}, delta.WriteOptions{})
				v := res.Version
				cancel()
				mu.Lock()
				if wasStopped {
					after = append(after, err)
				}
				if err == nil {
					who := fmt.Sprintf("writer %d append %d (begun after the stop: %v)", w, i, wasStopped)
					if prev, dup := versions[v]; dup {
						t.Errorf("version %d reported twice: by %s and by %s", v, prev, who)
					}
					versions[v] = who
				}
				mu.Unlock()
				if err == nil && committed.Add(1) == 12 {
					once.Do(func() { stopped.Store(true); srv.Stop() })
				}
				if wasStopped || (err != nil && stopped.Load()) {
					return
				}
				if err != nil {
					t.Errorf("append before the stop: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	if !stopped.Load() {
		t.Fatal("the server was never stopped")
	}
	for _, err := range after {
		if err == nil {
			t.Error("an append begun after the server stopped reported success")
		}
	}
	err = s.PutIfAbsent(ctx, "_delta_log/00000000000000099999.json", []byte("x"))
	var ae *azblob.Error
	if err == nil || errors.Is(err, logstore.ErrAlreadyExists) || !errors.As(err, &ae) || !ae.Unknown {
		t.Errorf("PutIfAbsent on a stopped server = %v; want an unknown outcome", err)
	}
	t.Logf("%d commits before the stop; %d appends after it all failed, e.g. %v", committed.Load(), len(after), firstErr(after))
}

func firstErr(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// TestConformanceMissingRoot runs the shared missing-root checks.
func TestConformanceMissingRoot(t *testing.T) {
	storetest.RunMissingRoot(t, func(t *testing.T) (logstore.Store, error) {
		return azblob.New(t.Context(), "no-such-container", "", options(azurite(t)))
	})
}

// accountSAS returns an account SAS query for the blob service with
// permissions perms, signed with the account key (the documented string
// to sign of versions before 2020-12-06: account, permissions, services,
// resource types, start, expiry, IP range, protocol, version, and a final
// newline).
func accountSAS(t *testing.T, cfg testserver.AzureConfig, perms string) string {
	t.Helper()
	const version, expiry = "2020-08-04", "2099-01-01T00:00:00Z"
	toSign := strings.Join([]string{cfg.AccountName, perms, "b", "sco", "", expiry, "", "https,http", version, ""}, "\n")
	key, err := base64.StdEncoding.DecodeString(cfg.AccountKey)
	if err != nil {
		t.Fatal(err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(toSign))
	return url.Values{"sv": {version}, "ss": {"b"}, "srt": {"sco"}, "sp": {perms}, "se": {expiry}, "spr": {"https,http"},
		"sig": {base64.StdEncoding.EncodeToString(mac.Sum(nil))}}.Encode()
}

// A SAS token in the service URL or in a connection string authorizes
// every method; one without write permission is refused with
// ErrPermission; neither shows the signature in an error.
func TestSAS(t *testing.T) {
	cfg := azurite(t)
	rw, ro := accountSAS(t, cfg, "rwdlac"), accountSAS(t, cfg, "rl")
	sig := url.Values{}
	if q, err := url.ParseQuery(ro); err == nil {
		sig = q
	}
	for name, opts := range map[string]azblob.Options{
		"service URL":       {ServiceURL: cfg.ServiceURL + "?" + rw},
		"connection string": {ConnectionString: "BlobEndpoint=" + cfg.ServiceURL + ";SharedAccessSignature=" + rw},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := azblob.New(t.Context(), cfg.Container, unique("sas"), opts)
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			if err := s.PutIfAbsent(ctx, "d/k", []byte("v")); err != nil {
				t.Fatal(err)
			}
			if err := s.PutIfAbsent(ctx, "d/k", []byte("w")); !errors.Is(err, logstore.ErrAlreadyExists) {
				t.Errorf("second PutIfAbsent = %v", err)
			}
			if b, err := s.Get(ctx, "d/k"); err != nil || string(b) != "v" {
				t.Errorf("Get = %q, %v", b, err)
			}
			n := 0
			for _, err := range s.List(ctx, "d/", "") {
				if err != nil {
					t.Fatal(err)
				}
				n++
			}
			if n != 1 {
				t.Errorf("List found %d keys, want 1", n)
			}
			if err := s.Delete(ctx, "d/k"); err != nil {
				t.Errorf("Delete = %v", err)
			}
		})
	}
	s, err := azblob.New(t.Context(), cfg.Container, unique("sasro"), azblob.Options{ServiceURL: cfg.ServiceURL + "?" + ro})
	if err != nil {
		t.Fatal(err)
	}
	err = s.PutIfAbsent(t.Context(), "k", []byte("v"))
	if !errors.Is(err, logstore.ErrPermission) || errors.Is(err, logstore.ErrAlreadyExists) {
		t.Errorf("PutIfAbsent with a read-only SAS = %v, want ErrPermission", err)
	}
	if err != nil && strings.Contains(err.Error(), sig.Get("sig")) {
		t.Errorf("the error shows the SAS signature: %v", err)
	}
	t.Log(err)
}

// UseDevelopmentStorage=true names Azurite's well-known account; the
// test's Azurite listens elsewhere, so DevelopmentStorageProxyUri cannot
// reach it either: this checks that the account and key are the ones
// Azurite accepts, by signing with them against the test's endpoint.
func TestDevelopmentStorageKey(t *testing.T) {
	cfg := azurite(t)
	_, account, key, _, err := azblob.ParseConnectionString("UseDevelopmentStorage=true")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := azblob.New(t.Context(), cfg.Container, "", azblob.Options{ServiceURL: cfg.ServiceURL, AccountName: account, AccountKey: key}); err != nil {
		t.Errorf("New with the development account = %v", err)
	}
}

package azblob_test

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/azblob"
	"github.com/godelta/delta/logstore/storetest"
	"github.com/godelta/delta/testutil/backendtest"
	"github.com/godelta/delta/testutil/testserver"
)

// One Azurite for the whole test binary, started on first use.
var shared struct {
	once sync.Once
	srv  *testserver.Server
	cfg  testserver.AzureConfig
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.srv != nil {
		shared.srv.Stop()
	}
	os.Exit(code)
}

// azurite returns the shared server, or skips (fails in CI) when Azurite
// is not installed.
func azurite(t testing.TB) testserver.AzureConfig {
	t.Helper()
	shared.once.Do(func() { shared.srv, shared.cfg, shared.err = testserver.StartAzurite() })
	testserver.Require(t, shared.srv, shared.err)
	return shared.cfg
}

var seq atomic.Int64

// unique returns a name no other test uses: a container name (lower case,
// digits, '-') or a prefix.
func unique(kind string) string {
	return fmt.Sprintf("%s-%d-%d", kind, os.Getpid(), seq.Add(1))
}

func options(cfg testserver.AzureConfig) azblob.Options {
	return azblob.Options{ServiceURL: cfg.ServiceURL, AccountName: cfg.AccountName, AccountKey: cfg.AccountKey}
}

// newStore returns a Store over a fresh prefix of the test container.
func newStore(t testing.TB, opts azblob.Options) *logstore.Portable {
	t.Helper()
	cfg := azurite(t)
	if opts.ServiceURL == "" && opts.ConnectionString == "" {
		o := options(cfg)
		o.PageSize, o.HTTPClient = opts.PageSize, opts.HTTPClient
		opts = o
	}
	s, err := azblob.New(t.Context(), cfg.Container, unique("p")+"/nested", opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) logstore.Store { return newStore(t, azblob.Options{}) })
}

// The suite again with pages of 7 names, so that every listing of more
// than 7 objects spans pages.
func TestConformanceSmallPages(t *testing.T) {
	storetest.Run(t, func(t *testing.T) logstore.Store { return newStore(t, azblob.Options{PageSize: 7}) })
}

// The suite on stores at the root of a container of their own (no prefix).
func TestConformanceContainerRoot(t *testing.T) {
	cfg := azurite(t)
	storetest.Run(t, func(t *testing.T) logstore.Store {
		name := unique("c")
		if err := testserver.CreateAzureContainer(t.Context(), cfg, name); err != nil {
			t.Fatal(err)
		}
		s, err := azblob.New(t.Context(), name, "", options(cfg))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// 16 writers race for each of 100 versions, all starting each version
// together: exactly one wins each, and the key holds the winner's bytes.
func TestPutIfAbsentRaceVersions(t *testing.T) {
	backendtest.PutRace(t, newStore(t, azblob.Options{}), 16, 100, true)
}

// countingClient counts the requests it sends, by query "comp".
type countingClient struct {
	lists atomic.Int64
}

func (c *countingClient) client() *http.Client {
	return &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		if r.URL.Query().Get("comp") == "list" {
			c.lists.Add(1)
		}
		return http.DefaultTransport.RoundTrip(r)
	})}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Listing over many pages of 7, from every start position; and the
// requests it takes: startFrom skips the pages before.
func TestListPagination(t *testing.T) {
	var cc countingClient
	s := newStore(t, azblob.Options{PageSize: 7, HTTPClient: cc.client()})
	ctx := t.Context()
	// Azurite answers 500 to a startFrom that is not valid UTF-8.
	want := backendtest.Pagination(t, s, backendtest.ListOptions{PageSize: 7, Sibling: newStore(t, azblob.Options{}), ValidUTF8: true})
	count := func(startAfter string) int64 {
		cc.lists.Store(0)
		for _, err := range s.List(ctx, backendtest.ListDir, startAfter) {
			if err != nil {
				t.Fatal(err)
			}
		}
		return cc.lists.Load()
	}
	full := count("")
	if full < int64(len(want)/7) {
		t.Errorf("a full listing of %d keys took %d requests with pages of 7", len(want), full)
	}
	// The last 7 keys take one or two requests, not a walk from the start.
	if k := want[len(want)-8]; count(k) > 2 {
		t.Errorf("List after %q took %d requests; startFrom not used?", k, cc.lists.Load())
	}
	t.Logf("%d keys over pages of 7: a full listing took %d List Blobs requests", len(want), full)
}

func TestReadEdges(t *testing.T) {
	s := newStore(t, azblob.Options{})
	ctx := t.Context()
	if err := s.Put(ctx, "obj", []byte("0123456789")); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "empty", nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key            string
		offset, length int64
		want           string
	}{
		{"obj", 8, 10, "89"}, // past the end
		{"obj", 10, 1, ""},   // at the end
		{"obj", 11, 1, ""},   // after the end
		{"obj", 4, 0, ""},    // zero length
		{"obj", 0, math.MaxInt64, "0123456789"},
		{"obj", math.MaxInt64 - 1, math.MaxInt64, ""},
		{"empty", 0, 1, ""},
		{"empty", 0, 0, ""},
	} {
		got, err := s.GetRange(ctx, tc.key, tc.offset, tc.length)
		if err != nil || string(got) != tc.want {
			t.Errorf("GetRange(%q, %d, %d) = %q, %v; want %q", tc.key, tc.offset, tc.length, got, err, tc.want)
		}
	}
	if _, err := s.GetRange(ctx, "missing", 0, 0); !errors.Is(err, logstore.ErrNotFound) {
		t.Errorf("GetRange(missing, 0, 0) = %v, want ErrNotFound", err)
	}
	info, err := s.Stat(ctx, "obj")
	if err != nil || info.Key != "obj" || info.Size != 10 || info.ModTime.IsZero() {
		t.Errorf("Stat = %+v, %v", info, err)
	}
	for _, op := range []func() error{
		func() error { _, err := s.Get(ctx, "missing"); return err },
		func() error { _, err := s.Stat(ctx, "missing"); return err },
		func() error { _, err := s.GetRange(ctx, "missing", 5, 5); return err },
	} {
		err := op()
		var re *azblob.ResponseError
		if !errors.Is(err, logstore.ErrNotFound) || !errors.As(err, &re) || re.StatusCode != 404 {
			t.Errorf("read of a missing object = %v; want ErrNotFound over a 404 *azblob.ResponseError", err)
		}
	}
	for range 2 {
		if err := s.Delete(ctx, "obj"); err != nil {
			t.Errorf("Delete = %v", err)
		}
	}
	if _, err := s.Get(ctx, "obj"); !errors.Is(err, logstore.ErrNotFound) {
		t.Errorf("Get after Delete = %v", err)
	}
}

func TestParseURI(t *testing.T) {
	for _, tc := range []struct{ uri, container, prefix, account string }{
		{"az://tables/events", "tables", "events", ""},
		{"az://tables/a/b/", "tables", "a/b", ""},
		{"az://tables", "tables", "", ""},
		{"azure://tables/x", "tables", "x", ""},
		{"abfss://tables@acct.dfs.core.windows.net/a/b", "tables", "a/b", "acct"},
		{"abfs://tables@acct.dfs.core.windows.net", "tables", "", "acct"},
	} {
		c, p, a, err := azblob.ParseURI(tc.uri)
		if err != nil || c != tc.container || p != tc.prefix || a != tc.account {
			t.Errorf("ParseURI(%q) = %q, %q, %q, %v; want %q, %q, %q", tc.uri, c, p, a, err, tc.container, tc.prefix, tc.account)
		}
	}
	for _, bad := range []string{"s3://b/k", "az:///x", "abfss://acct.dfs.core.windows.net/x", "az://c/x?sig=secret", "abfss://c:pw@a.dfs.core.windows.net/"} {
		if _, _, _, err := azblob.ParseURI(bad); err == nil {
			t.Errorf("ParseURI(%q) succeeded", bad)
		} else if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "pw") {
			t.Errorf("ParseURI(%q) error shows a secret: %v", bad, err)
		}
	}
}

// Open with the connection string from the environment reaches the same
// blobs as New.
func TestOpen(t *testing.T) {
	cfg := azurite(t)
	t.Setenv("AZURE_STORAGE_CONNECTION_STRING", cfg.ConnectionString)
	prefix := unique("open")
	s, err := azblob.Open(t.Context(), "az://"+cfg.Container+"/"+prefix+"/")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutIfAbsent(t.Context(), "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	s2, err := azblob.New(t.Context(), cfg.Container, prefix, options(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if b, err := s2.Get(t.Context(), "k"); err != nil || string(b) != "v" {
		t.Errorf("Get through New = %q, %v", b, err)
	}
	if driver(s).Prefix() != prefix+"/" || driver(s).Container() != cfg.Container {
		t.Errorf("Prefix, Container = %q, %q", driver(s).Prefix(), driver(s).Container())
	}
}

// driver returns the *azblob.Store under st, for its extras (Container, Prefix).
func driver(st logstore.Store) *azblob.Store {
	d, _ := logstore.DriverOf[*azblob.Store](st)
	return d
}

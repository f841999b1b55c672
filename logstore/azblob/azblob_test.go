package azblob_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/azblob"
	"github.com/godelta/delta/logstore/storetest"
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
func newStore(t testing.TB, opts azblob.Options) *azblob.Store {
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

// 16 writers race for each of 100 versions: exactly one wins each, and
// the key holds the winner's bytes.
func TestPutIfAbsentRaceVersions(t *testing.T) {
	const writers, versions = 16, 100
	s := newStore(t, azblob.Options{})
	ctx := t.Context()
	key := func(v int) string { return fmt.Sprintf("_delta_log/%020d.json", v) }
	payload := func(w, v int) []byte {
		return []byte(strings.Repeat(fmt.Sprintf("writer %02d version %03d|", w, v), 1+w*3))
	}
	errs := make([][]error, writers)
	for w := range writers {
		errs[w] = make([]error, versions)
	}
	// Each version is its own race: all writers start it together.
	for v := range versions {
		var wg sync.WaitGroup
		start := make(chan struct{})
		for w := range writers {
			wg.Go(func() {
				<-start
				errs[w][v] = s.PutIfAbsent(ctx, key(v), payload(w, v))
			})
		}
		close(start)
		wg.Wait()
	}
	wins := make([]int, writers)
	for v := range versions {
		winner := -1
		for w := range writers {
			switch err := errs[w][v]; {
			case err == nil:
				if winner >= 0 {
					t.Fatalf("version %d: writers %d and %d both won", v, winner, w)
				}
				winner = w
			case !errors.Is(err, logstore.ErrAlreadyExists):
				t.Errorf("version %d writer %d: %v, want nil or ErrAlreadyExists", v, w, err)
			}
		}
		if winner < 0 {
			t.Fatalf("version %d: no winner", v)
		}
		wins[winner]++
		got, err := s.Get(ctx, key(v))
		if err != nil || !bytes.Equal(got, payload(winner, v)) {
			t.Fatalf("version %d: Get = %.40q..., %v; want writer %d's bytes", v, got, err, winner)
		}
	}
	var n int
	for range s.List(ctx, "_delta_log/", "") {
		n++
	}
	if n != versions {
		t.Errorf("List found %d commits, want %d", n, versions)
	}
	t.Logf("wins per writer: %v", wins)
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

// Listing over many pages of 7: byte order, exclusive startAfter at every
// position and between, keys that are prefixes of others, and
// sub-directories that are not descended into.
func TestListPagination(t *testing.T) {
	var cc countingClient
	s := newStore(t, azblob.Options{PageSize: 7, HTTPClient: cc.client()})
	ctx := t.Context()
	const dir = "_delta_log/"
	var want []string
	for v := range 50 {
		want = append(want, fmt.Sprintf("%s%020d.json", dir, v))
	}
	want = append(want,
		dir+"00000000000000000010.checkpoint.parquet",
		dir+"0", dir+"00", dir+"000", // prefixes of one another and of the commits
		dir+"_last_checkpoint", dir+"a", dir+"ab", dir+"abc",
	)
	for _, k := range want {
		if err := s.Put(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	// Objects in sub-directories, sorting between the keys above, and
	// next to the directory.
	for _, k := range []string{
		dir + "00000000000000000007.json/below", dir + "0/x", dir + "000/y/z",
		dir + "_commits/00000000000000000001.uuid.json", dir + "ab/c",
		"_delta_log0", "_delta_log.json", "other/_delta_log/x",
	} {
		if err := s.Put(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(want)
	list := func(startAfter string) []string {
		var keys []string
		for info, err := range s.List(ctx, dir, startAfter) {
			if err != nil {
				t.Fatalf("List(%q): %v", startAfter, err)
			}
			if info.Size != int64(len(info.Key)) || info.ModTime.IsZero() {
				t.Errorf("List yielded %+v, want size %d and a ModTime", info, len(info.Key))
			}
			keys = append(keys, info.Key)
		}
		return keys
	}
	after := func(startAfter string) []string {
		i, _ := slices.BinarySearch(want, startAfter)
		for i < len(want) && want[i] <= startAfter {
			i++
		}
		return want[i:]
	}
	check := func(startAfter string) {
		t.Helper()
		if got, w := list(startAfter), after(startAfter); !slices.Equal(got, w) {
			t.Errorf("List(%q) =\n\t%q\nwant\n\t%q", startAfter, got, w)
		}
	}
	cc.lists.Store(0)
	check("")
	full := cc.lists.Load()
	if full < int64(len(want)/7) {
		t.Errorf("a full listing of %d keys took %d requests with pages of 7", len(want), full)
	}
	for i, k := range want {
		check(k)                                                // exclusive at every key
		check(k + "\x00")                                       // just after it
		check(k[:len(k)-1])                                     // a prefix of it
		check(k[:len(k)-1] + string(rune(k[len(k)-1]-1)) + "~") // just before it
		if i == len(want)-8 {
			// startFrom skips the pages before: the last 7 keys take one
			// or two requests, not a walk from the start.
			cc.lists.Store(0)
			list(k)
			if n := cc.lists.Load(); n > 2 {
				t.Errorf("List after %q took %d requests; startFrom not used?", k, n)
			}
		}
	}
	for _, sa := range []string{"_", "_delta_log", dir, "_delta_log0", dir + "~", dir + "00000000000000000007.json/", dir + "0/"} {
		check(sa)
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
		var re *azcore.ResponseError
		if !errors.Is(err, logstore.ErrNotFound) || !errors.As(err, &re) || re.StatusCode != 404 {
			t.Errorf("read of a missing object = %v; want ErrNotFound over a 404 *azcore.ResponseError", err)
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
	if s.Prefix() != prefix+"/" || s.Container() != cfg.Container {
		t.Errorf("Prefix, Container = %q, %q", s.Prefix(), s.Container())
	}
}

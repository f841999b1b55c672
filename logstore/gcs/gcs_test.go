package gcs_test

import (
	"bytes"
	"context"
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
	"time"

	"google.golang.org/api/googleapi"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/gcs"
	"github.com/godelta/delta/logstore/storetest"
	"github.com/godelta/delta/testutil/backendtest"
	"github.com/godelta/delta/testutil/testserver"
)

// One fake-gcs-server for the package, started on first use.
var (
	srvOnce sync.Once
	srv     *testserver.Server
	srvErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if srv != nil {
		srv.Stop()
	}
	os.Exit(code)
}

func server(t testing.TB) *testserver.Server {
	t.Helper()
	srvOnce.Do(func() { srv, srvErr = testserver.StartGCS() })
	return testserver.Require(t, srv, srvErr)
}

var seq atomic.Int64

// newStore returns a store on the package server under a fresh prefix.
func newStore(t testing.TB, opts gcs.Options) *logstore.Portable {
	t.Helper()
	s := server(t)
	opts.Endpoint = s.URL()
	prefix := fmt.Sprintf("%s-%d/table", strings.ReplaceAll(t.Name(), "/", "_"), seq.Add(1))
	st, err := gcs.New(t.Context(), testserver.GCSBucket, prefix, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) logstore.Store { return newStore(t, gcs.Options{}) })
}

// TestConformanceSmallPages runs the suite with listings of 3 names a page.
func TestConformanceSmallPages(t *testing.T) {
	storetest.Run(t, func(t *testing.T) logstore.Store { return newStore(t, gcs.Options{PageSize: 3}) })
}

// TestConformanceBucketRoot runs the suite with no prefix, each subtest on
// a bucket of its own.
func TestConformanceBucketRoot(t *testing.T) {
	storetest.Run(t, func(t *testing.T) logstore.Store {
		s := server(t)
		name := fmt.Sprintf("root-%d", seq.Add(1))
		if err := testserver.CreateGCSBucket(t.Context(), s, name); err != nil {
			t.Fatal(err)
		}
		st, err := gcs.New(t.Context(), name, "", gcs.Options{Endpoint: s.URL()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	})
}

// TestPutIfAbsentVersions races 16 writers over 100 commit keys, each
// writer trying every version in order, as committers do.
func TestPutIfAbsentVersions(t *testing.T) {
	backendtest.PutRace(t, newStore(t, gcs.Options{}), 16, 100, false)
}

// TestListPagination lists a directory, 7 names a page, from every
// startAfter position.
func TestListPagination(t *testing.T) {
	backendtest.Pagination(t, newStore(t, gcs.Options{PageSize: 7}), backendtest.ListOptions{PageSize: 7, Sibling: newStore(t, gcs.Options{})})
}

func TestGetRangeEdges(t *testing.T) {
	st := newStore(t, gcs.Options{})
	ctx := t.Context()
	if err := st.Put(ctx, "obj", []byte("0123456789")); err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, "empty", nil); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		key            string
		offset, length int64
		want           string
	}{
		{"obj", 0, 10, "0123456789"},
		{"obj", 0, 11, "0123456789"},
		{"obj", 9, 1, "9"},
		{"obj", 9, 5, "9"},
		{"obj", 10, 1, ""}, // at the end
		{"obj", 10, 0, ""},
		{"obj", 11, 5, ""}, // past the end
		{"obj", 1 << 40, 5, ""},
		{"obj", 3, 0, ""}, // zero length
		{"obj", 0, 0, ""},
		{"obj", 1, math.MaxInt64, "123456789"},
		{"obj", math.MaxInt64, math.MaxInt64, ""},
		{"empty", 0, 5, ""},
		{"empty", 0, 0, ""},
		{"empty", 3, 5, ""},
	}
	for _, tc := range tests {
		got, err := st.GetRange(ctx, tc.key, tc.offset, tc.length)
		if err != nil || string(got) != tc.want || got == nil {
			t.Errorf("GetRange(%q, %d, %d) = %q (nil: %v), %v; want %q", tc.key, tc.offset, tc.length, got, got == nil, err, tc.want)
		}
	}
	for _, r := range [][2]int64{{0, 0}, {0, 4}, {20, 4}} {
		if _, err := st.GetRange(ctx, "missing", r[0], r[1]); !errors.Is(err, logstore.ErrNotFound) {
			t.Errorf("GetRange(missing, %d, %d) = %v, want ErrNotFound", r[0], r[1], err)
		}
	}
}

func TestStatDeleteMissing(t *testing.T) {
	st := newStore(t, gcs.Options{})
	ctx := t.Context()
	before := time.Now().Add(-time.Minute)
	if err := st.PutIfAbsent(ctx, "dir/obj", []byte("hello")); err != nil {
		t.Fatal(err)
	}
	info, err := st.Stat(ctx, "dir/obj")
	if err != nil || info.Key != "dir/obj" || info.Size != 5 || info.ModTime.Before(before) || info.ModTime.After(time.Now().Add(time.Minute)) {
		t.Errorf("Stat = %+v, %v", info, err)
	}
	for range 3 {
		if err := st.Delete(ctx, "dir/obj"); err != nil {
			t.Errorf("Delete: %v", err)
		}
	}
	_, err = st.Get(ctx, "dir/obj")
	if !errors.Is(err, logstore.ErrNotFound) {
		t.Fatalf("Get after Delete = %v, want ErrNotFound", err)
	}
	if !isStatus(err, 404) {
		t.Errorf("Get after Delete = %v: the service's 404 is not reachable", err)
	}
	if _, err := st.Stat(ctx, "dir/obj"); !errors.Is(err, logstore.ErrNotFound) || !isStatus(err, 404) {
		t.Errorf("Stat after Delete = %v, want ErrNotFound wrapping a 404 *googleapi.Error", err)
	}
	// The 412 of a lost PutIfAbsent is reachable as a *googleapi.Error.
	if err := st.Put(ctx, "taken", []byte("x")); err != nil {
		t.Fatal(err)
	}
	err = st.PutIfAbsent(ctx, "taken", []byte("y"))
	var gerr *googleapi.Error
	if !errors.Is(err, logstore.ErrAlreadyExists) || !errors.As(err, &gerr) || gerr.Code != 412 {
		t.Errorf("PutIfAbsent over an object = %v, want ErrAlreadyExists wrapping a 412 *googleapi.Error", err)
	}
}

// TestLargeResumable writes objects larger than the chunk size, which go
// as resumable uploads in chunks.
func TestLargeResumable(t *testing.T) {
	st := newStore(t, gcs.Options{ChunkSize: 256 << 10})
	ctx := t.Context()
	data := bytes.Repeat([]byte("0123456789abcdef"), (1<<20)/16+3)
	if err := st.PutIfAbsent(ctx, "big", data); err != nil {
		t.Fatal(err)
	}
	if err := st.PutIfAbsent(ctx, "big", data[:10]); !errors.Is(err, logstore.ErrAlreadyExists) {
		t.Fatalf("resumable PutIfAbsent over an object = %v, want ErrAlreadyExists", err)
	}
	if err := st.Put(ctx, "big2", data); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"big", "big2"} {
		got, err := st.Get(ctx, k)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("Get(%q) = %d bytes, %v; want %d", k, len(got), err, len(data))
		}
	}
}

func TestOpen(t *testing.T) {
	s := server(t)
	t.Setenv("STORAGE_EMULATOR_HOST", s.Addr)
	ctx := t.Context()
	st, err := gcs.Open(ctx, "gs://"+testserver.GCSBucket+"/open/tbl/")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if driver(st).Bucket() != testserver.GCSBucket || driver(st).Prefix() != "open/tbl/" || st.URI() != "gs://"+testserver.GCSBucket+"/open/tbl" {
		t.Errorf("Open: bucket %q, prefix %q, URI %q", driver(st).Bucket(), driver(st).Prefix(), st.URI())
	}
	if err := st.Put(ctx, "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	// The same object through a store on the whole bucket.
	root, err := gcs.New(ctx, testserver.GCSBucket, "", gcs.Options{Endpoint: s.URL()})
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if b, err := root.Get(ctx, "open/tbl/k"); err != nil || string(b) != "v" {
		t.Errorf("Get through the root store = %q, %v", b, err)
	}
	for _, bad := range []string{"s3://b/p", "gs:///p", "gs://b/p?x=1", "gs://b/a/../p", "gs://user@b/p", "b/p"} {
		if _, err := gcs.Open(ctx, bad); err == nil {
			t.Errorf("Open(%q) succeeded", bad)
		}
	}
}

func TestMissingBucket(t *testing.T) {
	s := server(t)
	ctx := t.Context()
	_, err := gcs.New(ctx, "no-such-bucket", "p", gcs.Options{Endpoint: s.URL()})
	if !errors.Is(err, logstore.ErrRootNotFound) || !isStatus(err, 404) {
		t.Fatalf("New on a missing bucket = %v, want ErrRootNotFound wrapping a 404 *googleapi.Error", err)
	}
	if errors.Is(err, logstore.ErrNotFound) {
		t.Errorf("a missing bucket is ErrNotFound: %v", err)
	}
	t.Logf("New on a missing bucket: %v", err)

	// A bucket deleted under a live store.
	name := fmt.Sprintf("gone-%d", seq.Add(1))
	if err := testserver.CreateGCSBucket(ctx, s, name); err != nil {
		t.Fatal(err)
	}
	st, err := gcs.New(ctx, name, "", gcs.Options{Endpoint: s.URL()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := deleteBucket(ctx, s, name); err != nil {
		t.Fatal(err)
	}
	if err := st.PutIfAbsent(ctx, "k", []byte("x")); !errors.Is(err, logstore.ErrRootNotFound) || errors.Is(err, logstore.ErrAlreadyExists) {
		t.Errorf("PutIfAbsent into a deleted bucket = %v, want ErrRootNotFound", err)
	}
	if err := st.Put(ctx, "k", []byte("x")); !errors.Is(err, logstore.ErrRootNotFound) {
		t.Errorf("Put into a deleted bucket = %v, want ErrRootNotFound", err)
	}
	for _, err := range st.List(ctx, "", "") {
		if !errors.Is(err, logstore.ErrRootNotFound) {
			t.Errorf("List of a deleted bucket = %v, want ErrRootNotFound", err)
		}
	}
}

// TestServerStopped stops a server while commits run against it: no commit
// may report success unless its version holds it, and nothing panics.
func TestServerStopped(t *testing.T) {
	s, err := testserver.StartGCS()
	s = testserver.Require(t, s, err)
	defer s.Stop()
	ctx := t.Context()
	st, err := gcs.New(ctx, testserver.GCSBucket, "stop", gcs.Options{Endpoint: s.URL(), MaxAttempts: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tbl := createTable(t, st)

	var committed atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				_, err := tbl.AppendRows(cctx, rowsFor(w, i), deltaWriteOptions())
				cancel()
				if err != nil {
					errs <- err
					return
				}
				committed.Add(1)
			}
		})
	}
	for committed.Load() < 10 {
		time.Sleep(5 * time.Millisecond)
	}
	s.Stop()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err == nil {
			t.Error("a writer stopped with a nil error")
		}
		t.Logf("after the stop: %v", err)
	}
	// After the stop, every call fails, fast and typed as neither success
	// nor ErrAlreadyExists.
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err = st.PutIfAbsent(cctx, "_delta_log/99999999999999999999.json", []byte("{}"))
	if err == nil || errors.Is(err, logstore.ErrAlreadyExists) {
		t.Errorf("PutIfAbsent on a stopped server = %v", err)
	}
	if _, err := st.Get(cctx, "_delta_log/00000000000000000000.json"); err == nil || errors.Is(err, logstore.ErrNotFound) {
		t.Errorf("Get on a stopped server = %v, want an error that is not ErrNotFound", err)
	}
}

// isStatus reports whether err reaches a *googleapi.Error of HTTP status code.
func isStatus(err error, code int) bool {
	var gerr *googleapi.Error
	return errors.As(err, &gerr) && gerr.Code == code
}

// deleteBucket deletes an empty bucket on the server (buckets.delete).
func deleteBucket(ctx context.Context, s *testserver.Server, name string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, s.URL()+"/storage/v1/b/"+name, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("deleting bucket %s: %s", name, resp.Status)
	}
	return nil
}

// driver returns the *gcs.Store under st, for its extras (Bucket, Prefix).
func driver(st logstore.Store) *gcs.Store {
	d, _ := logstore.DriverOf[*gcs.Store](st)
	return d
}

// TestConformanceMissingRoot runs the shared missing-root checks.
func TestConformanceMissingRoot(t *testing.T) {
	storetest.RunMissingRoot(t, func(t *testing.T) (logstore.Store, error) {
		return gcs.New(t.Context(), "no-such-bucket", "p", gcs.Options{Endpoint: server(t).URL()})
	})
}

// TestAwkwardKeys round-trips keys that need percent-encoding through
// every operation on the server: names reach it as they are, and list in
// byte order.
func TestAwkwardKeys(t *testing.T) {
	st := newStore(t, gcs.Options{PageSize: 2})
	ctx := t.Context()
	keys := []string{
		"d/a b", "d/100%", "d/%2F", "d/1+1", "d/x:y", "d/ünï©ødé", "d/日本",
		"d/q?x=1&y=2", "d/hash#frag", "d/semi;colon", "d/at@sign", "d/tilde~", "d/star*", "d/'quote'",
		"d/dir with space/obj",
	}
	for i, k := range keys {
		data := []byte(fmt.Sprintf("value %d of %q", i, k))
		if err := st.PutIfAbsent(ctx, k, data); err != nil {
			t.Fatalf("PutIfAbsent(%q): %v", k, err)
		}
		if err := st.PutIfAbsent(ctx, k, data); !errors.Is(err, logstore.ErrAlreadyExists) {
			t.Errorf("second PutIfAbsent(%q) = %v, want ErrAlreadyExists", k, err)
		}
		if got, err := st.Get(ctx, k); err != nil || !bytes.Equal(got, data) {
			t.Errorf("Get(%q) = %q, %v", k, got, err)
		}
		if got, err := st.GetRange(ctx, k, 1, 4); err != nil || !bytes.Equal(got, data[1:5]) {
			t.Errorf("GetRange(%q) = %q, %v", k, got, err)
		}
		if info, err := st.Stat(ctx, k); err != nil || info.Size != int64(len(data)) {
			t.Errorf("Stat(%q) = %+v, %v", k, info, err)
		}
	}
	var want []string
	for _, k := range keys {
		if !strings.Contains(k[2:], "/") {
			want = append(want, k)
		}
	}
	slices.Sort(want)
	for i := -1; i < len(want); i++ {
		after := "d/"
		if i >= 0 {
			after = want[i]
		}
		var got []string
		for info, err := range st.List(ctx, "d/", after) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, info.Key)
		}
		if !slices.Equal(got, want[i+1:]) {
			t.Errorf("List(d/, %q) = %q, want %q", after, got, want[i+1:])
		}
	}
	var dirs []string
	for d, err := range logstore.ListDirs(ctx, st, "d/") {
		if err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	if !slices.Equal(dirs, []string{"d/dir with space/"}) {
		t.Errorf("ListDirs(d/) = %q", dirs)
	}
	// A streamed object under an awkward name.
	w, err := st.NewWriter(ctx, "d/w r+%:ité")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("streamed")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got, err := st.Get(ctx, "d/w r+%:ité"); err != nil || string(got) != "streamed" {
		t.Errorf("Get of the streamed object = %q, %v", got, err)
	}
	for _, k := range append(keys, "d/w r+%:ité") {
		if err := st.Delete(ctx, k); err != nil {
			t.Errorf("Delete(%q): %v", k, err)
		}
		if _, err := st.Stat(ctx, k); !errors.Is(err, logstore.ErrNotFound) {
			t.Errorf("Stat(%q) after Delete = %v", k, err)
		}
	}
}

// TestEmulatorHostURL takes STORAGE_EMULATOR_HOST as a URL too, as the
// SDKs do, and an explicit Endpoint over it.
func TestEmulatorHostURL(t *testing.T) {
	s := server(t)
	t.Setenv("STORAGE_EMULATOR_HOST", s.URL())
	st, err := gcs.Open(t.Context(), "gs://"+testserver.GCSBucket+"/emu")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Put(t.Context(), "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("STORAGE_EMULATOR_HOST", "127.0.0.1:1")
	st2, err := gcs.New(t.Context(), testserver.GCSBucket, "emu", gcs.Options{Endpoint: s.URL()})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	if b, err := st2.Get(t.Context(), "k"); err != nil || string(b) != "v" {
		t.Errorf("Get through the Endpoint = %q, %v", b, err)
	}
}

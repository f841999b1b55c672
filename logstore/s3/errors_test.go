package s3_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/godelta/delta"
	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/s3"
	"github.com/godelta/delta/logstore/storetest"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/testutil/testserver"
	"github.com/godelta/delta/txn"
)

// every calls each Store method once on key and returns the errors by name.
func every(ctx context.Context, st logstore.Store, key string) map[string]error {
	errs := map[string]error{}
	_, errs["Get"] = st.Get(ctx, key)
	_, errs["GetRange"] = st.GetRange(ctx, key, 0, 4)
	_, errs["Stat"] = st.Stat(ctx, key)
	errs["PutIfAbsent"] = st.PutIfAbsent(ctx, key, []byte("x"))
	errs["Put"] = st.Put(ctx, key, []byte("x"))
	errs["Delete"] = st.Delete(ctx, key)
	for _, err := range st.List(ctx, "", "") {
		errs["List"] = err
		break
	}
	return errs
}

func TestWrongCredentials(t *testing.T) {
	cfg := server(t)
	ctx := t.Context()
	const badSecret = "not-the-secret-0123456789"
	for name, tweak := range map[string]func(*s3.Options){
		"secret":     func(o *s3.Options) { o.SecretKey = badSecret },
		"access key": func(o *s3.Options) { o.AccessKey = "UNKNOWNKEY"; o.SecretKey = badSecret },
	} {
		t.Run(name, func(t *testing.T) {
			opts := options(cfg)
			tweak(&opts)
			_, err := s3.New(ctx, cfg.Bucket, "creds", opts)
			checkDenied(t, "New", err)

			opts.SkipBucketCheck = true
			st, err := s3.New(ctx, cfg.Bucket, "creds", opts)
			if err != nil {
				t.Fatal(err)
			}
			for method, err := range every(ctx, st, "_delta_log/00000000000000000000.json") {
				if method == "Stat" && name == "access key" {
					// versitygw answers an unknown key with 404, and a HEAD
					// has no body to say why: it reads as a missing object.
					// (S3 answers 403.) New's bucket check catches it.
					continue
				}
				checkDenied(t, method, err)
			}
		})
	}
}

func checkDenied(t *testing.T, method string, err error) {
	t.Helper()
	// The service's answer stays reachable: every HTTP answer is an
	// *s3.ResponseError (with its error code when the server's error body
	// could be read; versitygw sometimes closes the connection of a
	// refused PUT before its body is read, which leaves only the status).
	var re *s3.ResponseError
	switch {
	case !errors.Is(err, logstore.ErrPermission):
		t.Errorf("%s with wrong credentials = %v, want ErrPermission", method, err)
	case errors.Is(err, logstore.ErrNotFound), errors.Is(err, logstore.ErrAlreadyExists):
		t.Errorf("%s with wrong credentials = %v: also NotFound or AlreadyExists", method, err)
	case method != "Stat" && method != "New" && !errors.As(err, &re):
		t.Errorf("%s with wrong credentials = %v: the service's answer is not reachable", method, err)
	case strings.Contains(err.Error(), "not-the-secret"):
		t.Errorf("%s: the error shows the secret: %v", method, err)
	}
}

func TestMissingBucket(t *testing.T) {
	cfg := server(t)
	ctx := t.Context()
	_, err := s3.New(ctx, "no-such-bucket", "p", options(cfg))
	if !errors.Is(err, logstore.ErrRootNotFound) || errors.Is(err, logstore.ErrNotFound) {
		t.Errorf("New on a missing bucket = %v, want ErrRootNotFound", err)
	}
	opts := options(cfg)
	opts.SkipBucketCheck = true
	st, err := s3.New(ctx, "no-such-bucket", "p", opts)
	if err != nil {
		t.Fatal(err)
	}
	for method, err := range every(ctx, st, "k") {
		switch method {
		case "Stat", "Delete":
			// A HEAD has no body to tell a missing bucket from a missing
			// key (New checks the bucket for that reason); versitygw
			// answers DELETE with 404 NoSuchBucket.
			if err != nil && !errors.Is(err, logstore.ErrRootNotFound) && !errors.Is(err, logstore.ErrNotFound) {
				t.Errorf("%s on a missing bucket = %v", method, err)
			}
		default:
			if !errors.Is(err, logstore.ErrRootNotFound) || errors.Is(err, logstore.ErrNotFound) || errors.Is(err, logstore.ErrAlreadyExists) {
				t.Errorf("%s on a missing bucket = %v, want ErrRootNotFound only", method, err)
			}
		}
	}
}

// faultTransport forwards requests to the server, and lets a test break
// conditional PUTs: fail them before they are sent, or drop the answer
// after the server has stored the object.
type faultTransport struct {
	base       http.RoundTripper
	beforeSend atomic.Int64 // answer this many conditional PUTs with 503, unsent
	dropAnswer atomic.Int64 // send this many, then fail as if the connection reset
	sent       atomic.Int64 // conditional PUTs that reached the server
}

func (f *faultTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPut || req.Header.Get("If-None-Match") == "" {
		return f.base.RoundTrip(req)
	}
	if f.beforeSend.Add(-1) >= 0 {
		if req.Body != nil {
			req.Body.Close()
		}
		return &http.Response{
			StatusCode: http.StatusServiceUnavailable,
			Status:     "503 Service Unavailable",
			Header:     http.Header{"Content-Type": {"application/xml"}},
			Body:       io.NopCloser(strings.NewReader(`<Error><Code>ServiceUnavailable</Code><Message>injected</Message></Error>`)),
			Request:    req,
		}, nil
	}
	resp, err := f.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	f.sent.Add(1)
	if f.dropAnswer.Add(-1) >= 0 {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return nil, errors.New("injected: connection reset after the request was sent")
	}
	return resp, nil
}

func faultyStore(t *testing.T, prefix string) (*logstore.Portable, *faultTransport) {
	t.Helper()
	cfg := server(t)
	ft := &faultTransport{base: http.DefaultTransport.(*http.Transport).Clone()}
	opts := options(cfg)
	opts.HTTPClient = &http.Client{Transport: ft}
	st, err := s3.New(t.Context(), cfg.Bucket, prefix, opts)
	if err != nil {
		t.Fatal(err)
	}
	return st, ft
}

func TestPutIfAbsentAmbiguous(t *testing.T) {
	ctx := t.Context()
	prefix := fmt.Sprintf("amb%d", prefixes.Add(1))
	st, ft := faultyStore(t, prefix)

	// The answer is lost after the object landed: neither nil nor
	// ErrAlreadyExists, although the retry finds the key taken.
	ft.dropAnswer.Store(1)
	err := st.PutIfAbsent(ctx, "lost", []byte("mine"))
	if err == nil || errors.Is(err, logstore.ErrAlreadyExists) || !errors.Is(err, logstore.ErrOutcomeUnknown) {
		t.Errorf("PutIfAbsent with a lost answer = %v, want ErrOutcomeUnknown only", err)
	}
	if got, err := st.Get(ctx, "lost"); err != nil || string(got) != "mine" {
		t.Errorf("after the lost answer, Get = %q, %v", got, err)
	}

	// 503s before anything was sent: retried, then a real success.
	ft.beforeSend.Store(2)
	if err := st.PutIfAbsent(ctx, "retried", []byte("ok")); err != nil {
		t.Errorf("PutIfAbsent after two 503s = %v, want nil", err)
	}
	// 503s, then the key is found taken: perhaps by the 503'd attempt, so
	// the outcome is unknown.
	ft.beforeSend.Store(1)
	if err := st.PutIfAbsent(ctx, "retried", []byte("again")); errors.Is(err, logstore.ErrAlreadyExists) || !errors.Is(err, logstore.ErrOutcomeUnknown) {
		t.Errorf("PutIfAbsent after a 503 on a taken key = %v, want ErrOutcomeUnknown", err)
	}
	// Without faults a taken key is ErrAlreadyExists.
	if err := st.PutIfAbsent(ctx, "retried", []byte("again")); !errors.Is(err, logstore.ErrAlreadyExists) {
		t.Errorf("PutIfAbsent on a taken key = %v", err)
	}
	// 503 on every attempt: an error, and not a false success.
	ft.beforeSend.Store(100)
	if err := st.PutIfAbsent(ctx, "never", []byte("x")); err == nil || errors.Is(err, logstore.ErrAlreadyExists) {
		t.Errorf("PutIfAbsent with the service unavailable = %v", err)
	}
	ft.beforeSend.Store(0)

	// txn settles a commit whose answer was lost by reading it back.
	sch, _ := schema.ParseDDL("id BIGINT")
	tbl, err := delta.CreateStore(ctx, "amb", st, delta.TableSpec{Schema: sch})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		ft.dropAnswer.Store(1)
		res, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(int64(i))}}, delta.WriteOptions{})
		v := res.Version
		if err != nil || v != int64(i+1) {
			t.Fatalf("append %d with a lost answer = %d, %v; want version %d", i, v, err, i+1)
		}
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil || snap.Version() != 5 {
		t.Fatalf("after 5 appends with lost answers: %v", err)
	}
	if n, err := snap.NumFiles(ctx); err != nil || n != 5 {
		t.Fatalf("after 5 appends with lost answers: %d files, %v", n, err)
	}
}

// TestServerStopped stops the server while four writers commit. Every
// commit that returned a version must be in the log, with its content,
// when the server comes back; every writer must end with an error.
func TestServerStopped(t *testing.T) {
	server(t) // skips when versitygw is missing
	dir := t.TempDir()
	srv, cfg, err := testserver.StartS3In(dir, testserver.S3Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Stop() }()
	ctx := t.Context()
	st, err := s3.New(ctx, cfg.Bucket, "stopped", options(cfg))
	if err != nil {
		t.Fatal(err)
	}
	sch, _ := schema.ParseDDL("id BIGINT")
	tbl, err := delta.CreateStore(ctx, "stopped", st, delta.TableSpec{Schema: sch})
	if err != nil {
		t.Fatal(err)
	}
	type done struct {
		version int64
		path    string
	}
	var (
		mu        sync.Mutex
		committed []done
		total     atomic.Int64
		wg        sync.WaitGroup
		lastErrs  = make([]error, 4)
	)
	stop := make(chan struct{})
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				path := fmt.Sprintf("w%d-%04d.parquet", w, i)
				v, err := commitAdd(ctx, tbl, path)
				if err != nil {
					lastErrs[w] = err
					return
				}
				mu.Lock()
				committed = append(committed, done{v, path})
				mu.Unlock()
				if total.Add(1) == 30 {
					close(stop)
				}
			}
		})
	}
	<-stop
	srv.Stop()
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(2 * time.Minute):
		t.Fatal("writers still running two minutes after the server stopped")
	}
	for w, err := range lastErrs {
		t.Logf("writer %d ended with: %v", w, err)
	}

	srv, cfg, err = testserver.StartS3In(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	st, err = s3.New(ctx, cfg.Bucket, "stopped", options(cfg))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range committed {
		data, err := st.Get(ctx, fmt.Sprintf("_delta_log/%020d.json", c.version))
		if err != nil || !bytes.Contains(data, []byte(c.path)) {
			t.Errorf("commit of %s reported at version %d, but the log holds %.80q, %v", c.path, c.version, data, err)
		}
	}
	tbl, err = delta.OpenStore(ctx, "stopped", st)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := snap.NumFiles(ctx); err != nil || n < int64(len(committed)) {
		t.Errorf("%d files in the table (%v), %d commits reported", n, err, len(committed))
	}
	t.Logf("%d commits reported before the stop; the log has %d versions", len(committed), snap.Version())
}

// commitAdd commits one add action of a (fake) data file through txn.
func commitAdd(ctx context.Context, tbl *delta.Table, path string) (int64, error) {
	tx, err := tbl.Begin(ctx, delta.TxnOptions{Operation: "WRITE", NoCheckpoint: true})
	if err != nil {
		return 0, err
	}
	tx.Add(actions.Add{Path: path, Size: 1234, ModificationTime: time.Now().UnixMilli(), DataChange: true,
		Stats: `{"numRecords":1}`})
	res, err := tx.Commit(ctx)
	return res.Version, err
}

var _ = txn.ErrCommitUnknown

// TestConformanceMissingRoot runs the shared missing-root checks, with and
// without New's bucket check.
func TestConformanceMissingRoot(t *testing.T) {
	for _, skip := range []bool{false, true} {
		t.Run(fmt.Sprintf("SkipBucketCheck=%v", skip), func(t *testing.T) {
			storetest.RunMissingRoot(t, func(t *testing.T) (logstore.Store, error) {
				opts := options(server(t))
				opts.SkipBucketCheck = skip
				return s3.New(t.Context(), "no-such-bucket", "p", opts)
			})
		})
	}
}

package s3_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/s3"
)

// TestCloseReleasesConnections checks that Close of a store closes the
// connections of the HTTP client the SDK built for it, which would
// otherwise idle in that client's own pool, each with two goroutines,
// until they time out, and that a caller's HTTPClient is left alone. The
// server is a loopback stand-in that answers every GET with the same
// object, so no S3 server is needed.
func TestCloseReleasesConnections(t *testing.T) {
	var (
		mu   sync.Mutex
		open = map[net.Conn]bool{}
	)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			http.Error(w, "only GET", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", "5")
		w.Write([]byte("hello"))
	}))
	srv.Config.ConnState = func(c net.Conn, st http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		switch st {
		case http.StateNew:
			open[c] = true
		case http.StateClosed, http.StateHijacked:
			delete(open, c)
		}
	}
	srv.Start()
	defer srv.Close()
	openConns := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(open)
	}
	// waitConns waits for the server to see want connections open; a
	// connection closed by the client takes a moment to be seen closed.
	waitConns := func(want int) int {
		n := openConns()
		for i := 0; i < 2000 && n != want; i++ {
			time.Sleep(time.Millisecond)
			n = openConns()
		}
		return n
	}

	for _, own := range []bool{true, false} {
		opts := s3.Options{Region: "us-east-1", Endpoint: srv.URL, PathStyle: true,
			AccessKey: "k", SecretKey: "s", SkipBucketCheck: true}
		var callers *http.Client
		if !own {
			callers = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
			opts.HTTPClient = callers
		}
		ctx := context.Background()
		st, err := s3.New(ctx, "bucket", "root", opts)
		if err != nil {
			t.Fatal(err)
		}
		// Two reads at once, so that the pool holds two connections.
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				if b, err := st.Get(ctx, "k"); err != nil || string(b) != "hello" {
					t.Errorf("Get = %q, %v", b, err)
				}
			})
		}
		wg.Wait()
		if n := openConns(); n == 0 {
			t.Fatalf("own client %v: no connection open after the reads", own)
		}
		if !own {
			before := openConns()
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			if n := openConns(); n != before {
				t.Errorf("Close closed connections of the caller's HTTP client: %d open, was %d", n, before)
			}
			callers.CloseIdleConnections()
			waitConns(0)
			continue
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		if n := waitConns(0); n != 0 {
			t.Errorf("%d connections still open after Close", n)
		}
		if left := transportGoroutines(t); left != "" {
			t.Errorf("HTTP transport goroutines left after Close:\n%s", left)
		}
		if _, err := st.Get(ctx, "k"); !errors.Is(err, logstore.ErrClosed) {
			t.Errorf("Get after Close = %v, want ErrClosed", err)
		}
	}
}

// transportGoroutines returns the stacks of goroutines serving client
// connections (http.persistConn's read and write loops), waiting a moment
// for closed ones to exit.
func transportGoroutines(t *testing.T) string {
	t.Helper()
	var left []string
	for range 2000 {
		var buf bytes.Buffer
		if err := pprof.Lookup("goroutine").WriteTo(&buf, 1); err != nil {
			t.Fatal(err)
		}
		left = left[:0]
		for g := range strings.SplitSeq(buf.String(), "\n\n") {
			if strings.Contains(g, "net/http.(*persistConn)") {
				left = append(left, g)
			}
		}
		if len(left) == 0 {
			return ""
		}
		time.Sleep(time.Millisecond)
	}
	return strings.Join(left, "\n\n")
}

package azblob_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/azblob"
)

// hostileKey is a valid base64 account key that must never show.
const hostileKey = "aG9zdGlsZS1zZWNyZXQta2V5LWhvc3RpbGUtc2VjcmV0"

// hostileStore opens a store on a loopback server that answers New's
// check (a one-name listing) well and everything else with answer.
func hostileStore(t *testing.T, answer http.HandlerFunc, opts azblob.Options) logstore.Store {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if q := r.URL.Query(); q.Get("comp") == "list" && q.Get("maxresults") == "1" {
			io.WriteString(w, `<?xml version="1.0" encoding="utf-8"?><EnumerationResults><Blobs/></EnumerationResults>`)
			return
		}
		answer(w, r)
	}))
	t.Cleanup(srv.Close)
	if opts.ServiceURL == "" {
		opts.ServiceURL, opts.AccountName, opts.AccountKey = srv.URL+"/acct", "acct", hostileKey
	} else {
		opts.ServiceURL = srv.URL + opts.ServiceURL
	}
	st, err := azblob.New(t.Context(), "c", "p", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestHostileAnswers points a store at a loopback server that answers
// with a broken answer: the store must fail with an error, without
// holding more than its bounds or panicking. This tests the driver's own
// parsing of the service's answers.
func TestHostileAnswers(t *testing.T) {
	huge := func(w http.ResponseWriter, status int, open, unit, closing string, size int) {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(status)
		io.WriteString(w, open)
		chunk := strings.Repeat(unit, 64<<10/len(unit))
		for n := 0; n < size; n += len(chunk) {
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
		io.WriteString(w, closing)
	}
	tests := []struct {
		name    string
		answer  http.HandlerFunc
		call    func(st logstore.Store) error
		wantErr func(error) bool
	}{
		{"listing of 64 MiB", func(w http.ResponseWriter, r *http.Request) {
			huge(w, 200, "<EnumerationResults><Blobs>", "<Blob><Name>p/d/k</Name></Blob>", "</Blobs></EnumerationResults>", 64<<20)
		}, list, func(err error) bool { return strings.Contains(err.Error(), "larger than any valid") }},
		{"listing that is garbage", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("\x00\x01 not xml <<<"))
		}, list, func(err error) bool { return strings.Contains(err.Error(), "not the XML expected") }},
		{"listing cut short", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("<EnumerationResults><Blobs><Blob><Name>p/d/k"))
		}, list, func(err error) bool { return strings.Contains(err.Error(), "not the XML expected") }},
		{"listing of another document", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("<html><body>proxy login</body></html>"))
		}, list, func(err error) bool { return strings.Contains(err.Error(), "not the XML expected") }},
		{"listing with a size that is no number", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("<EnumerationResults><Blobs><Blob><Name>p/d/k</Name><Properties><Content-Length>many</Content-Length></Properties></Blob></Blobs></EnumerationResults>"))
		}, list, func(err error) bool { return strings.Contains(err.Error(), "not the XML expected") }},
		{"listing whose marker never ends", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("<EnumerationResults><Blobs/><NextMarker>" + strings.Repeat("m", 8192) + "</NextMarker></EnumerationResults>"))
		}, list, func(err error) bool { return strings.Contains(err.Error(), "larger than any valid") }},
		{"error of 64 MiB", func(w http.ResponseWriter, r *http.Request) {
			huge(w, 400, "<Error><Code>", "A", "</Code></Error>", 64<<20)
		}, get, func(err error) bool { return len(err.Error()) < 4096 }},
		{"error message of 1 MiB", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(403)
			fmt.Fprintf(w, "<Error><Code>AuthenticationFailed</Code><Message>%s</Message></Error>", strings.Repeat("m", 1<<20))
		}, get, func(err error) bool { return len(err.Error()) < 4096 && errors.Is(err, logstore.ErrPermission) }},
		{"error code header of 1 MiB", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("x-ms-error-code", strings.Repeat("C", 1<<20))
			w.WriteHeader(400)
		}, get, func(err error) bool { return len(err.Error()) < 4096 }},
		{"error that is garbage", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(404)
			w.Write([]byte("<html>not found</html>"))
		}, get, func(err error) bool { return errors.Is(err, logstore.ErrNotFound) }},
		{"blob shorter than announced", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "100")
			w.Write([]byte("short"))
		}, get, func(err error) bool { return errors.Is(err, io.ErrUnexpectedEOF) }},
		{"redirect", func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/elsewhere") {
				w.Write([]byte("followed"))
				return
			}
			w.Header().Set("Location", "/elsewhere"+r.URL.Path)
			w.WriteHeader(http.StatusTemporaryRedirect)
		}, get, func(err error) bool {
			var re *azblob.ResponseError
			return errors.As(err, &re) && re.StatusCode == http.StatusTemporaryRedirect
		}},
		{"stat without a size", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("x-ms-error-code", "ContainerNotFound")
			w.WriteHeader(404)
		}, func(st logstore.Store) error {
			_, err := st.Stat(t.Context(), "d/k")
			return err
		}, func(err error) bool {
			return errors.Is(err, logstore.ErrRootNotFound) && !errors.Is(err, logstore.ErrNotFound)
		}},
		{"put-if-absent refused with 412", func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("x-ms-error-code", "ConditionNotMet")
			w.WriteHeader(412)
		}, func(st logstore.Store) error {
			return st.PutIfAbsent(t.Context(), "d/k", []byte("x"))
		}, func(err error) bool { return errors.Is(err, logstore.ErrAlreadyExists) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := hostileStore(t, tc.answer, azblob.Options{})
			err := tc.call(st)
			if err == nil {
				t.Fatal("no error")
			}
			if tc.wantErr != nil && !tc.wantErr(err) {
				t.Errorf("error = %.300v", err)
			}
			if strings.Contains(err.Error(), hostileKey) {
				t.Errorf("the error shows the key: %.300v", err)
			}
		})
	}
}

func list(st logstore.Store) error {
	for _, err := range st.List(context.Background(), "d/", "") {
		if err != nil {
			return err
		}
	}
	return nil
}

func get(st logstore.Store) error {
	_, err := st.Get(context.Background(), "d/k")
	return err
}

// Names the service percent-encodes (Encoded="true", for characters XML
// cannot carry) are decoded; marker paging ends at an empty NextMarker.
func TestListEncodedNamesAndMarkers(t *testing.T) {
	var pages atomic.Int64
	st := hostileStore(t, func(w http.ResponseWriter, r *http.Request) {
		lm := time.Date(2026, 12, 7, 1, 2, 3, 0, time.UTC).Format(http.TimeFormat)
		switch r.URL.Query().Get("marker") {
		case "":
			pages.Add(1)
			fmt.Fprintf(w, `<?xml version="1.0" encoding="utf-8"?><EnumerationResults><Blobs>
<Blob><Name>p/d/a</Name><Properties><Last-Modified>%s</Last-Modified><Content-Length>3</Content-Length></Properties></Blob>
<Blob><Name Encoded="true">p%%2Fd%%2Fb%%01</Name><Properties><Content-Length>4</Content-Length></Properties></Blob>
<BlobPrefix><Name>p/d/sub/</Name></BlobPrefix>
</Blobs><NextMarker>m1</NextMarker></EnumerationResults>`, lm)
		case "m1":
			pages.Add(1)
			io.WriteString(w, `<EnumerationResults><Blobs><Blob><Name>p/d/c</Name></Blob></Blobs><NextMarker/></EnumerationResults>`)
		default:
			w.WriteHeader(400)
		}
	}, azblob.Options{})
	var keys []string
	var sizes []int64
	for info, err := range st.List(t.Context(), "d/", "") {
		if err != nil {
			t.Fatal(err)
		}
		keys, sizes = append(keys, info.Key), append(sizes, info.Size)
		if info.Key == "d/a" && !info.ModTime.Equal(time.Date(2026, 12, 7, 1, 2, 3, 0, time.UTC)) {
			t.Errorf("ModTime of d/a = %v", info.ModTime)
		}
	}
	if got := fmt.Sprint(keys, sizes); got != "[d/a d/b\x01 d/c] [3 4 0]" || pages.Load() != 2 {
		t.Errorf("List = %q over %d pages, want [d/a d/b\\x01 d/c] [3 4 0] over 2", got, pages.Load())
	}
}

// A store with a TokenSource sends "Authorization: Bearer" with the
// token, and the SAS of a service URL is sent with every request of a
// store without key or token, but never shown in errors.
func TestAuthorizationHeaders(t *testing.T) {
	var auth, query atomic.Value
	record := func(w http.ResponseWriter, r *http.Request) {
		auth.Store(r.Header.Get("Authorization"))
		query.Store(r.URL.RawQuery)
		w.WriteHeader(404)
	}
	st := hostileStore(t, record, azblob.Options{ServiceURL: "/acct", Credential: staticToken("tok-123")})
	if _, err := st.Get(t.Context(), "d/k"); !errors.Is(err, logstore.ErrNotFound) {
		t.Fatalf("Get = %v", err)
	}
	if got := auth.Load(); got != "Bearer tok-123" {
		t.Errorf("Authorization = %q, want Bearer tok-123", got)
	}
	st = hostileStore(t, record, azblob.Options{ServiceURL: "/acct?sv=2024-01-01&sp=rl&sig=c2VjcmV0"})
	_, err := st.Get(t.Context(), "d/k")
	if got := auth.Load(); got != "" {
		t.Errorf("Authorization with a SAS = %q, want none", got)
	}
	if got := query.Load(); got != "sv=2024-01-01&sp=rl&sig=c2VjcmV0" {
		t.Errorf("query = %q, want the SAS", got)
	}
	if err == nil || strings.Contains(err.Error(), "c2VjcmV0") {
		t.Errorf("Get = %v", err)
	}
	// Tokens go over https, or to a loopback host, only.
	if _, err := azblob.New(t.Context(), "c", "", azblob.Options{ServiceURL: "http://example.com/", Credential: staticToken("t")}); err == nil {
		t.Error("New sending a token over plain http to a remote host succeeded")
	}
}

type staticToken string

func (s staticToken) Token(context.Context) (string, time.Time, error) {
	return string(s), time.Now().Add(time.Hour), nil
}

// Reads are tried again after a 503, as the SDK's policy does;
// PutIfAbsent is sent exactly once, and its 503 is an unknown outcome.
func TestRetries(t *testing.T) {
	var gets, puts atomic.Int64
	st := hostileStore(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			if gets.Add(1) == 1 {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			io.WriteString(w, "data")
		case http.MethodPut:
			io.Copy(io.Discard, r.Body)
			puts.Add(1)
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}, azblob.Options{})
	if b, err := st.Get(t.Context(), "d/k"); err != nil || string(b) != "data" || gets.Load() != 2 {
		t.Errorf("Get = %q, %v after %d requests; want data after 2", b, err, gets.Load())
	}
	err := st.PutIfAbsent(t.Context(), "d/k", []byte("x"))
	var ae *azblob.Error
	if !errors.As(err, &ae) || !ae.Unknown || !errors.Is(err, logstore.ErrOutcomeUnknown) || puts.Load() != 1 {
		t.Errorf("PutIfAbsent = %v after %d requests; want an unknown outcome after 1", err, puts.Load())
	}
}

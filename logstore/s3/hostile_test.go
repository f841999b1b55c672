package s3_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/s3"
)

// TestHostileAnswers points a store at a loopback server that answers
// every request with the same broken answer: the store must fail with an
// error, without holding more than its bounds or panicking.
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
		answer  func(w http.ResponseWriter, r *http.Request)
		call    func(st logstore.Store) error
		wantErr func(error) bool
	}{
		{"listing of 64 MiB", func(w http.ResponseWriter, r *http.Request) {
			huge(w, 200, "<ListBucketResult>", "<Contents><Key>k</Key><Size>1</Size></Contents>", "</ListBucketResult>", 64<<20)
		}, list, func(err error) bool { return strings.Contains(err.Error(), "larger than any valid") }},
		{"listing that is garbage", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("\x00\x01 not xml <<<"))
		}, list, func(err error) bool { return strings.Contains(err.Error(), "not the XML expected") }},
		{"listing with an error document in a 200", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("<Error><Code>AccessDenied</Code><Message>no</Message></Error>"))
		}, list, func(err error) bool { return errors.Is(err, logstore.ErrPermission) }},
		{"error of 64 MiB", func(w http.ResponseWriter, r *http.Request) {
			huge(w, 400, "<Error><Code>", "A", "</Code></Error>", 64<<20)
		}, get, func(err error) bool { return len(err.Error()) < 4096 }},
		{"error message of 1 MiB", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(403)
			fmt.Fprintf(w, "<Error><Code>AccessDenied</Code><Message>%s</Message></Error>", strings.Repeat("m", 1<<20))
		}, get, func(err error) bool { return len(err.Error()) < 4096 && errors.Is(err, logstore.ErrPermission) }},
		{"error that is garbage", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(404)
			w.Write([]byte("<html>not found</html>"))
		}, get, func(err error) bool { return errors.Is(err, logstore.ErrNotFound) }},
		{"object shorter than announced", func(w http.ResponseWriter, r *http.Request) {
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
			var re *s3.ResponseError
			return errors.As(err, &re) && re.StatusCode == http.StatusTemporaryRedirect
		}},
		{"listing out of order", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("<ListBucketResult><Contents><Key>p/d/b</Key></Contents><Contents><Key>p/d/a</Key></Contents></ListBucketResult>"))
		}, list, func(err error) bool { return strings.Contains(err.Error(), "out of order") }},
		{"multipart completion failing in a 200", func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.Method == http.MethodPost && r.URL.Query().Has("uploads"):
				w.Write([]byte("<InitiateMultipartUploadResult><UploadId>u1</UploadId></InitiateMultipartUploadResult>"))
			case r.Method == http.MethodPut:
				io.Copy(io.Discard, r.Body)
				w.Header().Set("ETag", `"e"`)
			case r.Method == http.MethodPost:
				w.Write([]byte("<Error><Code>InternalError</Code><Message>late</Message></Error>"))
			default:
				w.WriteHeader(204)
			}
		}, func(st logstore.Store) error {
			return st.Put(t.Context(), "d/big", make([]byte, 6<<20))
		}, func(err error) bool { return strings.Contains(err.Error(), "InternalError") }},
		{"multipart creation answering garbage", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("{json?}"))
		}, func(st logstore.Store) error {
			return st.Put(t.Context(), "d/big", make([]byte, 6<<20))
		}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(tc.answer))
			defer srv.Close()
			st, err := s3.New(t.Context(), "bkt", "p", s3.Options{
				Endpoint: srv.URL, PathStyle: true, Region: "us-east-1", AccessKey: "k", SecretKey: "hostile-secret",
				SkipBucketCheck: true, MultipartThreshold: 5 << 20, PartSize: 5 << 20,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			err = tc.call(st)
			if err == nil {
				t.Fatal("no error")
			}
			if tc.wantErr != nil && !tc.wantErr(err) {
				t.Errorf("error = %.300v", err)
			}
			if strings.Contains(err.Error(), "hostile-secret") {
				t.Errorf("the error shows the secret: %.300v", err)
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

// TestContainerCredentialsEndToEnd gives the store no keys, only an
// ECS-style credentials endpoint on loopback that hands out the server's
// keys: New's bucket check and a round trip must work with them.
func TestContainerCredentialsEndToEnd(t *testing.T) {
	cfg := server(t)
	var calls int
	creds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		json.NewEncoder(w).Encode(map[string]string{
			"AccessKeyId": cfg.AccessKey, "SecretAccessKey": cfg.SecretKey,
			"Expiration": time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
		})
	}))
	defer creds.Close()
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"} {
		t.Setenv(v, "")
	}
	t.Setenv("HOME", t.TempDir())
	t.Setenv("AWS_CONFIG_FILE", "")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "")
	t.Setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", creds.URL+"/creds")
	opts := options(cfg)
	opts.AccessKey, opts.SecretKey = "", ""
	st, err := s3.New(t.Context(), cfg.Bucket, fmt.Sprintf("ecs%d", prefixes.Add(1)), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.PutIfAbsent(t.Context(), "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if got, err := st.Get(t.Context(), "k"); err != nil || !bytes.Equal(got, []byte("v")) {
		t.Errorf("Get = %q, %v", got, err)
	}
	if calls != 1 {
		t.Errorf("%d fetches of the container credentials, want 1 (cached)", calls)
	}
}

// TestCABundle reaches an https endpoint whose certificate only the
// bundle of AWS_CA_BUNDLE vouches for.
func TestCABundle(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("hello"))
	}))
	defer srv.Close()
	bundle := filepath.Join(t.TempDir(), "ca.pem")
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(bundle, cert, 0o600); err != nil {
		t.Fatal(err)
	}
	opts := s3.Options{Endpoint: srv.URL, Region: "us-east-1", AccessKey: "k", SecretKey: "s", SkipBucketCheck: true}
	for _, tc := range []struct {
		bundle string
		ok     bool
	}{{"", false}, {bundle, true}} {
		t.Setenv("AWS_CA_BUNDLE", tc.bundle)
		st, err := s3.New(t.Context(), "bkt", "", opts)
		if err != nil {
			t.Fatal(err)
		}
		got, err := st.Get(t.Context(), "k")
		if tc.ok != (err == nil) || tc.ok && string(got) != "hello" {
			t.Errorf("AWS_CA_BUNDLE=%q: Get = %q, %v", tc.bundle, got, err)
		}
		st.Close()
	}
	t.Setenv("AWS_CA_BUNDLE", filepath.Join(t.TempDir(), "missing.pem"))
	if _, err := s3.New(t.Context(), "bkt", "", opts); err == nil {
		t.Error("New with a missing AWS_CA_BUNDLE: no error")
	}
}

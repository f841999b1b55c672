package gcs_test

// Fault injection for the package's own HTTP code: a small in-process GCS
// (objects, listings, multipart and resumable uploads) whose answers a
// test can replace, delay or lose after the request was applied. The
// behaviour against the real protocol is tested on fake-gcs-server in
// gcs_test.go; this covers what that server cannot be made to do (a 503,
// a cut connection after a write landed, a session that keeps only part
// of a chunk, a hostile body).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/auth"
	"google.golang.org/api/googleapi"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/gcs"
)

const faultBucket = "fault"

type fakeObj struct {
	data []byte
	meta map[string]string
}

type fakeSession struct {
	name     string
	data     []byte
	ifAbsent bool
	meta     map[string]string
	done     bool
}

// fakeGCS is the in-process server. hook, when set, runs first and may
// answer the request itself (returning true); lose, when set and true for
// a request, applies it and then cuts the connection instead of answering.
type fakeGCS struct {
	t    *testing.T
	srv  *httptest.Server
	mu   sync.Mutex
	objs map[string]fakeObj
	sess map[string]*fakeSession
	seq  int
	// keep, when positive, is how many bytes of a non-final chunk a
	// session keeps (a multiple of 256 KiB), as GCS may.
	keep int
	hook func(w http.ResponseWriter, r *http.Request, op string) bool
	lose func(r *http.Request, op string) bool
	ops  []string // the op of every request, in order
}

func newFakeGCS(t *testing.T) *fakeGCS {
	f := &fakeGCS{t: t, objs: map[string]fakeObj{}, sess: map[string]*fakeSession{}}
	f.srv = httptest.NewServer(f)
	t.Cleanup(f.srv.Close)
	return f
}

// newTLSFakeGCS is newFakeGCS over https, which the store reaches with
// credentials; http.DefaultTransport trusts its certificate for the test.
func newTLSFakeGCS(t *testing.T) *fakeGCS {
	f := &fakeGCS{t: t, objs: map[string]fakeObj{}, sess: map[string]*fakeSession{}}
	f.srv = httptest.NewTLSServer(f)
	t.Cleanup(f.srv.Close)
	old := http.DefaultTransport
	http.DefaultTransport = f.srv.Client().Transport
	t.Cleanup(func() { http.DefaultTransport = old })
	return f
}

// store returns a store on the fake with fast retries.
func (f *fakeGCS) store(t *testing.T, opts gcs.Options) *logstore.Portable {
	t.Helper()
	opts.Endpoint = f.srv.URL
	if opts.RetryBackoff == 0 {
		opts.RetryBackoff = time.Millisecond
	}
	st, err := gcs.New(t.Context(), faultBucket, "p", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f.mu.Lock()
	f.ops = nil
	f.mu.Unlock()
	return st
}

// count returns how many requests of op the server saw.
func (f *fakeGCS) count(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, o := range f.ops {
		if o == op {
			n++
		}
	}
	return n
}

// opOf names a request: list, get, media, delete, multipart, start,
// chunk, query, cancel.
func opOf(r *http.Request) string {
	q := r.URL.Query()
	switch {
	case q.Get("upload_id") != "" && r.Method == http.MethodDelete:
		return "cancel"
	case q.Get("upload_id") != "" && r.Header.Get("Content-Range") == "bytes */*":
		return "query"
	case q.Get("upload_id") != "":
		return "chunk"
	case q.Get("uploadType") == "multipart":
		return "multipart"
	case q.Get("uploadType") == "resumable":
		return "start"
	case strings.HasSuffix(r.URL.Path, "/o"):
		return "list"
	case r.Method == http.MethodDelete:
		return "delete"
	case q.Get("alt") == "media":
		return "media"
	}
	return "get"
}

func (f *fakeGCS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	op := opOf(r)
	f.mu.Lock()
	f.ops = append(f.ops, op)
	hook, lose := f.hook, f.lose
	f.mu.Unlock()
	if hook != nil && hook(w, r, op) {
		return
	}
	rec := httptest.NewRecorder()
	f.handle(rec, r, op)
	if lose != nil && lose(r, op) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

func jsonError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"error":{"code":%d,"message":%q,"errors":[{"reason":"r","message":%q}]}}`, code, msg, msg)
}

func objJSON(name string, o fakeObj) map[string]any {
	return map[string]any{"name": name, "size": strconv.Itoa(len(o.data)), "updated": "2026-01-02T03:04:05.678Z", "metadata": o.meta}
}

func (f *fakeGCS) handle(w http.ResponseWriter, r *http.Request, op string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	q := r.URL.Query()
	// The object name: the escaped path after /o/, decoded once.
	name := ""
	if _, rest, ok := strings.Cut(r.URL.EscapedPath(), "/b/"+faultBucket+"/o/"); ok {
		n, err := url.PathUnescape(rest)
		if err != nil {
			jsonError(w, 400, "bad name")
			return
		}
		name = n
	}
	switch op {
	case "list":
		prefix, start := q.Get("prefix"), q.Get("startOffset")
		var items []map[string]any
		prefixes := map[string]bool{}
		for n, o := range f.objs {
			if !strings.HasPrefix(n, prefix) || n < start {
				continue
			}
			if i := strings.Index(n[len(prefix):], "/"); i >= 0 {
				prefixes[n[:len(prefix)+i+1]] = true
				continue
			}
			items = append(items, objJSON(n, o))
		}
		slices.SortFunc(items, func(a, b map[string]any) int { return strings.Compare(a["name"].(string), b["name"].(string)) })
		var ps []string
		for p := range prefixes {
			ps = append(ps, p)
		}
		slices.Sort(ps)
		_ = json.NewEncoder(w).Encode(map[string]any{"items": items, "prefixes": ps})
	case "get", "media":
		o, ok := f.objs[name]
		if !ok {
			jsonError(w, 404, "No such object: "+name)
			return
		}
		if op == "media" {
			w.Write(o.data)
			return
		}
		_ = json.NewEncoder(w).Encode(objJSON(name, o))
	case "delete":
		if _, ok := f.objs[name]; !ok {
			jsonError(w, 404, "No such object")
			return
		}
		delete(f.objs, name)
		w.WriteHeader(http.StatusNoContent)
	case "multipart":
		_, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil {
			jsonError(w, 400, "content type")
			return
		}
		mr := multipart.NewReader(r.Body, params["boundary"])
		var meta struct {
			Name     string            `json:"name"`
			Metadata map[string]string `json:"metadata"`
		}
		p, err := mr.NextPart()
		if err == nil {
			err = json.NewDecoder(p).Decode(&meta)
		}
		var data []byte
		if err == nil {
			if p, err = mr.NextPart(); err == nil {
				data, err = io.ReadAll(p)
			}
		}
		if err != nil {
			jsonError(w, 400, err.Error())
			return
		}
		if _, ok := f.objs[meta.Name]; ok && q.Get("ifGenerationMatch") == "0" {
			jsonError(w, 412, "conditionNotMet")
			return
		}
		f.objs[meta.Name] = fakeObj{data: data, meta: meta.Metadata}
		_ = json.NewEncoder(w).Encode(objJSON(meta.Name, f.objs[meta.Name]))
	case "start":
		var meta struct {
			Name     string            `json:"name"`
			Metadata map[string]string `json:"metadata"`
		}
		if err := json.NewDecoder(r.Body).Decode(&meta); err != nil {
			jsonError(w, 400, err.Error())
			return
		}
		f.seq++
		id := strconv.Itoa(f.seq)
		f.sess[id] = &fakeSession{name: meta.Name, ifAbsent: q.Get("ifGenerationMatch") == "0", meta: meta.Metadata}
		w.Header().Set("Location", f.srv.URL+"/upload/storage/v1/b/"+faultBucket+"/o?uploadType=resumable&upload_id="+id)
	case "cancel":
		delete(f.sess, q.Get("upload_id"))
		w.WriteHeader(499)
	case "chunk", "query":
		s, ok := f.sess[q.Get("upload_id")]
		if !ok {
			jsonError(w, 404, "no such session")
			return
		}
		if s.done {
			_ = json.NewEncoder(w).Encode(objJSON(s.name, f.objs[s.name]))
			return
		}
		body, _ := io.ReadAll(r.Body)
		cr := strings.TrimPrefix(r.Header.Get("Content-Range"), "bytes ")
		rng, total, _ := strings.Cut(cr, "/")
		if rng != "*" {
			first, _, _ := strings.Cut(rng, "-")
			start, _ := strconv.Atoi(first)
			if start > len(s.data) {
				jsonError(w, 400, "gap")
				return
			}
			body = body[len(s.data)-start:]
			if f.keep > 0 && total == "*" && len(body) > f.keep {
				body = body[:f.keep]
			}
			s.data = append(s.data, body...)
		}
		if n, err := strconv.Atoi(total); err == nil && n == len(s.data) {
			if _, exists := f.objs[s.name]; exists && s.ifAbsent {
				delete(f.sess, q.Get("upload_id"))
				jsonError(w, 412, "conditionNotMet")
				return
			}
			s.done = true
			f.objs[s.name] = fakeObj{data: s.data, meta: s.meta}
			_ = json.NewEncoder(w).Encode(objJSON(s.name, f.objs[s.name]))
			return
		}
		if len(s.data) > 0 {
			w.Header().Set("Range", fmt.Sprintf("bytes=0-%d", len(s.data)-1))
		}
		w.WriteHeader(http.StatusPermanentRedirect)
	}
}

// failFirst answers the first n requests of op with status code.
func failFirst(op string, n, code int) func(w http.ResponseWriter, r *http.Request, o string) bool {
	var mu sync.Mutex
	seen := 0
	return func(w http.ResponseWriter, r *http.Request, o string) bool {
		mu.Lock()
		defer mu.Unlock()
		if o != op || seen >= n {
			return false
		}
		seen++
		jsonError(w, code, "injected")
		return true
	}
}

func TestRetryThenSuccess(t *testing.T) {
	ctx := t.Context()
	tests := []struct {
		name, op string
		code     int
		call     func(st logstore.Store) error
	}{
		{"get", "media", 503, func(st logstore.Store) error { _, err := st.Get(ctx, "k"); return err }},
		{"get range", "media", 500, func(st logstore.Store) error { _, err := st.GetRange(ctx, "k", 1, 2); return err }},
		{"stat", "get", 429, func(st logstore.Store) error { _, err := st.Stat(ctx, "k"); return err }},
		{"list", "list", 503, func(st logstore.Store) error {
			for _, err := range st.List(ctx, "", "") {
				return err
			}
			return nil
		}},
		{"list dirs", "list", 502, func(st logstore.Store) error {
			for _, err := range logstore.ListDirs(ctx, st, "") {
				return err
			}
			return nil
		}},
		{"delete", "delete", 503, func(st logstore.Store) error { return st.Delete(ctx, "k") }},
		{"put", "multipart", 503, func(st logstore.Store) error { return st.Put(ctx, "k", []byte("new")) }},
		{"put if absent", "multipart", 408, func(st logstore.Store) error { return st.PutIfAbsent(ctx, "fresh", []byte("x")) }},
		{"resumable start", "start", 503, func(st logstore.Store) error { return st.Put(ctx, "big", make([]byte, 600<<10)) }},
		{"resumable chunk", "chunk", 503, func(st logstore.Store) error { return st.Put(ctx, "big", make([]byte, 600<<10)) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeGCS(t)
			st := f.store(t, gcs.Options{ChunkSize: 256 << 10})
			if err := st.Put(ctx, "k", []byte("value")); err != nil {
				t.Fatal(err)
			}
			if err := st.Put(ctx, "d/x", []byte("value")); err != nil {
				t.Fatal(err)
			}
			before := f.count(tc.op)
			f.hook = failFirst(tc.op, 1, tc.code)
			if err := tc.call(st); err != nil {
				t.Fatalf("%s after one %d: %v", tc.name, tc.code, err)
			}
			if n := f.count(tc.op) - before; n < 2 {
				t.Errorf("%s: %d requests of %s, want a retry", tc.name, n, tc.op)
			}
		})
	}
}

func TestRetryBounds(t *testing.T) {
	ctx := t.Context()
	f := newFakeGCS(t)
	st := f.store(t, gcs.Options{MaxAttempts: 3})

	// Always 503: MaxAttempts requests, then an error; a write's outcome
	// is unknown.
	f.hook = failFirst("multipart", 100, 503)
	err := st.Put(ctx, "k", []byte("x"))
	if !errors.Is(err, logstore.ErrOutcomeUnknown) || f.count("multipart") != 3 {
		t.Errorf("Put against 503s = %v after %d requests, want ErrOutcomeUnknown after 3", err, f.count("multipart"))
	}
	// A 400 is not retried.
	f.hook = failFirst("media", 100, 400)
	if _, err := st.Get(ctx, "k"); err == nil || f.count("media") != 1 {
		t.Errorf("Get against a 400 = %v after %d requests, want an error after 1", err, f.count("media"))
	}
	// A done ctx ends the backoff.
	slow := f.store(t, gcs.Options{RetryBackoff: time.Hour, MaxAttempts: 5})
	f.hook = failFirst("get", 100, 503)
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := slow.Stat(cctx, "k"); err == nil || time.Since(start) > 10*time.Second {
		t.Errorf("Stat with a long backoff and a short ctx = %v after %v", err, time.Since(start))
	}
}

func TestErrorMapping(t *testing.T) {
	ctx := t.Context()
	tests := []struct {
		op   string
		code int
		call func(st logstore.Store) error
		want error
	}{
		{"media", 404, func(st logstore.Store) error { _, err := st.Get(ctx, "k"); return err }, logstore.ErrNotFound},
		{"get", 404, func(st logstore.Store) error { _, err := st.Stat(ctx, "k"); return err }, logstore.ErrNotFound},
		{"list", 404, func(st logstore.Store) error {
			for _, err := range st.List(ctx, "", "") {
				return err
			}
			return nil
		}, logstore.ErrRootNotFound},
		{"multipart", 404, func(st logstore.Store) error { return st.Put(ctx, "k", nil) }, logstore.ErrRootNotFound},
		{"media", 403, func(st logstore.Store) error { _, err := st.Get(ctx, "k"); return err }, logstore.ErrPermission},
		{"multipart", 401, func(st logstore.Store) error { return st.Put(ctx, "k", nil) }, logstore.ErrPermission},
		{"multipart", 412, func(st logstore.Store) error { return st.PutIfAbsent(ctx, "k", nil) }, logstore.ErrAlreadyExists},
		{"multipart", 500, func(st logstore.Store) error { return st.PutIfAbsent(ctx, "k", nil) }, logstore.ErrOutcomeUnknown},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s_%d", tc.op, tc.code), func(t *testing.T) {
			f := newFakeGCS(t)
			st := f.store(t, gcs.Options{MaxAttempts: 2})
			f.hook = failFirst(tc.op, 100, tc.code)
			err := tc.call(st)
			var gerr *googleapi.Error
			if !errors.Is(err, tc.want) || !errors.As(err, &gerr) || gerr.Code != tc.code || gerr.Message != "injected" {
				t.Errorf("%d on %s = %v, want %v wrapping a *googleapi.Error", tc.code, tc.op, err, tc.want)
			}
			if tc.want == logstore.ErrOutcomeUnknown && errors.Is(err, logstore.ErrAlreadyExists) {
				t.Errorf("an unknown outcome matches ErrAlreadyExists: %v", err)
			}
		})
	}
}

// TestBoundedBodies answers with bodies far larger than any the store
// reads whole: it keeps a bounded part of an error, and refuses an endless
// listing instead of reading it into memory.
func TestBoundedBodies(t *testing.T) {
	ctx := t.Context()
	f := newFakeGCS(t)
	st := f.store(t, gcs.Options{MaxAttempts: 1})
	f.hook = func(w http.ResponseWriter, r *http.Request, op string) bool {
		switch op {
		case "media":
			w.WriteHeader(400)
			_, _ = io.Copy(w, io.LimitReader(zeros{}, 64<<20))
			return true
		case "list":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"items":[`)
			_, _ = io.Copy(w, io.LimitReader(zeros{}, 40<<20))
			return true
		}
		return false
	}
	_, err := st.Get(ctx, "k")
	var gerr *googleapi.Error
	if !errors.As(err, &gerr) || gerr.Code != 400 || len(gerr.Body) > 16<<10 || len(err.Error()) > 2048 {
		t.Errorf("Get with a 64 MiB error body: %d-byte body kept, %d-byte message", len(gerr.Body), len(err.Error()))
	}
	for _, err := range st.List(ctx, "", "") {
		if err == nil || !strings.Contains(err.Error(), "more than") {
			t.Errorf("List with an endless body = %v", err)
		}
	}
}

type zeros struct{}

func (zeros) Read(b []byte) (int, error) {
	for i := range b {
		b[i] = ' '
	}
	return len(b), nil
}

// TestPutIfAbsentAmbiguous loses the response to an upload that landed:
// the retry meets 412 and settles by the object's put id.
func TestPutIfAbsentAmbiguous(t *testing.T) {
	ctx := t.Context()
	loseFirst := func() func(*http.Request, string) bool {
		lost := false
		return func(_ *http.Request, op string) bool {
			if op == "multipart" && !lost {
				lost = true
				return true
			}
			return false
		}
	}

	t.Run("own write", func(t *testing.T) {
		f := newFakeGCS(t)
		st := f.store(t, gcs.Options{})
		f.lose = loseFirst()
		if err := st.PutIfAbsent(ctx, "c", []byte("mine")); err != nil {
			t.Fatalf("PutIfAbsent whose first response was lost = %v, want success", err)
		}
		if n := f.count("multipart"); n != 2 {
			t.Errorf("%d uploads, want 2", n)
		}
		if b, err := st.Get(ctx, "c"); err != nil || string(b) != "mine" {
			t.Errorf("Get = %q, %v", b, err)
		}
		// And a later PutIfAbsent of another writer still loses.
		if err := st.PutIfAbsent(ctx, "c", []byte("theirs")); !errors.Is(err, logstore.ErrAlreadyExists) {
			t.Errorf("second PutIfAbsent = %v, want ErrAlreadyExists", err)
		}
	})

	t.Run("other writer", func(t *testing.T) {
		f := newFakeGCS(t)
		st := f.store(t, gcs.Options{})
		// The first attempt is cut before it lands, and another writer
		// creates the object meanwhile.
		cut := false
		f.hook = func(w http.ResponseWriter, r *http.Request, op string) bool {
			if op != "multipart" || cut {
				return false
			}
			cut = true
			f.mu.Lock()
			f.objs["p/c"] = fakeObj{data: []byte("theirs"), meta: map[string]string{"godelta-put-id": "someone-else"}}
			f.mu.Unlock()
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return true
		}
		err := st.PutIfAbsent(ctx, "c", []byte("mine"))
		if !errors.Is(err, logstore.ErrAlreadyExists) || errors.Is(err, logstore.ErrOutcomeUnknown) {
			t.Errorf("PutIfAbsent that met another writer's object = %v, want ErrAlreadyExists", err)
		}
	})

	t.Run("unreadable", func(t *testing.T) {
		f := newFakeGCS(t)
		st := f.store(t, gcs.Options{MaxAttempts: 3})
		f.lose = loseFirst()
		f.hook = failFirst("get", 100, 503)
		err := st.PutIfAbsent(ctx, "c", []byte("mine"))
		if !errors.Is(err, logstore.ErrOutcomeUnknown) || errors.Is(err, logstore.ErrAlreadyExists) {
			t.Errorf("PutIfAbsent that cannot read back = %v, want ErrOutcomeUnknown only", err)
		}
	})

	t.Run("all lost", func(t *testing.T) {
		f := newFakeGCS(t)
		st := f.store(t, gcs.Options{MaxAttempts: 2})
		f.lose = func(_ *http.Request, op string) bool { return op == "multipart" }
		err := st.PutIfAbsent(ctx, "c", []byte("mine"))
		if !errors.Is(err, logstore.ErrOutcomeUnknown) || errors.Is(err, logstore.ErrAlreadyExists) {
			t.Errorf("PutIfAbsent with every response lost = %v, want ErrOutcomeUnknown", err)
		}
	})
}

// TestResumableFaults uploads multi-chunk objects through a session that
// keeps only part of each chunk and loses answers.
func TestResumableFaults(t *testing.T) {
	ctx := t.Context()
	data := make([]byte, 3<<20+12345)
	for i := range data {
		data[i] = byte(i * 7)
	}
	t.Run("partial chunks", func(t *testing.T) {
		f := newFakeGCS(t)
		f.keep = 256 << 10
		st := f.store(t, gcs.Options{ChunkSize: 1 << 20})
		if err := st.Put(ctx, "big", data); err != nil {
			t.Fatal(err)
		}
		if b, err := st.Get(ctx, "big"); err != nil || !bytes.Equal(b, data) {
			t.Fatalf("Get = %d bytes, %v", len(b), err)
		}
		if n := f.count("chunk"); n < 12 {
			t.Errorf("%d chunks for 3 MiB kept 256 KiB at a time", n)
		}
	})
	t.Run("lost chunk answers", func(t *testing.T) {
		f := newFakeGCS(t)
		st := f.store(t, gcs.Options{ChunkSize: 512 << 10})
		n := 0
		f.lose = func(_ *http.Request, op string) bool {
			if op == "chunk" {
				n++
				return n%3 == 2 // the chunk landed, its answer did not
			}
			return false
		}
		if err := st.Put(ctx, "big", data); err != nil {
			t.Fatal(err)
		}
		w, err := st.NewWriter(ctx, "streamed")
		if err != nil {
			t.Fatal(err)
		}
		for off := 0; off < len(data); off += 100_000 {
			if _, err := w.Write(data[off:min(off+100_000, len(data))]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"big", "streamed"} {
			if b, err := st.Get(ctx, k); err != nil || !bytes.Equal(b, data) {
				t.Fatalf("Get(%s) = %d bytes, %v", k, len(b), err)
			}
		}
		if f.count("query") == 0 {
			t.Error("no session was queried after a lost answer")
		}
	})
	t.Run("lost final answer", func(t *testing.T) {
		f := newFakeGCS(t)
		st := f.store(t, gcs.Options{ChunkSize: 1 << 20})
		f.lose = func(r *http.Request, op string) bool {
			return op == "chunk" && !strings.HasSuffix(r.Header.Get("Content-Range"), "/*")
		}
		// The session finished; the query says so, not a 412.
		if err := st.PutIfAbsent(ctx, "once", data); err != nil {
			t.Fatalf("PutIfAbsent whose last answer was lost = %v", err)
		}
	})
	t.Run("abort", func(t *testing.T) {
		f := newFakeGCS(t)
		st := f.store(t, gcs.Options{ChunkSize: 256 << 10})
		w, err := st.NewWriter(ctx, "aborted")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data[:1<<20]); err != nil {
			t.Fatal(err)
		}
		if err := w.Abort(); err != nil {
			t.Fatal(err)
		}
		if f.count("cancel") != 1 || len(f.sess) != 0 {
			t.Errorf("%d cancels, %d sessions left", f.count("cancel"), len(f.sess))
		}
		if _, err := st.Stat(ctx, "aborted"); !errors.Is(err, logstore.ErrNotFound) {
			t.Errorf("Stat after Abort = %v", err)
		}
	})
	t.Run("gone session", func(t *testing.T) {
		f := newFakeGCS(t)
		st := f.store(t, gcs.Options{ChunkSize: 256 << 10})
		f.hook = failFirst("chunk", 100, 410)
		err := st.Put(ctx, "big", data)
		if !errors.Is(err, logstore.ErrNotWritten) {
			t.Errorf("Put through a gone session = %v, want ErrNotWritten", err)
		}
	})
}

// TestSecretsStayOut checks that an upload session's URL, a capability,
// never reaches an error message.
func TestSecretsStayOut(t *testing.T) {
	f := newFakeGCS(t)
	st := f.store(t, gcs.Options{ChunkSize: 256 << 10, MaxAttempts: 2})
	f.lose = func(_ *http.Request, op string) bool { return op == "chunk" || op == "query" }
	err := st.Put(t.Context(), "big", make([]byte, 1<<20))
	if err == nil || strings.Contains(err.Error(), "upload_id") {
		t.Errorf("Put through a broken session = %v", err)
	}
}

// TestCredentials sends a token on every request to an https endpoint,
// with the credentials' quota project; a token that cannot be had is a
// request never sent, and refused credentials are ErrPermission.
func TestCredentials(t *testing.T) {
	ctx := t.Context()
	f := newTLSFakeGCS(t)
	var mu sync.Mutex
	fail := error(nil)
	creds := auth.NewCredentials(&auth.CredentialsOptions{
		TokenProvider: tokenFunc(func(context.Context) (*auth.Token, error) {
			mu.Lock()
			defer mu.Unlock()
			if fail != nil {
				return nil, fail
			}
			return &auth.Token{Value: "tok-123", Expiry: time.Now().Add(time.Hour)}, nil
		}),
		QuotaProjectIDProvider: auth.CredentialsPropertyFunc(func(context.Context) (string, error) { return "quota-proj", nil }),
	})
	var seen []string
	f.hook = func(w http.ResponseWriter, r *http.Request, op string) bool {
		seen = append(seen, op+" "+r.Header.Get("Authorization")+" "+r.Header.Get("X-Goog-User-Project")+" "+r.URL.Query().Get("userProject"))
		return false
	}
	st, err := gcs.New(ctx, faultBucket, "p", gcs.Options{Endpoint: f.srv.URL, Credentials: creds, UserProject: "payer", ChunkSize: 256 << 10, RetryBackoff: time.Millisecond, MaxAttempts: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.PutIfAbsent(ctx, "k", make([]byte, 300<<10)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Get(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	for _, s := range seen {
		op, rest, _ := strings.Cut(s, " ")
		want := "Bearer tok-123 quota-proj payer"
		if op == "chunk" {
			want = "Bearer tok-123 quota-proj " // the session URL is the service's
		}
		if rest != want {
			t.Errorf("%s request sent %q, want %q", op, rest, want)
		}
	}
	if len(seen) < 4 {
		t.Errorf("requests seen: %q", seen)
	}

	// No token: nothing is sent, and a write is not of unknown outcome.
	mu.Lock()
	fail = errors.New("metadata server unreachable")
	mu.Unlock()
	n := len(seen)
	creds2 := auth.NewCredentials(&auth.CredentialsOptions{TokenProvider: tokenFunc(func(context.Context) (*auth.Token, error) {
		return nil, errors.New("metadata server unreachable")
	})})
	err = st.PutIfAbsent(ctx, "k2", []byte("x"))
	if err == nil || errors.Is(err, logstore.ErrOutcomeUnknown) || errors.Is(err, logstore.ErrAlreadyExists) || len(seen) != n {
		t.Errorf("PutIfAbsent without a token = %v (%d requests sent), want a plain error and none", err, len(seen)-n)
	}
	if _, err := gcs.New(ctx, faultBucket, "p", gcs.Options{Endpoint: f.srv.URL, Credentials: creds2, MaxAttempts: 1}); err == nil {
		t.Error("New without a token succeeded")
	}
	// Refused credentials: the token service answered 4xx.
	mu.Lock()
	fail = &auth.Error{Response: &http.Response{StatusCode: 400}, Body: []byte(`{"error":"invalid_grant"}`)}
	mu.Unlock()
	err = st.Put(ctx, "k3", []byte("x"))
	if !errors.Is(err, logstore.ErrPermission) {
		t.Errorf("Put with refused credentials = %v, want ErrPermission", err)
	}
	if strings.Contains(fmt.Sprint(err), "tok-123") {
		t.Errorf("an error names the token: %v", err)
	}
}

type tokenFunc func(context.Context) (*auth.Token, error)

func (f tokenFunc) Token(ctx context.Context) (*auth.Token, error) { return f(ctx) }

// TestRangeIgnored reads ranges from a server that answers every media
// read with the whole object (200, as a server may for a Range it does not
// honour): the store cuts the range out itself.
func TestRangeIgnored(t *testing.T) {
	ctx := t.Context()
	f := newFakeGCS(t) // its media reads ignore Range
	st := f.store(t, gcs.Options{})
	if err := st.Put(ctx, "k", []byte("0123456789")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		off, n int64
		want   string
	}{{0, 3, "012"}, {4, 3, "456"}, {8, 5, "89"}, {10, 1, ""}, {12, 3, ""}, {1, 1 << 62, "123456789"}} {
		got, err := st.GetRange(ctx, "k", tc.off, tc.n)
		if err != nil || string(got) != tc.want || got == nil {
			t.Errorf("GetRange(%d, %d) = %q, %v; want %q", tc.off, tc.n, got, err, tc.want)
		}
	}
}

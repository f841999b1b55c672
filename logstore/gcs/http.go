package gcs

// The HTTP layer under the driver: requests to the JSON API, credentials,
// bounded response bodies, the errors of a response, and retries.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"cloud.google.com/go/auth"
	"google.golang.org/api/googleapi"
)

// Bounds on what is read of a response that is not an object's content.
const (
	maxErrorBody = 16 << 10 // kept of an error response, for its message
	maxJSONBody  = 32 << 20 // a metadata, listing or upload response
)

// scope is the OAuth2 scope the default credentials are asked for: read
// and write objects, nothing more (no ACLs, no bucket settings).
const scope = "https://www.googleapis.com/auth/devstorage.read_write"

// authTransport adds an OAuth2 access token, and the credentials' quota
// project, to every request it carries.
type authTransport struct {
	base  http.RoundTripper
	creds *auth.Credentials
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	tok, err := t.creds.Token(req.Context())
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, &credError{err: err}
	}
	r := req.Clone(req.Context())
	typ := tok.Type
	if typ == "" {
		typ = "Bearer"
	}
	r.Header.Set("Authorization", typ+" "+tok.Value)
	if r.Header.Get("X-Goog-User-Project") == "" {
		if qp, err := t.creds.QuotaProjectID(req.Context()); err == nil && qp != "" {
			r.Header.Set("X-Goog-User-Project", qp)
		}
	}
	return t.base.RoundTrip(r)
}

// credError is a failure to get a token: the request was never sent.
type credError struct{ err error }

func (e *credError) Error() string { return "getting a token: " + e.err.Error() }
func (e *credError) Unwrap() error { return e.err }

// refused reports whether the token service refused the credentials (a
// 4xx answer), as opposed to failing to answer.
func (e *credError) refused() bool {
	var ae *auth.Error
	return errors.As(e.err, &ae) && ae.Response != nil && ae.Response.StatusCode/100 == 4
}

// transportError is a request that failed without an HTTP status: the
// connection failed, was cut, or the body could not be read whole.
type transportError struct{ err error }

func (e *transportError) Error() string { return e.err.Error() }
func (e *transportError) Unwrap() error { return e.err }

// request is one HTTP request, which send may make several times: body is
// sent whole each time.
type request struct {
	method string
	url    string
	header http.Header
	body   [][]byte // pieces sent one after the other; nil for none
	secret bool     // the URL is a capability (an upload session): keep it out of errors
}

// send makes r once. A response with a status of 400 or more is read (a
// bounded part of it), closed and returned as a *googleapi.Error; any
// other response is the caller's to read and close. An error of the
// transport is a *transportError (or a *credError when no token could be
// had), without the URL's query.
func (s *Store) send(ctx context.Context, r *request) (*http.Response, error) {
	var body io.Reader
	var n int64
	if r.body != nil {
		readers := make([]io.Reader, len(r.body))
		for i, b := range r.body {
			readers[i] = bytes.NewReader(b)
			n += int64(len(b))
		}
		body = io.MultiReader(readers...)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, r.url, body)
	if err != nil {
		return nil, err
	}
	if r.body != nil {
		req.ContentLength = n
		if n == 0 {
			req.Body = http.NoBody
		}
	} else if r.method != http.MethodGet && r.method != http.MethodHead {
		// GCS wants "Content-Length: 0" on a DELETE or a bodiless POST;
		// net/http sends it for an identity transfer of no bytes.
		req.ContentLength = 0
		req.Body = http.NoBody
		req.TransferEncoding = []string{"identity"}
	}
	for k, v := range r.header {
		req.Header[k] = v
	}
	req.Header.Set("User-Agent", "godelta-logstore-gcs")
	resp, err := s.hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			ue.URL = redactURL(ue.URL, r.secret)
		}
		var ce *credError
		if errors.As(err, &ce) {
			return nil, err
		}
		return nil, &transportError{err: err}
	}
	if resp.StatusCode >= 400 {
		return nil, apiError(resp)
	}
	return resp, nil
}

// redactURL drops the query of u (an upload session's id is a
// capability), and all but the host of a secret one.
func redactURL(u string, secret bool) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(unparsable URL)"
	}
	p.RawQuery, p.Fragment, p.User = "", "", nil
	if secret {
		p.Path, p.RawPath = "/(upload session)", ""
	}
	return p.String()
}

// apiError reads a bounded part of the error response resp, closes it, and
// returns it as the *googleapi.Error the SDK would have returned, with the
// message and reasons of a JSON error document.
func apiError(resp *http.Response) *googleapi.Error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	e := &googleapi.Error{Code: resp.StatusCode, Body: string(body), Header: resp.Header}
	var doc struct {
		Error struct {
			Message string                `json:"message"`
			Errors  []googleapi.ErrorItem `json:"errors"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &doc) == nil {
		e.Message, e.Errors = doc.Error.Message, doc.Error.Errors
	}
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
		if len(body) > 0 && len(body) <= 512 && !bytes.ContainsAny(body, "\r\n") {
			e.Message += ": " + string(body)
		}
	}
	return e
}

// readJSON reads the JSON document of resp into v (nil: read and drop it),
// at most maxJSONBody bytes, and closes resp.
func readJSON(resp *http.Response, v any) error {
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxJSONBody+1))
	if err != nil {
		return &transportError{err: err}
	}
	if len(b) > maxJSONBody {
		return fmt.Errorf("response of more than %d bytes", maxJSONBody)
	}
	if v == nil || len(b) == 0 {
		return nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decoding the response: %w", err)
	}
	return nil
}

// statusCode returns the HTTP status of an error response, or 0.
func statusCode(err error) int {
	var gerr *googleapi.Error
	if errors.As(err, &gerr) {
		return gerr.Code
	}
	return 0
}

// transient reports whether a request that failed with err may succeed if
// made again: 408, 429 and 5xx answers, failed or cut connections, and a
// token service that did not answer. A done context is never transient.
func transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if c := statusCode(err); c != 0 {
		return c == http.StatusRequestTimeout || c == http.StatusTooManyRequests || c >= 500
	}
	var ce *credError
	if errors.As(err, &ce) {
		return !ce.refused()
	}
	var te *transportError
	return errors.As(err, &te)
}

// notSent reports whether err means the request never left this process:
// no token could be had, or the connection was refused, so nothing can
// have landed.
func notSent(err error) bool {
	var ce *credError
	if errors.As(err, &ce) {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial" && errors.Is(err, syscall.ECONNREFUSED)
}

// retry runs fn until it succeeds, fails with an error retryable refuses,
// has run maxAttempts times, or ctx ends, sleeping a jittered, doubling
// backoff between attempts.
func (s *Store) retry(ctx context.Context, retryable func(error) bool, fn func() error) error {
	delay := s.backoff
	for attempt := 1; ; attempt++ {
		err := fn()
		if err == nil || attempt >= s.maxAttempts || !retryable(err) || ctx.Err() != nil {
			return err
		}
		if !sleep(ctx, randDuration(delay)) {
			return err
		}
		delay = min(2*delay, maxBackoff)
	}
}

// randDuration is a jittered pause of at most d ("full jitter").
func randDuration(d time.Duration) time.Duration { return rand.N(d) + 1 }

// sleep waits d, or until ctx is done; it reports whether it waited d.
func sleep(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

// escape percent-encodes an object or bucket name as one path segment:
// every byte but the unreserved ones of RFC 3986, so '/', '%', '+', ' ',
// ':' and non-ASCII bytes all reach the service as they are in the name.
func escape(name string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(name) + len(name)/2)
	for i := 0; i < len(name); i++ {
		c := name[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// query returns the query string of kv (name, value pairs), with the user
// project when one is set.
func (s *Store) query(kv ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	if s.userProject != "" {
		q.Set("userProject", s.userProject)
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

// objectURL is the JSON API URL of the object at key, with a query of kv.
func (s *Store) objectURL(key string, kv ...string) string {
	return s.base + "b/" + escape(s.name) + "/o/" + escape(s.prefix+key) + s.query(kv...)
}

// listURL is the objects.list URL, with a query of kv.
func (s *Store) listURL(kv ...string) string {
	return s.base + "b/" + escape(s.name) + "/o" + s.query(kv...)
}

// uploadURL is the objects.insert URL of the upload endpoint.
func (s *Store) uploadURL(kv ...string) string {
	return s.uploadBase + "b/" + escape(s.name) + "/o" + s.query(kv...)
}

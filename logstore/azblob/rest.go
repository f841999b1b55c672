package azblob

// The Blob service REST API over net/http: building, authorizing and
// sending requests, retries, and reading answers (errors and XML) with
// bounds.

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/godelta/delta/logstore/internal/restio"
)

// serviceVersion is the x-ms-version of every request: the version the
// Azure SDK for Go (azblob 1.8) sent before this package spoke the API
// itself, which has List Blobs' startFrom. Azurite runs with
// --skipApiVersionCheck in the tests, as it did for the SDK.
const serviceVersion = "2026-12-06"

// Bounds on what is read of an answer other than a blob's content: a
// hostile or broken server cannot make the store hold more.
const (
	maxErrorBody = 64 << 10 // an <Error> document
	maxXMLBody   = 16 << 20 // a List Blobs page (5,000 names of up to 1 KiB, and their properties)
	// maxRetries is how often an idempotent request is tried again, as the
	// Azure SDK's default retry policy (three retries, four attempts).
	maxRetries = 3
	retryDelay = 800 * time.Millisecond // the first back-off, as the SDK's
	maxBackoff = 60 * time.Second
)

// ResponseError is an answer of the service that is not a success: its
// HTTP status, the error code (x-ms-error-code, else the <Code> of the
// <Error> body), message and request id. Errors of the store wrap it;
// reach it with errors.As. Its Message is the service's text, cut short;
// the store's own messages show only the status and code.
type ResponseError = restio.ResponseError

// request is one Blob service request. blob is the blob's full name in
// the container, "" for a request on the container.
type request struct {
	method string
	blob   string
	query  url.Values
	header http.Header
	body   []byte
	// once sends the request exactly once (PutIfAbsent).
	once bool
}

// url returns the request's URL: the service URL's path, the container
// and the blob, each percent-encoded whole as one path element (a '/' in
// a blob name is %2F, as the Azure SDK sends it), and the query, with the
// SAS of the service URL when the store authorizes with it.
func (s *Store) url(r *request) *url.URL {
	u := *s.base
	base := strings.TrimSuffix(u.Path, "/")
	rawBase := strings.TrimSuffix(u.EscapedPath(), "/")
	u.Path = base + "/" + s.container
	u.RawPath = rawBase + "/" + url.PathEscape(s.container)
	if r.blob != "" {
		u.Path += "/" + r.blob
		u.RawPath += "/" + url.PathEscape(r.blob)
	}
	u.RawQuery = r.query.Encode()
	if s.sas != "" {
		if u.RawQuery != "" {
			u.RawQuery += "&"
		}
		u.RawQuery += s.sas
	}
	return &u
}

// do sends r, with retries of transient failures unless r.once, and
// returns the answer of a success (status below 300) with its body to
// close, or an error: a *ResponseError for the service's refusal, a
// *CredentialsError, or the transport's error.
func (s *Store) do(ctx context.Context, r *request) (*http.Response, error) {
	for attempt := 1; ; attempt++ {
		resp, err := s.send(ctx, r)
		if err == nil {
			if resp.StatusCode < 300 {
				return resp, nil
			}
			err = readError(resp)
		}
		if r.once || attempt > maxRetries || !retryable(ctx, err) {
			return nil, err
		}
		if werr := restio.Wait(ctx, backoff(attempt)); werr != nil {
			return nil, err
		}
	}
}

// send makes one attempt of r.
func (s *Store) send(ctx context.Context, r *request) (*http.Response, error) {
	var bearer string
	if s.tokens != nil {
		t, err := s.tokens.get(ctx)
		if err != nil {
			return nil, err
		}
		bearer = t
	}
	var body io.Reader = http.NoBody
	if len(r.body) > 0 {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, "http://placeholder/", body)
	if err != nil {
		return nil, err
	}
	req.URL = s.url(r)
	req.Host = ""
	req.ContentLength = int64(len(r.body))
	for k, v := range r.header {
		req.Header[k] = v
	}
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	req.Header.Set("x-ms-version", serviceVersion)
	switch {
	case s.key != nil:
		s.key.sign(req, req.ContentLength)
	case bearer != "":
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	return s.http.Do(req)
}

// backoff is the wait before attempt+1 of an idempotent request: (2^attempt
// - 1) times 800 ms, times a random factor between 0.8 and 1.3, at most a
// minute, as the Azure SDK's retry policy waits.
func backoff(attempt int) time.Duration {
	d := time.Duration(1<<min(attempt, 10)-1) * retryDelay
	d = time.Duration(float64(d) * (0.8 + 0.5*rand.Float64()))
	return min(d, maxBackoff)
}

// retryable reports whether a failed attempt may be tried again: the
// statuses the Azure SDK retries (408, 429, 500, 502, 503, 504), or a
// transport error while ctx is live.
func retryable(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var re *ResponseError
	if errors.As(err, &re) {
		switch re.StatusCode {
		case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
			http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return true
		}
		return false
	}
	var (
		ce       *CredentialsError
		verify   *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
	)
	// Missing credentials, or a certificate that does not verify, will be
	// the same on the next attempt.
	return !errors.As(err, &ce) && !errors.As(err, &verify) && !errors.As(err, &unknown) &&
		!errors.As(err, &hostname) && !errors.As(err, &invalid)
}

// readError reads at most maxErrorBody bytes of a failed answer's <Error>
// document and closes it. The code comes from x-ms-error-code (which HEAD
// answers carry too), else from the document; a body that is no such
// document leaves the status alone.
func readError(resp *http.Response) error {
	defer resp.Body.Close()
	e := &ResponseError{
		StatusCode: resp.StatusCode,
		Code:       restio.Clip(resp.Header.Get("x-ms-error-code"), 128),
		RequestID:  restio.Clip(resp.Header.Get("x-ms-request-id"), 128),
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var doc struct {
		XMLName xml.Name `xml:"Error"`
		Code    string
		Message string
	}
	if len(b) > 0 && xml.Unmarshal(b, &doc) == nil {
		if e.Code == "" {
			e.Code = restio.Clip(doc.Code, 128)
		}
		e.Message = restio.Clip(doc.Message, 1024)
	}
	return e
}

// errAnswerTooLarge is returned for an XML answer over its bound.
var errAnswerTooLarge = errors.New("logstore/azblob: the service's answer is larger than any valid one")

// decodeXML reads at most limit bytes of resp's body into v and closes it.
func decodeXML(resp *http.Response, limit int64, v any) error {
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return err
	}
	if int64(len(b)) > limit {
		return errAnswerTooLarge
	}
	if err := xml.Unmarshal(b, v); err != nil {
		return fmt.Errorf("logstore/azblob: the service's answer is not the XML expected: %w", err)
	}
	return nil
}

// drain reads what is left of a small answer and closes it, so that its
// connection goes back to the pool.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
}

// blobName is a name in a listing. With Encoded="true" (a name with
// characters XML cannot carry) the text is percent-encoded.
type blobName struct {
	Encoded bool   `xml:"Encoded,attr"`
	Text    string `xml:",chardata"`
}

func (n blobName) decode() (string, error) {
	if !n.Encoded {
		return n.Text, nil
	}
	return url.QueryUnescape(n.Text)
}

// listResult is a List Blobs answer (EnumerationResults).
type listResult struct {
	XMLName xml.Name `xml:"EnumerationResults"`
	Blobs   struct {
		Blob []struct {
			Name       blobName
			Properties struct {
				LastModified  string `xml:"Last-Modified"`
				ContentLength int64  `xml:"Content-Length"`
			}
		}
		BlobPrefix []struct {
			Name blobName
		}
	}
	NextMarker string
}

// listPage asks for one page of a listing of prefix delimited by '/' (no
// delimiter when delimiter is ""), from startFrom (inclusive, "" for the
// start) or marker (the last page's NextMarker), of at most max names (0
// for the service's default).
func (s *Store) listPage(ctx context.Context, prefix, startFrom, marker string, max int32) (*listResult, error) {
	q := url.Values{"restype": {"container"}, "comp": {"list"}, "delimiter": {"/"}}
	if prefix != "" {
		q.Set("prefix", prefix)
	}
	if max > 0 {
		q.Set("maxresults", strconv.Itoa(int(max)))
	}
	if marker != "" {
		q.Set("marker", marker)
	}
	if startFrom != "" {
		q.Set("startFrom", startFrom)
	}
	resp, err := s.do(ctx, &request{method: http.MethodGet, query: q})
	if err != nil {
		return nil, err
	}
	var out listResult
	if err := decodeXML(resp, maxXMLBody, &out); err != nil {
		return nil, err
	}
	if len(out.NextMarker) > 4096 {
		return nil, errAnswerTooLarge
	}
	return &out, nil
}

// contentMD5 is the base64 MD5 of data, for the Content-MD5 header: the
// service refuses a body damaged on the way.
func contentMD5(data []byte) string {
	sum := md5.Sum(data)
	return base64.StdEncoding.EncodeToString(sum[:])
}

// loopback reports whether host (a URL's Hostname) is a loopback address
// or "localhost".
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

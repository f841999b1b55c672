package s3

// The S3 REST API over net/http: building, signing and sending requests,
// retries, and reading answers (errors and XML) with bounds.

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
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/godelta/delta/logstore/internal/restio"
)

// Bounds on what is read of an answer other than an object's content: a
// hostile or broken server cannot make the store hold more.
const (
	maxErrorBody = 64 << 10 // an <Error> document
	maxXMLBody   = 16 << 20 // a listing page (1000 keys of up to 1 KiB, and their metadata)
	maxAttempts  = 3        // of an idempotent request, as the AWS SDKs' standard retryer
)

// ResponseError is an answer of the service that is not a success: its
// HTTP status, and the S3 error code, message and request id of its
// <Error> body when it had one (a HEAD answer has no body). Errors of the
// store wrap it; reach it with errors.As.
type ResponseError = restio.ResponseError

// request is one S3 request. key is the object's full name in the bucket,
// "" for a request on the bucket.
type request struct {
	method string
	key    string
	query  url.Values
	header http.Header
	body   []byte
	// once leaves the request to its caller's retries (PutIfAbsent).
	once bool
}

// url returns the request's URL on the store's endpoint, path-style or
// virtual-hosted.
func (s *Store) url(r *request) *url.URL {
	u := *s.endpoint
	base := strings.TrimSuffix(u.Path, "/")
	var p string
	if s.pathStyle {
		p = base + "/" + s.bucket + "/" + r.key
	} else {
		u.Host = s.bucket + "." + u.Host
		p = base + "/" + r.key
	}
	u.Path = p
	u.RawPath = escape(p, true)
	u.RawQuery = encodeQuery(r.query)
	return &u
}

// do sends r, with retries of transient failures unless r.once, and
// returns the answer of a success (status below 300) with its body to
// close, or an error: a *ResponseError for the service's refusal, a
// *CredentialsError, or the transport's error.
func (s *Store) do(ctx context.Context, r *request) (*http.Response, error) {
	hash := payloadHash(r.body)
	if r.method == http.MethodPut && len(r.body) > 0 && r.header.Get("Content-MD5") == "" {
		// The body's MD5, as S3 requires of a put to a bucket with Object
		// Lock (the SDK sent a CRC32 checksum instead); the signed payload
		// hash already protects the body on the way.
		sum := md5.Sum(r.body)
		if r.header == nil {
			r.header = http.Header{}
		}
		r.header.Set("Content-MD5", base64.StdEncoding.EncodeToString(sum[:]))
	}
	for attempt := 1; ; attempt++ {
		resp, err := s.send(ctx, r, hash)
		if err == nil {
			if resp.StatusCode < 300 {
				return resp, nil
			}
			err = readError(resp)
		}
		if r.once || attempt >= maxAttempts || !retryable(ctx, err) {
			return nil, err
		}
		if serr := restio.Wait(ctx, backoff(attempt)); serr != nil {
			return nil, err
		}
	}
}

// send makes one attempt of r.
func (s *Store) send(ctx context.Context, r *request, hash string) (*http.Response, error) {
	creds, err := s.creds.get(ctx)
	if err != nil {
		return nil, err
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
	signV4(req, creds, "s3", s.region, hash, time.Now())
	return s.http.Do(req)
}

// maxBackoff caps the wait between attempts.
const maxBackoff = 20 * time.Second

// backoff is the wait before attempt+1 of an idempotent request: random
// up to 2^attempt seconds, at most maxBackoff, as the AWS SDKs' standard
// retryer waits.
func backoff(attempt int) time.Duration {
	if attempt >= 5 {
		return maxBackoff
	}
	return rand.N(time.Second << attempt)
}

// retryable reports whether a failed attempt may be tried again: a
// throttling or server error, or a transport error while ctx is live.
func retryable(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var re *ResponseError
	if errors.As(err, &re) {
		switch re.Code {
		case "SlowDown", "Throttling", "ThrottlingException", "ThrottledException", "RequestThrottledException",
			"TooManyRequestsException", "RequestLimitExceeded", "BandwidthLimitExceeded", "RequestThrottled",
			"PriorRequestNotComplete", "RequestTimeout", "RequestTimeoutException", "InternalError":
			return true
		}
		switch re.StatusCode {
		case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable,
			http.StatusGatewayTimeout, http.StatusTooManyRequests:
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
	// A certificate that does not verify will not verify on the next
	// attempt either.
	return !errors.As(err, &ce) && !errors.As(err, &verify) && !errors.As(err, &unknown) &&
		!errors.As(err, &hostname) && !errors.As(err, &invalid)
}

// readError reads at most maxErrorBody bytes of a failed answer's
// <Error> document and closes it. A body that is not such a document
// leaves only the status.
func readError(resp *http.Response) error {
	defer resp.Body.Close()
	e := &ResponseError{StatusCode: resp.StatusCode, RequestID: resp.Header.Get("X-Amz-Request-Id")}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var doc struct {
		XMLName   xml.Name `xml:"Error"`
		Code      string
		Message   string
		RequestID string `xml:"RequestId"`
	}
	if len(b) > 0 && xml.Unmarshal(b, &doc) == nil {
		e.Code, e.Message = restio.Clip(doc.Code, 128), restio.Clip(doc.Message, 1024)
		if doc.RequestID != "" {
			e.RequestID = doc.RequestID
		}
	}
	e.RequestID = restio.Clip(e.RequestID, 128)
	return e
}

// errTooLarge is returned for an XML answer over its bound.
var errTooLarge = errors.New("logstore/s3: the service's answer is larger than any valid one")

// decodeXML reads at most limit bytes of resp's body into v and closes
// it. An S3 <Error> document in a 200 answer (CompleteMultipartUpload
// sends one when it fails after its headers went out) is returned as a
// *ResponseError.
func decodeXML(resp *http.Response, limit int64, v any) error {
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return err
	}
	if int64(len(b)) > limit {
		return errTooLarge
	}
	if e := embeddedError(b); e != nil {
		e.StatusCode = resp.StatusCode
		return e
	}
	if err := xml.Unmarshal(b, v); err != nil {
		return fmt.Errorf("logstore/s3: the service's answer is not the XML expected: %w", err)
	}
	return nil
}

// embeddedError returns the *ResponseError of an <Error> document, or nil
// when b is another document.
func embeddedError(b []byte) *ResponseError {
	d := xml.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := d.Token()
		if err != nil {
			return nil
		}
		if se, ok := tok.(xml.StartElement); ok {
			if se.Name.Local != "Error" {
				return nil
			}
			var doc struct {
				Code, Message string
				RequestID     string `xml:"RequestId"`
			}
			if d.DecodeElement(&doc, &se) != nil {
				return &ResponseError{Code: "InternalError", Message: "a malformed error document"}
			}
			return &ResponseError{Code: restio.Clip(doc.Code, 128), Message: restio.Clip(doc.Message, 1024), RequestID: restio.Clip(doc.RequestID, 128)}
		}
	}
}

// listResult is a ListObjectsV2 answer.
type listResult struct {
	IsTruncated           bool
	NextContinuationToken string
	Contents              []struct {
		Key          string
		Size         int64
		LastModified string
	}
	CommonPrefixes []struct{ Prefix string }
}

// listPage asks for one page of a listing delimited by '/'.
func (s *Store) listPage(ctx context.Context, prefix, startAfter, token string) (*listResult, error) {
	q := url.Values{"list-type": {"2"}, "delimiter": {"/"}}
	if prefix != "" {
		q.Set("prefix", prefix)
	}
	if s.pageSize > 0 {
		q.Set("max-keys", fmt.Sprint(s.pageSize))
	}
	if token != "" {
		q.Set("continuation-token", token)
	} else if startAfter != "" {
		q.Set("start-after", startAfter)
	}
	resp, err := s.do(ctx, &request{method: http.MethodGet, query: q})
	if err != nil {
		return nil, err
	}
	var out listResult
	if err := decodeXML(resp, maxXMLBody, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// parseTime reads a listing's LastModified (ISO 8601); a malformed one is
// the zero time, as the SDK has it.
func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

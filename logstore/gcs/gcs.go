// Package gcs is a logstore.Store over a Google Cloud Storage bucket. It
// speaks the GCS JSON API (https://storage.googleapis.com/storage/v1/,
// uploads at /upload/storage/v1/) itself, over net/http, with OAuth2 tokens
// from cloud.google.com/go/auth/credentials. It keeps the logstore
// contract exactly and passes logstore/storetest against fake-gcs-server on
// loopback.
//
// # Why not cloud.google.com/go/storage
//
// The SDK links gRPC, OpenTelemetry, Envoy and monitoring protobufs into
// every program that imports it, even one that only ever speaks HTTP: in
// the delta CLI that was half of the packages initialised at start, half
// of the start-up time and about 20 MB of memory, paid by every command,
// GCS or not. The driver needs a handful of JSON API calls (objects get,
// list, insert, delete, and resumable uploads), which this package makes
// itself; the credentials package it uses links no gRPC.
//
// # Layout and URIs
//
// A Store is a bucket and an optional prefix: key K is the object
// PREFIX + K. The prefix is "" or a clean path, stored with a trailing '/'.
// Open takes the URI form
//
//	gs://BUCKET[/PREFIX]
//
// # Credentials
//
// By default a Store authenticates with Application Default Credentials,
// found as the Google SDKs find them (credentials.DetectDefault, asking
// for the devstorage.read_write scope): the JSON file named by
// GOOGLE_APPLICATION_CREDENTIALS (a service account key, or an external
// account for workload identity federation, AWS, Azure, OIDC or
// executable-sourced, or impersonation), then the user credentials of
// "gcloud auth application-default login", then the metadata server of
// GCE, GKE, Cloud Run and the like. Tokens are cached and refreshed before
// they expire. The credentials' quota project (quota_project_id, or
// GOOGLE_CLOUD_QUOTA_PROJECT) is sent as X-Goog-User-Project.
// Options.Credentials replaces the detection with credentials of the
// caller's own (from the credentials package, say). Not supported: mTLS and
// certificate-bound tokens (the S2A and enterprise certificate paths of
// the SDK), and universes other than googleapis.com without an Endpoint.
//
// When STORAGE_EMULATOR_HOST is set (host:port, or a URL), every request
// goes to that host with no credentials, as the SDKs do. New takes the
// bucket, the prefix and Options: an Endpoint (an http:// endpoint, an
// emulator, is reached without credentials; so is any endpoint with
// Anonymous set), Credentials, an HTTP client, a user project for
// requester-pays buckets, the listing page size, the upload chunk size and
// the retry policy. New lists one object to check that the bucket exists:
// a missing bucket is logstore.ErrRootNotFound, there and from every later
// call that meets it. New and Open return the portable logstore.Store (a
// *logstore.Portable) over the driver, a *Store, which logstore.DriverOf
// reaches for HTTPClient, Bucket and Prefix. Importing the package
// registers the URI scheme gs:// with logstore.Open.
//
// # How the contract maps onto GCS
//
//   - PutIfAbsent is one upload with the precondition ifGenerationMatch=0.
//     GCS evaluates it atomically with the write: of concurrent uploads
//     exactly one creates the object, every other gets 412 Precondition
//     Failed, which is ErrAlreadyExists. An object is visible only once
//     its upload is finished, so readers never see part of one. The upload
//     carries its CRC32C, which GCS checks.
//   - Put is the same upload without a precondition: the last one to finish
//     wins, whole. Data up to Options.ChunkSize (default 16 MiB) goes in one
//     multipart request; larger data goes as a resumable upload in chunks
//     of that size.
//   - Get and GetRange are media reads (alt=media) of the JSON API, each in
//     one response, so a read never mixes two versions; a whole read checks
//     the CRC32C GCS reports. A range past the end is cut at the end; an
//     offset at or past the end (GCS answers 416) gives no bytes and no
//     error, as does a zero length (a metadata request, which still
//     reports a missing object).
//   - Stat is the object's metadata: size, and updated as ModTime.
//   - List is objects.list with prefix = PREFIX+dir and delimiter "/", so
//     sub-directories come back as prefixes, which are skipped. GCS lists in
//     byte order of name. Its startOffset is inclusive, while startAfter is
//     exclusive: the store asks from startAfter and drops a key equal to it.
//     Objects whose names are not valid keys (a "directory placeholder"
//     ending in '/', say) are skipped. Pages of Options.PageSize names
//     (default: the service's, 1000) are fetched as the loop goes.
//   - Delete is objects.delete; 404 is success.
//   - Object names are percent-encoded whole in the path (every byte but
//     A-Z a-z 0-9 - . _ ~), so any valid key reaches GCS as it is.
//
// # Retries and ambiguous outcomes
//
// Every request is retried on transient errors (408, 429, 5xx, failed,
// reset or cut connections), up to Options.MaxAttempts attempts (default
// 6) with a jittered, doubling backoff from Options.RetryBackoff, within
// ctx. Reads, listings and Delete (a repeated delete finds 404, which is
// success) change nothing when repeated, and Put writes the same bytes
// again. A resumable upload asks the session how much it holds after a
// failed chunk and sends the rest, as the protocol has it; a session that
// finished answers with the object, so its last chunk is never ambiguous.
//
// PutIfAbsent in one request is the classic ambiguity: when an attempt
// fails after it was sent (a lost response, a 5xx), it may have created
// the object, and a retry then meets that object and gets 412. Every
// PutIfAbsent upload therefore carries a random id in its custom metadata
// (godelta-put-id); a 412 after an attempt that may have landed reads the
// object's metadata, and reports success if the id is this call's (its own
// earlier attempt created the object) and ErrAlreadyExists otherwise. If
// that read fails too, or the attempts run out, the error matches
// ErrOutcomeUnknown, never ErrAlreadyExists; callers that must know read
// the object back (package txn does, and settles the commit by its txnId).
// One case stays wrong by construction: an object this call created and
// someone replaced with Put before the retry read it reads as someone
// else's (Delta never Puts over a commit).
//
// A missing bucket is told apart where the service says so: New, List and
// uploads give logstore.ErrRootNotFound. Media reads and metadata reads
// answer 404 alike for a missing object and a missing bucket, so Get,
// GetRange and Stat in a bucket deleted after New give ErrNotFound.
//
// Errors wrap the logstore kinds (ErrNotFound from a 404 read,
// ErrAlreadyExists from a 412, ErrRootNotFound for a missing bucket,
// ErrPermission from a 401 or 403 or refused credentials,
// ErrOutcomeUnknown for a write whose outcome is unknown), with the
// service's answer reachable by errors.As as a *googleapi.Error, as from
// the SDK (its Body holds at most 16 KiB of the response); Store.ErrorKind
// is the classifier. Messages name the bucket and key, never a credential
// nor an upload session's URL. No response is read unbounded but an
// object's content: error bodies, metadata and listings are cut at fixed
// sizes.
//
// Emulators: fake-gcs-server serves everything the store uses, with one
// difference that matters only after a failure: it finishes a resumable
// upload when asked for its status ("Content-Range: bytes */*"), where GCS
// answers with the bytes it holds. The retry paths of sessions are tested
// against an in-process server instead. The emulator checks no credentials
// and no permissions.
//
// A Store is safe for concurrent use by multiple goroutines. Close releases
// idle connections. The examples show Open's URI check and New against an
// emulator.
package gcs

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"iter"
	"math"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/auth"
	"cloud.google.com/go/auth/credentials"

	"github.com/godelta/delta/logstore"
)

// Defaults for Options.
const (
	DefaultChunkSize    = 16 << 20
	DefaultMaxAttempts  = 6
	DefaultRetryBackoff = 250 * time.Millisecond
	maxBackoff          = 30 * time.Second
	// chunkAlign is the unit of a resumable upload's chunks: every chunk
	// but the last is a multiple of it.
	chunkAlign = 256 << 10
	// defaultEndpoint is the JSON API of Google Cloud Storage.
	defaultEndpoint = "https://storage.googleapis.com/storage/v1/"
	// EmulatorHostEnv names an emulator to use instead of GCS.
	emulatorHostEnv = "STORAGE_EMULATOR_HOST"
	// putIDKey is the custom metadata key of a PutIfAbsent's id.
	putIDKey = "godelta-put-id"
)

// ErrInvalidURI is returned by Open for a URI that is not gs://BUCKET[/PREFIX].
var ErrInvalidURI = errors.New("logstore/gcs: invalid URI")

// Options configure New. The zero value talks to Google Cloud Storage with
// Application Default Credentials, or to STORAGE_EMULATOR_HOST when set.
type Options struct {
	// Endpoint is the base URL of the JSON API, such as
	// "http://127.0.0.1:4443" for an emulator; "/storage/v1/" is added
	// when it has no path. Uploads go to the same host, under
	// "/upload" + that path. An http:// endpoint is reached without
	// credentials.
	Endpoint string
	// Anonymous sends no credentials (public buckets, emulators).
	Anonymous bool
	// Credentials, when set, are used instead of Application Default
	// Credentials; see cloud.google.com/go/auth/credentials.
	Credentials *auth.Credentials
	// HTTPClient, when set, carries every request as it is; it must add
	// credentials itself where they are needed.
	HTTPClient *http.Client
	// UserProject is the project billed for the requests (userProject),
	// as requester-pays buckets require; "" sends none.
	UserProject string
	// PageSize is the number of names List asks for per request; 0 is the
	// service's default (1000). Tests use small pages.
	PageSize int
	// ChunkSize is the largest upload sent in one request, and the chunk
	// size of larger, resumable uploads, rounded up to a multiple of 256
	// KiB; 0 is DefaultChunkSize.
	ChunkSize int
	// MaxAttempts bounds the attempts of a retried request; 0 is
	// DefaultMaxAttempts. Retries also end with ctx.
	MaxAttempts int
	// RetryBackoff is the first pause before a retry, doubled at each
	// further one up to 30s, with jitter; 0 is DefaultRetryBackoff.
	RetryBackoff time.Duration
}

// Store is a logstore.Store over a GCS bucket. See the package doc.
type Store struct {
	hc          *http.Client
	own         *http.Transport // the transport this package made, or nil
	base        string          // the JSON API, ending in '/'
	uploadBase  string          // the upload endpoint, ending in '/'
	name        string          // bucket name
	prefix      string          // "" or ending in '/'
	userProject string
	pageSize    int
	chunkSize   int
	maxAttempts int
	backoff     time.Duration
}

var _ logstore.Driver = (*Store)(nil)

func init() {
	logstore.Register("gs", func(ctx context.Context, uri string) (logstore.Store, error) {
		p, err := Open(ctx, uri)
		if err != nil {
			return nil, err
		}
		return p, nil
	})
}

// New returns the store over bucket, with keys under prefix ("" for the
// whole bucket; a trailing '/' is optional). It lists at most one object to
// check that the bucket exists and can be read: a missing bucket is
// logstore.ErrRootNotFound. Close releases idle connections.
func New(ctx context.Context, bucket, prefix string, opts Options) (*logstore.Portable, error) {
	d, err := NewDriver(ctx, bucket, prefix, opts)
	if err != nil {
		return nil, err
	}
	return logstore.NewPortable(d), nil
}

// NewDriver is New without the portable layer, for tests of the driver;
// wrap it with logstore.NewPortable to use it as a Store.
func NewDriver(ctx context.Context, bucket, prefix string, opts Options) (*Store, error) {
	if bucket == "" || strings.ContainsAny(bucket, "/\\") {
		return nil, fmt.Errorf("logstore/gcs: bucket name %q: %w", bucket, ErrInvalidURI)
	}
	if prefix = strings.TrimSuffix(prefix, "/"); prefix != "" {
		if err := logstore.CheckKey(prefix); err != nil {
			return nil, fmt.Errorf("logstore/gcs: prefix: %w", err)
		}
		prefix += "/"
	}
	endpoint, anonymous := opts.Endpoint, opts.Anonymous
	if endpoint == "" {
		if host := os.Getenv(emulatorHostEnv); host != "" {
			// As the SDKs: the emulator, without credentials.
			endpoint, anonymous = host, true
			if !strings.Contains(host, "://") {
				endpoint = "http://" + host
			}
		} else {
			endpoint = defaultEndpoint
		}
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("logstore/gcs: endpoint %q is not an http(s) URL: %w", logstore.RedactURI(endpoint), ErrInvalidURI)
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	if u.Path == "" || u.Path == "/" {
		u.Path = "/storage/v1/"
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	u.RawPath = ""
	anonymous = anonymous || u.Scheme == "http"
	base := u.String()
	// The SDKs upload to /upload/storage/v1/ on the host of the endpoint;
	// a proxy prefix before /storage/v1/ is kept.
	up := *u
	if p, ok := strings.CutSuffix(u.Path, "/storage/v1/"); ok {
		up.Path = p + "/upload/storage/v1/"
	} else {
		up.Path = "/upload" + u.Path
	}

	s := &Store{
		hc:          opts.HTTPClient,
		base:        base,
		uploadBase:  up.String(),
		name:        bucket,
		prefix:      prefix,
		userProject: opts.UserProject,
		pageSize:    opts.PageSize,
		chunkSize:   opts.ChunkSize,
		maxAttempts: opts.MaxAttempts,
		backoff:     opts.RetryBackoff,
	}
	if s.hc == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 64 // many calls at once go to one host
		s.own = t
		s.hc = &http.Client{Transport: t}
		if !anonymous {
			creds := opts.Credentials
			if creds == nil {
				creds, err = credentials.DetectDefault(&credentials.DetectOptions{Scopes: []string{scope}})
				if err != nil {
					return nil, fmt.Errorf("logstore/gcs: credentials for bucket %s: %w", bucket, err)
				}
			}
			s.hc.Transport = &authTransport{base: t, creds: creds}
		}
	}
	if s.maxAttempts <= 0 {
		s.maxAttempts = DefaultMaxAttempts
	}
	if s.backoff <= 0 {
		s.backoff = DefaultRetryBackoff
	}
	if s.chunkSize <= 0 {
		s.chunkSize = DefaultChunkSize
	}
	s.chunkSize = (s.chunkSize + chunkAlign - 1) / chunkAlign * chunkAlign
	if err := s.probe(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Open returns the Store for a URI gs://BUCKET[/PREFIX], with default
// Options (see the package doc for credentials and STORAGE_EMULATOR_HOST).
func Open(ctx context.Context, uri string) (*logstore.Portable, error) {
	u, err := url.Parse(uri)
	if err != nil || !strings.EqualFold(u.Scheme, "gs") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("logstore/gcs: %q is not gs://BUCKET[/PREFIX]: %w", logstore.RedactURI(uri), ErrInvalidURI)
	}
	return New(ctx, u.Host, strings.TrimPrefix(u.Path, "/"), Options{})
}

// probe lists at most one object under the prefix.
func (s *Store) probe(ctx context.Context) error {
	_, err := s.listPage(ctx, s.prefix, "", "", 1, "items(name)")
	if err != nil {
		return s.wrap(ctx, "open", "", err)
	}
	return nil
}

// Close implements logstore.Driver: it closes the idle connections of the
// transport the store made (none of a caller's HTTPClient).
func (s *Store) Close() error {
	if s.own != nil {
		s.own.CloseIdleConnections()
	}
	return nil
}

// ErrorKind implements logstore.Driver: it maps an error of the store onto
// the portable kinds.
func (s *Store) ErrorKind(err error) error {
	if k := logstore.KindOf(err); k != nil {
		return k
	}
	var ce *credError
	switch {
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return nil // the portable layer decides, by the operation
	case statusCode(err) != 0:
		switch c := statusCode(err); {
		case c == http.StatusNotFound:
			return logstore.ErrRootNotFound // a listing or upload in a missing bucket
		case c == http.StatusUnauthorized || c == http.StatusForbidden:
			return logstore.ErrPermission
		case c == http.StatusPreconditionFailed:
			return logstore.ErrAlreadyExists
		case c >= 500 || c == http.StatusRequestTimeout || c == http.StatusTooManyRequests:
			return logstore.ErrOutcomeUnknown
		}
		return nil
	case errors.As(err, &ce):
		if ce.refused() {
			return logstore.ErrPermission
		}
		return nil // nothing was sent
	case notSent(err):
		return nil // nothing left this process
	}
	// A transport error after the request may have been sent.
	return logstore.ErrOutcomeUnknown
}

// Bucket returns the bucket name.
func (s *Store) Bucket() string { return s.name }

// Prefix returns the prefix keys live under: "" or ending in '/'.
func (s *Store) Prefix() string { return s.prefix }

// URI returns gs://BUCKET/PREFIX.
func (s *Store) URI() string { return "gs://" + s.name + "/" + strings.TrimSuffix(s.prefix, "/") }

// HTTPClient returns the client the store's requests go through, which
// adds the store's credentials, for uses this package does not cover.
func (s *Store) HTTPClient() *http.Client { return s.hc }

// wrap adds the operation and object to an error, and the logstore kind
// where ErrorKind finds one, keeping err reachable.
func (s *Store) wrap(ctx context.Context, op, key string, err error) error {
	where := fmt.Sprintf("logstore/gcs: %s gs://%s/%s%s", op, s.name, s.prefix, key)
	switch k := s.ErrorKind(err); k {
	case logstore.ErrRootNotFound, logstore.ErrNotFound, logstore.ErrPermission:
		if !errors.Is(err, k) {
			return fmt.Errorf("%s: %w: %w", where, k, err)
		}
	}
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("%s: %w: %w", where, cerr, err)
	}
	return fmt.Errorf("%s: %w", where, err)
}

// readErr wraps a 404 of a read of an object as ErrNotFound: media and
// metadata reads answer it alike for a missing object and bucket.
func (s *Store) readErr(ctx context.Context, op, key string, err error) error {
	if statusCode(err) == http.StatusNotFound {
		err = fmt.Errorf("%w: %w", logstore.ErrNotFound, err)
	}
	return s.wrap(ctx, op, key, err)
}

// castagnoli is the CRC32C table, GCS's checksum.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Get returns the whole object.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	var data []byte
	err := s.retry(ctx, transient, func() error {
		resp, err := s.send(ctx, &request{method: http.MethodGet, url: s.objectURL(key, "alt", "media")})
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, err := readAll(resp.Body, resp.ContentLength)
		if err != nil {
			return &transportError{err: err}
		}
		if want, ok := reportedCRC32C(resp); ok && crc32.Checksum(b, castagnoli) != want {
			return &transportError{err: fmt.Errorf("the %d bytes read do not match the object's CRC32C", len(b))}
		}
		data = b
		return nil
	})
	if err != nil {
		return nil, s.readErr(ctx, "get", key, err)
	}
	return data, nil
}

// reportedCRC32C returns the CRC32C of the object that the response to a
// whole read reports (X-Goog-Hash), when the bytes read are the object's
// stored bytes, not a decompressed form of them.
func reportedCRC32C(resp *http.Response) (uint32, bool) {
	if resp.StatusCode != http.StatusOK || resp.Uncompressed || resp.Header.Get("Content-Encoding") != "" {
		return 0, false
	}
	if enc := resp.Header.Get("X-Goog-Stored-Content-Encoding"); enc != "" && enc != "identity" {
		return 0, false
	}
	for _, h := range resp.Header.Values("X-Goog-Hash") {
		for _, part := range strings.Split(h, ",") {
			v, ok := strings.CutPrefix(strings.TrimSpace(part), "crc32c=")
			if !ok {
				continue
			}
			b, err := base64.StdEncoding.DecodeString(v)
			if err != nil || len(b) != 4 {
				return 0, false
			}
			return binary.BigEndian.Uint32(b), true
		}
	}
	return 0, false
}

// readAll reads r to the end, with room for want bytes at the start, up
// to 64 MiB: a larger Content-Length must be backed by bytes that arrive
// before the buffer grows to hold them.
func readAll(r io.Reader, want int64) ([]byte, error) {
	want = max(0, min(want, 64<<20))
	buf := bytes.NewBuffer(make([]byte, 0, want+bytes.MinRead))
	if _, err := buf.ReadFrom(r); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// GetRange returns length bytes from offset; see logstore.Store.
func (s *Store) GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error) {
	if length == 0 {
		// No bytes, but a missing object is still an error.
		if _, err := s.stat(ctx, key, "name"); err != nil {
			return nil, s.readErr(ctx, "get range", key, err)
		}
		return []byte{}, nil
	}
	rng := "bytes=" + strconv.FormatInt(offset, 10) + "-"
	if length <= math.MaxInt64-offset {
		rng += strconv.FormatInt(offset+length-1, 10)
	} // else to the end: offset+length would overflow
	var data []byte
	err := s.retry(ctx, transient, func() error {
		resp, err := s.send(ctx, &request{method: http.MethodGet, url: s.objectURL(key, "alt", "media"), header: http.Header{"Range": {rng}}})
		if statusCode(err) == http.StatusRequestedRangeNotSatisfiable {
			// The object exists and offset is at or past its end.
			data = []byte{}
			return nil
		}
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var r io.Reader = resp.Body
		if resp.StatusCode == http.StatusOK && offset > 0 {
			// The whole object: the service ignored the range.
			if _, err := io.CopyN(io.Discard, r, offset); err == io.EOF {
				data = []byte{}
				return nil
			} else if err != nil {
				return &transportError{err: err}
			}
		}
		want := resp.ContentLength
		if want < 0 || want > length {
			want = length
		}
		b, err := readAll(io.LimitReader(r, length), want)
		if err != nil {
			return &transportError{err: err}
		}
		data = b
		return nil
	})
	if err != nil {
		return nil, s.readErr(ctx, "get range", key, err)
	}
	return data, nil
}

// objectMeta is the part of an object's metadata the store reads.
type objectMeta struct {
	Name     string            `json:"name"`
	Size     int64             `json:"size,string"`
	Updated  time.Time         `json:"updated"`
	Metadata map[string]string `json:"metadata"`
}

// stat reads the metadata of the object at key: the fields named (a
// partial response), retried.
func (s *Store) stat(ctx context.Context, key, fields string) (objectMeta, error) {
	var m objectMeta
	err := s.retry(ctx, transient, func() error {
		resp, err := s.send(ctx, &request{method: http.MethodGet, url: s.objectURL(key, "fields", fields)})
		if err != nil {
			return err
		}
		m = objectMeta{}
		return readJSON(resp, &m)
	})
	return m, err
}

// Stat returns the object's size and modification time.
func (s *Store) Stat(ctx context.Context, key string) (logstore.ObjectInfo, error) {
	m, err := s.stat(ctx, key, "name,size,updated")
	if err != nil {
		return logstore.ObjectInfo{}, s.readErr(ctx, "stat", key, err)
	}
	return logstore.ObjectInfo{Key: key, Size: m.Size, ModTime: m.Updated}, nil
}

// listResponse is a page of objects.list.
type listResponse struct {
	Items         []objectMeta `json:"items"`
	Prefixes      []string     `json:"prefixes"`
	NextPageToken string       `json:"nextPageToken"`
}

// listPage reads one page of the names under prefix, delimited by '/',
// from startOffset (inclusive) or pageToken, at most max of them (0: the
// service's page), with the fields named.
func (s *Store) listPage(ctx context.Context, prefix, startOffset, pageToken string, max int, fields string) (*listResponse, error) {
	kv := []string{"prefix", prefix, "delimiter", "/", "fields", fields}
	if startOffset != "" {
		kv = append(kv, "startOffset", startOffset)
	}
	if pageToken != "" {
		kv = append(kv, "pageToken", pageToken)
	}
	if max > 0 {
		kv = append(kv, "maxResults", strconv.Itoa(max))
	}
	u := s.listURL(kv...)
	var page *listResponse
	err := s.retry(ctx, transient, func() error {
		resp, err := s.send(ctx, &request{method: http.MethodGet, url: u})
		if err != nil {
			return err
		}
		page = &listResponse{}
		return readJSON(resp, page)
	})
	return page, err
}

// pages yields the pages of a listing, following nextPageToken.
func (s *Store) pages(ctx context.Context, prefix, startOffset, fields string) iter.Seq2[*listResponse, error] {
	return func(yield func(*listResponse, error) bool) {
		token := ""
		for {
			page, err := s.listPage(ctx, prefix, startOffset, token, s.pageSize, fields)
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(page, nil) || page.NextPageToken == "" {
				return
			}
			if page.NextPageToken == token {
				yield(nil, fmt.Errorf("the service gave the same page token twice"))
				return
			}
			token = page.NextPageToken
		}
	}
}

// List yields the objects directly under dir after startAfter; see
// logstore.Store and the package doc.
func (s *Store) List(ctx context.Context, dir, startAfter string) iter.Seq2[logstore.ObjectInfo, error] {
	return func(yield func(logstore.ObjectInfo, error) bool) {
		start := ""
		if startAfter > dir {
			// startOffset is inclusive: a key equal to startAfter is
			// dropped below.
			start = s.prefix + startAfter
		}
		last := ""
		for page, err := range s.pages(ctx, s.prefix+dir, start, "items(name,size,updated),nextPageToken") {
			if err != nil {
				yield(logstore.ObjectInfo{}, s.wrap(ctx, "list", dir, err))
				return
			}
			for _, it := range page.Items {
				key, ok := strings.CutPrefix(it.Name, s.prefix)
				if !ok || key <= startAfter || !strings.HasPrefix(key, dir) || logstore.CheckKey(key) != nil || strings.Contains(key[len(dir):], "/") {
					continue
				}
				if key <= last {
					if key == last {
						continue // repeated across pages
					}
					yield(logstore.ObjectInfo{}, fmt.Errorf("logstore/gcs: list gs://%s/%s%s: service listed %q after %q", s.name, s.prefix, dir, key, last))
					return
				}
				last = key
				if !yield(logstore.ObjectInfo{Key: key, Size: it.Size, ModTime: it.Updated}, nil) {
					return
				}
			}
		}
	}
}

// PutIfAbsent creates the object only if none exists: an upload with
// ifGenerationMatch=0. See the package doc for what is ambiguous, and how
// a retry that meets its own object settles it.
func (s *Store) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	id := newPutID()
	err := s.upload(ctx, key, data, true, id)
	if err == nil {
		return nil
	}
	if logstore.KindOf(err) == nil && statusCode(err) == http.StatusPreconditionFailed {
		return fmt.Errorf("logstore/gcs: put if absent gs://%s/%s%s: %w: %w", s.name, s.prefix, key, logstore.ErrAlreadyExists, err)
	}
	return s.wrap(ctx, "put if absent", key, err)
}

// Put creates or replaces the object.
func (s *Store) Put(ctx context.Context, key string, data []byte) error {
	if err := s.upload(ctx, key, data, false, ""); err != nil {
		return s.wrap(ctx, "put", key, err)
	}
	return nil
}

// newPutID returns a random id for the metadata of a PutIfAbsent.
func newPutID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Delete removes the object; a missing one is not an error.
func (s *Store) Delete(ctx context.Context, key string) error {
	// A repeated delete finds 404, which is success: safe to retry.
	err := s.retry(ctx, transient, func() error {
		resp, err := s.send(ctx, &request{method: http.MethodDelete, url: s.objectURL(key)})
		if err != nil {
			return err
		}
		return readJSON(resp, nil)
	})
	if err == nil || statusCode(err) == http.StatusNotFound {
		return nil
	}
	return s.wrap(ctx, "delete", key, err)
}

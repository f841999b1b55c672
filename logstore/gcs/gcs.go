// Package gcs is a logstore.Store over a Google Cloud Storage bucket, through
// cloud.google.com/go/storage (JSON API for metadata and uploads, XML API
// for media reads). It keeps the logstore contract exactly and passes
// logstore/storetest against fake-gcs-server on loopback.
//
// # Layout and URIs
//
// A Store is a bucket and an optional prefix: key K is the object
// PREFIX + K. The prefix is "" or a clean path, stored with a trailing '/'.
// Open takes the URI form
//
//	gs://BUCKET[/PREFIX]
//
// and authenticates as the SDK does by default (Application Default
// Credentials). When STORAGE_EMULATOR_HOST is set, the SDK sends every
// request to that host with no credentials, so none are needed. New takes
// the bucket, the prefix and Options: an Endpoint (an http:// endpoint, an
// emulator, is reached without credentials; so is any endpoint with
// Anonymous set), extra option.ClientOption values (credentials and so
// on), an HTTP client, the listing page size and the upload chunk size.
// New lists one object to check that the bucket exists: a missing bucket
// is logstore.ErrRootNotFound, there and from every later call that meets
// it. New and Open return the portable logstore.Store (a
// *logstore.Portable) over the driver, a *Store, which logstore.DriverOf
// reaches for Client, Bucket and Prefix. Importing the package registers
// the URI scheme gs:// with logstore.Open.
//
// # How the contract maps onto GCS
//
//   - PutIfAbsent is one upload with the precondition ifGenerationMatch=0
//     (storage.Conditions{DoesNotExist: true}). GCS evaluates it atomically
//     with the write: of concurrent uploads exactly one creates the object,
//     every other gets 412 Precondition Failed, which is ErrAlreadyExists.
//     An object is visible only once its upload is finished, so readers
//     never see part of one. The upload carries its CRC32C, which GCS
//     checks.
//   - Put is the same upload without a precondition: the last one to finish
//     wins, whole. Data up to Options.ChunkSize (default 16 MiB) goes in one
//     request; larger data goes as a resumable upload in chunks of that size.
//   - Get and GetRange read with a range request at the generation first
//     seen, so a read never mixes two versions. A range past the end is cut
//     at the end; an offset at or past the end (GCS answers 416) gives no
//     bytes and no error, as does a zero length (a HEAD request, which still
//     reports a missing object).
//   - Stat is the object's metadata: size, and Updated as ModTime.
//   - List is objects.list with Prefix = PREFIX+dir and Delimiter "/", so
//     sub-directories come back as prefixes, which are skipped. GCS lists in
//     byte order of name. Its StartOffset is inclusive, while startAfter is
//     exclusive: the store asks from startAfter and drops a key equal to it.
//     Objects whose names are not valid keys (a "directory placeholder"
//     ending in '/', say) are skipped. Pages of Options.PageSize names
//     (default: the service's, 1000) are fetched as the loop goes.
//   - Delete is objects.delete; 404 is success.
//
// # Retries and ambiguous outcomes
//
// Reads, listings, Delete and Put are retried on transient errors (5xx,
// 429, reset or cut connections), up to Options.MaxAttempts attempts
// (default 6) with a jittered, doubling backoff from Options.RetryBackoff,
// within ctx: by the SDK, and by this package for uploads sent in one
// request, which the SDK never retries. Put may be repeated because it
// writes the same bytes again. PutIfAbsent is retried only when the request
// could not be sent at all (the connection was refused): after any other
// failure the upload may have landed, and a retry would then meet its own
// object and report 412 for a write that in fact succeeded. Such a failure
// (a timeout, a reset connection, a lost response, a 5xx, a ctx cancelled
// once the upload began) is returned as an error that is neither nil nor
// ErrAlreadyExists; callers that must know read the object back (package
// txn does, and settles the commit by its txnId).
//
// A missing bucket is told apart where the service says so: New, List and
// uploads give logstore.ErrRootNotFound. Media reads and metadata reads answer
// 404 alike for a missing object and a missing bucket, so Get, GetRange and
// Stat in a bucket deleted after New give ErrNotFound.
//
// Emulators: fake-gcs-server routes XML media reads by Host header, so
// reads through any address but its -public-host read as missing objects;
// pass storage.WithJSONReads() in ClientOptions when a proxy sits between.
// The emulator checks no credentials and no permissions.
//
// Errors wrap the logstore kinds (ErrNotFound from storage.ErrObjectNotExist,
// ErrAlreadyExists from a 412, ErrRootNotFound for a missing bucket,
// ErrPermission from a 401 or 403, ErrOutcomeUnknown for a write whose
// outcome is unknown), with the SDK's error still reachable by errors.As (a
// *googleapi.Error, say); Store.ErrorKind is the classifier. Messages name
// the bucket and key, never a credential.
//
// A Store is safe for concurrent use by multiple goroutines. Close releases
// the client. The examples show Open's URI check and New against an
// emulator.
package gcs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"iter"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"cloud.google.com/go/storage"
	"github.com/googleapis/gax-go/v2"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"

	"github.com/godelta/delta/logstore"
)

// Defaults for Options.
const (
	DefaultChunkSize    = 16 << 20
	DefaultMaxAttempts  = 6
	DefaultRetryBackoff = 250 * time.Millisecond
	maxBackoff          = 30 * time.Second
)

// ErrInvalidURI is returned by Open for a URI that is not gs://BUCKET[/PREFIX].
var ErrInvalidURI = errors.New("logstore/gcs: invalid URI")

// Options configure New. The zero value talks to Google Cloud Storage with
// Application Default Credentials, or to STORAGE_EMULATOR_HOST when set.
type Options struct {
	// Endpoint is the base URL of the service, such as
	// "http://127.0.0.1:4443" for an emulator; "/storage/v1/" is added
	// when it has no path. An http:// endpoint is reached without
	// credentials.
	Endpoint string
	// Anonymous sends no credentials (public buckets, emulators).
	Anonymous bool
	// ClientOptions are passed to storage.NewClient after the options the
	// fields above make: credentials, user agent, and so on.
	ClientOptions []option.ClientOption
	// HTTPClient, when set, carries every request as it is; it must add
	// credentials itself where they are needed.
	HTTPClient *http.Client
	// PageSize is the number of names List asks for per request; 0 is the
	// service's default (1000). Tests use small pages.
	PageSize int
	// ChunkSize is the largest upload sent in one request, and the chunk
	// size of larger, resumable uploads; 0 is DefaultChunkSize.
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
	client      *storage.Client
	bucket      *storage.BucketHandle
	name        string // bucket name
	prefix      string // "" or ending in '/'
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
// logstore.ErrRootNotFound. Close releases the client.
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
	var copts []option.ClientOption
	anonymous := opts.Anonymous
	if opts.Endpoint != "" {
		u, err := url.Parse(opts.Endpoint)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("logstore/gcs: endpoint %q is not an http(s) URL: %w", opts.Endpoint, ErrInvalidURI)
		}
		if u.Path == "" || u.Path == "/" {
			u.Path = "/storage/v1/"
		}
		copts = append(copts, option.WithEndpoint(u.String()))
		anonymous = anonymous || u.Scheme == "http"
	}
	if anonymous {
		copts = append(copts, option.WithoutAuthentication())
	}
	if opts.HTTPClient != nil {
		copts = append(copts, option.WithHTTPClient(opts.HTTPClient))
	}
	copts = append(copts, opts.ClientOptions...)
	client, err := storage.NewClient(ctx, copts...)
	if err != nil {
		return nil, fmt.Errorf("logstore/gcs: client for bucket %s: %w", bucket, err)
	}
	attempts := opts.MaxAttempts
	if attempts <= 0 {
		attempts = DefaultMaxAttempts
	}
	backoff := opts.RetryBackoff
	if backoff <= 0 {
		backoff = DefaultRetryBackoff
	}
	client.SetRetry(storage.WithMaxAttempts(attempts),
		storage.WithBackoff(gax.Backoff{Initial: backoff, Max: maxBackoff, Multiplier: 2}))
	s := &Store{
		client:      client,
		bucket:      client.Bucket(bucket),
		name:        bucket,
		prefix:      prefix,
		pageSize:    opts.PageSize,
		chunkSize:   opts.ChunkSize,
		maxAttempts: attempts,
		backoff:     backoff,
	}
	if s.chunkSize <= 0 {
		s.chunkSize = DefaultChunkSize
	}
	if err := s.probe(ctx); err != nil {
		client.Close()
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
	it := s.bucket.Objects(ctx, &storage.Query{Prefix: s.prefix})
	it.PageInfo().MaxSize = 1
	if _, err := it.Next(); err != nil && !errors.Is(err, iterator.Done) {
		return s.wrap(ctx, "open", "", err)
	}
	return nil
}

// Close implements logstore.Driver: it releases the client.
func (s *Store) Close() error { return s.client.Close() }

// ErrorKind implements logstore.Driver: it maps an SDK error onto the
// portable kinds.
func (s *Store) ErrorKind(err error) error {
	if k := logstore.KindOf(err); k != nil {
		return k
	}
	var gerr *googleapi.Error
	switch {
	case errors.Is(err, storage.ErrBucketNotExist):
		return logstore.ErrRootNotFound
	case errors.Is(err, storage.ErrObjectNotExist):
		return logstore.ErrNotFound
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return nil // the portable layer decides, by the operation
	case errors.As(err, &gerr):
		switch {
		case gerr.Code == http.StatusNotFound:
			return logstore.ErrRootNotFound // an upload into a missing bucket
		case gerr.Code == http.StatusUnauthorized || gerr.Code == http.StatusForbidden:
			return logstore.ErrPermission
		case gerr.Code == http.StatusPreconditionFailed:
			return logstore.ErrAlreadyExists
		case gerr.Code >= 500 || gerr.Code == http.StatusRequestTimeout || gerr.Code == http.StatusTooManyRequests:
			return logstore.ErrOutcomeUnknown
		}
		return nil
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

// Client returns the underlying client, for uses this package does not cover.
func (s *Store) Client() *storage.Client { return s.client }

func (s *Store) object(key string) *storage.ObjectHandle { return s.bucket.Object(s.prefix + key) }

// wrap maps an SDK error onto the logstore kinds, keeping it reachable.
func (s *Store) wrap(ctx context.Context, op, key string, err error) error {
	where := fmt.Sprintf("logstore/gcs: %s gs://%s/%s%s", op, s.name, s.prefix, key)
	switch k := s.ErrorKind(err); k {
	case logstore.ErrRootNotFound, logstore.ErrNotFound, logstore.ErrPermission:
		return fmt.Errorf("%s: %w: %w", where, k, err)
	}
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("%s: %w: %w", where, cerr, err)
	}
	return fmt.Errorf("%s: %w", where, err)
}

// Get returns the whole object.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	r, err := s.object(key).NewReader(ctx)
	if err != nil {
		return nil, s.wrap(ctx, "get", key, err)
	}
	defer r.Close()
	data, err := readAll(r, r.Attrs.Size)
	if err != nil {
		return nil, s.wrap(ctx, "get", key, err)
	}
	return data, nil
}

// readAll reads r to the end, with room for want bytes at the start.
func readAll(r io.Reader, want int64) ([]byte, error) {
	if want < 0 || want > 1<<30 {
		want = 0
	}
	buf := bytes.NewBuffer(make([]byte, 0, want+bytes.MinRead))
	if _, err := buf.ReadFrom(r); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// GetRange returns length bytes from offset; see logstore.Store.
func (s *Store) GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error) {
	n := length
	if n > math.MaxInt64-offset {
		n = -1 // to the end; offset+length would overflow the Range header
	}
	r, err := s.object(key).NewRangeReader(ctx, offset, n)
	var gerr *googleapi.Error
	if errors.As(err, &gerr) && gerr.Code == http.StatusRequestedRangeNotSatisfiable {
		// The object exists and offset is at or past its end.
		return []byte{}, nil
	}
	if err != nil {
		return nil, s.wrap(ctx, "get range", key, err)
	}
	defer r.Close()
	if length == 0 {
		return []byte{}, nil
	}
	want := r.Remain()
	if n > 0 && (want < 0 || want > n) {
		want = n
	}
	data, err := readAll(io.LimitReader(r, length), want)
	if err != nil {
		return nil, s.wrap(ctx, "get range", key, err)
	}
	return data, nil
}

// Stat returns the object's size and modification time.
func (s *Store) Stat(ctx context.Context, key string) (logstore.ObjectInfo, error) {
	attrs, err := s.object(key).Attrs(ctx)
	if err != nil {
		return logstore.ObjectInfo{}, s.wrap(ctx, "stat", key, err)
	}
	return logstore.ObjectInfo{Key: key, Size: attrs.Size, ModTime: attrs.Updated}, nil
}

// List yields the objects directly under dir after startAfter; see
// logstore.Store and the package doc.
func (s *Store) List(ctx context.Context, dir, startAfter string) iter.Seq2[logstore.ObjectInfo, error] {
	return func(yield func(logstore.ObjectInfo, error) bool) {
		q := &storage.Query{Prefix: s.prefix + dir, Delimiter: "/"}
		if startAfter > dir {
			// StartOffset is inclusive: a key equal to startAfter is
			// dropped below.
			q.StartOffset = s.prefix + startAfter
		}
		if err := q.SetAttrSelection([]string{"Name", "Size", "Updated"}); err != nil {
			yield(logstore.ObjectInfo{}, fmt.Errorf("logstore/gcs: list %q: %w", dir, err))
			return
		}
		it := s.bucket.Objects(ctx, q)
		if s.pageSize > 0 {
			it.PageInfo().MaxSize = s.pageSize
		}
		last := ""
		for {
			attrs, err := it.Next()
			if errors.Is(err, iterator.Done) {
				return
			}
			if err != nil {
				yield(logstore.ObjectInfo{}, s.wrap(ctx, "list", dir, err))
				return
			}
			if attrs.Name == "" { // a sub-directory (attrs.Prefix)
				continue
			}
			key, ok := strings.CutPrefix(attrs.Name, s.prefix)
			if !ok || key <= startAfter || logstore.CheckKey(key) != nil || strings.Contains(key[len(dir):], "/") {
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
			if !yield(logstore.ObjectInfo{Key: key, Size: attrs.Size, ModTime: attrs.Updated}, nil) {
				return
			}
		}
	}
}

// PutIfAbsent creates the object only if none exists: one upload with
// ifGenerationMatch=0. See the package doc for what is ambiguous.
func (s *Store) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	// Retry only what never reached the server: a retry after an attempt
	// that may have landed would meet our own object and get a 412. The
	// same rule holds for the chunks of a resumable upload.
	obj := s.object(key).
		Retryer(storage.WithPolicy(storage.RetryAlways), storage.WithErrorFunc(notSent)).
		If(storage.Conditions{DoesNotExist: true})
	err := s.retry(ctx, notSent, func() error { return s.upload(ctx, obj, data) })
	var gerr *googleapi.Error
	if errors.As(err, &gerr) && gerr.Code == http.StatusPreconditionFailed {
		return fmt.Errorf("logstore/gcs: put if absent gs://%s/%s%s: %w: %w", s.name, s.prefix, key, logstore.ErrAlreadyExists, err)
	}
	if err != nil {
		return s.wrap(ctx, "put if absent", key, err)
	}
	return nil
}

// Put creates or replaces the object.
func (s *Store) Put(ctx context.Context, key string, data []byte) error {
	// An unconditional upload of the same bytes may be repeated.
	obj := s.object(key).Retryer(storage.WithPolicy(storage.RetryAlways))
	if err := s.retry(ctx, storage.ShouldRetry, func() error { return s.upload(ctx, obj, data) }); err != nil {
		return s.wrap(ctx, "put", key, err)
	}
	return nil
}

// retry runs fn until it succeeds, fails with an error retryable refuses,
// has run maxAttempts times, or ctx ends, sleeping a jittered, doubling
// backoff between attempts. The SDK retries requests itself, but not an
// upload sent in one request, which is how objects up to the chunk size go.
func (s *Store) retry(ctx context.Context, retryable func(error) bool, fn func() error) error {
	delay := s.backoff
	for attempt := 1; ; attempt++ {
		err := fn()
		if err == nil || attempt >= s.maxAttempts || !retryable(err) || ctx.Err() != nil {
			return err
		}
		timer := time.NewTimer(rand.N(delay) + 1)
		select {
		case <-ctx.Done():
			timer.Stop()
			return err
		case <-timer.C:
		}
		delay = min(2*delay, maxBackoff)
	}
}

// upload writes data to obj: in one request up to the chunk size, else as
// a resumable upload. The CRC32C goes with it, for the service to check.
func (s *Store) upload(ctx context.Context, obj *storage.ObjectHandle, data []byte) error {
	w := obj.NewWriter(ctx)
	w.ContentType = "application/octet-stream"
	w.CRC32C = crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli))
	w.SendCRC32C = true
	if len(data) <= s.chunkSize {
		w.ChunkSize = 0 // one request, which the SDK does not retry
	} else {
		w.ChunkSize = s.chunkSize
	}
	if _, err := w.Write(data); err != nil {
		_ = w.Close()
		return err
	}
	return w.Close()
}

// notSent reports whether err means the request never left this process:
// the connection was refused, so nothing can have landed.
func notSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial" && errors.Is(err, syscall.ECONNREFUSED)
}

// Delete removes the object; a missing one is not an error.
func (s *Store) Delete(ctx context.Context, key string) error {
	// A repeated delete finds 404, which is success: safe to retry.
	err := s.object(key).Retryer(storage.WithPolicy(storage.RetryAlways)).Delete(ctx)
	if err == nil || errors.Is(err, storage.ErrObjectNotExist) {
		return nil
	}
	return s.wrap(ctx, "delete", key, err)
}

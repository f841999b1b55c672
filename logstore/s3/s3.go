// Package s3 is a logstore.Store over an Amazon S3 bucket, or any service
// that speaks the S3 API with conditional writes (versitygw, MinIO, R2, ...),
// through the AWS SDK for Go v2. It keeps the logstore contract exactly and
// passes logstore/storetest against a real server. New and Open return the
// portable logstore.Store (a *logstore.Portable) over the driver, a *Store,
// which logstore.DriverOf reaches for Client, Bucket and Prefix. Importing
// the package registers the URI schemes s3:// and s3a:// with
// logstore.Open.
//
// # Layout
//
// A Store is a bucket and an optional prefix inside it: key K is the object
// PREFIX/K. The prefix is given without surrounding slashes; "" is the
// bucket's root. Keys are checked by the portable layer before any request.
//
// # Put-if-absent
//
// PutIfAbsent is one PutObject with "If-None-Match: *": the service stores
// the object only if no object has the key, atomically, so of many racing
// writers exactly one gets 200 and the others 412 PreconditionFailed, which
// is ErrAlreadyExists. A 409 ConditionalRequestConflict (another conditional
// write of the key was in flight) means nothing was stored: the put is tried
// again, up to four times with a short jittered backoff, then returns an
// error that is not ErrAlreadyExists. PutIfAbsent stores at most 5 GiB, the
// limit of one PutObject; Delta commits are far smaller.
//
// # What is ambiguous
//
// A put whose request may have reached the service but whose answer did not
// arrive, or arrived as a 5xx (a timeout, a reset connection, a cancelled
// context, 500/503), may or may not have landed. PutIfAbsent then returns an
// error matching errOutcomeUnknown, never nil and never ErrAlreadyExists. It
// retries such a put itself a few times (the SDK's own retries are off for
// PutIfAbsent): a later 200 is a real success, since the conditional write
// cannot succeed twice, but a later 412 may be the earlier attempt's own
// object, so it too is ErrOutcomeUnknown. Callers (package txn) read the key
// back to settle it. Put, Get, Stat, List and Delete are idempotent and use
// the SDK's standard retries.
//
// # Put
//
// Put is an unconditional PutObject, or, for data of Options.MultipartThreshold
// bytes or more (64 MiB by default), a multipart upload of PartSize parts
// (16 MiB by default) sent four at a time; either way the object appears
// whole when the request completes. A failed multipart upload is aborted.
//
// # Reads
//
// Get is GetObject. GetRange is GetObject with a Range header
// "bytes=OFF-END"; the service answers 416 InvalidRange for an offset at or
// past the end (and for any range of an empty object), which GetRange
// returns as no bytes and no error, as the contract asks. A zero length is
// a HeadObject, so a missing object is still ErrNotFound. Stat is
// HeadObject. A 404 (NoSuchKey, or NotFound from HEAD) is ErrNotFound.
//
// # Listing
//
// List is ListObjectsV2 with Prefix PREFIX/dir and Delimiter "/", so
// sub-directories come back as common prefixes and are skipped. startAfter
// maps to the StartAfter parameter, which S3 defines as exclusive and in
// UTF-8 byte order, the order of the contract; pages follow with the
// continuation token (Options.PageSize keys a page, 1000 by default). Keys
// ending in '/' (directory markers) are skipped, and each key is checked to
// sort after the one before, so a service that broke the order gives an
// error rather than a wrong listing.
//
// # Errors
//
// Errors wrap logstore's kinds (errors.Is) and the SDK's error (errors.As,
// e.g. smithy.APIError or *smithyhttp.ResponseError), with the operation and
// key in the message: logstore.ErrRootNotFound for a missing bucket,
// logstore.ErrPermission for 403 answers (wrong or expired credentials, a
// denying policy, and versitygw's 404 XAdminUserNotFound for an unknown
// access key) and logstore.ErrOutcomeUnknown above. Store.ErrorKind is the
// classifier. New checks the bucket and the credentials
// with a one-key ListObjectsV2: a HEAD (Stat) answer has no body, so a bare
// 404 for a key in a missing bucket, or for an unknown access key on a
// server that answers 404 for that, would otherwise read as a missing
// object. Messages never include credentials.
//
// # URIs and configuration
//
// Open takes s3://BUCKET/PREFIX with optional query parameters endpoint,
// region and path_style (true for path-style requests, as most S3-compatible
// servers need). Credentials, region and endpoint come from the standard
// AWS chain: the variables AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_SESSION_TOKEN, AWS_REGION, AWS_ENDPOINT_URL_S3 and AWS_ENDPOINT_URL,
// shared config and credentials files, and instance roles; the URI's
// parameters and the fields of Options override them. The region defaults
// to us-east-1 when nothing sets it. ParseURI splits a URI into New's
// arguments for callers who want to set Options themselves.
//
// # Close
//
// The SDK gives each client an HTTP transport of its own, whose pool keeps
// idle connections (two goroutines each) until they time out. Close closes
// the connections of the client the store built, idle or in use, so a
// closed store holds nothing; a caller's Options.HTTPClient is the
// caller's to close.
//
// A Store is safe for concurrent use by multiple goroutines. The examples
// parse a URI and open a bucket on an S3-compatible server.
package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	s3api "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/godelta/delta/logstore"
)

// errOutcomeUnknown is logstore.errOutcomeUnknown, which PutIfAbsent wraps
// when the put may or may not have landed (see the package doc).
var errOutcomeUnknown = logstore.ErrOutcomeUnknown

// Defaults of Options.
const (
	DefaultMultipartThreshold = 64 << 20
	DefaultPartSize           = 16 << 20
	minPartSize               = 5 << 20 // S3's minimum for all parts but the last
	putIfAbsentAttempts       = 4
	partConcurrency           = 4
)

// Options configure New. Zero fields take their value from the AWS
// configuration chain (environment, shared files) or a default.
type Options struct {
	Region    string // e.g. "us-east-1"
	Endpoint  string // e.g. "http://127.0.0.1:9000"; "" for AWS
	PathStyle bool   // path-style requests (http://host/bucket/key)

	// Static credentials; when AccessKey is empty the AWS chain is used.
	AccessKey, SecretKey, SessionToken string

	// PageSize is the number of keys a listing asks for per request; 0 is
	// the service's default (1000). Tests set it small.
	PageSize int32
	// MultipartThreshold is the size from which Put uploads in parts; 0 is
	// DefaultMultipartThreshold.
	MultipartThreshold int64
	// PartSize is the size of each part of a multipart upload, at least
	// 5 MiB; 0 is DefaultPartSize.
	PartSize int64
	// WriterPartSize is the size of each part a Writer (NewWriter)
	// uploads, at least 5 MiB; 0 is DefaultWriterPartSize.
	WriterPartSize int64

	// HTTPClient sends the requests; nil is the SDK's default client.
	HTTPClient *http.Client
	// SkipBucketCheck leaves out New's check of the bucket (a one-key
	// listing), for credentials that may read and write objects but not
	// list them.
	SkipBucketCheck bool
}

// Store is a logstore.Store over an S3 bucket. See the package doc.
type Store struct {
	client    *s3api.Client
	conns     *connSet // of the HTTP client built for this store; see Close
	bucket    string
	prefix    string // "" or ending in '/'
	pageSize  int32
	threshold int64
	partSize  int64
	// writerPartSize is Options.WriterPartSize, defaulted (writer.go).
	writerPartSize int64
}

var _ logstore.Driver = (*Store)(nil)

func init() {
	logstore.Register("s3", openStore)
	logstore.Register("s3a", openStore)
}

// openStore is Open as a logstore.OpenFunc; s3a:// is read as s3://.
func openStore(ctx context.Context, uri string) (logstore.Store, error) {
	if logstore.SchemeOf(uri) == "s3a" {
		uri = "s3://" + uri[len("s3a://"):]
	}
	p, err := Open(ctx, uri)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// New returns the store of the objects under prefix in bucket. It loads the
// AWS configuration, applies opts over it, and checks that the bucket
// exists (unless opts.SkipBucketCheck).
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
	if bucket == "" || strings.Contains(bucket, "/") {
		return nil, fmt.Errorf("logstore/s3: invalid bucket name %q", bucket)
	}
	prefix = strings.Trim(prefix, "/")
	if prefix != "" {
		if err := logstore.CheckKey(prefix); err != nil {
			return nil, fmt.Errorf("logstore/s3: prefix: %w", err)
		}
		prefix += "/"
	}
	if opts.PartSize == 0 {
		opts.PartSize = DefaultPartSize
	}
	if opts.PartSize < minPartSize {
		return nil, fmt.Errorf("logstore/s3: part size %d is below S3's minimum of 5 MiB", opts.PartSize)
	}
	if opts.MultipartThreshold == 0 {
		opts.MultipartThreshold = DefaultMultipartThreshold
	}
	if err := writerOptions(&opts); err != nil {
		return nil, err
	}

	var load []func(*config.LoadOptions) error
	if opts.Region != "" {
		load = append(load, config.WithRegion(opts.Region))
	}
	if opts.AccessKey != "" {
		load = append(load, config.WithCredentialsProvider(
			credentials.NewStaticCredentialsProvider(opts.AccessKey, opts.SecretKey, opts.SessionToken)))
	}
	cfg, err := config.LoadDefaultConfig(ctx, load...)
	if err != nil {
		// The SDK's configuration errors name files and profiles, not
		// secrets.
		return nil, fmt.Errorf("logstore/s3: loading AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	conns := &connSet{}
	client := s3api.NewFromConfig(cfg, func(o *s3api.Options) {
		if opts.Endpoint != "" {
			o.BaseEndpoint = aws.String(opts.Endpoint)
		}
		if opts.PathStyle {
			o.UsePathStyle = true
		}
		if opts.HTTPClient != nil {
			// Set here, not in the loaded config, which would try to add
			// AWS_CA_BUNDLE to it: the caller's client is used as given.
			o.HTTPClient = opts.HTTPClient
		} else if tracked, ok := conns.track(o.HTTPClient); ok {
			// The client the SDK built for this store, with its
			// defaults applied: Close closes its connections.
			o.HTTPClient = tracked
		}
		// Ranged and listed reads carry no whole-object checksum; the
		// SDK would log that on every such read.
		o.DisableLogOutputChecksumValidationSkipped = true
	})
	s := &Store{
		client:    client,
		conns:     conns,
		bucket:    bucket,
		prefix:    prefix,
		pageSize:  opts.PageSize,
		threshold: opts.MultipartThreshold,
		partSize:  opts.PartSize,

		writerPartSize: opts.WriterPartSize,
	}
	if !opts.SkipBucketCheck {
		// A listing of at most one key, rather than HeadBucket, whose
		// bodiless 404 would not tell a missing bucket from an unknown
		// access key on servers that answer 404 for that.
		_, err := client.ListObjectsV2(ctx, &s3api.ListObjectsV2Input{
			Bucket:  aws.String(bucket),
			Prefix:  aws.String(prefix),
			MaxKeys: aws.Int32(1),
		})
		if err != nil {
			conns.close()
			return nil, s.wrap("checking the bucket", "", err)
		}
	}
	return s, nil
}

// Open returns the Store a URI names: s3://BUCKET/PREFIX with optional
// query parameters endpoint, region and path_style (see the package doc).
func Open(ctx context.Context, uri string) (*logstore.Portable, error) {
	bucket, prefix, opts, err := ParseURI(uri)
	if err != nil {
		return nil, err
	}
	return New(ctx, bucket, prefix, opts)
}

// ParseURI splits an s3:// URI into the arguments of New. Unknown query
// parameters are an error, so a misspelt option is not silently ignored.
// Credentials are not taken from URIs.
func ParseURI(uri string) (bucket, prefix string, opts Options, err error) {
	u, err := url.Parse(uri)
	if err != nil {
		// url's errors quote the URI, which may hold a secret.
		return "", "", Options{}, errors.New("logstore/s3: the URI does not parse; want s3://BUCKET/PREFIX")
	}
	if !strings.EqualFold(u.Scheme, "s3") || u.Host == "" || u.User != nil || u.Fragment != "" {
		u.User, u.RawQuery, u.Fragment = nil, "", ""
		return "", "", Options{}, fmt.Errorf("logstore/s3: %q is not an s3://BUCKET/PREFIX URI (credentials come from the AWS configuration, not the URI)", u.String())
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return "", "", Options{}, fmt.Errorf("logstore/s3: URI query: %w", err)
	}
	for name, vals := range q {
		v := vals[len(vals)-1]
		switch name {
		case "endpoint":
			opts.Endpoint = v
		case "region":
			opts.Region = v
		case "path_style":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return "", "", Options{}, fmt.Errorf("logstore/s3: URI parameter path_style=%q is not a boolean", v)
			}
			opts.PathStyle = b
		default:
			return "", "", Options{}, fmt.Errorf("logstore/s3: unknown URI parameter %q (known: endpoint, region, path_style)", name)
		}
	}
	return u.Host, strings.Trim(u.Path, "/"), opts, nil
}

// Bucket returns the bucket name.
func (s *Store) Bucket() string { return s.bucket }

// Prefix returns the prefix of the store's keys in the bucket: "" or a
// path ending in '/'.
func (s *Store) Prefix() string { return s.prefix }

// Client returns the SDK client, for operations beyond the Store interface.
func (s *Store) Client() *s3api.Client { return s.client }

// URI implements logstore.Driver: s3://BUCKET/PREFIX, without the query.
func (s *Store) URI() string {
	return "s3://" + s.bucket + "/" + strings.TrimSuffix(s.prefix, "/")
}

// Close implements logstore.Driver: it closes the network connections of
// the HTTP client the store built for itself (when Options.HTTPClient is
// nil), idle or in use, so that a closed store leaves no connection and no
// transport goroutine behind; requests still in flight fail. A caller's
// Options.HTTPClient is left alone.
func (s *Store) Close() error {
	s.conns.close()
	return nil
}

// ErrorKind implements logstore.Driver: it maps an SDK error onto the
// portable kinds (see the package doc).
func (s *Store) ErrorKind(err error) error {
	if k := logstore.KindOf(err); k != nil {
		return k
	}
	code, st := apiCode(err), status(err)
	switch {
	case code == "NoSuchBucket":
		return logstore.ErrRootNotFound
	case st == http.StatusForbidden || deniedCodes[code]:
		return logstore.ErrPermission
	case code == "NoSuchKey" || st == http.StatusNotFound:
		return logstore.ErrNotFound
	case code == "PreconditionFailed" || st == http.StatusPreconditionFailed:
		return logstore.ErrAlreadyExists
	case st >= 500 || st == 0 && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded):
		// No answer, or a server error: a write may have landed. The
		// portable layer keeps this for writes only.
		return logstore.ErrOutcomeUnknown
	}
	return nil
}

// Get implements logstore.Driver.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	b, _, err := s.get(ctx, "get", key, nil)
	return b, err
}

// get reads an object, or the range rng of it, and returns its bytes and
// the Content-Range of the answer ("" for a whole object).
func (s *Store) get(ctx context.Context, op, key string, rng *string) ([]byte, string, error) {
	out, err := s.client.GetObject(ctx, &s3api.GetObjectInput{
		Bucket: aws.String(s.bucket),
		Key:    aws.String(s.prefix + key),
		Range:  rng,
	})
	if err != nil {
		return nil, "", s.wrap(op, key, err)
	}
	defer out.Body.Close()
	var buf bytes.Buffer
	if n := aws.ToInt64(out.ContentLength); n > 0 && n < 1<<31 {
		buf.Grow(int(n))
	}
	if _, err := buf.ReadFrom(out.Body); err != nil {
		return nil, "", s.wrap(op, key, err)
	}
	if n := out.ContentLength; n != nil && *n != int64(buf.Len()) {
		return nil, "", fmt.Errorf("logstore/s3: %s %q: read %d bytes of %d: %w", op, key, buf.Len(), *n, io.ErrUnexpectedEOF)
	}
	return buf.Bytes(), aws.ToString(out.ContentRange), nil
}

// GetRange implements logstore.Driver.
func (s *Store) GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error) {
	if length == 0 {
		if _, err := s.stat(ctx, "get range", key); err != nil {
			return nil, err
		}
		return []byte{}, nil
	}
	rng := "bytes=" + strconv.FormatInt(offset, 10) + "-"
	if length <= math.MaxInt64-offset {
		rng += strconv.FormatInt(offset+length-1, 10)
	}
	b, contentRange, err := s.get(ctx, "get range", key, &rng)
	if err != nil {
		if status(err) == http.StatusRequestedRangeNotSatisfiable {
			// The object exists (a missing one is 404) and the offset is
			// at or past its end.
			return []byte{}, nil
		}
		return nil, err
	}
	if contentRange == "" && offset > 0 {
		// A server that ignored the Range header sent the whole object.
		if offset >= int64(len(b)) {
			return []byte{}, nil
		}
		b = b[offset:]
	}
	if int64(len(b)) > length {
		b = b[:length]
	}
	return b, nil
}

// Stat implements logstore.Driver.
func (s *Store) Stat(ctx context.Context, key string) (logstore.ObjectInfo, error) {
	return s.stat(ctx, "stat", key)
}

func (s *Store) stat(ctx context.Context, op, key string) (logstore.ObjectInfo, error) {
	out, err := s.client.HeadObject(ctx, &s3api.HeadObjectInput{
		Bucket: aws.String(s.bucket),
		Key:    aws.String(s.prefix + key),
	})
	if err != nil {
		return logstore.ObjectInfo{}, s.wrap(op, key, err)
	}
	return logstore.ObjectInfo{
		Key:     key,
		Size:    aws.ToInt64(out.ContentLength),
		ModTime: aws.ToTime(out.LastModified),
	}, nil
}

// List implements logstore.Driver.
func (s *Store) List(ctx context.Context, dir, startAfter string) iter.Seq2[logstore.ObjectInfo, error] {
	return func(yield func(logstore.ObjectInfo, error) bool) {
		in := &s3api.ListObjectsV2Input{
			Bucket:    aws.String(s.bucket),
			Prefix:    aws.String(s.prefix + dir),
			Delimiter: aws.String("/"),
		}
		if s.pageSize > 0 {
			in.MaxKeys = aws.Int32(s.pageSize)
		}
		// Only a startAfter inside the directory narrows the listing; one
		// that sorts before the directory changes nothing, and one after
		// it (greater, without dir as prefix) leaves nothing.
		if startAfter > dir {
			if !strings.HasPrefix(startAfter, dir) {
				return
			}
			in.StartAfter = aws.String(s.prefix + startAfter)
		}
		last := startAfter
		for {
			out, err := s.client.ListObjectsV2(ctx, in)
			if err != nil {
				yield(logstore.ObjectInfo{}, s.wrap("list", dir, err))
				return
			}
			for _, obj := range out.Contents {
				full := aws.ToString(obj.Key)
				key, ok := strings.CutPrefix(full, s.prefix)
				name, inDir := strings.CutPrefix(key, dir)
				if !ok || !inDir || name == "" || strings.Contains(name, "/") {
					continue // a directory marker, or not ours
				}
				if key <= last {
					if key == last {
						continue
					}
					yield(logstore.ObjectInfo{}, fmt.Errorf("logstore/s3: list %q: the service returned %q after %q, out of order", dir, key, last))
					return
				}
				last = key
				info := logstore.ObjectInfo{Key: key, Size: aws.ToInt64(obj.Size), ModTime: aws.ToTime(obj.LastModified)}
				if !yield(info, nil) {
					return
				}
			}
			if !aws.ToBool(out.IsTruncated) || aws.ToString(out.NextContinuationToken) == "" {
				return
			}
			in.ContinuationToken = out.NextContinuationToken
			in.StartAfter = nil // ignored with a token, but say so
		}
	}
}

// PutIfAbsent implements logstore.Driver. See the package doc for how it
// maps onto a conditional PutObject and what it does when the outcome of a
// request is unknown.
func (s *Store) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	ambiguous := error(nil) // the first attempt that may have landed
	for attempt := 1; ; attempt++ {
		_, err := s.client.PutObject(ctx, &s3api.PutObjectInput{
			Bucket:        aws.String(s.bucket),
			Key:           aws.String(s.prefix + key),
			Body:          bytes.NewReader(data),
			ContentLength: aws.Int64(int64(len(data))),
			IfNoneMatch:   aws.String("*"),
		}, func(o *s3api.Options) {
			o.Retryer = aws.NopRetryer{} // retries are decided below
		})
		if err == nil {
			return nil
		}
		code, st := apiCode(err), status(err)
		switch {
		case st == http.StatusPreconditionFailed || code == "PreconditionFailed":
			if ambiguous != nil {
				return fmt.Errorf("logstore/s3: put if absent %q: %w: the key exists, perhaps written by an earlier attempt that failed with: %w", key, errOutcomeUnknown, ambiguous)
			}
			return fmt.Errorf("logstore/s3: put if absent %q: %w: %w", key, logstore.ErrAlreadyExists, err)
		case st == http.StatusConflict || code == "ConditionalRequestConflict":
			// Nothing was stored; another conditional write was in flight.
			if attempt >= putIfAbsentAttempts {
				if ambiguous != nil {
					return fmt.Errorf("logstore/s3: put if absent %q: %w: %w", key, errOutcomeUnknown, ambiguous)
				}
				return fmt.Errorf("logstore/s3: put if absent %q: still conflicting after %d attempts: %w", key, attempt, err)
			}
		case ctx.Err() != nil:
			// Cancelled or timed out, perhaps after the request was sent.
			return fmt.Errorf("logstore/s3: put if absent %q: %w: %w", key, errOutcomeUnknown, err)
		case st != 0 && st < 500:
			// A definite refusal (403, 400, 404 NoSuchBucket, ...): nothing
			// was stored by this attempt.
			if ambiguous != nil {
				return fmt.Errorf("logstore/s3: put if absent %q: %w: %w (then: %w)", key, errOutcomeUnknown, ambiguous, err)
			}
			return s.wrap("put if absent", key, err)
		default:
			// 5xx or a transport error: the request may have landed.
			if ambiguous == nil {
				ambiguous = err
			}
			if attempt >= putIfAbsentAttempts {
				return fmt.Errorf("logstore/s3: put if absent %q: %w: %w", key, errOutcomeUnknown, err)
			}
		}
		if err := sleep(ctx, attempt); err != nil {
			if ambiguous != nil {
				return fmt.Errorf("logstore/s3: put if absent %q: %w: %w", key, errOutcomeUnknown, errors.Join(ambiguous, err))
			}
			return fmt.Errorf("logstore/s3: put if absent %q: %w", key, err)
		}
	}
}

// sleep waits a jittered, growing time before attempt+1.
func sleep(ctx context.Context, attempt int) error {
	d := time.Duration(10<<attempt) * time.Millisecond
	d = d/2 + rand.N(d)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Put implements logstore.Driver.
func (s *Store) Put(ctx context.Context, key string, data []byte) error {
	if int64(len(data)) >= s.threshold {
		return s.putMultipart(ctx, key, data)
	}
	_, err := s.client.PutObject(ctx, &s3api.PutObjectInput{
		Bucket:        aws.String(s.bucket),
		Key:           aws.String(s.prefix + key),
		Body:          bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))),
	})
	if err != nil {
		return s.wrap("put", key, err)
	}
	return nil
}

// putMultipart uploads data in parts of s.partSize, partConcurrency at a
// time, and completes the upload, or aborts it on any error.
func (s *Store) putMultipart(ctx context.Context, key string, data []byte) (err error) {
	full := aws.String(s.prefix + key)
	created, err := s.client.CreateMultipartUpload(ctx, &s3api.CreateMultipartUploadInput{
		Bucket: aws.String(s.bucket),
		Key:    full,
	})
	if err != nil {
		return s.wrap("put (multipart)", key, err)
	}
	uploadID := created.UploadId
	defer func() {
		if err != nil {
			// Best effort, on a context of its own: the caller's may be
			// the reason for the failure.
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			_, _ = s.client.AbortMultipartUpload(actx, &s3api.AbortMultipartUploadInput{
				Bucket: aws.String(s.bucket), Key: full, UploadId: uploadID,
			})
		}
	}()

	n := (int64(len(data)) + s.partSize - 1) / s.partSize
	parts := make([]types.CompletedPart, n)
	errs := make([]error, n)
	sem := make(chan struct{}, partConcurrency)
	var wg sync.WaitGroup
	for i := range n {
		start := i * s.partSize
		end := min(start+s.partSize, int64(len(data)))
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			out, err := s.client.UploadPart(ctx, &s3api.UploadPartInput{
				Bucket:        aws.String(s.bucket),
				Key:           full,
				UploadId:      uploadID,
				PartNumber:    aws.Int32(int32(i + 1)),
				Body:          bytes.NewReader(data[start:end]),
				ContentLength: aws.Int64(end - start),
			})
			if err != nil {
				errs[i] = err
				return
			}
			parts[i] = types.CompletedPart{
				PartNumber: aws.Int32(int32(i + 1)),
				ETag:       out.ETag,
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return s.wrap("put (multipart)", key, err)
	}
	_, err = s.client.CompleteMultipartUpload(ctx, &s3api.CompleteMultipartUploadInput{
		Bucket:          aws.String(s.bucket),
		Key:             full,
		UploadId:        uploadID,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts},
	})
	if err != nil {
		return s.wrap("put (multipart)", key, err)
	}
	return nil
}

// Delete implements logstore.Driver.
func (s *Store) Delete(ctx context.Context, key string) error {
	_, err := s.client.DeleteObject(ctx, &s3api.DeleteObjectInput{
		Bucket: aws.String(s.bucket),
		Key:    aws.String(s.prefix + key),
	})
	if err != nil {
		// S3 answers 204 for a missing key; some servers say 404.
		if c := apiCode(err); status(err) == http.StatusNotFound && (c == "NoSuchKey" || c == "NotFound" || c == "") {
			return nil
		}
		return s.wrap("delete", key, err)
	}
	return nil
}

// wrap turns an SDK error into one of this package's, keeping it reachable
// through errors.As.
func (s *Store) wrap(op, key string, err error) error {
	what := op
	if key != "" {
		what += " " + strconv.Quote(key)
	}
	switch k := s.ErrorKind(err); k {
	case logstore.ErrRootNotFound:
		return fmt.Errorf("logstore/s3: %s: bucket %q: %w: %w", what, s.bucket, k, err)
	case logstore.ErrPermission, logstore.ErrNotFound:
		return fmt.Errorf("logstore/s3: %s: %w: %w", what, k, err)
	}
	return fmt.Errorf("logstore/s3: %s: %w", what, err)
}

// deniedCodes are the error codes of refused credentials. versitygw
// answers an unknown access key with 404 XAdminUserNotFound, where S3 says
// 403 InvalidAccessKeyId.
var deniedCodes = map[string]bool{
	"AccessDenied":          true,
	"InvalidAccessKeyId":    true,
	"SignatureDoesNotMatch": true,
	"ExpiredToken":          true,
	"InvalidToken":          true,
	"XAdminUserNotFound":    true,
}

// status is the HTTP status of an SDK error, or 0 when no answer came.
func status(err error) int {
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// apiCode is the S3 error code of an SDK error, or "".
func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

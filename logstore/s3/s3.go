// Package s3 is a logstore.Store over an Amazon S3 bucket, or any service
// that speaks the S3 API with conditional writes (versitygw, MinIO, R2, ...).
// It speaks the S3 REST API itself, over net/http, signing requests with
// AWS Signature Version 4 (sigv4.go), and finds credentials along the
// standard AWS chain itself (creds.go). It keeps the logstore contract
// exactly and passes logstore/storetest against a real server. New and
// Open return the portable logstore.Store (a *logstore.Portable) over the
// driver, a *Store, which logstore.DriverOf reaches for HTTPClient, Bucket
// and Prefix. Importing the package registers the URI schemes s3:// and
// s3a:// with logstore.Open.
//
// # Why not the AWS SDK
//
// The SDK's S3 client and its configuration loader (service/s3 and config)
// bring the STS, SSO, SSO-OIDC and sign-in clients, endpoint rule engines,
// checksum and event-stream packages, and their init work, into every
// program that imports this package: in the delta CLI that was 36 package
// inits, 11.6 MB of binary and 3.4 MiB of the peak memory of every
// command, S3 or not (bench/RESULTS.md, issue 26); the driver now costs
// what a build without it costs, within the noise. It needs eight REST calls (GetObject, HeadObject,
// ListObjectsV2, PutObject, DeleteObject and the multipart upload's
// Create, UploadPart, Complete and Abort) and the credential chain, which
// this package makes itself; it links no AWS package at all.
//
// # Layout
//
// A Store is a bucket and an optional prefix inside it: key K is the object
// PREFIX/K. The prefix is given without surrounding slashes; "" is the
// bucket's root. Keys are checked by the portable layer before any request.
// Object names are percent-encoded whole in the path (every byte but
// A-Z a-z 0-9 - . _ ~ and '/'), so any valid key reaches S3 as it is.
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
// retries such a put itself a few times (the standard retries are off for
// PutIfAbsent): a later 200 is a real success, since the conditional write
// cannot succeed twice, but a later 412 may be the earlier attempt's own
// object, so it too is ErrOutcomeUnknown. Callers (package txn) read the key
// back to settle it. Put, Get, Stat, List and Delete are idempotent and are
// tried up to three times, as the AWS SDKs' standard retryer does, on
// throttling (429, SlowDown and the like), server errors (500, 502, 503,
// 504, InternalError), request timeouts and transport errors, waiting a
// random time up to 2^attempt seconds between attempts.
//
// # Put
//
// Put is an unconditional PutObject, or, for data of Options.MultipartThreshold
// bytes or more (64 MiB by default), a multipart upload of PartSize parts
// (16 MiB by default) sent four at a time; either way the object appears
// whole when the request completes. A failed multipart upload is aborted.
// Every request carries the SHA-256 of its body in its signature, which
// the service checks.
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
// Errors wrap logstore's kinds (errors.Is) and the service's answer
// (errors.As, a *ResponseError with the HTTP status, the S3 error code,
// message and request id), with the operation and key in the message:
// logstore.ErrRootNotFound for a missing bucket, logstore.ErrPermission for
// 403 answers (wrong or expired credentials, a denying policy, and
// versitygw's 404 XAdminUserNotFound for an unknown access key) and for
// credentials that could not be found or fetched (a *CredentialsError),
// and logstore.ErrOutcomeUnknown above. Store.ErrorKind is the classifier.
// New checks the bucket and the credentials with a one-key ListObjectsV2:
// a HEAD (Stat) answer has no body, so a bare 404 for a key in a missing
// bucket, or for an unknown access key on a server that answers 404 for
// that, would otherwise read as a missing object. Messages never include
// credentials: secrets travel in headers only, and the service's error
// text is cut short. No answer is read unbounded but an object's content:
// error documents are cut at 64 KiB, and a listing or other XML answer
// over 16 MiB is an error, not an allocation.
//
// # URIs and configuration
//
// Open takes s3://BUCKET/PREFIX with optional query parameters endpoint,
// region and path_style (true for path-style requests, as most S3-compatible
// servers need). The URI's parameters and the fields of Options override
// the environment. Without an endpoint the store talks to AWS,
// virtual-hosted (https://BUCKET.s3.REGION.amazonaws.com/), or path-style
// for a bucket name that cannot be a host name; an endpoint that is an IP
// address is always reached path-style. The region is
// Options.Region, else AWS_REGION, AWS_DEFAULT_REGION, the profile's
// region, else us-east-1. The endpoint is Options.Endpoint, else
// AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's endpoint_url.
// AWS_CA_BUNDLE adds a PEM bundle of certificate authorities to the
// store's own HTTP client; proxies come from HTTP_PROXY, HTTPS_PROXY and
// NO_PROXY as for any net/http client. ParseURI splits a URI into New's
// arguments for callers who want to set Options themselves.
//
// # Credentials
//
// Credentials are looked for in the order of the AWS SDKs' default chain:
//
//  1. Options.AccessKey, SecretKey and SessionToken.
//  2. AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN.
//  3. AWS_WEB_IDENTITY_TOKEN_FILE with AWS_ROLE_ARN (and
//     AWS_ROLE_SESSION_NAME): STS AssumeRoleWithWebIdentity, an unsigned
//     call (EKS service accounts and other OIDC federation).
//  4. The profile AWS_PROFILE (else "default") of the shared config file
//     (AWS_CONFIG_FILE, else ~/.aws/config) and credentials file
//     (AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/credentials):
//     aws_access_key_id, aws_secret_access_key and aws_session_token;
//     credential_process (run by sh -c as the SDKs do, its JSON answer of
//     Version 1 read, at most 1 MiB, within a minute); role_arn with
//     source_profile (chained, at most five deep), with credential_source
//     (Environment, Ec2InstanceMetadata or EcsContainer) or with
//     web_identity_token_file, assumed with STS AssumeRole (signed with
//     the source's credentials, in the profile's region; external_id,
//     role_session_name and duration_seconds are honoured) or
//     AssumeRoleWithWebIdentity; IAM Identity Center settings
//     (sso_session or sso_start_url, with sso_account_id and
//     sso_role_name), whose cached "aws sso login" sign-in buys the
//     role's credentials (below, and sso.go). A profile named by AWS_PROFILE that does
//     not exist is an error, and a profile so named comes before 2 and 3,
//     as in the SDKs. The profile's region and endpoint_url are used too.
//  5. ECS and EKS container credentials: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI
//     (on 169.254.170.2) or AWS_CONTAINER_CREDENTIALS_FULL_URI (https, or
//     http to a loopback or the ECS/EKS link-local addresses), with the
//     token of AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE (read again on each
//     refresh) or AWS_CONTAINER_AUTHORIZATION_TOKEN.
//  6. The EC2 instance metadata service, IMDSv2 only (a session token is
//     asked for first), at AWS_EC2_METADATA_SERVICE_ENDPOINT or
//     http://169.254.169.254, unless AWS_EC2_METADATA_DISABLED=true.
//
// An IAM Identity Center profile names an [sso-session NAME] section
// (sso_start_url, sso_region) with sso_session, or holds sso_start_url
// and sso_region itself (the legacy form); either way with
// sso_account_id and sso_role_name. Incomplete settings, or a profile
// whose sso_start_url or sso_region contradicts its session's, are a
// *CredentialsError. The token is read from the AWS CLI's cache,
// ~/.aws/sso/cache/SHA1.json (the hex SHA-1 of the session name, or of
// the start URL in the legacy form; ~ is the user's home directory, $HOME
// on Unix), at most 64 KiB, on each fetch of credentials. An expired
// token of an sso_session is refreshed as the SDKs do, by SSO OIDC
// CreateToken with its refresh token (POST
// https://oidc.REGION.amazonaws.com/token), and the cache file rewritten
// atomically (a temporary file renamed over it, mode 0600); should the
// refresh be refused because another process refreshed the token first,
// that process's token is read back and used. A legacy token cannot be
// refreshed. The token buys the role's credentials from
// the portal's GetRoleCredentials (GET
// https://portal.sso.REGION.amazonaws.com/federation/credentials), tried
// up to three times on a 5xx, a 429 or a transport error. A missing,
// garbled or expired token (one whose refresh was refused, or that the
// portal answers 401 for) is an *SSOLoginError matching
// ErrSSOTokenMissing, ErrSSOTokenCorrupt or ErrSSOTokenExpired, whose
// message says to run "aws sso login --profile NAME"; any other refusal
// of the portal (403 for a role the user may not take) is a plain
// *CredentialsError. Such a profile may be the source_profile of a role,
// or assume its own role_arn.
//
// Credentials with an expiry are cached and fetched again five minutes
// before they expire (or when they have expired; a failed refresh keeps
// using credentials that have not yet expired). STS is reached at
// AWS_ENDPOINT_URL_STS, else AWS_ENDPOINT_URL, else
// https://sts.REGION.amazonaws.com; likewise the portal at
// AWS_ENDPOINT_URL_SSO and SSO OIDC at AWS_ENDPOINT_URL_SSO_OIDC, else
// AWS_ENDPOINT_URL (a profile's endpoint_url is S3's only, here). Not
// supported: the login_session of "aws login"; signing in (the browser
// flow of "aws sso login" itself); IMDSv1; SigV4a (multi-region access
// points); S3 Express One Zone directory buckets; FIPS and dual-stack
// endpoints (give Options.Endpoint); endpoint_url in a services section.
// The chain is resolved when New runs, without the network; the first
// request (New's bucket check, unless skipped) fetches the credentials
// when they come from STS, IAM Identity Center, a process, a container
// or IMDS, through the
// store's HTTP client. Failing to find or fetch credentials is a
// *CredentialsError matching logstore.ErrPermission.
//
// # Close
//
// A store that builds its own HTTP client (Options.HTTPClient nil) gives it
// a transport of its own, whose pool keeps idle connections (two
// goroutines each) until they time out. Close closes the connections of
// that client, idle or in use, so a closed store holds nothing; a
// caller's Options.HTTPClient is the caller's to close.
//
// A Store is safe for concurrent use by multiple goroutines. The examples
// parse a URI and open a bucket on an S3-compatible server.
package s3

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/internal/restio"
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

	// HTTPClient sends the requests; nil is a client of the store's own
	// (see Close).
	HTTPClient *http.Client
	// SkipBucketCheck leaves out New's check of the bucket (a one-key
	// listing), for credentials that may read and write objects but not
	// list them.
	SkipBucketCheck bool
}

// Store is a logstore.Store over an S3 bucket. See the package doc.
type Store struct {
	http      *http.Client
	conns     *connSet // of the HTTP client built for this store; see Close
	creds     *credCache
	endpoint  *url.URL
	pathStyle bool
	region    string
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

// New returns the store of the objects under prefix in bucket. It resolves
// the AWS configuration, applies opts over it, and checks that the bucket
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

	env := loadEnv()
	region := firstOf(opts.Region, env.region)
	endpoint := firstOf(opts.Endpoint, env.get("AWS_ENDPOINT_URL_S3"), env.get("AWS_ENDPOINT_URL"))
	prof, err := env.loadProfile()
	if err != nil {
		return nil, err
	}
	if prof != nil {
		region = firstOf(region, prof.get("region"))
		endpoint = firstOf(endpoint, prof.get("endpoint_url"))
	}
	region = firstOf(region, "us-east-1")
	if endpoint == "" {
		endpoint = "https://s3." + region + ".amazonaws.com"
	}
	ep, err := url.Parse(endpoint)
	if err != nil || (ep.Scheme != "http" && ep.Scheme != "https") || ep.Host == "" || ep.User != nil || ep.RawQuery != "" {
		return nil, errors.New("logstore/s3: the endpoint is not an http:// or https:// URL without user or query")
	}

	s := &Store{
		endpoint:  ep,
		pathStyle: opts.PathStyle || !virtualHostable(bucket, ep.Scheme) || net.ParseIP(ep.Hostname()) != nil,
		region:    region,
		bucket:    bucket,
		prefix:    prefix,
		pageSize:  opts.PageSize,
		threshold: opts.MultipartThreshold,
		partSize:  opts.PartSize,

		writerPartSize: opts.WriterPartSize,
	}
	if opts.HTTPClient != nil {
		s.http = opts.HTTPClient
	} else {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 32
		if bundle := env.get("AWS_CA_BUNDLE"); bundle != "" {
			pem, err := os.ReadFile(bundle)
			pool := x509.NewCertPool()
			if err != nil || !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("logstore/s3: AWS_CA_BUNDLE %q holds no PEM certificate", bundle)
			}
			tr.TLSClientConfig = &tls.Config{RootCAs: pool}
		}
		s.conns = &connSet{}
		s.conns.track(tr)
		s.http = &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
			// S3 names the right endpoint in the error of a redirect;
			// a signed request is not sent on to another host.
			return http.ErrUseLastResponse
		}}
	}
	provider, err := resolveCredentials(opts, env, prof, region, s.http)
	if err != nil {
		s.conns.close()
		return nil, err
	}
	if c, ok := provider.(*credCache); ok {
		s.creds = c
	} else {
		s.creds = &credCache{provider: provider}
	}
	if !opts.SkipBucketCheck {
		// A listing of at most one key, rather than HeadBucket, whose
		// bodiless 404 would not tell a missing bucket from an unknown
		// access key on servers that answer 404 for that.
		q := url.Values{"list-type": {"2"}, "max-keys": {"1"}}
		if prefix != "" {
			q.Set("prefix", prefix)
		}
		resp, err := s.do(ctx, &request{method: http.MethodGet, query: q})
		if err == nil {
			var out listResult
			err = decodeXML(resp, maxXMLBody, &out)
		}
		if err != nil {
			s.conns.close()
			return nil, s.wrap("checking the bucket", "", err)
		}
	}
	return s, nil
}

// virtualHostable reports whether bucket can be the first label of a host
// name: lower-case letters, digits and '-', 3 to 63 of them, and, over
// https, no dots (the certificate's wildcard covers one label).
func virtualHostable(bucket, scheme string) bool {
	if len(bucket) < 3 || len(bucket) > 63 || bucket[0] == '-' || bucket[len(bucket)-1] == '-' {
		return false
	}
	for _, c := range []byte(bucket) {
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-':
		case c == '.' && scheme == "http":
		default:
			return false
		}
	}
	return true
}

func firstOf(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
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

// Region returns the region requests are signed for.
func (s *Store) Region() string { return s.region }

// Endpoint returns the base URL requests go to (the bucket is added as a
// path element or a host label, see PathStyle).
func (s *Store) Endpoint() string { return s.endpoint.String() }

// PathStyle reports whether requests name the bucket in the path.
func (s *Store) PathStyle() bool { return s.pathStyle }

// HTTPClient returns the client that sends the store's requests.
func (s *Store) HTTPClient() *http.Client { return s.http }

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

// ErrorKind implements logstore.Driver: it maps an error of the store
// onto the portable kinds (see the package doc).
func (s *Store) ErrorKind(err error) error {
	if k := logstore.KindOf(err); k != nil {
		return k
	}
	var ce *CredentialsError
	if errors.As(err, &ce) {
		// Nothing was sent.
		return logstore.ErrPermission
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
	case st >= 500 || st == 0 && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, errTooLarge):
		// No answer, or a server error: a write may have landed. The
		// portable layer keeps this for writes only.
		return logstore.ErrOutcomeUnknown
	}
	return nil
}

// objectRequest is a request on the object key (relative to the prefix).
func (s *Store) objectRequest(method, key string) *request {
	return &request{method: method, key: s.prefix + key, header: http.Header{}}
}

// Get implements logstore.Driver.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	b, _, err := s.get(ctx, "get", key, "")
	return b, err
}

// get reads an object, or the range rng of it ("" for all), and returns
// its bytes and the Content-Range of the answer ("" for a whole object).
func (s *Store) get(ctx context.Context, op, key string, rng string) ([]byte, string, error) {
	r := s.objectRequest(http.MethodGet, key)
	if rng != "" {
		r.header.Set("Range", rng)
	}
	resp, err := s.do(ctx, r)
	if err != nil {
		return nil, "", s.wrap(op, key, err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	if n := resp.ContentLength; n > 0 && n < 1<<31 {
		buf.Grow(int(n))
	}
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return nil, "", s.wrap(op, key, err)
	}
	if n := resp.ContentLength; n >= 0 && n != int64(buf.Len()) {
		return nil, "", fmt.Errorf("logstore/s3: %s %q: read %d bytes of %d: %w", op, key, buf.Len(), n, io.ErrUnexpectedEOF)
	}
	return buf.Bytes(), resp.Header.Get("Content-Range"), nil
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
	b, contentRange, err := s.get(ctx, "get range", key, rng)
	if err != nil {
		if status(err) == http.StatusRequestedRangeNotSatisfiable {
			// The object exists (a missing one is 404) and the offset is
			// at or past its end.
			return []byte{}, nil
		}
		return nil, err
	}
	return restio.Range(b, contentRange, offset, length), nil
}

// Stat implements logstore.Driver.
func (s *Store) Stat(ctx context.Context, key string) (logstore.ObjectInfo, error) {
	return s.stat(ctx, "stat", key)
}

func (s *Store) stat(ctx context.Context, op, key string) (logstore.ObjectInfo, error) {
	resp, err := s.do(ctx, s.objectRequest(http.MethodHead, key))
	if err != nil {
		return logstore.ObjectInfo{}, s.wrap(op, key, err)
	}
	resp.Body.Close()
	info := logstore.ObjectInfo{Key: key, Size: max(resp.ContentLength, 0)}
	if t, err := http.ParseTime(resp.Header.Get("Last-Modified")); err == nil {
		info.ModTime = t
	}
	return info, nil
}

// List implements logstore.Driver.
func (s *Store) List(ctx context.Context, dir, startAfter string) iter.Seq2[logstore.ObjectInfo, error] {
	return func(yield func(logstore.ObjectInfo, error) bool) {
		var after string
		// Only a startAfter inside the directory narrows the listing; one
		// that sorts before the directory changes nothing, and one after
		// it (greater, without dir as prefix) leaves nothing.
		if startAfter > dir {
			if !strings.HasPrefix(startAfter, dir) {
				return
			}
			after = s.prefix + startAfter
		}
		last := startAfter
		token := ""
		for {
			out, err := s.listPage(ctx, s.prefix+dir, after, token)
			if err != nil {
				yield(logstore.ObjectInfo{}, s.wrap("list", dir, err))
				return
			}
			for _, obj := range out.Contents {
				key, ok := strings.CutPrefix(obj.Key, s.prefix)
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
				info := logstore.ObjectInfo{Key: key, Size: obj.Size, ModTime: parseTime(obj.LastModified)}
				if !yield(info, nil) {
					return
				}
			}
			if !out.IsTruncated || out.NextContinuationToken == "" {
				return
			}
			token = out.NextContinuationToken
		}
	}
}

// PutIfAbsent implements logstore.Driver. See the package doc for how it
// maps onto a conditional PutObject and what it does when the outcome of a
// request is unknown.
func (s *Store) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	ambiguous := error(nil) // the first attempt that may have landed
	for attempt := 1; ; attempt++ {
		r := s.objectRequest(http.MethodPut, key)
		r.body = data
		r.header.Set("If-None-Match", "*")
		r.once = true // retries are decided below
		resp, err := s.do(ctx, r)
		if err == nil {
			drain(resp)
			return nil
		}
		var ce *CredentialsError
		code, st := apiCode(err), status(err)
		switch {
		case errors.As(err, &ce):
			// Nothing was sent.
			if ambiguous != nil {
				return fmt.Errorf("logstore/s3: put if absent %q: %w: %w (then: %w)", key, errOutcomeUnknown, ambiguous, err)
			}
			return s.wrap("put if absent", key, err)
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

// drain reads what is left of a small answer and closes it, so that its
// connection goes back to the pool.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
}

// sleep waits a jittered, growing time before attempt+1 of PutIfAbsent.
func sleep(ctx context.Context, attempt int) error {
	d := time.Duration(10<<attempt) * time.Millisecond
	return restio.Wait(ctx, d/2+rand.N(d))
}

// Put implements logstore.Driver.
func (s *Store) Put(ctx context.Context, key string, data []byte) error {
	if int64(len(data)) >= s.threshold {
		return s.putMultipart(ctx, key, data)
	}
	if err := s.putObject(ctx, s.prefix+key, data); err != nil {
		return s.wrap("put", key, err)
	}
	return nil
}

// putObject is an unconditional PutObject of the object full.
func (s *Store) putObject(ctx context.Context, full string, data []byte) error {
	resp, err := s.do(ctx, &request{method: http.MethodPut, key: full, body: data})
	if err != nil {
		return err
	}
	drain(resp)
	return nil
}

// putMultipart uploads data in parts of s.partSize, partConcurrency at a
// time, and completes the upload, or aborts it on any error.
func (s *Store) putMultipart(ctx context.Context, key string, data []byte) (err error) {
	full := s.prefix + key
	uploadID, err := s.createUpload(ctx, full)
	if err != nil {
		return s.wrap("put (multipart)", key, err)
	}
	defer func() {
		if err != nil {
			// Best effort, on a context of its own: the caller's may be
			// the reason for the failure.
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			_ = s.abortUpload(actx, full, uploadID)
		}
	}()

	n := (int64(len(data)) + s.partSize - 1) / s.partSize
	etags := make([]string, n)
	errs := make([]error, n)
	sem := make(chan struct{}, partConcurrency)
	var wg sync.WaitGroup
	for i := range n {
		start := i * s.partSize
		end := min(start+s.partSize, int64(len(data)))
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			etags[i], errs[i] = s.uploadPart(ctx, full, uploadID, int(i+1), data[start:end])
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return s.wrap("put (multipart)", key, err)
	}
	if err := s.completeUpload(ctx, full, uploadID, etags); err != nil {
		return s.wrap("put (multipart)", key, err)
	}
	return nil
}

// createUpload is CreateMultipartUpload; it returns the upload id.
func (s *Store) createUpload(ctx context.Context, full string) (string, error) {
	resp, err := s.do(ctx, &request{method: http.MethodPost, key: full, query: url.Values{"uploads": {""}}})
	if err != nil {
		return "", err
	}
	var out struct {
		XMLName  xml.Name `xml:"InitiateMultipartUploadResult"`
		UploadID string   `xml:"UploadId"`
	}
	if err := decodeXML(resp, maxErrorBody, &out); err != nil {
		return "", err
	}
	if out.UploadID == "" {
		return "", errors.New("logstore/s3: the service created a multipart upload without an id")
	}
	return out.UploadID, nil
}

// uploadPart is UploadPart of part n (from 1); it returns the part's ETag.
func (s *Store) uploadPart(ctx context.Context, full, uploadID string, n int, data []byte) (string, error) {
	resp, err := s.do(ctx, &request{
		method: http.MethodPut, key: full, body: data,
		query: url.Values{"partNumber": {strconv.Itoa(n)}, "uploadId": {uploadID}},
	})
	if err != nil {
		return "", err
	}
	drain(resp)
	return resp.Header.Get("ETag"), nil
}

// completeUpload is CompleteMultipartUpload of the parts' ETags, numbered
// from 1.
func (s *Store) completeUpload(ctx context.Context, full, uploadID string, etags []string) error {
	type part struct {
		PartNumber int
		ETag       string `xml:",omitempty"`
	}
	doc := struct {
		XMLName xml.Name `xml:"CompleteMultipartUpload"`
		Parts   []part   `xml:"Part"`
	}{}
	for i, etag := range etags {
		doc.Parts = append(doc.Parts, part{PartNumber: i + 1, ETag: etag})
	}
	body, err := xml.Marshal(doc)
	if err != nil {
		return err
	}
	resp, err := s.do(ctx, &request{
		method: http.MethodPost, key: full, body: body,
		query:  url.Values{"uploadId": {uploadID}},
		header: http.Header{"Content-Type": {"application/xml"}},
	})
	if err != nil {
		return err
	}
	// A 200 whose body is an <Error> is a failure.
	var out struct {
		XMLName xml.Name `xml:"CompleteMultipartUploadResult"`
	}
	return decodeXML(resp, maxErrorBody, &out)
}

// abortUpload is AbortMultipartUpload; an upload the service no longer
// knows is already gone.
func (s *Store) abortUpload(ctx context.Context, full, uploadID string) error {
	resp, err := s.do(ctx, &request{method: http.MethodDelete, key: full, query: url.Values{"uploadId": {uploadID}}})
	if err != nil {
		if apiCode(err) == "NoSuchUpload" {
			return nil
		}
		return err
	}
	drain(resp)
	return nil
}

// Delete implements logstore.Driver.
func (s *Store) Delete(ctx context.Context, key string) error {
	resp, err := s.do(ctx, s.objectRequest(http.MethodDelete, key))
	if err != nil {
		// S3 answers 204 for a missing key; some servers say 404.
		if c := apiCode(err); status(err) == http.StatusNotFound && (c == "NoSuchKey" || c == "NotFound" || c == "") {
			return nil
		}
		return s.wrap("delete", key, err)
	}
	drain(resp)
	return nil
}

// wrap turns an error of a request into one of this package's, keeping it
// reachable through errors.As.
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

// status is the HTTP status of an error, or 0 when no answer came.
func status(err error) int {
	var re *ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	return 0
}

// apiCode is the S3 error code of an error, or "".
func apiCode(err error) string {
	var re *ResponseError
	if errors.As(err, &re) {
		return re.Code
	}
	return ""
}

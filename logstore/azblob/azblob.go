// Package azblob is a logstore.Store over Azure Blob Storage. It speaks
// the Blob service REST API itself, over net/http, authorizing requests
// with Shared Key (sharedkey.go), a SAS token, or Microsoft Entra ID
// tokens it fetches along the default credential chain itself (creds.go).
// It keeps the logstore contract exactly and passes logstore/storetest
// against Azurite. Every object is a block blob named prefix + key in one
// container.
//
// # Why not the Azure SDK
//
// The SDK's blob client and azidentity (with MSAL) bring their pipelines,
// policies, generated models and init work into every program that
// imports this package: in the delta CLI they were the largest start-up
// cost left after the AWS SDK (bench/RESULTS.md, issue 26). The driver
// needs eight REST calls (Put Blob, Put Block, Put Block List, Get Blob,
// Get Blob Properties, Delete Blob, List Blobs, and Delete Container in
// tests) and the credential chain, which this package makes itself; it
// links no github.com/Azure package at all.
//
// # How each method maps to the service
//
//   - PutIfAbsent is one Put Blob with If-None-Match: *. The service
//     decides atomically: of concurrent callers exactly one gets 201,
//     every other 409 BlobAlreadyExists (or 412 ConditionNotMet), which
//     is logstore.ErrAlreadyExists. A blob is never overwritten, not
//     partly: Put Blob replaces content whole, and the condition fails
//     first. No blob lease is used, here or anywhere: the conditional
//     header is the whole mechanism, and a lease would add a round trip
//     and a lock that a crashed writer leaves behind. The request carries
//     Content-MD5, so the service refuses a body damaged on the way.
//     PutIfAbsent of more than 256 MiB (the single-request limit) is
//     refused: a staged (multi-block) conditional upload is not atomic
//     against a rival writer's blocks, and Delta commits are far smaller.
//   - Put is Put Blob without a condition, or, above 256 MiB, 64 MiB
//     blocks staged with Put Block (four at a time, each with its
//     Content-MD5) and committed with one Put Block List; readers see the
//     old blob or the new one, never a mix.
//   - Get and GetRange are Get Blob, GetRange with a Range header. An
//     offset at or past the end gives 416 InvalidRange, which is no bytes
//     and no error, as the contract asks; a zero-length range is a Get
//     Blob Properties, so that a missing blob is still ErrNotFound.
//   - Stat is Get Blob Properties (HEAD): size and Last-Modified
//     (one-second resolution). A HEAD answer has no body: its error code
//     is read from x-ms-error-code.
//   - Delete is Delete Blob; 404 BlobNotFound is success, so it may be
//     repeated.
//   - List is List Blobs with delimiter "/" and prefix prefix + dir, so
//     that the service does not descend: BlobPrefix entries
//     (sub-directories) are skipped. The service has no exclusive
//     start-after. The request passes startFrom = prefix + startAfter,
//     which is inclusive (supported by the 2026 service versions and by
//     Azurite), and every key <= startAfter is dropped on this side, so
//     the result is right whatever the service does with startFrom; on a
//     service that ignores it, a listing costs one List Blobs request per
//     page (5,000 names, or Options.PageSize) from the start of dir. Pages
//     follow with the marker of the page before. Keys come back in the
//     service's order, which is byte order for the keys Delta writes;
//     Azurite compares UTF-16 code units, which differs from UTF-8 byte
//     order only between characters U+E000..U+FFFF and those above
//     U+FFFF.
//
// Blob names are percent-encoded whole as one path element (a '/' is
// %2F), as the Azure SDK sent them. Every request carries x-ms-version
// 2026-12-06, the version the SDK sent.
//
// # Errors and ambiguous outcomes
//
// Every error of the driver is an *Error: it matches logstore.ErrNotFound,
// ErrAlreadyExists, ErrRootNotFound (a missing container), ErrPermission
// (refused credentials, 401 or 403, or a token that could not be had, a
// *CredentialsError), ErrOutcomeUnknown (Unknown set), or ErrTooLarge of
// this package, with errors.Is, and errors.As reaches the service's
// answer (a *ResponseError with the status, the error code, message and
// request id) or the transport's error below it. Store.ErrorKind is the
// classifier. Error messages never hold credentials: they name the
// operation, the az:// key, the HTTP status and the service's error code,
// never the service's message or a URL's query (where a SAS token lives).
// No answer is read unbounded but a blob's content: error documents are
// cut at 64 KiB, and a listing over 16 MiB is an error, not an allocation;
// an answer that is not the XML expected is an error, never a panic.
//
// PutIfAbsent is sent exactly once, never retried: a retry after an
// attempt that landed would get 409 and report a lost race for a write
// that won. A PutIfAbsent whose outcome is unknown (a timeout, a reset
// connection, a cancelled context, a 5xx) returns an *Error with Unknown
// set, which is neither nil nor ErrAlreadyExists; the commit path in
// package txn reads the version back and settles it by commitInfo.txnId.
// Other requests are tried again, as the Azure SDK's default policy does:
// up to three retries, on 408, 429, 500, 502, 503, 504 and transport
// errors, after (2^n - 1) × 0.8 s with jitter; a repeated Put writes the
// same bytes, a repeated Delete finds 404.
//
// # Locations
//
// New takes a container, a key prefix inside it ("" for the container's
// root) and Options: a connection string, or a service URL (default
// https://ACCOUNT.blob.core.windows.net/, which may carry a SAS query) with
// an account key, a TokenSource, or neither. Open takes a URI:
//
//	az://container/prefix        (also azure://)
//	abfss://container@account.dfs.core.windows.net/prefix   (also abfs://)
//
// For az:// the account comes from AZURE_STORAGE_CONNECTION_STRING, else
// AZURE_STORAGE_ACCOUNT (or AZURE_STORAGE_ACCOUNT_NAME) with the key in
// AZURE_STORAGE_KEY (or AZURE_STORAGE_ACCOUNT_KEY), else with
// DefaultCredential. For abfss:// the account is in the host name and the
// blob endpoint account.blob.core.windows.net is used; the connection
// string and key from the environment are used when they are for that
// account.
//
// # Authorization
//
// Exactly one way is used, in this order:
//
//  1. Options.ConnectionString: AccountName with AccountKey (Shared Key),
//     or SharedAccessSignature (a SAS token); the endpoint is BlobEndpoint,
//     else DefaultEndpointsProtocol://AccountName.blob.EndpointSuffix
//     (https and core.windows.net by default). UseDevelopmentStorage=true
//     is Azurite's well-known account at http://127.0.0.1:10000.
//  2. Options.AccountKey with AccountName: Shared Key.
//  3. Options.Credential, a TokenSource: "Authorization: Bearer" with its
//     token, cached per store and fetched again five minutes before it
//     expires. Tokens are sent over https only, or to a loopback host.
//  4. None: the SAS token in ServiceURL's query, or a public container.
//
// DefaultCredential walks the chain of the Azure SDK's
// DefaultAzureCredential, as far as it goes over plain HTTP: the first
// source that is configured and answers gives every later token.
//
//  1. The environment's service principal: AZURE_TENANT_ID,
//     AZURE_CLIENT_ID and AZURE_CLIENT_SECRET, the OAuth 2
//     client-credentials grant at AZURE_AUTHORITY_HOST (default
//     https://login.microsoftonline.com)/TENANT/oauth2/v2.0/token, scope
//     https://storage.azure.com/.default; else, with
//     AZURE_CLIENT_CERTIFICATE_PATH instead of the secret, the same grant
//     with a client assertion signed with the certificate's key
//     (certassert.go; a PEM file with an unencrypted RSA key: PKCS #12
//     and password-protected keys are not supported;
//     AZURE_CLIENT_SEND_CERTIFICATE_CHAIN=true sends the chain).
//  2. Workload identity: AZURE_TENANT_ID, AZURE_CLIENT_ID and
//     AZURE_FEDERATED_TOKEN_FILE, the same grant with the file's token as
//     the client assertion (the file is read again on every fetch).
//  3. Managed identity: App Service's IDENTITY_ENDPOINT with
//     IDENTITY_HEADER, else the instance metadata service (IMDS,
//     http://169.254.169.254, or AZURE_POD_IDENTITY_AUTHORITY_HOST) with
//     "Metadata: true"; AZURE_CLIENT_ID selects a user-assigned identity.
//     IMDS's first request waits one second: off Azure nothing answers,
//     and the chain goes on.
//  4. The Azure CLI: "az account get-access-token --resource
//     https://storage.azure.com -o json" (with --tenant AZURE_TENANT_ID),
//     within ten seconds.
//
// A source that is not configured (or IMDS that does not answer, or az
// that is missing or not logged in) is skipped; one that is configured
// and fails ends the walk with its error, as in the SDK. Not supported:
// user name and password, Azure Arc, Cloud Shell, Service Fabric and Azure ML managed
// identities, the Azure Developer CLI and Azure PowerShell. A token that
// cannot be had is a *CredentialsError matching logstore.ErrPermission.
//
// # Close
//
// A store that builds its own HTTP client (Options.HTTPClient nil) gives it
// a transport of its own; Close closes its idle connections. A caller's
// Options.HTTPClient is the caller's to close.
//
// New and Open return the portable logstore.Store (a *logstore.Portable)
// over the driver, a *Store, which logstore.DriverOf reaches for
// HTTPClient, Container and Prefix. Importing the package registers the
// URI schemes az://, azure://, abfs:// and abfss:// with logstore.Open.
//
// A Store is safe for concurrent use by multiple goroutines. The examples
// list the registered schemes and open a container on Azurite.
package azblob

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/google/uuid"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/internal/restio"
)

// ErrTooLarge is returned by PutIfAbsent for data over 256 MiB. The other
// kinds are logstore's: ErrRootNotFound when the container does not exist
// (from New, and from any method if it is deleted later), ErrPermission
// when the service refuses the credentials (401 or 403: a wrong key, an
// expired SAS token, a missing role) or no token could be had.
var ErrTooLarge = errors.New("logstore/azblob: too large for put-if-absent")

const (
	// maxPutIfAbsent is the largest body PutIfAbsent (and a plain Put
	// Blob) sends, in one request: the service's limit on Put Blob.
	maxPutIfAbsent = 256 << 20
	// putBlockSize is the block size of a Put above maxPutIfAbsent, and
	// putConcurrency the blocks staged at a time.
	putBlockSize   = 64 << 20
	putConcurrency = 4
)

// Options say how to reach and authenticate to the blob service. Exactly
// one way to authenticate is used, in this order: ConnectionString;
// AccountKey (with AccountName); Credential; none (a SAS token in
// ServiceURL's query, or a public container).
type Options struct {
	// ServiceURL is the account's blob endpoint, such as
	// https://ACCOUNT.blob.core.windows.net/ or, for Azurite,
	// http://127.0.0.1:10000/devstoreaccount1. Default from AccountName.
	// Ignored with ConnectionString.
	ServiceURL string
	// ConnectionString is an Azure Storage connection string (account,
	// key or SAS, endpoints).
	ConnectionString string
	// AccountName and AccountKey are a shared-key credential.
	AccountName, AccountKey string
	// Credential gives Microsoft Entra ID tokens, such as
	// DefaultCredential's.
	Credential TokenSource
	// PageSize is the number of names asked for per List Blobs request;
	// 0 is the service's maximum, 5,000. Tests use small pages.
	PageSize int32
	// HTTPClient, if set, sends every request of the store to the blob
	// service; a TokenSource makes its own requests (DefaultCredential
	// takes a client of its own).
	HTTPClient *http.Client
}

// Store is a logstore.Store over one container and key prefix. See the
// package doc.
type Store struct {
	http      *http.Client
	own       *http.Transport // of the client built for this store; see Close
	base      *url.URL        // the service URL, without its query
	sas       string          // the SAS query sent with every request, or ""
	key       *sharedKey      // or nil
	tokens    *tokenCache     // or nil
	container string
	prefix    string // "" or ending in '/'
	pageSize  int32
}

var _ logstore.Driver = (*Store)(nil)

func init() {
	for _, scheme := range []string{"az", "azure", "abfs", "abfss"} {
		logstore.Register(scheme, func(ctx context.Context, uri string) (logstore.Store, error) {
			p, err := Open(ctx, uri)
			if err != nil {
				return nil, err
			}
			return p, nil
		})
	}
}

// New returns the store over the blobs named prefix + key in containerName.
// prefix may be "" and is taken with or without a trailing '/'. New makes
// one List Blobs request, so that a missing container
// (logstore.ErrRootNotFound) or refused credentials (logstore.ErrPermission)
// show here rather than at the first read; the credentials therefore need
// list permission, which List needs anyway.
func New(ctx context.Context, containerName, prefix string, opts Options) (*logstore.Portable, error) {
	d, err := NewDriver(ctx, containerName, prefix, opts)
	if err != nil {
		return nil, err
	}
	return logstore.NewPortable(d), nil
}

// NewDriver is New without the portable layer, for tests of the driver;
// wrap it with logstore.NewPortable to use it as a Store.
func NewDriver(ctx context.Context, containerName, prefix string, opts Options) (*Store, error) {
	if containerName == "" || strings.ContainsAny(containerName, "/?#\\") {
		return nil, fmt.Errorf("logstore/azblob: invalid container name %q", containerName)
	}
	prefix = strings.Trim(prefix, "/")
	if prefix != "" {
		if err := logstore.CheckKey(prefix); err != nil {
			return nil, fmt.Errorf("logstore/azblob: prefix: %w", err)
		}
		prefix += "/"
	}
	s := &Store{container: containerName, prefix: prefix, pageSize: opts.PageSize}
	if err := s.configure(opts); err != nil {
		return nil, err
	}
	if opts.HTTPClient != nil {
		s.http = opts.HTTPClient
	} else {
		s.own = http.DefaultTransport.(*http.Transport).Clone()
		s.own.MaxIdleConnsPerHost = 32
		s.http = &http.Client{Transport: s.own, CheckRedirect: func(*http.Request, []*http.Request) error {
			// A signed request is not sent on to another host.
			return http.ErrUseLastResponse
		}}
	}
	q := url.Values{"restype": {"container"}, "comp": {"list"}, "maxresults": {"1"}}
	if s.prefix != "" {
		q.Set("prefix", s.prefix)
	}
	resp, err := s.do(ctx, &request{method: http.MethodGet, query: q})
	if err == nil {
		var out listResult
		err = decodeXML(resp, maxXMLBody, &out)
	}
	if err != nil {
		s.Close()
		return nil, s.wrap(ctx, "open", "", err)
	}
	return s, nil
}

// configure sets the endpoint and the authorization of s from opts.
func (s *Store) configure(opts Options) error {
	service, account, key := opts.ServiceURL, opts.AccountName, opts.AccountKey
	var sas string
	if opts.ConnectionString != "" {
		cs, err := parseConnectionString(opts.ConnectionString)
		if err != nil {
			return err
		}
		service, account, key, sas = cs.endpoint, cs.account, cs.key, cs.sas
	}
	if service == "" {
		if account == "" {
			return errors.New("logstore/azblob: neither ServiceURL, AccountName nor ConnectionString is set")
		}
		service = "https://" + account + ".blob.core.windows.net/"
	}
	u, err := url.Parse(service)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return fmt.Errorf("logstore/azblob: invalid service URL %q", redact(service))
	}
	if u.RawQuery != "" {
		sas = u.RawQuery
	}
	u.RawQuery, u.Fragment = "", ""
	s.base = u
	switch {
	case key != "":
		if account == "" {
			return errors.New("logstore/azblob: AccountKey without AccountName")
		}
		k, err := base64.StdEncoding.DecodeString(key)
		if err != nil || len(k) == 0 {
			return errors.New("logstore/azblob: invalid account key (not base64)")
		}
		s.key = &sharedKey{account: account, key: k}
	case opts.ConnectionString == "" && opts.Credential != nil:
		if u.Scheme != "https" && !loopback(u.Hostname()) {
			return errors.New("logstore/azblob: a token credential is sent over https only (or to a loopback host)")
		}
		s.tokens = &tokenCache{src: opts.Credential}
	default:
		s.sas = strings.TrimPrefix(sas, "?")
	}
	return nil
}

// Container returns the container's name.
func (s *Store) Container() string { return s.container }

// Prefix returns the key prefix: "" or a path ending in '/'.
func (s *Store) Prefix() string { return s.prefix }

// HTTPClient returns the client that sends the store's requests.
func (s *Store) HTTPClient() *http.Client { return s.http }

func (s *Store) uri(key string) string { return "az://" + s.container + "/" + s.prefix + key }

// URI implements logstore.Driver: az://CONTAINER/PREFIX.
func (s *Store) URI() string { return "az://" + s.container + "/" + strings.TrimSuffix(s.prefix, "/") }

// Close implements logstore.Driver: it closes the idle connections of the
// HTTP client the store built for itself; a caller's Options.HTTPClient is
// left alone.
func (s *Store) Close() error {
	if s.own != nil {
		s.own.CloseIdleConnections()
	}
	return nil
}

// ErrorKind implements logstore.Driver: the kind of an *Error (see Error),
// or of a request's error met elsewhere.
func (s *Store) ErrorKind(err error) error {
	if k := logstore.KindOf(err); k != nil {
		return k
	}
	var e *Error
	if !errors.As(err, &e) {
		e, _ = s.wrap(context.Background(), "", "", err).(*Error)
	}
	if e != nil && e.Unknown {
		return logstore.ErrOutcomeUnknown
	}
	if e != nil {
		return logstore.KindOf(e.Kind)
	}
	return nil
}

// blobRequest is a request on the blob of key (relative to the prefix).
func (s *Store) blobRequest(method, key string) *request {
	return &request{method: method, blob: s.prefix + key, header: http.Header{}}
}

// Get implements logstore.Driver.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	b, _, err := s.download(ctx, "get", key, "")
	return b, err
}

// download reads a blob, or the range rng of it ("" for all), and returns
// its bytes and the answer's Content-Range.
func (s *Store) download(ctx context.Context, op, key, rng string) ([]byte, string, error) {
	r := s.blobRequest(http.MethodGet, key)
	if rng != "" {
		r.header.Set("Range", rng)
	}
	resp, err := s.do(ctx, r)
	if err != nil {
		return nil, "", s.wrap(ctx, op, key, err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	if n := resp.ContentLength; n > 0 && n < 1<<31 {
		buf.Grow(int(n))
	}
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return nil, "", s.wrap(ctx, op, key, err)
	}
	if n := resp.ContentLength; n >= 0 && int64(buf.Len()) != n {
		return nil, "", &Error{Op: op, Key: s.uri(key), Err: io.ErrUnexpectedEOF}
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
	var rng string
	switch {
	case length <= 1<<62-offset && offset+length > 0:
		rng = "bytes=" + strconv.FormatInt(offset, 10) + "-" + strconv.FormatInt(offset+length-1, 10)
	case offset > 0:
		rng = "bytes=" + strconv.FormatInt(offset, 10) + "-" // to the end
	}
	b, contentRange, err := s.download(ctx, "get range", key, rng)
	if err != nil {
		var e *Error
		if errors.As(err, &e) && e.Status == http.StatusRequestedRangeNotSatisfiable {
			// The blob exists (a missing one is 404) and the offset is at
			// or past its end, or the blob is empty.
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
	resp, err := s.do(ctx, s.blobRequest(http.MethodHead, key))
	if err != nil {
		return logstore.ObjectInfo{}, s.wrap(ctx, op, key, err)
	}
	resp.Body.Close()
	info := logstore.ObjectInfo{Key: key, Size: max(resp.ContentLength, 0)}
	if t, err := http.ParseTime(resp.Header.Get("Last-Modified")); err == nil {
		info.ModTime = t
	}
	return info, nil
}

// List implements logstore.Driver; see the package doc for how startAfter
// maps to the service.
func (s *Store) List(ctx context.Context, dir, startAfter string) iter.Seq2[logstore.ObjectInfo, error] {
	return func(yield func(logstore.ObjectInfo, error) bool) {
		var from string
		if startAfter > dir {
			if !strings.HasPrefix(startAfter, dir) {
				return // startAfter sorts after every key under dir
			}
			from = s.prefix + startAfter
		}
		last := startAfter
		marker := ""
		for {
			page, err := s.listPage(ctx, s.prefix+dir, from, marker, s.pageSize)
			if err != nil {
				yield(logstore.ObjectInfo{}, s.wrap(ctx, "list", dir, err))
				return
			}
			for _, item := range page.Blobs.Blob {
				name, err := item.Name.decode()
				if err != nil {
					continue
				}
				key, ok := strings.CutPrefix(name, s.prefix)
				if !ok || key <= last || !strings.HasPrefix(key, dir) || strings.Contains(key[len(dir):], "/") {
					continue
				}
				last = key
				info := logstore.ObjectInfo{Key: key, Size: max(item.Properties.ContentLength, 0)}
				if t, err := http.ParseTime(item.Properties.LastModified); err == nil {
					info.ModTime = t
				}
				if !yield(info, nil) {
					return
				}
			}
			if page.NextMarker == "" || page.NextMarker == marker {
				return
			}
			marker = page.NextMarker
		}
	}
}

// PutIfAbsent implements logstore.Driver: one conditional Put Blob, sent
// exactly once; see the package doc.
func (s *Store) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	if len(data) > maxPutIfAbsent {
		return &Error{Op: "put-if-absent", Key: s.uri(key), Kind: ErrTooLarge}
	}
	r := s.putBlobRequest(key, data)
	r.header.Set("If-None-Match", "*")
	r.once = true
	resp, err := s.do(ctx, r)
	if err == nil {
		drain(resp)
		return nil
	}
	if c := code(err); c == "BlobAlreadyExists" || c == "ConditionNotMet" || status(err) == http.StatusPreconditionFailed {
		return &Error{Op: "put-if-absent", Key: s.uri(key), Kind: logstore.ErrAlreadyExists, Status: status(err), Code: c, Err: err}
	}
	return s.wrap(ctx, "put-if-absent", key, err)
}

// putBlobRequest is a Put Blob of data as the block blob of key, with its
// Content-MD5.
func (s *Store) putBlobRequest(key string, data []byte) *request {
	r := s.blobRequest(http.MethodPut, key)
	r.body = data
	r.header.Set("x-ms-blob-type", "BlockBlob")
	r.header.Set("Content-MD5", contentMD5(data))
	return r
}

// Put implements logstore.Driver.
func (s *Store) Put(ctx context.Context, key string, data []byte) error {
	if len(data) > maxPutIfAbsent {
		if err := s.putBlocks(ctx, s.prefix+key, data, putBlockSize); err != nil {
			return s.wrap(ctx, "put", key, err)
		}
		return nil
	}
	resp, err := s.do(ctx, s.putBlobRequest(key, data))
	if err != nil {
		return s.wrap(ctx, "put", key, err)
	}
	drain(resp)
	return nil
}

// putBlocks stages data as blocks of size bytes, putConcurrency at a
// time, and commits them with one Put Block List.
func (s *Store) putBlocks(ctx context.Context, full string, data []byte, size int) error {
	b := &blocks{s: s, blob: full, idPrefix: "godelta-" + uuid.NewString() + "-"}
	n := (len(data) + size - 1) / size
	ids := make([]string, n)
	errs := make([]error, n)
	sem := make(chan struct{}, putConcurrency)
	var wg sync.WaitGroup
	for i := range n {
		part := data[i*size : min((i+1)*size, len(data))]
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			ids[i], errs[i] = b.stage(ctx, i, part)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return b.commit(ctx, ids)
}

// blocks are the requests of one staged upload of a block blob: Put
// Block and Put Block List.
type blocks struct {
	s        *Store
	blob     string // full name
	idPrefix string // "godelta-" + a random UUID + "-"
}

// stage stages block i (from 0) with its Content-MD5 and returns its id:
// base64 of the prefix and the six-digit block number, so every id of
// the blob has one length, as the service requires.
func (b *blocks) stage(ctx context.Context, i int, data []byte) (string, error) {
	id := base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "%s%06d", b.idPrefix, i))
	resp, err := b.s.do(ctx, &request{
		method: http.MethodPut, blob: b.blob, body: data,
		query:  url.Values{"comp": {"block"}, "blockid": {id}},
		header: http.Header{"Content-Md5": {contentMD5(data)}},
	})
	if err != nil {
		return "", err
	}
	drain(resp)
	return id, nil
}

// commit is one Put Block List of the staged blocks, in order.
func (b *blocks) commit(ctx context.Context, ids []string) error {
	doc := struct {
		XMLName xml.Name `xml:"BlockList"`
		Latest  []string `xml:"Latest"`
	}{Latest: ids}
	body, err := xml.Marshal(doc)
	if err != nil {
		return err
	}
	body = append([]byte(xml.Header), body...)
	resp, err := b.s.do(ctx, &request{
		method: http.MethodPut, blob: b.blob, body: body,
		query:  url.Values{"comp": {"blocklist"}},
		header: http.Header{"Content-Type": {"application/xml"}, "Content-Md5": {contentMD5(body)}},
	})
	if err != nil {
		return err
	}
	drain(resp)
	return nil
}

// Delete implements logstore.Driver.
func (s *Store) Delete(ctx context.Context, key string) error {
	resp, err := s.do(ctx, s.blobRequest(http.MethodDelete, key))
	if err != nil {
		if code(err) == "BlobNotFound" {
			return nil
		}
		return s.wrap(ctx, "delete", key, err)
	}
	drain(resp)
	return nil
}

// Error is the error of every Store method. It matches its Kind with
// errors.Is, and unwraps to the service's *ResponseError, a
// *CredentialsError or the transport's error.
type Error struct {
	Op  string // "get", "put-if-absent", "list", ...
	Key string // az://container/blob, or "" for a refused key
	// Kind is the error kind errors.Is matches: logstore.ErrNotFound,
	// ErrAlreadyExists, ErrRootNotFound, ErrPermission, ErrTooLarge, a
	// context error, or nil.
	Kind error
	// Status and Code are the HTTP status and the service's error code, if
	// the service answered.
	Status int
	Code   string
	// Unknown reports that the write may or may not have landed: the
	// service's answer was lost, was a 5xx, or the context ended first.
	// errors.Is then matches logstore.ErrOutcomeUnknown.
	Unknown bool
	Err     error // the request's error, if any
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("logstore/azblob: ")
	b.WriteString(e.Op)
	if e.Key != "" {
		b.WriteString(" " + e.Key)
	}
	if e.Status != 0 {
		fmt.Fprintf(&b, ": %d %s", e.Status, e.Code)
	} else if e.Err != nil {
		// A transport or client error: its text may hold a URL.
		b.WriteString(": " + redact(e.Err.Error()))
	}
	if e.Kind != nil && (e.Err == nil || e.Status != 0 || !errors.Is(e.Err, e.Kind)) {
		b.WriteString(": " + e.Kind.Error())
	}
	if e.Unknown {
		b.WriteString(" (outcome unknown: the write may have landed)")
	}
	return b.String()
}

// Unwrap returns the kind and the request's error.
func (e *Error) Unwrap() []error {
	var errs []error
	if e.Kind != nil {
		errs = append(errs, e.Kind)
	}
	if e.Unknown {
		errs = append(errs, logstore.ErrOutcomeUnknown)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

// status is the HTTP status of an error, or 0 when no answer came.
func status(err error) int {
	var re *ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	return 0
}

// code is the service's error code of an error, or "".
func code(err error) string {
	var re *ResponseError
	if errors.As(err, &re) {
		return re.Code
	}
	return ""
}

// wrap classifies a request's error from operation op on key (relative to
// the prefix; dir for list, "" for open).
func (s *Store) wrap(ctx context.Context, op, key string, err error) error {
	e := &Error{Op: op, Key: s.uri(key), Status: status(err), Code: code(err), Err: err}
	var ce *CredentialsError
	switch {
	case errors.As(err, &ce):
		e.Kind = logstore.ErrPermission // nothing was sent
	case e.Code == "ContainerNotFound":
		e.Kind = logstore.ErrRootNotFound
	case e.Code == "BlobNotFound" || e.Status == http.StatusNotFound && op != "open" && op != "list":
		e.Kind = logstore.ErrNotFound
	case e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden:
		e.Kind = logstore.ErrPermission
	case e.Status >= 500 || e.Status == http.StatusRequestTimeout:
		e.Unknown = true
	case e.Status == 0:
		// No answer from the service: a transport error or the context.
		e.Unknown = !errors.Is(err, errAnswerTooLarge)
		if cerr := ctx.Err(); cerr != nil {
			e.Kind = cerr
		}
	}
	if op == "open" && e.Kind == nil && e.Status == http.StatusNotFound {
		e.Kind = logstore.ErrRootNotFound
	}
	if op == "get" || op == "get range" || op == "stat" || op == "list" || op == "open" || op == "list dirs" {
		e.Unknown = false // reads: nothing to settle
	}
	return e
}

// The patterns of redact, compiled on first use rather than at start-up.
var patterns = sync.OnceValues(func() (*regexp.Regexp, *regexp.Regexp) {
	return regexp.MustCompile(`(?i)(https?://[^\s?#"']*)\?[^\s#"']*`),
		regexp.MustCompile(`(?i)\b(sig|AccountKey|SharedAccessSignature)=[^&;\s"']*`)
})

// redact drops URL queries (SAS tokens) and key or signature values from
// a message.
func redact(s string) string {
	urlQuery, sasSig := patterns()
	s = urlQuery.ReplaceAllString(s, "$1?REDACTED")
	return sasSig.ReplaceAllString(s, "$1=REDACTED")
}

var jwtPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*`)
})

// redactToken drops anything that looks like a JWT from s.
func redactToken(s string) string {
	return jwtPattern().ReplaceAllString(s, "REDACTED")
}

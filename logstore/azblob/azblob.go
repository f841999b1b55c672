// Package azblob is a logstore.Store over Azure Blob Storage, through the
// Azure SDK for Go (github.com/Azure/azure-sdk-for-go/sdk/storage/azblob).
// It keeps the logstore contract exactly and passes logstore/storetest
// against Azurite. Every object is a block blob named prefix + key in one
// container.
//
// # How each method maps to the service
//
//   - PutIfAbsent is one Put Blob (blockblob Upload) with If-None-Match: *.
//     The service decides atomically: of concurrent callers exactly one gets
//     201, every other 409 BlobAlreadyExists (or 412 ConditionNotMet), which
//     is logstore.ErrAlreadyExists. A blob is never overwritten, not partly:
//     Put Blob replaces content whole, and the condition fails first. No
//     blob lease is used, here or anywhere: the conditional header is the
//     whole mechanism, and a lease would add a round trip and a lock that a
//     crashed writer leaves behind. The request carries Content-MD5, so the
//     service refuses a body damaged on the way. PutIfAbsent of more than
//     256 MiB (the SDK's single-request limit) is refused: a staged
//     (multi-block) conditional upload is not atomic against a rival
//     writer's blocks, and Delta commits are far smaller.
//   - Put is Put Blob without a condition, or, above 256 MiB, blocks staged
//     and committed with one Put Block List; readers see the old blob or
//     the new one, never a mix.
//   - Get and GetRange are Get Blob (DownloadStream), GetRange with an HTTP
//     Range. An offset at or past the end gives 416 InvalidRange, which is
//     no bytes and no error, as the contract asks; a zero-length range is a
//     Get Blob Properties, so that a missing blob is still ErrNotFound.
//   - Stat is Get Blob Properties: size and Last-Modified (one-second
//     resolution).
//   - Delete is Delete Blob; 404 is success, so it may be repeated.
//   - List is List Blobs with delimiter "/" and prefix prefix + dir, so that
//     the service does not descend: BlobPrefix entries (sub-directories) are
//     skipped. The service has no exclusive start-after. The request passes
//     startFrom = prefix + startAfter, which is inclusive (supported by the
//     2026 service versions and by Azurite), and every key <= startAfter is
//     dropped on this side, so the result is right whatever the service
//     does with startFrom; on a service that ignores it, a listing costs
//     one List Blobs request per page (5,000 names, or Options.PageSize)
//     from the start of dir. Keys come back in the service's order, which
//     is byte order for the keys Delta writes; Azurite compares UTF-16 code
//     units, which differs from UTF-8 byte order only between characters
//     U+E000..U+FFFF and those above U+FFFF.
//
// # Errors and ambiguous outcomes
//
// Every error of the driver is an *Error: it matches logstore.ErrNotFound,
// ErrAlreadyExists, ErrRootNotFound (a missing container), ErrPermission
// (refused credentials), ErrOutcomeUnknown (Unknown set), or ErrTooLarge of
// this package, with errors.Is, and errors.As reaches the SDK's
// *azcore.ResponseError (or transport error) below it. Store.ErrorKind is
// the classifier. Error
// messages never hold credentials: they name the operation, the az:// key,
// the HTTP status and the service's error code, never the SDK's message
// (which may hold the response body) or a URL's query (where a SAS token
// lives).
//
// PutIfAbsent is sent exactly once: the SDK's retries are switched off for
// it. A retry after an attempt that landed would get 409 and report a lost
// race for a write that won. A PutIfAbsent whose outcome is unknown (a
// timeout, a reset connection, a cancelled context, a 5xx) returns an
// *Error with Unknown set, which is neither nil nor ErrAlreadyExists; the
// commit path in package txn reads the version back and settles it by
// commitInfo.txnId. Other methods keep the SDK's retries (exponential
// back-off, three retries): a repeated Put writes the same bytes, a
// repeated Delete finds 404.
//
// # Locations
//
// New takes a container, a key prefix inside it ("" for the container's
// root) and Options: a connection string, or a service URL (default
// https://ACCOUNT.blob.core.windows.net/, which may carry a SAS query) with
// an account key, a token credential, or neither. Open takes a URI:
//
//	az://container/prefix        (also azure://)
//	abfss://container@account.dfs.core.windows.net/prefix   (also abfs://)
//
// For az:// the account comes from AZURE_STORAGE_CONNECTION_STRING, else
// AZURE_STORAGE_ACCOUNT (or AZURE_STORAGE_ACCOUNT_NAME) with the key in
// AZURE_STORAGE_KEY (or AZURE_STORAGE_ACCOUNT_KEY), else with
// azidentity.NewDefaultAzureCredential. For abfss:// the account is in the
// host name and the blob endpoint account.blob.core.windows.net is used;
// the connection string and key from the environment are used when they
// are for that account.
//
// New and Open return the portable logstore.Store (a *logstore.Portable)
// over the driver, a *Store, which logstore.DriverOf reaches for Client,
// Container and Prefix. Importing the package registers the URI schemes
// az://, azure://, abfs:// and abfss:// with logstore.Open.
//
// A Store is safe for concurrent use by multiple goroutines. The examples
// list the registered schemes and open a container on Azurite.
package azblob

import (
	"bytes"
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/godelta/delta/logstore"
)

// ErrTooLarge is returned by PutIfAbsent for data over 256 MiB. The other
// kinds are logstore's: ErrRootNotFound when the container does not exist
// (from New, and from any method if it is deleted later), ErrPermission
// when the service refuses the credentials (401 or 403: a wrong key, an
// expired SAS token, a missing role).
var ErrTooLarge = errors.New("logstore/azblob: too large for put-if-absent")

// maxPutIfAbsent is the largest body PutIfAbsent sends, in one request.
const maxPutIfAbsent = blockblob.MaxUploadBlobBytes

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
	// Credential is a Microsoft Entra ID token credential, such as one from
	// azidentity.
	Credential azcore.TokenCredential
	// PageSize is the number of names asked for per List Blobs request;
	// 0 is the service's maximum, 5,000. Tests use small pages.
	PageSize int32
	// HTTPClient, if set, sends every request.
	HTTPClient *http.Client
}

// Store is a logstore.Store over one container and key prefix. See the
// package doc.
type Store struct {
	client    *container.Client
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
	client, err := newClient(containerName, opts)
	if err != nil {
		return nil, err
	}
	s := &Store{client: client, container: containerName, prefix: prefix, pageSize: opts.PageSize}
	one := int32(1)
	pager := client.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: &s.prefix, MaxResults: &one})
	if _, err := pager.NextPage(ctx); err != nil {
		return nil, s.wrap(ctx, "open", "", err)
	}
	return s, nil
}

func newClient(containerName string, opts Options) (*container.Client, error) {
	copts := &container.ClientOptions{}
	if opts.HTTPClient != nil {
		copts.Transport = opts.HTTPClient
	}
	if opts.ConnectionString != "" {
		c, err := container.NewClientFromConnectionString(opts.ConnectionString, containerName, copts)
		if err != nil {
			// The SDK's message may quote the string, key and all.
			return nil, errors.New("logstore/azblob: invalid connection string")
		}
		return c, nil
	}
	service := opts.ServiceURL
	if service == "" {
		if opts.AccountName == "" {
			return nil, errors.New("logstore/azblob: neither ServiceURL, AccountName nor ConnectionString is set")
		}
		service = "https://" + opts.AccountName + ".blob.core.windows.net/"
	}
	u, err := url.Parse(service)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("logstore/azblob: invalid service URL %q", redact(service))
	}
	containerURL := runtime.JoinPaths(service, url.PathEscape(containerName))
	switch {
	case opts.AccountKey != "":
		if opts.AccountName == "" {
			return nil, errors.New("logstore/azblob: AccountKey without AccountName")
		}
		cred, err := container.NewSharedKeyCredential(opts.AccountName, opts.AccountKey)
		if err != nil {
			return nil, errors.New("logstore/azblob: invalid account key (not base64)")
		}
		return container.NewClientWithSharedKeyCredential(containerURL, cred, copts)
	case opts.Credential != nil:
		return container.NewClient(containerURL, opts.Credential, copts)
	default:
		return container.NewClientWithNoCredential(containerURL, copts)
	}
}

// Container returns the container's name; Prefix the key prefix ("" or
// ending in '/').
func (s *Store) Container() string { return s.container }

// Prefix returns the key prefix: "" or a path ending in '/'.
func (s *Store) Prefix() string { return s.prefix }

// Client returns the SDK's container client the Store uses.
func (s *Store) Client() *container.Client { return s.client }

func (s *Store) uri(key string) string { return "az://" + s.container + "/" + s.prefix + key }

// URI implements logstore.Driver: az://CONTAINER/PREFIX.
func (s *Store) URI() string { return "az://" + s.container + "/" + strings.TrimSuffix(s.prefix, "/") }

// Close implements logstore.Driver. The SDK's client holds nothing that
// needs releasing.
func (s *Store) Close() error { return nil }

// ErrorKind implements logstore.Driver: the kind of an *Error (see Error),
// or of an SDK error met elsewhere.
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

// Get implements logstore.Driver.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	return s.download(ctx, "get", key, blob.HTTPRange{})
}

func (s *Store) download(ctx context.Context, op, key string, r blob.HTTPRange) ([]byte, error) {
	resp, err := s.client.NewBlobClient(s.prefix+key).DownloadStream(ctx, &blob.DownloadStreamOptions{Range: r})
	if err != nil {
		if bloberror.HasCode(err, bloberror.InvalidRange) {
			// The offset is at or past the end (or the blob is empty).
			return []byte{}, nil
		}
		return nil, s.wrap(ctx, op, key, err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	if resp.ContentLength != nil && *resp.ContentLength > 0 && *resp.ContentLength < 1<<31 {
		buf.Grow(int(*resp.ContentLength))
	}
	if _, err := io.Copy(&buf, resp.Body); err != nil {
		return nil, s.wrap(ctx, op, key, err)
	}
	if resp.ContentLength != nil && int64(buf.Len()) != *resp.ContentLength {
		return nil, &Error{Op: op, Key: s.uri(key), Err: io.ErrUnexpectedEOF}
	}
	return buf.Bytes(), nil
}

// GetRange implements logstore.Driver.
func (s *Store) GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error) {
	if length == 0 {
		if _, err := s.Stat(ctx, key); err != nil {
			return nil, err
		}
		return []byte{}, nil
	}
	r := blob.HTTPRange{Offset: offset, Count: length}
	if length > 1<<62-offset || offset+length < 0 {
		r.Count = 0 // to the end
	}
	return s.download(ctx, "get range", key, r)
}

// Stat implements logstore.Driver.
func (s *Store) Stat(ctx context.Context, key string) (logstore.ObjectInfo, error) {
	resp, err := s.client.NewBlobClient(s.prefix+key).GetProperties(ctx, nil)
	if err != nil {
		return logstore.ObjectInfo{}, s.wrap(ctx, "stat", key, err)
	}
	info := logstore.ObjectInfo{Key: key}
	if resp.ContentLength != nil {
		info.Size = *resp.ContentLength
	}
	if resp.LastModified != nil {
		info.ModTime = *resp.LastModified
	}
	return info, nil
}

// List implements logstore.Driver; see the package doc for how startAfter
// maps to the service.
func (s *Store) List(ctx context.Context, dir, startAfter string) iter.Seq2[logstore.ObjectInfo, error] {
	return func(yield func(logstore.ObjectInfo, error) bool) {
		prefix := s.prefix + dir
		opts := &container.ListBlobsHierarchyOptions{Prefix: &prefix}
		if s.pageSize > 0 {
			opts.MaxResults = &s.pageSize
		}
		if startAfter > dir {
			if !strings.HasPrefix(startAfter, dir) {
				return // startAfter sorts after every key under dir
			}
			from := s.prefix + startAfter
			opts.StartFrom = &from
		}
		pager := s.client.NewListBlobsHierarchyPager("/", opts)
		last := startAfter
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				yield(logstore.ObjectInfo{}, s.wrap(ctx, "list", dir, err))
				return
			}
			for _, item := range page.Segment.BlobItems {
				if item.Name == nil {
					continue
				}
				key, ok := strings.CutPrefix(*item.Name, s.prefix)
				if !ok || key <= last || !strings.HasPrefix(key, dir) || strings.Contains(key[len(dir):], "/") {
					continue
				}
				last = key
				info := logstore.ObjectInfo{Key: key}
				if p := item.Properties; p != nil {
					if p.ContentLength != nil {
						info.Size = *p.ContentLength
					}
					if p.LastModified != nil {
						info.ModTime = *p.LastModified
					}
				}
				if !yield(info, nil) {
					return
				}
			}
		}
	}
}

// PutIfAbsent implements logstore.Driver: one conditional Put Blob, never
// retried by the SDK; see the package doc.
func (s *Store) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	if len(data) > maxPutIfAbsent {
		return &Error{Op: "put-if-absent", Key: s.uri(key), Kind: ErrTooLarge}
	}
	ctx = policy.WithRetryOptions(ctx, policy.RetryOptions{MaxRetries: -1})
	_, err := s.client.NewBlockBlobClient(s.prefix+key).Upload(ctx, streaming.NopCloser(bytes.NewReader(data)), &blockblob.UploadOptions{
		TransactionalValidation: contentMD5(data),
		AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{
			IfNoneMatch: to(azcore.ETagAny),
		}},
	})
	if err == nil {
		return nil
	}
	if bloberror.HasCode(err, bloberror.BlobAlreadyExists, bloberror.ConditionNotMet) {
		return &Error{Op: "put-if-absent", Key: s.uri(key), Kind: logstore.ErrAlreadyExists, Status: status(err), Code: code(err), Err: err}
	}
	return s.wrap(ctx, "put-if-absent", key, err)
}

// Put implements logstore.Driver.
func (s *Store) Put(ctx context.Context, key string, data []byte) error {
	bb := s.client.NewBlockBlobClient(s.prefix + key)
	var err error
	if len(data) <= blockblob.MaxUploadBlobBytes {
		_, err = bb.Upload(ctx, streaming.NopCloser(bytes.NewReader(data)), &blockblob.UploadOptions{
			TransactionalValidation: contentMD5(data),
		})
	} else {
		_, err = bb.UploadBuffer(ctx, data, &blockblob.UploadBufferOptions{BlockSize: 64 << 20, Concurrency: 4})
	}
	if err != nil {
		return s.wrap(ctx, "put", key, err)
	}
	return nil
}

// Delete implements logstore.Driver.
func (s *Store) Delete(ctx context.Context, key string) error {
	_, err := s.client.NewBlobClient(s.prefix+key).Delete(ctx, nil)
	if err != nil && !bloberror.HasCode(err, bloberror.BlobNotFound) {
		return s.wrap(ctx, "delete", key, err)
	}
	return nil
}

func to[T any](v T) *T { return &v }

// contentMD5 makes the service check the body it received against data.
func contentMD5(data []byte) blob.TransferValidationType {
	sum := md5.Sum(data)
	return blob.TransferValidationTypeMD5(sum[:])
}

// Error is the error of every Store method. It matches its Kind with
// errors.Is, and unwraps to the SDK's error.
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
	Err     error // the SDK's error, if any
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

// Unwrap returns the kind and the SDK's error.
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

func status(err error) int {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	return 0
}

func code(err error) string {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.ErrorCode
	}
	return ""
}

// wrap classifies an SDK error from operation op on key (relative to the
// prefix; dir for list, "" for open).
func (s *Store) wrap(ctx context.Context, op, key string, err error) error {
	e := &Error{Op: op, Key: s.uri(key), Status: status(err), Code: code(err), Err: err}
	switch {
	case bloberror.HasCode(err, bloberror.ContainerNotFound):
		e.Kind = logstore.ErrRootNotFound
	case bloberror.HasCode(err, bloberror.BlobNotFound) || e.Status == http.StatusNotFound && op != "open" && op != "list":
		e.Kind = logstore.ErrNotFound
	case e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden:
		e.Kind = logstore.ErrPermission
	case e.Status >= 500 || e.Status == http.StatusRequestTimeout:
		e.Unknown = true
	case e.Status == 0:
		// No answer from the service: a transport error or the context.
		e.Unknown = true
		if cerr := ctx.Err(); cerr != nil {
			e.Kind = cerr
		}
	}
	if op == "open" && e.Kind == nil && e.Status == http.StatusNotFound {
		e.Kind = logstore.ErrRootNotFound
	}
	if op == "get" || op == "get range" || op == "stat" || op == "list" || op == "open" {
		e.Unknown = false // reads: nothing to settle
	}
	return e
}

var (
	urlQuery = regexp.MustCompile(`(?i)(https?://[^\s?#"']*)\?[^\s#"']*`)
	sasSig   = regexp.MustCompile(`(?i)\b(sig|AccountKey|SharedAccessSignature)=[^&;\s"']*`)
)

// redact drops URL queries (SAS tokens) and key or signature values from
// a message.
func redact(s string) string {
	s = urlQuery.ReplaceAllString(s, "$1?REDACTED")
	return sasSig.ReplaceAllString(s, "$1=REDACTED")
}

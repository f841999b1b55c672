package delta

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/azblob"
	"github.com/godelta/delta/logstore/gcs"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/logstore/s3"
)

// Resolve returns the store for a table location:
//
//   - a plain path, absolute or relative to the working directory, or a
//     file:// URI (file:///abs/path or file:/abs/path): the local disk;
//   - memory://NAME: an in-memory table, shared by every Resolve of the same
//     NAME in this process, for tests and examples;
//   - s3://bucket/prefix: Amazon S3 or a compatible service, configured by
//     the standard AWS chain and the URI's query (see logstore/s3.Open);
//   - gs://bucket/prefix: Google Cloud Storage (see logstore/gcs.Open);
//   - az://container/prefix and
//     abfss://container@account.dfs.core.windows.net/prefix: Azure Blob
//     Storage (see logstore/azblob.Open).
//
// Any other scheme is ErrUnsupportedScheme. Cloud stores check that their
// bucket or container exists; that check runs under ctx.
func Resolve(uri string) (logstore.Store, error) { return ResolveContext(context.Background(), uri) }

// ResolveContext is Resolve under ctx.
func ResolveContext(ctx context.Context, uri string) (logstore.Store, error) {
	scheme, rest, ok := strings.Cut(uri, "://")
	if !ok || strings.ContainsAny(scheme, "/\\") || len(scheme) < 2 {
		// No scheme: a local path. ("C:" style drive letters have length 1.)
		if strings.HasPrefix(uri, "file:") {
			return local.New(strings.TrimPrefix(uri, "file:"))
		}
		abs, err := filepath.Abs(uri)
		if err != nil {
			return nil, fmt.Errorf("path %q: %w", uri, ErrInvalidArgument)
		}
		return local.New(abs)
	}
	switch strings.ToLower(scheme) {
	case "file":
		u, err := url.Parse(uri)
		if err != nil || (u.Host != "" && u.Host != "localhost") {
			return nil, fmt.Errorf("file URI %q must be file:///absolute/path: %w", uri, ErrInvalidArgument)
		}
		return local.New(u.Path)
	case "memory", "mem":
		return memoryStore(strings.TrimSuffix(rest, "/")), nil
	case "s3", "s3a":
		return s3.Open(ctx, "s3://"+rest)
	case "gs":
		return gcs.Open(ctx, uri)
	case "az", "abfs", "abfss":
		return azblob.Open(ctx, uri)
	default:
		return nil, fmt.Errorf("%q: scheme %q (known: file, memory, s3, gs, az, abfss): %w", logstore.RedactURI(uri), scheme, ErrUnsupportedScheme)
	}
}

var (
	memoryMu     sync.Mutex
	memoryStores = map[string]*memory.Store{}
)

func memoryStore(name string) *memory.Store {
	memoryMu.Lock()
	defer memoryMu.Unlock()
	s, ok := memoryStores[name]
	if !ok {
		s = memory.New()
		memoryStores[name] = s
	}
	return s
}

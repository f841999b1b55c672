package delta

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/logstore/memory"
)

// Resolve returns the store for a table location:
//
//   - a plain path, absolute or relative to the working directory, or a
//     file:// URI (file:///abs/path or file:/abs/path): the local disk;
//   - memory://NAME: an in-memory table, shared by every Resolve of the same
//     NAME in this process, for tests and examples;
//   - any other scheme: the backend registered for it with
//     logstore.Register, which a program makes available by importing it:
//     s3://bucket/prefix (import _ "github.com/godelta/delta/logstore/s3"),
//     gs://bucket/prefix (logstore/gcs), az://container/prefix and
//     abfss://container@account.dfs.core.windows.net/prefix
//     (logstore/azblob). This package imports only local and memory, so a
//     program that uses neither cloud links no cloud SDK; cmd/delta imports
//     them all.
//
// A scheme no imported backend registered is ErrUnsupportedScheme, and the
// message says which package to import. Cloud stores check that their
// bucket or container exists; that check runs under ctx. The caller owns
// the store and should Close it (Table.Close does, for a table from Open).
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
		return memory.Named(strings.TrimSuffix(rest, "/")), nil
	}
	st, err := logstore.Open(ctx, uri)
	var se *logstore.SchemeError
	if errors.As(err, &se) {
		return nil, fmt.Errorf("%q: scheme %q is not registered: %w: %w", logstore.RedactURI(uri), scheme, ErrUnsupportedScheme, err)
	}
	return st, err
}

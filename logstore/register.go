package logstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// ErrUnknownScheme is returned by Open for a URI whose scheme no imported
// backend registered.
var ErrUnknownScheme = errors.New("logstore: unknown URI scheme")

// OpenFunc opens the store a URI names. It is given the URI as passed to
// Open.
type OpenFunc func(ctx context.Context, uri string) (Store, error)

var (
	registryMu sync.RWMutex
	registry   = map[string]OpenFunc{}
)

// Register makes open the opener of URIs with scheme (case-insensitive), as
// gocloud's URLMux and database/sql.Register do. Backends call it from an
// init function, so a program understands the schemes of the backends it
// imports, and links no other. The local backend registers "file", which
// Open also uses for plain paths. Register panics if scheme is empty or
// already registered, or open is nil.
func Register(scheme string, open OpenFunc) {
	scheme = strings.ToLower(scheme)
	registryMu.Lock()
	defer registryMu.Unlock()
	if scheme == "" || open == nil {
		panic("logstore: Register of an empty scheme or a nil opener")
	}
	if _, dup := registry[scheme]; dup {
		panic("logstore: Register called twice for scheme " + scheme)
	}
	registry[scheme] = open
}

// Schemes returns the registered schemes, sorted.
func Schemes() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	var s []string
	for k := range registry {
		s = append(s, k)
	}
	slices.Sort(s)
	return s
}

// SchemeOf returns the lower-case scheme of uri, or "" for a plain path
// (no "scheme://", or one like "C:\x" whose scheme is a drive letter). A
// "file:/abs" URI has scheme "file".
func SchemeOf(uri string) string {
	scheme, _, ok := strings.Cut(uri, "://")
	if !ok || strings.ContainsAny(scheme, "/\\") || len(scheme) < 2 {
		if strings.HasPrefix(uri, "file:") {
			return "file"
		}
		return ""
	}
	return strings.ToLower(scheme)
}

// Open returns the store uri names, through the opener registered for its
// scheme; a plain path goes to the "file" opener. A scheme nobody registered
// is an error matching ErrUnknownScheme that lists the registered schemes,
// and names the package to import for the cloud schemes. The caller owns the
// store and must Close it.
func Open(ctx context.Context, uri string) (Store, error) {
	scheme := SchemeOf(uri)
	if scheme == "" {
		scheme = "file"
	}
	registryMu.RLock()
	open := registry[scheme]
	registryMu.RUnlock()
	if open == nil {
		return nil, &SchemeError{URI: RedactURI(uri), Scheme: scheme, Registered: Schemes()}
	}
	return open(ctx, uri)
}

// packages are the backends of this module, by scheme, for SchemeError's
// hint.
var packages = map[string]string{
	"s3": "s3", "s3a": "s3", "gs": "gcs", "az": "azblob", "azure": "azblob", "abfs": "azblob", "abfss": "azblob",
	"file": "local", "memory": "memory", "mem": "memory",
}

// SchemeError is Open's error for a scheme no backend registered. It
// matches ErrUnknownScheme.
type SchemeError struct {
	URI        string   // redacted
	Scheme     string   // lower case
	Registered []string // the schemes that are registered
}

func (e *SchemeError) Error() string {
	msg := fmt.Sprintf("logstore: %q: no backend registered for scheme %q (registered: %s)", e.URI, e.Scheme, strings.Join(e.Registered, ", "))
	if pkg, ok := packages[e.Scheme]; ok {
		msg += fmt.Sprintf("; import _ %q to open %s:// URIs", "github.com/godelta/delta/logstore/"+pkg, e.Scheme)
	}
	return msg
}

// Is reports target == ErrUnknownScheme.
func (e *SchemeError) Is(target error) bool { return target == ErrUnknownScheme }

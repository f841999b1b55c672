package location

import (
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/logstore"
)

// IsAbsolute reports whether a file path from the log is absolute: it
// starts with '/' or with a URI scheme (RFC 3986: a letter, then letters,
// digits, '+', '-' or '.', then ':'). "time=10:00/part-0.parquet" is
// relative: its ':' comes after a '='.
func IsAbsolute(p string) bool {
	if strings.HasPrefix(p, "/") {
		return true
	}
	i := strings.IndexByte(p, ':')
	if i <= 0 {
		return false
	}
	for k := range i {
		c := p[k]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (k == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}

// Canonical returns the form of a file path used to tell whether two
// actions name the same file: a relative path percent-decoded, an absolute
// one in the canonical URI form of the package doc ("/a/b%20c",
// "file:/a/b c" and "file://localhost/a/b%20c" are all "file:///a/b c").
// A path that cannot be decoded is returned as it is. It allocates nothing
// for a relative path without escapes, the common case.
func Canonical(p string) string {
	if !IsAbsolute(p) {
		if strings.IndexByte(p, '%') < 0 {
			return p
		}
		if d, err := url.PathUnescape(p); err == nil {
			return d
		}
		return p
	}
	if c, err := canonURI(p, true); err == nil {
		return c
	}
	return p
}

// canonURI returns the canonical form of an absolute path or URI (see the
// package doc): "scheme://authority/path", the scheme in lower case and
// its aliases merged, the path percent-decoded when decode is set (log
// paths are encoded; store URIs are not).
func canonURI(p string, decode bool) (string, error) {
	if strings.HasPrefix(p, "/") {
		p = "file://" + p
	}
	i := strings.IndexByte(p, ':')
	if i <= 0 {
		return "", fmt.Errorf("%q is not an absolute path", p)
	}
	scheme, rest := strings.ToLower(p[:i]), p[i+1:]
	var auth, pth string
	if r, ok := strings.CutPrefix(rest, "//"); ok {
		if j := strings.IndexByte(r, '/'); j >= 0 {
			auth, pth = r[:j], r[j:]
		} else {
			auth = r
		}
	} else {
		pth = rest // file:/a/b
	}
	if decode && strings.IndexByte(pth, '%') >= 0 {
		d, err := url.PathUnescape(pth)
		if err != nil {
			return "", err
		}
		pth = d
	}
	switch scheme {
	case "file":
		if strings.EqualFold(auth, "localhost") {
			auth = ""
		}
	case "s3a", "s3n":
		scheme = "s3"
	case "mem":
		scheme = "memory"
	case "azure":
		scheme = "az"
	case "abfss", "abfs", "wasbs", "wasb":
		// container@account.dfs.core.windows.net: the store is one
		// account's, so the container names the root.
		if c, _, ok := strings.Cut(auth, "@"); ok {
			auth = c
		}
		scheme = "az"
	default:
		// The credentials of a URI never name another file.
		if _, h, ok := strings.Cut(auth, "@"); ok {
			auth = h
		}
	}
	return scheme + "://" + auth + strings.TrimSuffix(pth, "/"), nil
}

// under returns the part of canonical path c below canonical root, without
// the separating '/'.
func under(c, root string) (string, bool) {
	return strings.CutPrefix(c, root+"/")
}

// relKey turns a decoded path relative to a root into a store key: cleaned,
// never climbing out of the root, and a valid key. orig is the path as the
// log wrote it, for the message.
func relKey(dec, orig string) (string, error) {
	clean := path.Clean(dec)
	if clean == "." || clean == ".." || strings.HasPrefix(clean, "../") || strings.HasPrefix(clean, "/") {
		return "", fmt.Errorf("file path %q: %w", orig, deltaerr.ErrPathEscapesRoot)
	}
	if err := logstore.CheckKey(clean); err != nil {
		return "", fmt.Errorf("file path %q makes no valid key: %w", orig, deltaerr.ErrPathEscapesRoot)
	}
	return clean, nil
}

// relativeKey turns a relative path from the log into a key beneath the
// root: percent-decoded and cleaned. A path that cannot be decoded is
// deltaerr.ErrCorrupt; an absolute one, or one that climbs out of the
// root, is deltaerr.ErrPathEscapesRoot.
func relativeKey(p string) (string, error) {
	if IsAbsolute(p) {
		return "", fmt.Errorf("file path %q is absolute: %w", p, deltaerr.ErrPathEscapesRoot)
	}
	dec := p
	if strings.IndexByte(p, '%') >= 0 {
		var err error
		if dec, err = url.PathUnescape(p); err != nil {
			return "", deltaerr.Corruptf(p, "the file path is not a valid URI path: %v", err)
		}
	}
	return relKey(dec, p)
}

const upperHex = "0123456789ABCDEF"

// uriKeep reports whether byte c stays as is in a URI path: the
// unreserved characters and the sub-delimiters, '/', ':' and '@'.
func uriKeep(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-._~!$&'()*+,;=:@/", c) >= 0
}

// EncodePath percent-encodes a relative store key as the path of an
// action, a URI reference that Resolve reads back to the same key: every
// byte outside the unreserved characters, the sub-delimiters, '/', ':' and
// '@' (non-ASCII bytes of UTF-8 included) becomes %XX, and so does a ':'
// in the first segment, which would otherwise read as a scheme (RFC 3986
// §4.2): "export-10:00.parquet" becomes "export-10%3A00.parquet".
func EncodePath(key string) string {
	first := strings.IndexByte(key, '/')
	if first < 0 {
		first = len(key)
	}
	return encode(key, first)
}

// encode percent-encodes p for a URI path: each byte outside uriKeep, and
// each ':' before index colonsFrom.
func encode(p string, colonsFrom int) string {
	var b strings.Builder
	b.Grow(len(p))
	for i := 0; i < len(p); i++ {
		c := p[i]
		if uriKeep(c) && (c != ':' || i >= colonsFrom) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(upperHex[c>>4])
		b.WriteByte(upperHex[c&15])
	}
	return b.String()
}

// EncodeRoot returns a store URI (whose path is raw, as Store.URI gives
// it) with its path percent-encoded, ready to be joined with an encoded
// relative path: "file:///data/my table" becomes "file:///data/my%20table",
// and a directory named "g%41" stays itself ("g%2541"). A plain local path
// becomes a file URI.
func EncodeRoot(uri string) string {
	if strings.HasPrefix(uri, "/") {
		uri = "file://" + uri
	}
	scheme, rest, ok := strings.Cut(uri, "://")
	if !ok {
		r, isFile := strings.CutPrefix(uri, "file:")
		if !isFile {
			return strings.TrimSuffix(uri, "/")
		}
		scheme, rest = "file", r
	}
	auth, pth := rest, ""
	if j := strings.IndexByte(rest, '/'); j >= 0 {
		auth, pth = rest[:j], rest[j:]
	}
	return scheme + "://" + auth + strings.TrimSuffix(encode(pth, 0), "/")
}

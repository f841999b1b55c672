package snapshot

import (
	"path"
	"strings"

	"github.com/godelta/delta/logstore"
)

// KeyOf returns the store key, relative to the table root rootURI (a
// store's URI, such as file:///data/t or s3://b/t), of a file path as the
// log writes it: a relative path is percent-decoded; an absolute path or
// URI must lie under rootURI (compared in CanonicalPath form). It reports
// false for a path outside the root (a shallow clone's source files), one
// that climbs out of it with "..", and one that makes no valid key:
// maintenance that deletes or lists files (VACUUM) must leave those alone.
func KeyOf(rootURI, p string) (string, bool) {
	rel := CanonicalPath(p)
	if IsAbsolutePath(p) {
		root := strings.TrimSuffix(CanonicalPath(rootURI), "/") + "/"
		var ok bool
		if rel, ok = strings.CutPrefix(rel, root); !ok {
			return "", false
		}
	}
	clean := path.Clean(rel)
	if clean == "." || clean == ".." || strings.HasPrefix(clean, "../") || strings.HasPrefix(clean, "/") {
		return "", false
	}
	if logstore.CheckKey(clean) != nil {
		return "", false
	}
	return clean, true
}

// IsAbsolutePath reports whether a file path from the log is absolute: it
// starts with '/' or with a URI scheme (RFC 3986: a letter, then letters,
// digits, '+', '-' or '.', then ':'). "time=10:00/part-0.parquet" is
// relative.
func IsAbsolutePath(p string) bool {
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

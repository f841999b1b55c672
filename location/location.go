package location

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/internal/dv"
	"github.com/godelta/delta/logstore"
)

// CloneSourceRootsKey is the table property in which CLONE records, as a
// JSON array of root URIs percent-encoded as a log writes paths (see
// EncodeRoot), the roots outside the table whose files its log names: the
// source's root and the roots the source itself trusted.
// It is stored with the table's metadata, so checkpoints keep it and log
// cleanup cannot lose it. Part of the tables this library writes: never
// change it.
const CloneSourceRootsKey = "godelta.cloneSourceRoots"

// cloneOperation is the commitInfo operation of a CLONE commit, Spark's.
const cloneOperation = "CLONE"

// Location is where a table lives: the store of its root, and the roots
// outside it whose files its log may name (see the package doc). Make one
// with New; a snapshot carries the Location of its table.
type Location struct {
	store logstore.Store
	uri   string // the root as the store gives it: raw, not encoded
	root  string // its canonical form

	declared []string // CloneSourceRootsKey of the metadata, or nil
	explicit []string // the roots of Trust wrappers around store

	legacyMu   sync.Mutex
	legacyDone bool
	legacy     []string
}

// Ref is a resolved file: the key of it in the store of Root, where Root
// is "" for the table's own store, else the percent-encoded URI of a
// trusted outside root, which logstore.Open opens (Stores.Open does).
type Ref struct {
	Root string
	Key  string
}

// New returns the Location of the table in store, whose metadata
// configuration is conf (nil for a table not yet created). A
// CloneSourceRootsKey value that is not a JSON array of strings declares
// nothing.
func New(store logstore.Store, conf map[string]string) *Location {
	uri := store.URI()
	root, err := canonURI(uri, false)
	if err != nil {
		root = uri
	}
	l := &Location{store: store, uri: uri, root: root, explicit: trustedBy(store)}
	if v, ok := conf[CloneSourceRootsKey]; ok {
		var roots []string
		if json.Unmarshal([]byte(v), &roots) == nil {
			l.declared = roots
		}
	}
	return l
}

// Store returns the store of the table's root.
func (l *Location) Store() logstore.Store { return l.store }

// URI returns the table root as its store gives it (raw: file:///data/t,
// s3://bucket/t).
func (l *Location) URI() string { return l.uri }

// Declared returns the outside roots the table's metadata declares
// (CloneSourceRootsKey), for CLONE to carry over.
func (l *Location) Declared() []string { return slices.Clone(l.declared) }

// Key returns the store key, beneath the table root, of a path as the log
// writes it (see the package doc): what writers, VACUUM and the other
// verbs that change files may touch. A path outside the root, trusted or
// not, is deltaerr.ErrPathEscapesRoot; one that cannot be decoded is
// deltaerr.ErrCorrupt.
func (l *Location) Key(p string) (string, error) {
	if p == "" {
		return "", deltaerr.Corruptf("(empty)", "a file path is empty")
	}
	if !IsAbsolute(p) {
		return relativeKey(p)
	}
	c, err := canonURI(p, true)
	if err != nil {
		return "", deltaerr.Corruptf(p, "the file path is not a valid URI: %v", err)
	}
	rest, ok := under(c, l.root)
	if !ok {
		return "", fmt.Errorf("path %q is outside the table at %s: %w", p, logstore.RedactURI(l.uri), deltaerr.ErrPathEscapesRoot)
	}
	return relKey(rest, p)
}

// Resolve returns where the file at path p (as the log writes it) is read
// from: the table's own store, or a trusted outside root (see the package
// doc). ctx bounds the one read of commit 0 that a table without declared
// roots may need. A path under no trusted root is
// deltaerr.ErrPathEscapesRoot.
func (l *Location) Resolve(ctx context.Context, p string) (Ref, error) {
	key, err := l.Key(p)
	if err == nil || !errors.Is(err, deltaerr.ErrPathEscapesRoot) || !IsAbsolute(p) {
		return Ref{Key: key}, err
	}
	c, cerr := canonURI(p, true)
	if cerr != nil {
		return Ref{}, err
	}
	for _, root := range l.trusted(ctx) {
		cr, rerr := canonURI(root, true)
		if rerr != nil {
			continue
		}
		if rest, ok := under(c, cr); ok {
			k, kerr := relKey(rest, p)
			if kerr != nil {
				return Ref{}, kerr
			}
			return Ref{Root: root, Key: k}, nil
		}
	}
	return Ref{}, err
}

// DVPath returns the path, as a log would write it, of the file a
// deletion vector is stored in, and false for an inline vector or none. A
// descriptor of an unknown storage type, or one whose "u" path is not a
// Z85 UUID, is deltaerr.ErrCorrupt.
func DVPath(d *actions.DeletionVector) (string, bool, error) {
	if d == nil {
		return "", false, nil
	}
	switch d.StorageType {
	case dv.StorageInline:
		return "", false, nil
	case dv.StorageAbsolute:
		return d.PathOrInlineDv, true, nil
	case dv.StorageRelative:
		k, err := dv.RelativePath(d)
		if err != nil {
			return "", false, err
		}
		return EncodePath(k), true, nil
	}
	return "", false, deltaerr.Corruptf("deletion vector descriptor", "unknown storage type %q", d.StorageType)
}

// trusted returns the outside roots the table trusts for reading: the
// caller's (Trust), the declared ones, and, when none is declared, the
// source of a CLONE commit 0 of this library (read once, if found).
func (l *Location) trusted(ctx context.Context) []string {
	out := slices.Concat(l.explicit, l.declared)
	if l.declared == nil {
		out = append(out, l.cloneCommit0(ctx)...)
	}
	return out
}

// cloneCommit0 returns the source root a CLONE commit 0 names, for clones
// made before CloneSourceRootsKey. A commit 0 that is gone or is no CLONE
// trusts nothing; one that cannot be read now is tried again next time.
func (l *Location) cloneCommit0(ctx context.Context) []string {
	l.legacyMu.Lock()
	defer l.legacyMu.Unlock()
	if l.legacyDone {
		return l.legacy
	}
	b, err := l.store.Get(ctx, deltalog.CommitKey(0))
	if err != nil {
		l.legacyDone = errors.Is(err, logstore.ErrNotFound)
		return nil
	}
	l.legacyDone = true
	acts, err := actions.DecodeCommitReader(deltalog.CommitKey(0), bytes.NewReader(b))
	if err != nil {
		return nil
	}
	for _, a := range acts {
		if ci := a.CommitInfo; ci != nil && ci.Operation == cloneOperation {
			if src, ok := ci.OperationParameters["source"].(string); ok && src != "" && !strings.Contains(src, "`") {
				l.legacy = append(l.legacy, EncodeRoot(src)) // the store's URI, raw
			}
		}
	}
	return l.legacy
}

// TrustedRoots returns every outside root the table trusts for reading,
// as encoded URIs, for CLONE to record in the clone (transitively) and for
// the check to verify.
func (l *Location) TrustedRoots(ctx context.Context) []string {
	return slices.Compact(slices.Sorted(slices.Values(l.trusted(ctx))))
}

// trustingStore is a store whose tables also trust roots; see Trust.
type trustingStore struct {
	logstore.Store
	roots []string
}

func (t *trustingStore) Unwrap() logstore.Store { return t.Store }

// Trust returns store, whose tables also trust roots for reading, as the
// package doc's rule 4: the way to read a shallow clone written by Spark.
// A root is a URI as logstore.Open takes it (percent-encoded), or a plain
// local path, taken as it is. The result is store itself otherwise:
// closing it closes store.
func Trust(store logstore.Store, roots ...string) logstore.Store {
	if len(roots) == 0 {
		return store
	}
	t := &trustingStore{Store: store}
	for _, r := range roots {
		if logstore.SchemeOf(r) == "" {
			r = EncodeRoot(r)
		}
		t.roots = append(t.roots, r)
	}
	return t
}

// trustedBy collects the roots of the Trust wrappers around s.
func trustedBy(s logstore.Store) []string {
	var out []string
	for s != nil {
		if t, ok := s.(*trustingStore); ok {
			out = append(out, t.roots...)
		}
		u, ok := s.(interface{ Unwrap() logstore.Store })
		if !ok {
			break
		}
		s = u.Unwrap()
	}
	return out
}

// Within reports whether the store URI p (a table's location as a
// catalog is given it, not percent-encoded) is root or lies inside it.
// Both are compared in canonical form with their paths cleaned, so that a
// ".." never climbs out of root, and their queries must be equal: an
// object store's endpoint=, region= or the like says where the bytes go,
// so root's path on another endpoint is not inside root. A path or query
// that does not parse is not within anything.
func Within(root, p string) bool {
	rpath, rquery, _ := strings.Cut(root, "?")
	ppath, pquery, _ := strings.Cut(p, "?")
	rq, err1 := url.ParseQuery(rquery)
	pq, err2 := url.ParseQuery(pquery)
	if err1 != nil || err2 != nil || !maps.EqualFunc(rq, pq, slices.Equal) {
		return false
	}
	rc, err1 := canonURI(rpath, false)
	pc, err2 := canonURI(ppath, false)
	if err1 != nil || err2 != nil {
		return false
	}
	rc, pc = cleanCanon(rc), cleanCanon(pc)
	if rc == pc {
		return true
	}
	_, in := under(pc, strings.TrimSuffix(rc, "/"))
	return in
}

// cleanCanon cleans the path of canonical URI c ("scheme://auth/path").
func cleanCanon(c string) string {
	i := strings.Index(c, "://")
	if i < 0 {
		return c
	}
	j := strings.IndexByte(c[i+3:], '/')
	if j < 0 {
		return c
	}
	head, p := c[:i+3+j], c[i+3+j:]
	return head + path.Clean(p)
}

// Overlap reports whether two roots, URIs percent-encoded as a log
// writes them (EncodeRoot of a store's URI), are the same or one lies
// inside the other, compared in canonical form.
func Overlap(a, b string) bool {
	ca, err1 := canonURI(a, true)
	cb, err2 := canonURI(b, true)
	if err1 != nil || err2 != nil {
		return false
	}
	if ca == cb {
		return true
	}
	_, in := under(ca, cb)
	_, out := under(cb, ca)
	return in || out
}

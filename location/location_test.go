package location_test

import (
	"context"
	"errors"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/location"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/testutil"
)

// at returns the Location of a table whose store says it lives at uri.
func at(uri string, conf map[string]string, trust ...string) *location.Location {
	return location.New(location.Trust(testutil.AtURI(memory.New(), uri), trust...), conf)
}

// TestKeyForms checks that every spelling of a path under the root, on
// local disk and on each cloud backend's URI forms, resolves to one key,
// and that every path outside the root, or climbing out of it, does not.
func TestKeyForms(t *testing.T) {
	const key = "p=a b/part-0:1.parquet"
	tests := []struct {
		root  string
		forms []string
	}{
		{"file:///data/t", []string{
			"p=a%20b/part-0:1.parquet",
			"p=a b/part-0:1.parquet",
			"./p=a%20b/../p=a%20b/part-0:1.parquet",
			"/data/t/p=a%20b/part-0:1.parquet",
			"file:/data/t/p=a%20b/part-0:1.parquet",
			"file:///data/t/p=a%20b/part-0:1.parquet",
			"file://localhost/data/t/p=a%20b/part-0:1.parquet",
			"FILE:///data/t/p=a%20b/part-0%3A1.parquet",
		}},
		{"s3://bucket/t", []string{
			"p=a%20b/part-0:1.parquet",
			"s3://bucket/t/p=a%20b/part-0:1.parquet",
			"s3a://bucket/t/p=a%20b/part-0:1.parquet",
			"s3n://bucket/t/p=a%20b/part-0:1.parquet",
			"S3A://bucket/t/p=a b/part-0:1.parquet",
		}},
		{"gs://bucket/t", []string{
			"gs://bucket/t/p=a%20b/part-0:1.parquet",
			"p=a%20b/part-0%3A1.parquet",
		}},
		{"az://container/t", []string{
			"az://container/t/p=a%20b/part-0:1.parquet",
			"abfss://container@account.dfs.core.windows.net/t/p=a%20b/part-0:1.parquet",
			"abfs://container@account.dfs.core.windows.net/t/p=a%20b/part-0:1.parquet",
			"wasbs://container@account.blob.core.windows.net/t/p=a%20b/part-0:1.parquet",
			"azure://container/t/p=a%20b/part-0:1.parquet",
		}},
	}
	for _, tt := range tests {
		l := at(tt.root, nil)
		for _, p := range tt.forms {
			got, err := l.Key(p)
			if err != nil || got != key {
				t.Errorf("root %s: Key(%q) = %q, %v; want %q", tt.root, p, got, err, key)
			}
			ref, err := l.Resolve(context.Background(), p)
			if err != nil || ref != (location.Ref{Key: key}) {
				t.Errorf("root %s: Resolve(%q) = %+v, %v; want the own key %q", tt.root, p, ref, err, key)
			}
		}
	}
	outside := []struct{ root, path string }{
		{"file:///data/t", "/data/t2/x.parquet"},
		{"file:///data/t", "file://otherhost/data/t/x.parquet"},
		{"file:///data/t", "/data/t/../u/x.parquet"},
		{"file:///data/t", "../x.parquet"},
		{"file:///data/t", "%2E%2E/x.parquet"},
		{"file:///data/t", "/data/t"},
		{"file:///data/t", "export-2024-01-01T10:00:00.parquet"}, // a scheme: never the root's
		{"s3://bucket/t", "s3://bucket/other/x.parquet"},
		{"s3://bucket/t", "gs://bucket/t/x.parquet"},
		{"az://container/t", "abfss://other@account.dfs.core.windows.net/t/x.parquet"},
	}
	for _, tt := range outside {
		if got, err := at(tt.root, nil).Key(tt.path); !errors.Is(err, deltaerr.ErrPathEscapesRoot) {
			t.Errorf("root %s: Key(%q) = %q, %v; want ErrPathEscapesRoot", tt.root, tt.path, got, err)
		}
	}
	if _, err := at("file:///data/t", nil).Key("a%zz.parquet"); !errors.Is(err, deltaerr.ErrCorrupt) {
		t.Errorf("Key of a bad escape: %v, want ErrCorrupt", err)
	}
}

// TestEncodeRoundTrip checks that what writers produce (EncodePath for a
// key, EncodeRoot joined with it for an absolute path) resolves back to the
// same key, whatever the key or root holds: ':' in the first segment, '%',
// '#', '?', spaces, non-ASCII.
func TestEncodeRoundTrip(t *testing.T) {
	keys := []string{
		"export-2024-01-01T10:00:00.parquet",
		"p=10%3A00/a:b.parquet",
		"g%41/x#y?z.parquet",
		"é ü/😀.parquet",
	}
	roots := []string{"file:///data/g%41", "file:///data/a#b?c", "file:///data/my table", "s3://bucket/pre fix", "memory://t"}
	for _, root := range roots {
		l := at(root, nil)
		for _, k := range keys {
			rel := location.EncodePath(k)
			if location.IsAbsolute(rel) {
				t.Errorf("EncodePath(%q) = %q reads as absolute", k, rel)
			}
			if got, err := l.Key(rel); err != nil || got != k {
				t.Errorf("Key(EncodePath(%q)) = %q, %v", k, got, err)
			}
			abs := location.EncodeRoot(root) + "/" + rel
			if got, err := l.Key(abs); err != nil || got != k {
				t.Errorf("root %s: Key(%q) = %q, %v; want %q", root, abs, got, err, k)
			}
		}
	}
}

// TestTrustedRoots checks the trust rule of the package doc: the declared
// roots and the caller's are read from, others are not, and Key never
// answers for any of them.
func TestTrustedRoots(t *testing.T) {
	ctx := context.Background()
	conf := map[string]string{location.CloneSourceRootsKey: `["s3://bucket/src","file:///data/g%2541"]`}
	l := at("s3://bucket/clone", conf, "gs://spark/source")
	tests := []struct {
		path string
		want location.Ref
		err  error
	}{
		{"s3a://bucket/src/part-0.parquet", location.Ref{Root: "s3://bucket/src", Key: "part-0.parquet"}, nil},
		{"file:///data/g%2541/x%20y.parquet", location.Ref{Root: "file:///data/g%2541", Key: "x y.parquet"}, nil},
		{"gs://spark/source/d/x.parquet", location.Ref{Root: "gs://spark/source", Key: "d/x.parquet"}, nil},
		{"s3://bucket/src/../secret.parquet", location.Ref{}, deltaerr.ErrPathEscapesRoot},
		{"s3://bucket/src2/x.parquet", location.Ref{}, deltaerr.ErrPathEscapesRoot},
		{"file:///data/gA/x.parquet", location.Ref{}, deltaerr.ErrPathEscapesRoot},
	}
	for _, tt := range tests {
		got, err := l.Resolve(ctx, tt.path)
		if !errors.Is(err, tt.err) || got != tt.want {
			t.Errorf("Resolve(%q) = %+v, %v; want %+v, %v", tt.path, got, err, tt.want, tt.err)
		}
		if _, err := l.Key(tt.path); !errors.Is(err, deltaerr.ErrPathEscapesRoot) {
			t.Errorf("Key(%q) = %v: an outside root is never the table's to write or delete", tt.path, err)
		}
	}
	if bad := at("s3://bucket/t", map[string]string{location.CloneSourceRootsKey: "not json"}); len(bad.Declared()) != 0 {
		t.Errorf("a malformed %s declares %v", location.CloneSourceRootsKey, bad.Declared())
	}
}

// TestCloneCommit0 checks that a table without declared roots trusts the
// source a CLONE commit 0 of this library names, and nothing once that
// commit is gone.
func TestCloneCommit0(t *testing.T) {
	ctx := context.Background()
	store := testutil.AtURI(memory.New(), "memory://clone")
	data, err := actions.EncodeCommit([]actions.Action{{CommitInfo: &actions.CommitInfo{Operation: "CLONE",
		OperationParameters: map[string]any{"source": "memory://src"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Put(ctx, "_delta_log/00000000000000000000.json", data); err != nil {
		t.Fatal(err)
	}
	want := location.Ref{Root: "memory://src", Key: "a.parquet"}
	if got, err := location.New(store, nil).Resolve(ctx, "memory://src/a.parquet"); err != nil || got != want {
		t.Errorf("Resolve = %+v, %v; want %+v", got, err, want)
	}
	if err := store.Delete(ctx, "_delta_log/00000000000000000000.json"); err != nil {
		t.Fatal(err)
	}
	if _, err := location.New(store, nil).Resolve(ctx, "memory://src/a.parquet"); !errors.Is(err, deltaerr.ErrPathEscapesRoot) {
		t.Errorf("after commit 0 is gone: %v, want ErrPathEscapesRoot", err)
	}
}

func TestOverlap(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"file:///data/t", "/data/t", true},
		{"file:///data/t", "file:///data/t/clone", true},
		{"file:///data/t/clone", "file://localhost/data/t", true},
		{"file:///data/t", "file:///data/t2", false},
		{"s3://b/t", "s3a://b/t/x", true},
		{"s3://b/t", "gs://b/t", false},
	}
	for _, tt := range tests {
		if got := location.Overlap(tt.a, tt.b); got != tt.want {
			t.Errorf("Overlap(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestDVPath(t *testing.T) {
	if _, _, err := location.DVPath(&actions.DeletionVector{}); !errors.Is(err, deltaerr.ErrCorrupt) {
		t.Errorf("DVPath({}) = %v, want ErrCorrupt", err)
	}
	if p, ok, err := location.DVPath(&actions.DeletionVector{StorageType: "p", PathOrInlineDv: "s3://b/t/dv.bin"}); err != nil || !ok || p != "s3://b/t/dv.bin" {
		t.Errorf("DVPath(p) = %q, %v, %v", p, ok, err)
	}
	if _, ok, err := location.DVPath(&actions.DeletionVector{StorageType: "i", PathOrInlineDv: "x"}); err != nil || ok {
		t.Errorf("DVPath(i) = %v, %v; want no file", ok, err)
	}
}

// TestStores checks that a set opens an outside root once, never closes
// the table's store, and refuses after Close.
func TestStores(t *testing.T) {
	ctx := context.Background()
	src := memory.Named("TestStores-src")
	if err := src.Put(ctx, "a.parquet", []byte("x")); err != nil {
		t.Fatal(err)
	}
	l := at("memory://TestStores", map[string]string{location.CloneSourceRootsKey: `["memory://TestStores-src"]`})
	s := l.NewStores()
	st, key, err := s.Locate(ctx, "memory://TestStores-src/a.parquet")
	if err != nil || key != "a.parquet" {
		t.Fatalf("Locate = %q, %v", key, err)
	}
	if b, err := st.Get(ctx, key); err != nil || string(b) != "x" {
		t.Fatalf("Get = %q, %v", b, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Locate(ctx, "memory://TestStores-src/a.parquet"); !errors.Is(err, logstore.ErrClosed) {
		t.Errorf("Locate after Close = %v, want ErrClosed", err)
	}
	if own, err := s.Open(ctx, location.Ref{Key: "x"}); err != nil || own != l.Store() {
		t.Errorf("Open of the own root after Close = %v, %v; want the table's store", own, err)
	}
}

// TestWithin: a location is within a root when it is the root or below
// it, in canonical form, with its path cleaned and the same query.
func TestWithin(t *testing.T) {
	for _, c := range []struct {
		root, p string
		want    bool
	}{
		{"file:///wh", "file:///wh", true},
		{"file:///wh", "file:///wh/", true},
		{"file:///wh", "file:///wh/ns/t", true},
		{"file:///wh/", "/wh/ns/t", true},
		{"/wh", "file://localhost/wh/t", true},
		{"file:///wh", "file:///wh2/t", false},
		{"file:///wh", "file:///other", false},
		{"file:///wh", "file:///wh/../etc", false},
		{"file:///wh", "file:///wh/ns/../../etc/t", false},
		{"file:///wh", "file:///wh/ns/../t", true},
		{"s3://b/wh?endpoint=http://127.0.0.1:1", "s3://b/wh/t?endpoint=http://127.0.0.1:1", true},
		{"s3://b/wh?endpoint=http://127.0.0.1:1&region=x", "s3://b/wh/t?region=x&endpoint=http://127.0.0.1:1", true},
		{"s3://b/wh?endpoint=http://127.0.0.1:1", "s3://b/wh/t?endpoint=http://evil:1", false},
		{"s3://b/wh?endpoint=http://127.0.0.1:1", "s3://b/wh/t", false},
		{"s3://b/wh", "s3://b/wh/t?endpoint=http://evil:1", false},
		{"s3://b/wh", "s3a://b/wh/t", true},
		{"s3://b/wh", "s3://c/wh/t", false},
		{"s3://b", "s3://b/any/t", true},
		{"s3://b/wh", "gs://b/wh/t", false},
		{"az://c/wh", "abfss://c@acct.dfs.core.windows.net/wh/t", true},
		{"file:///wh", "relative/t", false},
		{"file:///wh", "file:///wh/t?%zz", false},
	} {
		if got := location.Within(c.root, c.p); got != c.want {
			t.Errorf("Within(%q, %q) = %v, want %v", c.root, c.p, got, c.want)
		}
	}
}

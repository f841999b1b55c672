package s3_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/s3"
	"github.com/godelta/delta/testutil/backendtest"
)

// TestPutIfAbsentVersions races 16 writers over 100 versions of a log.
func TestPutIfAbsentVersions(t *testing.T) {
	backendtest.PutRace(t, newStore(t), 16, 100, false)
}

// TestListPages lists a directory over pages of 7 keys, from every start
// position; a sibling prefix must not show.
func TestListPages(t *testing.T) {
	// versitygw keeps objects as files: no object may be a directory too.
	backendtest.Pagination(t, newStore(t, func(o *s3.Options) { o.PageSize = 7 }), backendtest.ListOptions{
		PageSize: 7, Sibling: newStore(t), NoObjectDirs: true,
	})
}

func TestGetRangeEdges(t *testing.T) {
	st := newStore(t)
	ctx := t.Context()
	if err := st.Put(ctx, "d/obj", []byte("0123456789")); err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, "d/empty", nil); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		key            string
		offset, length int64
		want           string
	}{
		{"d/obj", 0, 10, "0123456789"},
		{"d/obj", 9, 1, "9"},
		{"d/obj", 7, 100, "789"},  // runs past the end
		{"d/obj", 10, 5, ""},      // at the end
		{"d/obj", 11, 5, ""},      // past the end
		{"d/obj", 1 << 40, 5, ""}, // far past the end
		{"d/obj", 3, 0, ""},       // zero length
		{"d/obj", 50, 0, ""},      // zero length past the end
		{"d/obj", 0, math.MaxInt64, "0123456789"},
		{"d/obj", 5, math.MaxInt64 - 4, "56789"}, // offset+length overflows
		{"d/empty", 0, 1, ""},
		{"d/empty", 0, 0, ""},
		{"d/empty", 3, 1, ""},
	}
	for _, tc := range tests {
		got, err := st.GetRange(ctx, tc.key, tc.offset, tc.length)
		if err != nil || string(got) != tc.want || got == nil {
			t.Errorf("GetRange(%q, %d, %d) = %q (nil %v), %v; want %q", tc.key, tc.offset, tc.length, got, got == nil, err, tc.want)
		}
	}
	for _, r := range [][2]int64{{0, 1}, {0, 0}, {5, 0}, {100, 1}} {
		if _, err := st.GetRange(ctx, "d/missing", r[0], r[1]); !errors.Is(err, logstore.ErrNotFound) {
			t.Errorf("GetRange of a missing object (%d, %d) = %v, want ErrNotFound", r[0], r[1], err)
		}
	}
	if _, err := st.GetRange(ctx, "d/obj", -1, 1); !errors.Is(err, logstore.ErrInvalidRange) {
		t.Errorf("negative offset: %v", err)
	}
	info, err := st.Stat(ctx, "d/obj")
	if err != nil || info.Key != "d/obj" || info.Size != 10 || info.ModTime.IsZero() {
		t.Errorf("Stat = %+v, %v", info, err)
	}
	if info, err := st.Stat(ctx, "d/empty"); err != nil || info.Size != 0 {
		t.Errorf("Stat(empty) = %+v, %v", info, err)
	}
	for _, key := range []string{"d/missing", "d", "d/obj/below", "nothere/x"} {
		if _, err := st.Stat(ctx, key); !errors.Is(err, logstore.ErrNotFound) {
			t.Errorf("Stat(%q) = %v, want ErrNotFound", key, err)
		}
		if _, err := st.Get(ctx, key); !errors.Is(err, logstore.ErrNotFound) {
			t.Errorf("Get(%q) = %v, want ErrNotFound", key, err)
		}
	}
	for range 2 {
		if err := st.Delete(ctx, "d/obj"); err != nil {
			t.Errorf("Delete: %v", err)
		}
	}
	if err := st.Delete(ctx, "never/was"); err != nil {
		t.Errorf("Delete of a missing object: %v", err)
	}
	if _, err := st.Get(ctx, "d/obj"); !errors.Is(err, logstore.ErrNotFound) {
		t.Errorf("Get after Delete = %v, want ErrNotFound", err)
	}
}

// TestMultipartPut stores objects above the multipart threshold, whole and
// replacing one another.
func TestMultipartPut(t *testing.T) {
	st := newStore(t, func(o *s3.Options) {
		o.MultipartThreshold = 6 << 20
		o.PartSize = 5 << 20
	})
	ctx := t.Context()
	r := rand.New(rand.NewPCG(3, 4))
	for _, size := range []int{13<<20 + 5, 6 << 20, 10 << 20} { // 3 parts, 2 parts, 2 equal parts
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		if err := st.Put(ctx, "big/part-0.parquet", data); err != nil {
			t.Fatalf("Put of %d bytes: %v", size, err)
		}
		got, err := st.Get(ctx, "big/part-0.parquet")
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("Get after a multipart Put of %d bytes: %d bytes, %v", size, len(got), err)
		}
		off := int64(5<<20 - 10) // across the first part boundary
		got, err = st.GetRange(ctx, "big/part-0.parquet", off, 20)
		if err != nil || !bytes.Equal(got, data[off:off+20]) {
			t.Fatalf("GetRange across parts: %v", err)
		}
	}
	// A cancelled multipart Put fails and leaves the old object.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := st.Put(cctx, "big/part-0.parquet", make([]byte, 7<<20)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled multipart Put = %v", err)
	}
	if info, err := st.Stat(ctx, "big/part-0.parquet"); err != nil || info.Size != 10<<20 {
		t.Errorf("after a cancelled Put: %+v, %v", info, err)
	}
}

func TestNewOptions(t *testing.T) {
	cfg := server(t)
	ctx := t.Context()
	opts := options(cfg)
	opts.PartSize = 1 << 20
	if _, err := s3.New(ctx, cfg.Bucket, "", opts); err == nil {
		t.Error("New with a 1 MiB part size: no error")
	}
	for _, bad := range []string{"", "a/b"} {
		if _, err := s3.New(ctx, bad, "", options(cfg)); err == nil {
			t.Errorf("New(bucket %q): no error", bad)
		}
	}
	if _, err := s3.New(ctx, cfg.Bucket, "a/../b", options(cfg)); !errors.Is(err, logstore.ErrInvalidKey) {
		t.Errorf("New with prefix a/../b = %v, want ErrInvalidKey", err)
	}
	// Prefixes with and without slashes name the same place.
	a, err := s3.New(ctx, cfg.Bucket, "/same/place/", options(cfg))
	if err != nil {
		t.Fatal(err)
	}
	b, err := s3.New(ctx, cfg.Bucket, "same/place", options(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if driver(a).Prefix() != "same/place/" || driver(a).Bucket() != cfg.Bucket {
		t.Errorf("Prefix() = %q, Bucket() = %q", driver(a).Prefix(), driver(a).Bucket())
	}
	if err := a.Put(ctx, "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Get(ctx, "k"); err != nil || string(got) != "v" {
		t.Errorf("Get through the other prefix spelling = %q, %v", got, err)
	}
}

func TestOpenURI(t *testing.T) {
	cfg := server(t)
	ctx := t.Context()
	t.Setenv("AWS_ACCESS_KEY_ID", cfg.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", cfg.SecretKey)
	t.Setenv("AWS_CONFIG_FILE", "/nonexistent")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_REGION", "")

	uri := fmt.Sprintf("s3://%s/uri/table?endpoint=%s&region=%s&path_style=true", cfg.Bucket, cfg.Endpoint, cfg.Region)
	st, err := s3.Open(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	if driver(st).Prefix() != "uri/table/" {
		t.Errorf("Prefix() = %q", driver(st).Prefix())
	}
	if err := st.PutIfAbsent(ctx, "_delta_log/00000000000000000000.json", []byte("{}")); err != nil {
		t.Fatal(err)
	}

	// The endpoint from the environment, no region anywhere.
	t.Setenv("AWS_ENDPOINT_URL_S3", cfg.Endpoint)
	st2, err := s3.Open(ctx, "s3://"+cfg.Bucket+"/uri/table/?path_style=1")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := st2.Get(ctx, "_delta_log/00000000000000000000.json"); err != nil || string(got) != "{}" {
		t.Errorf("Get through AWS_ENDPOINT_URL_S3 = %q, %v", got, err)
	}

	// logstore.Open reaches the same store by the registered schemes, s3a
	// as s3, and URI names it without the query.
	for _, scheme := range []string{"s3", "S3A"} {
		st3, err := logstore.Open(ctx, scheme+"://"+cfg.Bucket+"/uri/table/?path_style=1")
		if err != nil {
			t.Fatalf("logstore.Open(%s://...): %v", scheme, err)
		}
		if got, err := st3.Get(ctx, "_delta_log/00000000000000000000.json"); err != nil || string(got) != "{}" {
			t.Errorf("Get through logstore.Open(%s://...) = %q, %v", scheme, got, err)
		}
		if got, want := st3.URI(), "s3://"+cfg.Bucket+"/uri/table"; got != want {
			t.Errorf("URI() = %q, want %q", got, want)
		}
	}

	for _, bad := range []string{
		"s3:///no-bucket", "gs://b/p", "s3://b/p?regoin=x", "s3://b/p?path_style=maybe",
		"s3://user:secret@b/p", "not a uri",
	} {
		if _, _, _, err := s3.ParseURI(bad); err == nil {
			t.Errorf("ParseURI(%q): no error", bad)
		} else if bytes.Contains([]byte(err.Error()), []byte("secret")) {
			t.Errorf("ParseURI(%q) error shows the secret: %v", bad, err)
		}
	}
	bucket, prefix, opts, err := s3.ParseURI("s3://bkt/a/b?endpoint=http://h:1&region=r&path_style=true")
	if err != nil || bucket != "bkt" || prefix != "a/b" || opts.Endpoint != "http://h:1" || opts.Region != "r" || !opts.PathStyle {
		t.Errorf("ParseURI = %q, %q, %+v, %v", bucket, prefix, opts, err)
	}
}

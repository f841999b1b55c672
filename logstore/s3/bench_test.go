package s3_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/godelta/delta/testutil/backendtest"
	"github.com/godelta/delta/testutil/testserver"
)

// BenchmarkCommitLatency compares a Delta commit with a bare PutObject
// with If-None-Match: * on the same server (see backendtest.CommitLatency);
// the bare put is the test's own request, signed by the AWS SDK's signer
// (testserver.S3Do). Run it with -benchtime=500x for 500 commits.
func BenchmarkCommitLatency(b *testing.B) {
	st := newStore(b)
	cfg := server(b)
	d := driver(st)
	backendtest.CommitLatency(b, st, func(ctx context.Context, key string, data []byte) error {
		return putIfAbsent(ctx, cfg, d.Bucket(), d.Prefix()+key, data)
	})
}

// putIfAbsent is a bare conditional PutObject of the test's own.
func putIfAbsent(ctx context.Context, cfg testserver.S3Config, bucket, key string, data []byte) error {
	path := "/" + bucket + "/" + strings.ReplaceAll(url.PathEscape(key), "%2F", "/")
	resp, err := testserver.S3Do(ctx, cfg, http.MethodPut, path, nil, http.Header{"If-None-Match": {"*"}}, data)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return &httpError{resp.StatusCode, string(body)}
	}
	return nil
}

type httpError struct {
	status int
	body   string
}

func (e *httpError) Error() string { return http.StatusText(e.status) + ": " + e.body }

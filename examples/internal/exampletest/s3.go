// Package exampletest starts the S3 test server for the examples' tests.
package exampletest

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/godelta/delta/testutil/testserver"
)

var tables atomic.Int64

// S3Table starts the S3 test server (skipping the test when it is not
// installed), exports its credentials for the test, and returns the URI
// of a new table on it. For the examples' tests.
func S3Table(t *testing.T) string {
	t.Helper()
	srv, cfg, err := testserver.StartS3()
	testserver.Require(t, srv, err)
	t.Cleanup(srv.Stop)
	t.Setenv("AWS_ACCESS_KEY_ID", cfg.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", cfg.SecretKey)
	t.Setenv("AWS_REGION", cfg.Region)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	return fmt.Sprintf("s3://%s/queue%d?endpoint=%s&region=%s&path_style=true", cfg.Bucket, tables.Add(1), cfg.Endpoint, cfg.Region)
}

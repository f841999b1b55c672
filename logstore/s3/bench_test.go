package s3_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	s3api "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/godelta/delta/testutil/backendtest"
)

// BenchmarkCommitLatency compares a Delta commit with a bare PutObject
// with If-None-Match: * on the same server (see backendtest.CommitLatency).
// Run it with -benchtime=500x for 500 commits.
func BenchmarkCommitLatency(b *testing.B) {
	st := newStore(b)
	backendtest.CommitLatency(b, st, func(ctx context.Context, key string, data []byte) error {
		_, err := driver(st).Client().PutObject(ctx, &s3api.PutObjectInput{
			Bucket:        aws.String(driver(st).Bucket()),
			Key:           aws.String(driver(st).Prefix() + key),
			Body:          bytes.NewReader(data),
			ContentLength: aws.Int64(int64(len(data))),
			IfNoneMatch:   aws.String("*"),
		})
		return err
	})
}

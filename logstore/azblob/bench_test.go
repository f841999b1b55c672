package azblob_test

import (
	"context"
	"testing"

	"github.com/godelta/delta/logstore/azblob"
	"github.com/godelta/delta/testutil/backendtest"
)

// BenchmarkCommitLatency compares a Delta commit with a bare Put Blob
// with If-None-Match: * on the same Azurite, sent by the driver's own
// request code (see backendtest.CommitLatency). Run it with
// -benchtime=500x for 500 commits.
func BenchmarkCommitLatency(b *testing.B) {
	s := newStore(b, azblob.Options{})
	backendtest.CommitLatency(b, s, func(ctx context.Context, key string, data []byte) error {
		return driver(s).BarePutIfAbsent(ctx, key, data)
	})
}

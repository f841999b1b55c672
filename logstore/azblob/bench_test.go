package azblob_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"

	"github.com/godelta/delta/logstore/azblob"
	"github.com/godelta/delta/testutil/backendtest"
)

// BenchmarkCommitLatency compares a Delta commit with a bare block blob
// upload with If-None-Match: * on the same Azurite (see
// backendtest.CommitLatency). Run it with -benchtime=500x for 500 commits.
func BenchmarkCommitLatency(b *testing.B) {
	s := newStore(b, azblob.Options{})
	backendtest.CommitLatency(b, s, func(ctx context.Context, key string, data []byte) error {
		_, err := driver(s).Client().NewBlockBlobClient(driver(s).Prefix()+key).Upload(ctx, streaming.NopCloser(bytes.NewReader(data)), &blockblob.UploadOptions{
			AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: new(azcore.ETagAny)}},
		})
		return err
	})
}

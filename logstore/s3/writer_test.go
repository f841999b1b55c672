package s3_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	s3api "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/s3"
	"github.com/godelta/delta/logstore/storetest"
)

// TestWriter runs the writer suite with parts of S3's minimum, 5 MiB; an
// unfinished write must leave no multipart upload pending under the
// store's prefix.
func TestWriter(t *testing.T) {
	const part = 5 << 20
	storetest.RunWriter(t, func(t *testing.T) logstore.Store {
		return newStore(t, func(o *s3.Options) { o.WriterPartSize = part })
	}, storetest.WriterOptions{PartSize: part, Leftovers: pendingUploads})
}

// pendingUploads lists the multipart uploads in progress under the
// store's prefix.
func pendingUploads(t *testing.T, ls logstore.Store) []string {
	t.Helper()
	st, ok := logstore.DriverOf[*s3.Store](ls)
	if !ok {
		t.Fatalf("%T has no S3 driver", ls)
	}
	out, err := st.Client().ListMultipartUploads(t.Context(), &s3api.ListMultipartUploadsInput{
		Bucket: aws.String(st.Bucket()),
		Prefix: aws.String(st.Prefix()),
	})
	if err != nil {
		t.Fatalf("ListMultipartUploads: %v", err)
	}
	var keys []string
	for _, u := range out.Uploads {
		keys = append(keys, aws.ToString(u.Key)+" "+aws.ToString(u.UploadId))
	}
	return keys
}

func TestWriterPartSizeTooSmall(t *testing.T) {
	cfg := server(t)
	opts := options(cfg)
	opts.WriterPartSize = 1 << 20
	if _, err := s3.New(t.Context(), cfg.Bucket, "x", opts); err == nil {
		t.Fatal("New with a 1 MiB writer part size succeeded")
	}
}

package s3_test

import (
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/s3"
	"github.com/godelta/delta/logstore/storetest"
	"github.com/godelta/delta/testutil/testserver"
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
// store's prefix, with a ListMultipartUploads of the test's own.
func pendingUploads(t *testing.T, ls logstore.Store) []string {
	t.Helper()
	st, ok := logstore.DriverOf[*s3.Store](ls)
	if !ok {
		t.Fatalf("%T has no S3 driver", ls)
	}
	resp, err := testserver.S3Do(t.Context(), server(t), http.MethodGet, "/"+st.Bucket(),
		url.Values{"uploads": {""}, "prefix": {st.Prefix()}}, nil, nil)
	if err != nil {
		t.Fatalf("ListMultipartUploads: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var out struct {
		Uploads []struct {
			Key      string
			UploadID string `xml:"UploadId"`
		} `xml:"Upload"`
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("ListMultipartUploads: HTTP %d: %s", resp.StatusCode, body)
	}
	if err := xml.Unmarshal(body, &out); err != nil {
		t.Fatalf("ListMultipartUploads: %v", err)
	}
	var keys []string
	for _, u := range out.Uploads {
		keys = append(keys, u.Key+" "+u.UploadID)
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

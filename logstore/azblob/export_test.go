package azblob

import (
	"context"
	"net/http"
	"net/url"
)

// ParseURI exposes parseURI to the external tests: it returns the
// container, prefix and account ("" for az://) of a URI.
func ParseURI(uri string) (container, prefix, account string, err error) {
	loc, err := parseURI(uri)
	return loc.container, loc.prefix, loc.account, err
}

// DeleteContainer deletes the store's container (Delete Container), for
// the tests of a container deleted under a store.
func (s *Store) DeleteContainer(ctx context.Context) error {
	resp, err := s.do(ctx, &request{method: http.MethodDelete, query: url.Values{"restype": {"container"}}})
	if err != nil {
		return err
	}
	drain(resp)
	return nil
}

// BarePutIfAbsent is one Put Blob with If-None-Match: * of data at key,
// without Content-MD5 and without the driver's classification of errors:
// the baseline of BenchmarkCommitLatency.
func (s *Store) BarePutIfAbsent(ctx context.Context, key string, data []byte) error {
	r := s.blobRequest(http.MethodPut, key)
	r.body = data
	r.header.Set("x-ms-blob-type", "BlockBlob")
	r.header.Set("If-None-Match", "*")
	r.once = true
	resp, err := s.do(ctx, r)
	if err != nil {
		return err
	}
	drain(resp)
	return nil
}

// StringToSign exposes the Shared Key string to sign of req for account.
func StringToSign(req *http.Request, account string) string {
	return stringToSign(req, account, req.ContentLength)
}

// ParseConnectionString exposes what a connection string says: the
// endpoint, account, key and SAS.
func ParseConnectionString(cs string) (endpoint, account, key, sas string, err error) {
	c, err := parseConnectionString(cs)
	return c.endpoint, c.account, c.key, c.sas, err
}

// PutBlocks is Put's path for data over 256 MiB (staged blocks and one
// Put Block List), with blocks of size bytes, so that tests need not send
// 256 MiB.
func (s *Store) PutBlocks(ctx context.Context, key string, data []byte, size int) error {
	return s.putBlocks(ctx, s.prefix+key, data, size)
}

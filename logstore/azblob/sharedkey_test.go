package azblob_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/godelta/delta/logstore/azblob"
)

// The Shared Key string to sign of fixed requests, written out by hand
// from the service's documented layout: the verb, the eleven standard
// headers (Content-Length empty for no body), the x-ms-* headers sorted
// in lower case, then /ACCOUNT + the path as sent and the query
// parameters sorted, decoded. Azurite checks the signature itself in
// every other test.
func TestStringToSign(t *testing.T) {
	put, _ := http.NewRequest(http.MethodPut, "http://127.0.0.1:10000/acct/c/a%2Fb%20c?comp=block&blockid=QUJD%2B%2F%3D%3D", bytes.NewReader([]byte("hello")))
	put.Header.Set("Content-MD5", "XUFAKrxLKna5cZ2REBfFkg==")
	put.Header.Set("Content-Type", "text/plain")
	put.Header.Set("If-None-Match", "*")
	put.Header.Set("x-ms-version", "2026-12-06")
	put.Header.Set("X-Ms-Date", "Mon, 07 Dec 2026 00:00:00 GMT")
	put.Header.Set("x-ms-blob-type", "BlockBlob")

	get, _ := http.NewRequest(http.MethodGet, "https://acct.blob.core.windows.net/c?restype=container&comp=list&prefix=p%2Fd%2F&startFrom=p%2Fd%2Fk&delimiter=%2F", nil)
	get.Header.Set("Range", "bytes=0-9")
	get.Header.Set("x-ms-date", "Mon, 07 Dec 2026 00:00:00 GMT")
	get.Header.Set("x-ms-version", "2026-12-06")

	root, _ := http.NewRequest(http.MethodHead, "https://acct.blob.core.windows.net", nil)

	for _, tc := range []struct {
		req  *http.Request
		want []string
	}{
		{put, []string{
			"PUT", "", "", "5", "XUFAKrxLKna5cZ2REBfFkg==", "text/plain", "", "", "", "*", "", "",
			"x-ms-blob-type:BlockBlob", "x-ms-date:Mon, 07 Dec 2026 00:00:00 GMT", "x-ms-version:2026-12-06",
			"/acct/acct/c/a%2Fb%20c", "blockid:QUJD+/==", "comp:block",
		}},
		{get, []string{
			"GET", "", "", "", "", "", "", "", "", "", "", "bytes=0-9",
			"x-ms-date:Mon, 07 Dec 2026 00:00:00 GMT", "x-ms-version:2026-12-06",
			"/acct/c", "comp:list", "delimiter:/", "prefix:p/d/", "restype:container", "startfrom:p/d/k",
		}},
		{root, []string{"HEAD", "", "", "", "", "", "", "", "", "", "", "", "/acct/"}},
	} {
		if got, want := azblob.StringToSign(tc.req, "acct"), strings.Join(tc.want, "\n"); got != want {
			t.Errorf("%s %s: string to sign\n%q\nwant\n%q", tc.req.Method, tc.req.URL, got, want)
		}
	}
}

func TestParseConnectionString(t *testing.T) {
	const key = "a2V5a2V5a2V5"
	for _, tc := range []struct {
		cs                          string
		endpoint, account, key, sas string
	}{
		{"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + key + ";EndpointSuffix=core.windows.net",
			"https://acct.blob.core.windows.net", "acct", key, ""},
		{"AccountName=acct;AccountKey=" + key, "https://acct.blob.core.windows.net", "acct", key, ""},
		{"DefaultEndpointsProtocol=http;AccountName=a;AccountKey=" + key + ";EndpointSuffix=core.chinacloudapi.cn",
			"http://a.blob.core.chinacloudapi.cn", "a", key, ""},
		{"accountname=a; accountkey=" + key + "; BlobEndpoint=http://127.0.0.1:10000/a;", "http://127.0.0.1:10000/a", "a", key, ""},
		{"BlobEndpoint=https://a.blob.core.windows.net/;SharedAccessSignature=sv=2024-01-01&sp=rl&sig=abc%3D",
			"https://a.blob.core.windows.net/", "", "", "sv=2024-01-01&sp=rl&sig=abc%3D"},
		{"UseDevelopmentStorage=true", "http://127.0.0.1:10000/devstoreaccount1", "devstoreaccount1",
			"Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==", ""},
		{"UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://emulator", "http://emulator:10000/devstoreaccount1", "devstoreaccount1",
			"Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==", ""},
	} {
		e, a, k, s, err := azblob.ParseConnectionString(tc.cs)
		if err != nil || e != tc.endpoint || a != tc.account || k != tc.key || s != tc.sas {
			t.Errorf("ParseConnectionString(%q) = %q, %q, %q, %q, %v; want %q, %q, %q, %q", tc.cs, e, a, k, s, err, tc.endpoint, tc.account, tc.key, tc.sas)
		}
	}
	for _, bad := range []string{
		"AccountKey=c2VjcmV0LWtleQ==",                        // no account, no endpoint
		"AccountName=a",                                      // neither key nor SAS
		"BlobEndpoint=http://h/;AccountKey=c2VjcmV0LWtleQ==", // key without account
		"garbage",
	} {
		if _, _, _, _, err := azblob.ParseConnectionString(bad); err == nil {
			t.Errorf("ParseConnectionString(%q) succeeded", bad)
		} else if strings.Contains(err.Error(), "c2VjcmV0") {
			t.Errorf("the error quotes the key: %v", err)
		}
	}
}

package s3

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// TestSignV4MatchesSDK signs the same requests with signV4 and with the
// AWS SDK's signer (configured for S3: paths encoded once) and wants the
// same Authorization header.
func TestSignV4MatchesSDK(t *testing.T) {
	now := time.Date(2026, 12, 6, 7, 8, 9, 0, time.UTC)
	st := &Store{endpoint: &url.URL{Scheme: "http", Host: "127.0.0.1:9000"}, pathStyle: true, bucket: "bkt"}
	tests := []struct {
		name   string
		r      request
		creds  Credentials
		region string
	}{
		{"get", request{method: "GET", key: "t/_delta_log/00000000000000000000.json"}, Credentials{AccessKey: "AK", SecretKey: "SK"}, "us-east-1"},
		{"odd key", request{method: "GET", key: "p/a b+c%d=é~!*'()/x y", header: http.Header{"Range": {"bytes=0-9"}}}, Credentials{AccessKey: "AK", SecretKey: "SK"}, "eu-west-3"},
		{"list", request{method: "GET", query: url.Values{"list-type": {"2"}, "delimiter": {"/"}, "prefix": {"a b/ü+"}, "start-after": {"a b/ü+/x=1&y"}, "max-keys": {"7"}}}, Credentials{AccessKey: "AK", SecretKey: "SK"}, "us-east-1"},
		{"conditional put with token", request{method: "PUT", key: "k", body: []byte("data"), header: http.Header{"If-None-Match": {"*"}}}, Credentials{AccessKey: "AK", SecretKey: "SK", SessionToken: "TOKEN"}, "us-west-2"},
		{"uploads", request{method: "POST", key: "big", query: url.Values{"uploads": {""}}}, Credentials{AccessKey: "AK", SecretKey: "SK"}, "us-east-1"},
		{"part", request{method: "PUT", key: "big", body: bytes.Repeat([]byte("x"), 1000), query: url.Values{"partNumber": {"3"}, "uploadId": {"a/b+c=="}}}, Credentials{AccessKey: "AK", SecretKey: "SK"}, "us-east-1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			build := func() *http.Request {
				req, _ := http.NewRequest(tc.r.method, "http://placeholder/", bytes.NewReader(tc.r.body))
				req.URL = st.url(&tc.r)
				req.ContentLength = int64(len(tc.r.body))
				for k, v := range tc.r.header {
					req.Header[k] = v
				}
				return req
			}
			hash := payloadHash(tc.r.body)
			mine := build()
			signV4(mine, tc.creds, "s3", tc.region, hash, now)

			sdk := build()
			sdk.Header.Set("X-Amz-Content-Sha256", hash)
			signer := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
			err := signer.SignHTTP(t.Context(), aws.Credentials{AccessKeyID: tc.creds.AccessKey, SecretAccessKey: tc.creds.SecretKey, SessionToken: tc.creds.SessionToken},
				sdk, hash, "s3", tc.region, now)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := mine.Header.Get("Authorization"), sdk.Header.Get("Authorization"); got != want {
				t.Errorf("Authorization\n got %s\nwant %s", got, want)
			}
			if mine.Header.Get("X-Amz-Security-Token") != tc.creds.SessionToken {
				t.Errorf("X-Amz-Security-Token = %q", mine.Header.Get("X-Amz-Security-Token"))
			}
		})
	}
}

// TestSignV4STS checks a form POST to STS (service "sts", no
// X-Amz-Content-Sha256) against the SDK's signer.
func TestSignV4STS(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	body := []byte(url.Values{"Action": {"AssumeRole"}, "RoleArn": {"arn:aws:iam::1:role/r"}, "Version": {"2011-06-15"}}.Encode())
	build := func() *http.Request {
		req, _ := http.NewRequest("POST", "https://sts.eu-west-1.amazonaws.com/", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
		return req
	}
	mine, sdk := build(), build()
	c := Credentials{AccessKey: "AK", SecretKey: "SK", SessionToken: "T"}
	signV4(mine, c, "sts", "eu-west-1", payloadHash(body), now)
	if err := v4.NewSigner().SignHTTP(t.Context(), aws.Credentials{AccessKeyID: "AK", SecretAccessKey: "SK", SessionToken: "T"}, sdk, payloadHash(body), "sts", "eu-west-1", now); err != nil {
		t.Fatal(err)
	}
	if got, want := mine.Header.Get("Authorization"), sdk.Header.Get("Authorization"); got != want {
		t.Errorf("Authorization\n got %s\nwant %s", got, want)
	}
}

func TestVirtualHostable(t *testing.T) {
	tests := []struct {
		bucket, scheme string
		want           bool
	}{
		{"lake", "https", true},
		{"my-lake-01", "https", true},
		{"my.lake", "https", false}, // the certificate's wildcard covers one label
		{"my.lake", "http", true},
		{"My_Lake", "https", false},
		{"ab", "https", false},
		{"-lake", "https", false},
		{strings.Repeat("a", 64), "https", false},
	}
	for _, tc := range tests {
		if got := virtualHostable(tc.bucket, tc.scheme); got != tc.want {
			t.Errorf("virtualHostable(%q, %s) = %v, want %v", tc.bucket, tc.scheme, got, tc.want)
		}
	}
}

package s3_test

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/godelta/delta/logstore/s3"
)

// TestSSOSignsRequests gets credentials the whole way a developer's
// would come, from an "aws sso login" cache file through a loopback
// IAM Identity Center portal, and checks that they sign real requests:
// the portal hands out versitygw's keys, and the store writes and reads
// an object with them.
func TestSSOSignsRequests(t *testing.T) {
	cfg := server(t)
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
		"AWS_DEFAULT_PROFILE", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_WEB_IDENTITY_TOKEN_FILE",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_ENDPOINT_URL",
		"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL_SSO_OIDC"} {
		t.Setenv(v, "")
	}
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	home := t.TempDir()
	t.Setenv("HOME", home)

	var calls atomic.Int64
	portal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.URL.Path != "/federation/credentials" || r.Header.Get("x-amz-sso_bearer_token") != "dev-token" ||
			r.URL.Query().Get("account_id") != "123456789012" || r.URL.Query().Get("role_name") != "Writer" {
			w.WriteHeader(401)
			w.Write([]byte(`{"message":"Session token not found or invalid"}`))
			return
		}
		// No sessionToken: versitygw knows only long-term keys and
		// answers InvalidToken to a session token it did not issue
		// (the session token's header is covered by the STS tests).
		json.NewEncoder(w).Encode(map[string]any{"roleCredentials": map[string]any{
			"accessKeyId": cfg.AccessKey, "secretAccessKey": cfg.SecretKey,
			"expiration": time.Now().Add(time.Hour).UnixMilli(),
		}})
	}))
	defer portal.Close()
	t.Setenv("AWS_ENDPOINT_URL_SSO", portal.URL)
	t.Setenv("AWS_PROFILE", "dev")

	config := "[profile dev]\nsso_session = corp\nsso_account_id = 123456789012\nsso_role_name = Writer\n" +
		"[sso-session corp]\nsso_start_url = https://corp.awsapps.com/start\nsso_region = eu-central-1\n"
	sum := sha1.Sum([]byte("corp"))
	token := fmt.Sprintf(`{"accessToken":"dev-token","expiresAt":%q}`, time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
	for path, text := range map[string]string{
		filepath.Join(home, ".aws", "config"):                                           config,
		filepath.Join(home, ".aws", "sso", "cache", hex.EncodeToString(sum[:])+".json"): token,
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	// New's bucket check is the first signed request.
	st, err := s3.New(t.Context(), cfg.Bucket, fmt.Sprintf("t%04d/sso", prefixes.Add(1)),
		s3.Options{Region: cfg.Region, Endpoint: cfg.Endpoint, PathStyle: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Put(t.Context(), "a.json", []byte("signed by SSO")); err != nil {
		t.Fatal(err)
	}
	got, err := st.Get(t.Context(), "a.json")
	if err != nil || string(got) != "signed by SSO" {
		t.Errorf("Get = %q, %v", got, err)
	}
	if calls.Load() != 1 {
		t.Errorf("%d portal calls, want 1 (the credentials are cached)", calls.Load())
	}
}

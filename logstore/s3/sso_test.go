package s3

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/godelta/delta/logstore"
)

// fakeSSO plays IAM Identity Center on loopback, in its wire shapes: the
// portal's GetRoleCredentials (GET /federation/credentials, the token in
// x-amz-sso_bearer_token, JSON with the expiration in epoch
// milliseconds) and SSO OIDC's CreateToken (POST /token, JSON both ways).
type fakeSSO struct {
	*httptest.Server
	mu       sync.Mutex
	tokens   map[string]bool // access tokens the portal accepts
	refresh  string          // the refresh token CreateToken accepts
	queries  []string        // GetRoleCredentials queries, in order
	portal   atomic.Int64
	oidc     atomic.Int64
	fail5xx  atomic.Int64 // answer this many portal calls with 503 first
	denyRole string       // a role the portal answers 403 for
	onRefuse func()       // called when CreateToken refuses a refresh token
}

func newFakeSSO(t *testing.T) *fakeSSO {
	f := &fakeSSO{tokens: map[string]bool{}, refresh: "refresh-1", denyRole: "denied"}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/federation/credentials":
			n := f.portal.Add(1)
			f.queries = append(f.queries, r.URL.RawQuery)
			if f.fail5xx.Load() > 0 {
				f.fail5xx.Add(-1)
				w.WriteHeader(503)
				w.Write([]byte(`{"message":"try later"}`))
				return
			}
			if !f.tokens[r.Header.Get("x-amz-sso_bearer_token")] {
				w.Header().Set("X-Amzn-Errortype", "UnauthorizedException")
				w.WriteHeader(401)
				w.Write([]byte(`{"message":"Session token not found or invalid"}`))
				return
			}
			if r.URL.Query().Get("role_name") == f.denyRole {
				w.Header().Set("X-Amzn-Errortype", "ForbiddenException")
				w.WriteHeader(403)
				w.Write([]byte(`{"message":"No access"}`))
				return
			}
			fmt.Fprintf(w, `{"roleCredentials":{"accessKeyId":"SSOKEY-%d","secretAccessKey":"SSOSECRET","sessionToken":"SSOSESSION","expiration":%d}}`,
				n, time.Now().Add(time.Hour).UnixMilli())
		case r.Method == http.MethodPost && r.URL.Path == "/token":
			f.oidc.Add(1)
			var in map[string]string
			if json.NewDecoder(r.Body).Decode(&in) != nil || in["grantType"] != "refresh_token" ||
				in["clientId"] != "client-1" || in["clientSecret"] != "client-secret" || in["refreshToken"] != f.refresh {
				if f.onRefuse != nil {
					f.onRefuse()
				}
				w.WriteHeader(400)
				w.Write([]byte(`{"error":"invalid_grant","error_description":"Invalid refresh token provided"}`))
				return
			}
			f.tokens["fresh-token"] = true
			f.refresh = "refresh-2"
			w.Write([]byte(`{"accessToken":"fresh-token","tokenType":"Bearer","expiresIn":28800,"refreshToken":"refresh-2"}`))
		default:
			w.WriteHeader(404)
		}
	}))
	t.Cleanup(f.Close)
	t.Setenv("AWS_ENDPOINT_URL_SSO", f.URL)
	t.Setenv("AWS_ENDPOINT_URL_SSO_OIDC", f.URL)
	return f
}

func (f *fakeSSO) accept(token string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokens[token] = true
}

const ssoConfigText = `[profile legacy]
sso_start_url = https://legacy.awsapps.com/start
sso_region = eu-west-1
sso_account_id = 111122223333
sso_role_name = Reader
region = us-east-2

[profile dev]
sso_session = corp
sso_account_id = 444455556666
sso_role_name = Developer

[profile denied]
sso_session = corp
sso_account_id = 444455556666
sso_role_name = denied

[sso-session corp]
sso_start_url = https://corp.awsapps.com/start
sso_region = eu-central-1
sso_registration_scopes = sso:account:access

[profile selfrole]
sso_session = corp
sso_account_id = 444455556666
sso_role_name = Developer
role_arn = arn:aws:iam::777788889999:role/Self

[profile admin]
role_arn = arn:aws:iam::777788889999:role/Admin
source_profile = dev
region = ap-northeast-1
`

// ssoCache writes a token cache file for key under home and returns its
// path.
func ssoCache(t *testing.T, home, key string, fields map[string]any) string {
	t.Helper()
	path := ssoCacheFile(home, key)
	b, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, string(b))
	return path
}

func rfc3339(d time.Duration) string { return time.Now().Add(d).UTC().Format(time.RFC3339) }

func TestSSOCacheFileName(t *testing.T) {
	// The name the AWS CLI gives the cache file: the hex SHA-1 of the
	// session name (or, legacy, of the start URL).
	// (Values from sha1sum of the bare strings.)
	for key, want := range map[string]string{
		"https://my-sso-portal.awsapps.com/start": "/h/.aws/sso/cache/c7aaaf71fcc8777ae2475525ed049d39fe16c484.json",
		"my-sso": "/h/.aws/sso/cache/0ad374308c5a4e22f723adf10145eafad7c4031c.json",
	} {
		if got := ssoCacheFile("/h", key); got != want {
			t.Errorf("cache file of %q = %q, want %q", key, got, want)
		}
	}
}

func TestSSOCredentials(t *testing.T) {
	home := isolate(t)
	sso := newFakeSSO(t)
	writeFile(t, home+"/.aws/config", ssoConfigText)
	sso.accept("legacy-token")
	sso.accept("corp-token")

	t.Run("legacy", func(t *testing.T) {
		ssoCache(t, home, "https://legacy.awsapps.com/start", map[string]any{
			"startUrl": "https://legacy.awsapps.com/start", "region": "eu-west-1",
			"accessToken": "legacy-token", "expiresAt": rfc3339(time.Hour),
		})
		t.Setenv("AWS_PROFILE", "legacy")
		before := sso.portal.Load()
		got, cache, err := chain(t, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(got.AccessKey, "SSOKEY-") || got.SecretKey != "SSOSECRET" || got.SessionToken != "SSOSESSION" ||
			got.Expires.Before(time.Now().Add(50*time.Minute)) {
			t.Errorf("credentials = %+v", got)
		}
		sso.mu.Lock()
		q := sso.queries[len(sso.queries)-1]
		sso.mu.Unlock()
		if q != "account_id=111122223333&role_name=Reader" {
			t.Errorf("GetRoleCredentials query %q", q)
		}
		// Cached by credCache: an hour left is no reason to ask again.
		if again, err := cache.get(t.Context()); err != nil || again != got || sso.portal.Load() != before+1 {
			t.Errorf("second get = %+v, %v; %d portal calls", again, err, sso.portal.Load()-before)
		}
		// Due for refresh (as five minutes before the expiry): the token
		// is read again and the portal asked again.
		// (chain wraps New's cache, the provider's own, in another.)
		cache.refreshAt = time.Now().Add(-time.Second)
		if inner, ok := cache.provider.(*credCache); ok {
			inner.refreshAt = cache.refreshAt
		}
		if again, err := cache.get(t.Context()); err != nil || again.AccessKey == got.AccessKey || sso.portal.Load() != before+2 {
			t.Errorf("refreshed get = %+v, %v; %d portal calls", again, err, sso.portal.Load()-before)
		}
	})

	t.Run("sso_session", func(t *testing.T) {
		ssoCache(t, home, "corp", map[string]any{
			"startUrl": "https://corp.awsapps.com/start", "region": "eu-central-1",
			"accessToken": "corp-token", "expiresAt": rfc3339(time.Hour),
			"refreshToken": "refresh-1", "clientId": "client-1", "clientSecret": "client-secret",
			"registrationExpiresAt": rfc3339(90 * 24 * time.Hour),
		})
		t.Setenv("AWS_PROFILE", "dev")
		got, _, err := chain(t, Options{})
		if err != nil || got.SecretKey != "SSOSECRET" {
			t.Fatalf("credentials = %+v, %v", got, err)
		}
		if sso.oidc.Load() != 0 {
			t.Errorf("a valid token was refreshed")
		}
	})

	t.Run("5xx retried", func(t *testing.T) {
		t.Setenv("AWS_PROFILE", "dev")
		before := sso.portal.Load()
		sso.fail5xx.Store(1)
		if _, _, err := chain(t, Options{}); err != nil || sso.portal.Load() != before+2 {
			t.Errorf("after one 503: %v, %d portal calls, want 2", err, sso.portal.Load()-before)
		}
	})

	t.Run("403", func(t *testing.T) {
		t.Setenv("AWS_PROFILE", "denied")
		_, _, err := chain(t, Options{})
		var ce *CredentialsError
		var le *SSOLoginError
		if !errors.As(err, &ce) || !errors.Is(err, logstore.ErrPermission) || errors.As(err, &le) ||
			!strings.Contains(err.Error(), "HTTP 403") || !strings.Contains(err.Error(), "No access") {
			t.Errorf("403 from the portal: %v", err)
		}
	})

	t.Run("role chain", func(t *testing.T) {
		sts := newFakeSTS(t, time.Now().Add(time.Hour))
		t.Setenv("AWS_ENDPOINT_URL_STS", sts.URL)
		t.Setenv("AWS_PROFILE", "admin")
		got, _, err := chain(t, Options{})
		if err != nil {
			t.Fatal(err)
		}
		form := <-sts.forms
		if form["Action"] != "AssumeRole" || form["RoleArn"] != "arn:aws:iam::777788889999:role/Admin" ||
			!strings.Contains(form["Authorization"], "Credential=SSOKEY-") ||
			!strings.Contains(form["Authorization"], "/ap-northeast-1/sts/aws4_request") || form["X-Amz-Security-Token"] != "SSOSESSION" {
			t.Errorf("AssumeRole over SSO credentials: %v", form)
		}
		if got.AccessKey != "ROLEKEY-1" || got.SessionToken != "ROLETOKEN" {
			t.Errorf("credentials = %+v", got)
		}
		// A profile's own sign-in assumes its own role_arn.
		t.Setenv("AWS_PROFILE", "selfrole")
		if _, _, err := chain(t, Options{}); err != nil {
			t.Fatal(err)
		}
		if form := <-sts.forms; form["RoleArn"] != "arn:aws:iam::777788889999:role/Self" || !strings.Contains(form["Authorization"], "Credential=SSOKEY-") {
			t.Errorf("AssumeRole of the SSO profile's own role: %v", form)
		}
	})
}

func TestSSORefresh(t *testing.T) {
	home := isolate(t)
	sso := newFakeSSO(t)
	writeFile(t, home+"/.aws/config", ssoConfigText)
	t.Setenv("AWS_PROFILE", "dev")
	path := ssoCache(t, home, "corp", map[string]any{
		"startUrl": "https://corp.awsapps.com/start", "region": "eu-central-1",
		"accessToken": "stale-token", "expiresAt": rfc3339(-time.Minute),
		"refreshToken": "refresh-1", "clientId": "client-1", "clientSecret": "client-secret",
		"registrationExpiresAt": rfc3339(90 * 24 * time.Hour),
	})
	got, _, err := chain(t, Options{})
	if err != nil || got.SecretKey != "SSOSECRET" || sso.oidc.Load() != 1 {
		t.Fatalf("credentials over an expired token = %+v, %v; %d CreateToken calls", got, err, sso.oidc.Load())
	}
	// The cache file holds the new token, keeps the fields it had, and
	// is private; no temporary file is left.
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var tok map[string]string
	if err := json.Unmarshal(b, &tok); err != nil {
		t.Fatal(err)
	}
	exp, err := time.Parse(time.RFC3339, tok["expiresAt"])
	if err != nil || tok["accessToken"] != "fresh-token" || tok["refreshToken"] != "refresh-2" ||
		tok["startUrl"] != "https://corp.awsapps.com/start" || tok["clientSecret"] != "client-secret" || !exp.After(time.Now().Add(7*time.Hour)) {
		t.Errorf("rewritten cache file: %s", b)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("cache file mode: %v, %v", fi.Mode(), err)
	}
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Errorf("%d files in the cache directory, want 1", len(ents))
	}
	// The refreshed token is used from the file: no second refresh.
	if _, _, err := chain(t, Options{}); err != nil || sso.oidc.Load() != 1 {
		t.Errorf("second resolution: %v, %d CreateToken calls", err, sso.oidc.Load())
	}

	// A refresh the service refuses (the refresh token was revoked) is
	// the "sign in again" error, which shows none of the secrets.
	ssoCache(t, home, "corp", map[string]any{
		"accessToken": "stale-token", "expiresAt": rfc3339(-time.Minute),
		"refreshToken": "revoked-refresh", "clientId": "client-1", "clientSecret": "client-secret",
	})
	_, _, err = chain(t, Options{})
	var le *SSOLoginError
	if !errors.Is(err, ErrSSOTokenExpired) || !errors.Is(err, logstore.ErrPermission) || !errors.As(err, &le) ||
		!strings.Contains(err.Error(), `aws sso login --profile dev`) || !strings.Contains(err.Error(), "--sso-session corp") ||
		!strings.Contains(err.Error(), "invalid_grant") {
		t.Errorf("refused refresh: %v", err)
	}
	for _, secret := range []string{"stale-token", "revoked-refresh", "client-secret"} {
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("the error shows %q: %v", secret, err)
		}
	}
	// A refresh refused because another process refreshed first (the
	// refresh token rotated under us): its token, now in the file, is
	// used.
	ssoCache(t, home, "corp", map[string]any{
		"accessToken": "stale-token", "expiresAt": rfc3339(-time.Minute),
		"refreshToken": "rotated-away", "clientId": "client-1", "clientSecret": "client-secret",
	})
	sso.accept("other-process-token")
	sso.mu.Lock()
	sso.onRefuse = func() {
		ssoCache(t, home, "corp", map[string]any{"accessToken": "other-process-token", "expiresAt": rfc3339(time.Hour)})
	}
	sso.mu.Unlock()
	before := sso.oidc.Load()
	if got, _, err := chain(t, Options{}); err != nil || got.SecretKey != "SSOSECRET" || sso.oidc.Load() != before+1 {
		t.Errorf("refresh lost to another process: %+v, %v, %d CreateToken calls", got, err, sso.oidc.Load()-before)
	}
	sso.mu.Lock()
	sso.onRefuse = nil
	sso.mu.Unlock()

	// An expired client registration is not even tried.
	before = sso.oidc.Load()
	ssoCache(t, home, "corp", map[string]any{
		"accessToken": "stale-token", "expiresAt": rfc3339(-time.Minute),
		"refreshToken": "refresh-2", "clientId": "client-1", "clientSecret": "client-secret",
		"registrationExpiresAt": rfc3339(-time.Hour),
	})
	if _, _, err := chain(t, Options{}); !errors.Is(err, ErrSSOTokenExpired) || sso.oidc.Load() != before {
		t.Errorf("expired registration: %v, %d CreateToken calls", err, sso.oidc.Load()-before)
	}
}

func TestSSOTokenErrors(t *testing.T) {
	home := isolate(t)
	sso := newFakeSSO(t)
	writeFile(t, home+"/.aws/config", ssoConfigText)
	legacyFile := ssoCacheFile(home, "https://legacy.awsapps.com/start")
	tests := []struct {
		name, profile string
		file          string // the legacy cache file's content; "" for none
		want          error
		wantText      string
	}{
		{"missing", "legacy", "", ErrSSOTokenMissing, "aws sso login --profile legacy"},
		{"not JSON", "legacy", "{not json", ErrSSOTokenCorrupt, legacyFile},
		{"no token", "legacy", `{"expiresAt":"` + rfc3339(time.Hour) + `"}`, ErrSSOTokenCorrupt, "accessToken"},
		{"bad expiry", "legacy", `{"accessToken":"t","expiresAt":"tomorrow"}`, ErrSSOTokenCorrupt, "expiresAt"},
		{"too large", "legacy", `{"accessToken":"` + strings.Repeat("x", maxSSOToken) + `"}`, ErrSSOTokenCorrupt, "larger than 64 KiB"},
		// The legacy form has no refresh token: expired is final, and
		// the portal is not asked.
		{"legacy expired", "legacy", `{"accessToken":"legacy-token","expiresAt":"` + rfc3339(-time.Minute) + `"}`, ErrSSOTokenExpired, "aws sso login --profile legacy"},
		// A token the portal does not take (signed out elsewhere).
		{"portal 401", "legacy", `{"accessToken":"unknown-token","expiresAt":"` + rfc3339(time.Hour) + `"}`, ErrSSOTokenExpired, "HTTP 401"},
		// The session's cache file is another file: missing.
		{"session missing", "dev", "", ErrSSOTokenMissing, "--sso-session corp"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			os.RemoveAll(filepath.Join(home, ".aws/sso"))
			if tc.file != "" {
				writeFile(t, legacyFile, tc.file)
			}
			t.Setenv("AWS_PROFILE", tc.profile)
			before := sso.portal.Load()
			_, _, err := chain(t, Options{})
			var ce *CredentialsError
			var le *SSOLoginError
			if !errors.Is(err, tc.want) || !errors.As(err, &ce) || !errors.As(err, &le) || !errors.Is(err, logstore.ErrPermission) ||
				!strings.Contains(err.Error(), tc.wantText) {
				t.Fatalf("err = %v; want a *CredentialsError over an *SSOLoginError matching %v and saying %q", err, tc.want, tc.wantText)
			}
			if strings.Contains(err.Error(), "unknown-token") {
				t.Errorf("the error shows the token: %v", err)
			}
			if tc.name != "portal 401" && sso.portal.Load() != before {
				t.Errorf("the portal was asked with an unusable token")
			}
		})
	}
}

func TestSSOConfigErrors(t *testing.T) {
	tests := []struct {
		name, config, want string
	}{
		{"no session section", "[profile p]\nsso_session = nope\nsso_account_id = 1\nsso_role_name = r\n", "names no [sso-session nope]"},
		{"session without region", "[profile p]\nsso_session = s\nsso_account_id = 1\nsso_role_name = r\n[sso-session s]\nsso_start_url = https://x\n", "needs sso_start_url and sso_region"},
		{"contradicting start URL", "[profile p]\nsso_session = s\nsso_start_url = https://other\nsso_account_id = 1\nsso_role_name = r\n[sso-session s]\nsso_start_url = https://x\nsso_region = us-east-1\n", "differs"},
		{"contradicting region", "[profile p]\nsso_session = s\nsso_region = eu-west-1\nsso_account_id = 1\nsso_role_name = r\n[sso-session s]\nsso_start_url = https://x\nsso_region = us-east-1\n", "differs"},
		{"legacy without region", "[profile p]\nsso_start_url = https://x\nsso_account_id = 1\nsso_role_name = r\n", "needs sso_start_url and sso_region"},
		{"no role", "[profile p]\nsso_start_url = https://x\nsso_region = us-east-1\nsso_account_id = 1\n", "sso_account_id and sso_role_name"},
		{"bad region", "[profile p]\nsso_start_url = https://x\nsso_region = evil.example/x\nsso_account_id = 1\nsso_role_name = r\n", "not a region"},
		// A session section is not a profile.
		{"session is no profile", "[sso-session p]\nsso_start_url = https://x\nsso_region = us-east-1\n", "in neither shared file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			home := isolate(t)
			writeFile(t, home+"/.aws/config", tc.config)
			t.Setenv("AWS_PROFILE", "p")
			_, _, err := chain(t, Options{})
			var ce *CredentialsError
			if !errors.As(err, &ce) || !errors.Is(err, logstore.ErrPermission) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v; want a *CredentialsError saying %q", err, tc.want)
			}
		})
	}
}

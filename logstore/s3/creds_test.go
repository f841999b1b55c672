package s3

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/godelta/delta/logstore"
)

// awsVars are the variables the chain reads; isolate clears them all.
var awsVars = []string{
	"AWS_ACCESS_KEY_ID", "AWS_ACCESS_KEY", "AWS_SECRET_ACCESS_KEY", "AWS_SECRET_KEY", "AWS_SESSION_TOKEN",
	"AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_CONFIG_FILE",
	"AWS_SHARED_CREDENTIALS_FILE", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_ROLE_SESSION_NAME",
	"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
	"AWS_CONTAINER_AUTHORIZATION_TOKEN", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
	"AWS_EC2_METADATA_SERVICE_ENDPOINT", "AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE",
	"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL_STS", "AWS_ENDPOINT_URL_SSO",
	"AWS_ENDPOINT_URL_SSO_OIDC", "AWS_CA_BUNDLE",
}

// isolate gives the test an empty AWS environment and a HOME of its own,
// with IMDS off; it returns HOME.
func isolate(t *testing.T) string {
	t.Helper()
	for _, v := range awsVars {
		t.Setenv(v, "")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	return home
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// chain resolves the credentials New would use, and fetches them once.
func chain(t *testing.T, opts Options) (Credentials, *credCache, error) {
	t.Helper()
	env := loadEnv()
	prof, err := env.loadProfile()
	if err != nil {
		return Credentials{}, nil, err
	}
	region := firstOf(opts.Region, env.region, prof.get("region"), "us-east-1")
	p, err := resolveCredentials(opts, env, prof, region, http.DefaultClient)
	if err != nil {
		return Credentials{}, nil, err
	}
	cache := &credCache{provider: p}
	c, err := cache.get(t.Context())
	return c, cache, err
}

func TestCredentialsStatic(t *testing.T) {
	home := isolate(t)
	writeFile(t, home+"/.aws/credentials", "[default]\naws_access_key_id = FILEKEY\naws_secret_access_key = FILESECRET\n")
	tests := []struct {
		name string
		env  map[string]string
		opts Options
		want Credentials
	}{
		{"options first", map[string]string{"AWS_ACCESS_KEY_ID": "ENVKEY", "AWS_SECRET_ACCESS_KEY": "ENVSECRET"},
			Options{AccessKey: "OPT", SecretKey: "OPTSECRET", SessionToken: "OPTTOKEN"}, Credentials{AccessKey: "OPT", SecretKey: "OPTSECRET", SessionToken: "OPTTOKEN"}},
		{"environment before files", map[string]string{"AWS_ACCESS_KEY_ID": "ENVKEY", "AWS_SECRET_ACCESS_KEY": "ENVSECRET", "AWS_SESSION_TOKEN": "ENVTOKEN"},
			Options{}, Credentials{AccessKey: "ENVKEY", SecretKey: "ENVSECRET", SessionToken: "ENVTOKEN"}},
		{"default profile", nil, Options{}, Credentials{AccessKey: "FILEKEY", SecretKey: "FILESECRET"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			got, _, err := chain(t, tc.opts)
			if err != nil || got != tc.want {
				t.Errorf("credentials = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestCredentialsProfiles(t *testing.T) {
	home := isolate(t)
	script := filepath.Join(home, "creds.sh")
	writeFile(t, script, "#!/bin/sh\necho '{\"Version\": 1, \"AccessKeyId\": \"PROCKEY\", \"SecretAccessKey\": \"PROCSECRET\", \"SessionToken\": \"PROCTOKEN\", \"Expiration\": \"2999-01-01T00:00:00Z\"}'\n")
	if err := os.Chmod(script, 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, home+"/.aws/config", `# comment
[default]
region = eu-north-1

[profile dev]
region = ap-south-1
aws_access_key_id = CONFIGKEY ; overridden by the credentials file
aws_secret_access_key = CONFIGSECRET
s3 =
  addressing_style = path

[profile proc]
credential_process = `+script+`

[profile sso]
sso_session = corp
sso_account_id = 123

[sso-session corp]
sso_start_url = https://example.awsapps.com/start

[profile login]
login_session = arn:aws:iam::1:user/me

[profile half]
aws_access_key_id = ONLYKEY

[profile loop1]
role_arn = arn:aws:iam::1:role/a
source_profile = loop2

[profile loop2]
role_arn = arn:aws:iam::1:role/b
source_profile = loop1

[profile norole]
role_arn = arn:aws:iam::1:role/c
`)
	writeFile(t, home+"/.aws/credentials", "[dev]\naws_access_key_id = DEVKEY\naws_secret_access_key = DEVSECRET\naws_session_token = DEVTOKEN\n")
	tests := []struct {
		profile string
		want    Credentials
		wantErr error
	}{
		{"dev", Credentials{AccessKey: "DEVKEY", SecretKey: "DEVSECRET", SessionToken: "DEVTOKEN"}, nil},
		{"proc", Credentials{AccessKey: "PROCKEY", SecretKey: "PROCSECRET", SessionToken: "PROCTOKEN", Expires: time.Date(2999, 1, 1, 0, 0, 0, 0, time.UTC)}, nil},
		{"sso", Credentials{}, logstore.ErrPermission}, // the session has no sso_region
		{"login", Credentials{}, logstore.ErrPermission},
		{"half", Credentials{}, logstore.ErrPermission},
		{"loop1", Credentials{}, logstore.ErrPermission},
		{"norole", Credentials{}, logstore.ErrPermission},
		{"missing", Credentials{}, logstore.ErrPermission},
	}
	for _, tc := range tests {
		t.Run(tc.profile, func(t *testing.T) {
			t.Setenv("AWS_PROFILE", tc.profile)
			// A profile named by AWS_PROFILE comes before keys in the
			// environment, as in the SDKs.
			t.Setenv("AWS_ACCESS_KEY_ID", "ENVKEY")
			t.Setenv("AWS_SECRET_ACCESS_KEY", "ENVSECRET")
			got, _, err := chain(t, Options{})
			if tc.wantErr != nil {
				var ce *CredentialsError
				if !errors.Is(err, tc.wantErr) || !errors.As(err, &ce) || !errors.Is(err, logstore.ErrPermission) {
					t.Errorf("credentials = %+v, %v; want a *CredentialsError matching %v", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || !got.Expires.Equal(tc.want.Expires) {
				t.Fatalf("credentials = %+v, %v; want %+v", got, err, tc.want)
			}
			got.Expires, tc.want.Expires = time.Time{}, time.Time{}
			if got != tc.want {
				t.Errorf("credentials = %+v; want %+v", got, tc.want)
			}
		})
	}

	// Region and endpoint come from the profile when nothing else sets them.
	t.Setenv("AWS_PROFILE", "dev")
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	s, err := NewDriver(t.Context(), "bkt", "", Options{SkipBucketCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Region() != "ap-south-1" || s.Endpoint() != "https://s3.ap-south-1.amazonaws.com" || s.PathStyle() {
		t.Errorf("region %q, endpoint %q, path style %v", s.Region(), s.Endpoint(), s.PathStyle())
	}
	t.Setenv("AWS_REGION", "us-west-1")
	t.Setenv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:1")
	s, err = NewDriver(t.Context(), "my.bucket", "", Options{SkipBucketCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Region() != "us-west-1" || s.Endpoint() != "http://127.0.0.1:1" || !s.PathStyle() {
		t.Errorf("region %q, endpoint %q, path style %v", s.Region(), s.Endpoint(), s.PathStyle())
	}
	// Virtual-hosted where the bucket can be a host label.
	t.Setenv("AWS_ENDPOINT_URL_S3", "http://s3.example.test")
	s, err = NewDriver(t.Context(), "my.bucket", "", Options{SkipBucketCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if u := s.url(&request{method: "GET", key: "a b/c"}); s.PathStyle() || u.String() != "http://my.bucket.s3.example.test/a%20b/c" {
		t.Errorf("virtual-hosted URL = %s", u)
	}
}

// fakeSTS plays STS on loopback: it answers AssumeRole (which must be
// signed) and AssumeRoleWithWebIdentity (which must not be) with
// credentials that expire at exp, and records the forms it got.
type fakeSTS struct {
	*httptest.Server
	calls atomic.Int64
	forms chan map[string]string
	exp   time.Time
}

func newFakeSTS(t *testing.T, exp time.Time) *fakeSTS {
	f := &fakeSTS{forms: make(chan map[string]string, 16), exp: exp}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.calls.Add(1)
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		form := map[string]string{"Authorization": r.Header.Get("Authorization"), "X-Amz-Security-Token": r.Header.Get("X-Amz-Security-Token")}
		for k := range r.PostForm {
			form[k] = r.PostForm.Get(k)
		}
		f.forms <- form
		action := r.PostForm.Get("Action")
		if signed := form["Authorization"] != ""; signed != (action == "AssumeRole") {
			w.WriteHeader(403)
			fmt.Fprintf(w, `<ErrorResponse><Error><Code>InvalidAction</Code><Message>signed %v for %s</Message></Error></ErrorResponse>`, signed, action)
			return
		}
		fmt.Fprintf(w, `<%sResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><%sResult><Credentials>
<AccessKeyId>ROLEKEY-%d</AccessKeyId><SecretAccessKey>ROLESECRET</SecretAccessKey><SessionToken>ROLETOKEN</SessionToken>
<Expiration>%s</Expiration></Credentials></%sResult></%sResponse>`, action, action, f.calls.Load(), f.exp.UTC().Format(time.RFC3339), action, action)
	}))
	t.Cleanup(f.Close)
	return f
}

func TestCredentialsAssumeRole(t *testing.T) {
	home := isolate(t)
	sts := newFakeSTS(t, time.Now().Add(time.Hour))
	t.Setenv("AWS_ENDPOINT_URL_STS", sts.URL)
	writeFile(t, home+"/.aws/config", `[profile base]
aws_access_key_id = BASEKEY
aws_secret_access_key = BASESECRET
[profile mid]
role_arn = arn:aws:iam::1:role/mid
source_profile = base
region = eu-west-1
[profile top]
role_arn = arn:aws:iam::2:role/top
source_profile = mid
external_id = ext-1
role_session_name = sess
duration_seconds = 900
`)
	t.Setenv("AWS_PROFILE", "top")
	got, cache, err := chain(t, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Two hops: base's keys assume mid, whose credentials assume top.
	first, second := <-sts.forms, <-sts.forms
	if first["RoleArn"] != "arn:aws:iam::1:role/mid" || !strings.Contains(first["Authorization"], "Credential=BASEKEY/") ||
		!strings.Contains(first["Authorization"], "/eu-west-1/sts/aws4_request") || first["X-Amz-Security-Token"] != "" {
		t.Errorf("first AssumeRole: %v", first)
	}
	if second["RoleArn"] != "arn:aws:iam::2:role/top" || !strings.Contains(second["Authorization"], "Credential=ROLEKEY-1/") ||
		second["X-Amz-Security-Token"] != "ROLETOKEN" || second["ExternalId"] != "ext-1" ||
		second["RoleSessionName"] != "sess" || second["DurationSeconds"] != "900" || second["Version"] != "2011-06-15" {
		t.Errorf("second AssumeRole: %v", second)
	}
	if got.AccessKey != "ROLEKEY-2" || got.SecretKey != "ROLESECRET" || got.SessionToken != "ROLETOKEN" {
		t.Errorf("credentials = %+v", got)
	}
	// Cached: an hour left is no reason to ask again.
	if _, err := cache.get(t.Context()); err != nil || sts.calls.Load() != 2 {
		t.Errorf("second get: %v, %d STS calls, want 2", err, sts.calls.Load())
	}
}

func TestCredentialsWebIdentity(t *testing.T) {
	home := isolate(t)
	// Credentials that have already expired are fetched again each time.
	sts := newFakeSTS(t, time.Now().Add(-time.Minute))
	t.Setenv("AWS_ENDPOINT_URL_STS", sts.URL)
	token := filepath.Join(home, "token")
	writeFile(t, token, "eyJ.web.token\n")
	t.Setenv("AWS_WEB_IDENTITY_TOKEN_FILE", token)
	t.Setenv("AWS_ROLE_ARN", "arn:aws:iam::3:role/pod")
	t.Setenv("AWS_ROLE_SESSION_NAME", "pod-1")
	got, cache, err := chain(t, Options{})
	if err != nil {
		t.Fatal(err)
	}
	form := <-sts.forms
	if form["Action"] != "AssumeRoleWithWebIdentity" || form["WebIdentityToken"] != "eyJ.web.token" ||
		form["RoleArn"] != "arn:aws:iam::3:role/pod" || form["RoleSessionName"] != "pod-1" || form["Authorization"] != "" {
		t.Errorf("AssumeRoleWithWebIdentity: %v", form)
	}
	if got.AccessKey != "ROLEKEY-1" || got.SessionToken != "ROLETOKEN" {
		t.Errorf("credentials = %+v", got)
	}
	if got, err := cache.get(t.Context()); err != nil || got.AccessKey != "ROLEKEY-2" {
		t.Errorf("expired credentials were not fetched again: %+v, %v", got, err)
	}
	<-sts.forms

	// The role without the token file is an error at resolution; a
	// refusal of STS does not show the token.
	t.Setenv("AWS_ROLE_ARN", "")
	if _, _, err := chain(t, Options{}); !errors.Is(err, logstore.ErrPermission) {
		t.Errorf("token file without role: %v", err)
	}
	t.Setenv("AWS_ROLE_ARN", "arn:aws:iam::3:role/pod")
	t.Setenv("AWS_ENDPOINT_URL_STS", "")
	t.Setenv("AWS_ENDPOINT_URL", sts.URL+"/nope") // AWS_ENDPOINT_URL reaches STS too
	sts.exp = time.Now().Add(time.Hour)
	if _, _, err := chain(t, Options{}); err != nil {
		t.Errorf("STS through AWS_ENDPOINT_URL: %v", err)
	}
}

func TestCredentialsContainer(t *testing.T) {
	home := isolate(t)
	var auth atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth.Store(r.Header.Get("Authorization"))
		if r.Header.Get("Authorization") != "secret-token" {
			w.WriteHeader(401)
			w.Write([]byte(`{"code":"Unauthorized","message":"bad token"}`))
			return
		}
		json.NewEncoder(w).Encode(map[string]string{
			"AccessKeyId": "ECSKEY", "SecretAccessKey": "ECSSECRET", "Token": "ECSTOKEN",
			"Expiration": time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
		})
	}))
	defer srv.Close()
	tokenFile := filepath.Join(home, "eks-token")
	writeFile(t, tokenFile, "secret-token")
	t.Setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", srv.URL+"/v2/credentials/x")
	t.Setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", tokenFile)
	got, _, err := chain(t, Options{})
	if err != nil || got.AccessKey != "ECSKEY" || got.SecretKey != "ECSSECRET" || got.SessionToken != "ECSTOKEN" || got.Expires.IsZero() {
		t.Fatalf("container credentials = %+v, %v", got, err)
	}
	// The token file is read on each fetch; a wrong token is refused,
	// and the refusal does not show the token.
	writeFile(t, tokenFile, "wrong-token")
	_, _, err = chain(t, Options{})
	if !errors.Is(err, logstore.ErrPermission) || strings.Contains(err.Error(), "wrong-token") || auth.Load() != "wrong-token" {
		t.Errorf("wrong token: %v", err)
	}
	// Plain http to a host that is not loopback nor ECS/EKS is refused
	// before anything is sent.
	t.Setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://192.0.2.1/creds")
	if _, _, err := chain(t, Options{}); err == nil || !strings.Contains(err.Error(), "https") {
		t.Errorf("http to a remote host: %v", err)
	}
}

func TestCredentialsIMDS(t *testing.T) {
	isolate(t)
	var tokens atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPut && r.URL.Path == "/latest/api/token":
			if r.Header.Get("X-Aws-Ec2-Metadata-Token-Ttl-Seconds") == "" {
				w.WriteHeader(400)
				return
			}
			tokens.Add(1)
			w.Write([]byte("imds-session"))
		case r.Header.Get("X-Aws-Ec2-Metadata-Token") != "imds-session":
			w.WriteHeader(401) // IMDSv2 only
		case r.URL.Path == imdsCredsPath:
			w.Write([]byte("web-role\n"))
		case r.URL.Path == imdsCredsPath+"web-role":
			fmt.Fprintf(w, `{"Code":"Success","Type":"AWS-HMAC","AccessKeyId":"EC2KEY","SecretAccessKey":"EC2SECRET","Token":"EC2TOKEN","Expiration":"%s"}`,
				time.Now().Add(6*time.Hour).UTC().Format(time.RFC3339))
		default:
			w.WriteHeader(404)
		}
	}))
	defer srv.Close()
	t.Setenv("AWS_EC2_METADATA_DISABLED", "false")
	t.Setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", srv.URL)
	got, cache, err := chain(t, Options{})
	if err != nil || got.AccessKey != "EC2KEY" || got.SessionToken != "EC2TOKEN" {
		t.Fatalf("IMDS credentials = %+v, %v", got, err)
	}
	if _, err := cache.get(t.Context()); err != nil || tokens.Load() != 1 {
		t.Errorf("cached get: %v, %d session tokens asked for", err, tokens.Load())
	}

	// With IMDS off and nothing else, there are no credentials; the
	// store is still made, and its first request fails with
	// ErrPermission, sending nothing.
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	_, _, err = chain(t, Options{})
	if !errors.Is(err, ErrNoCredentials) || !errors.Is(err, logstore.ErrPermission) {
		t.Errorf("no credentials: %v", err)
	}
	s, err := NewDriver(context.Background(), "bkt", "", Options{Endpoint: srv.URL, PathStyle: true})
	if !errors.Is(err, ErrNoCredentials) || !errors.Is(err, logstore.ErrPermission) || errors.Is(err, logstore.ErrOutcomeUnknown) {
		t.Errorf("New without credentials = %v", err)
	}
	if s != nil {
		t.Errorf("New without credentials returned a store")
	}
}

// seqProvider answers with its answers in turn, and counts the calls.
type seqProvider struct {
	answers []func() (Credentials, error)
	calls   int
}

func (s *seqProvider) source() string { return "a test" }

func (s *seqProvider) retrieve(context.Context) (Credentials, error) {
	a := s.answers[min(s.calls, len(s.answers)-1)]
	s.calls++
	return a()
}

// TestCredentialsRefresh checks the cache's rules: fetch again before
// the expiry, keep valid credentials when a refresh fails (and do not
// retry on every request), fail once they have expired.
func TestCredentialsRefresh(t *testing.T) {
	soon := time.Now().Add(2 * time.Minute) // inside the refresh window
	valid := func() (Credentials, error) { return Credentials{AccessKey: "A", SecretKey: "S", Expires: soon}, nil }
	broken := func() (Credentials, error) { return Credentials{}, errors.New("endpoint down") }
	p := &seqProvider{answers: []func() (Credentials, error){valid, broken}}
	c := &credCache{provider: p}
	// Two minutes left: due for refresh after one.
	if got, err := c.get(t.Context()); err != nil || got.AccessKey != "A" || p.calls != 1 {
		t.Fatalf("first get = %+v, %v, %d calls", got, err, p.calls)
	}
	c.refreshAt = time.Now().Add(-time.Second) // as a minute later
	if got, err := c.get(t.Context()); err != nil || got.AccessKey != "A" || p.calls != 2 {
		t.Fatalf("get with a failed refresh = %+v, %v, %d calls; want the held credentials", got, err, p.calls)
	}
	if _, err := c.get(t.Context()); err != nil || p.calls != 2 {
		t.Errorf("the failed refresh was retried at once: %d calls, %v", p.calls, err)
	}
	// Expired and the source still down: an error matching ErrPermission.
	c.cur.Expires = time.Now().Add(-time.Second)
	c.refreshAt = c.cur.Expires
	if _, err := c.get(t.Context()); !errors.Is(err, logstore.ErrPermission) || !strings.Contains(err.Error(), "endpoint down") {
		t.Errorf("get of expired credentials with the source down = %v", err)
	}
	// An answer without a secret is no credentials.
	c = &credCache{provider: &seqProvider{answers: []func() (Credentials, error){func() (Credentials, error) { return Credentials{AccessKey: "A"}, nil }}}}
	if _, err := c.get(t.Context()); !errors.Is(err, logstore.ErrPermission) {
		t.Errorf("credentials without a secret = %v", err)
	}
}

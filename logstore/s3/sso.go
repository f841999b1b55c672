package s3

// IAM Identity Center (SSO) credentials: the sign-in that "aws sso login"
// leaves in ~/.aws/sso/cache, traded for a role's credentials at the
// portal, as the AWS SDKs' SSO credential provider does.
//
// A profile signs in one of two ways. With sso_session it names an
// [sso-session NAME] section of the config file, which holds sso_start_url
// and sso_region; the token is cached under sha1(NAME), and carries a
// refresh token and the OIDC client that obtained it, so an expired token
// is refreshed (SSO OIDC CreateToken, grant refresh_token) and the cache
// file rewritten. In the legacy form the profile itself holds
// sso_start_url and sso_region; the token is cached under
// sha1(start URL) and cannot be refreshed. Either way the profile holds
// sso_account_id and sso_role_name, and GetRoleCredentials of the portal
// gives that role's temporary credentials for the token. The token is read
// again on each fetch of credentials (the CLI may have signed in again
// meanwhile); the credentials are cached by credCache like any others.
//
// Invariants: the token, the refresh token and the client secret never
// appear in an error; the cache file is read with a bound and rewritten
// atomically (a temporary file in the same directory, mode 0600, renamed
// over it), so a reader, this process or the CLI, sees the old file or
// the new one, never a part.

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/godelta/delta/logstore/internal/restio"
)

// Why a cached IAM Identity Center sign-in cannot be used: the Reason of
// an *SSOLoginError.
var (
	// ErrSSOTokenMissing: no cache file (never signed in, or signed out).
	ErrSSOTokenMissing = errors.New("no cached IAM Identity Center sign-in")
	// ErrSSOTokenCorrupt: the cache file is not the JSON of a token.
	ErrSSOTokenCorrupt = errors.New("the cached IAM Identity Center sign-in is not a token")
	// ErrSSOTokenExpired: the token has expired and could not be
	// refreshed, or the portal refused it (HTTP 401).
	ErrSSOTokenExpired = errors.New("the IAM Identity Center sign-in has expired")
)

// SSOLoginError is a cached IAM Identity Center sign-in that cannot be
// used; signing in again (its message says how) is the remedy. It is
// wrapped in a *CredentialsError, so it matches logstore.ErrPermission,
// and errors.Is matches its Reason (ErrSSOTokenMissing,
// ErrSSOTokenCorrupt or ErrSSOTokenExpired).
type SSOLoginError struct {
	Profile string // the profile with the sso_* settings
	Session string // its sso_session, "" for the legacy form
	File    string // the token's cache file
	Reason  error
	Detail  string // what went wrong in particular, or ""
}

func (e *SSOLoginError) Error() string {
	msg := e.Reason.Error()
	if e.Detail != "" {
		msg += " (" + e.Detail + ")"
	}
	msg += " in " + e.File + `; run "aws sso login --profile ` + e.Profile + `"`
	if e.Session != "" {
		msg += ` (or "aws sso login --sso-session ` + e.Session + `")`
	}
	return msg
}

func (e *SSOLoginError) Unwrap() error { return e.Reason }

const (
	maxSSOToken     = 64 << 10 // a token cache file
	ssoRetries      = 3        // attempts of a portal or OIDC call on 5xx, 429 or a transport error
	ssoTokenFileDir = ".aws/sso/cache"
)

// ssoConfig is a profile's resolved IAM Identity Center settings.
type ssoConfig struct {
	profile             string
	session             string // "" for the legacy form
	startURL, region    string
	accountID, roleName string
}

// ssoSettings resolves the profile's sso_* settings (usesSSO is true),
// checking that they are complete and agree with its sso-session.
func (p *profile) ssoSettings() (*ssoConfig, error) {
	c := &ssoConfig{profile: p.name, session: p.get("sso_session"), accountID: p.get("sso_account_id"), roleName: p.get("sso_role_name")}
	fail := func(format string, args ...any) error {
		return &CredentialsError{Source: "profile " + p.name, Err: fmt.Errorf("IAM Identity Center: "+format, args...)}
	}
	if c.session != "" {
		s, ok := p.files.sessions[c.session]
		if !ok {
			return nil, fail("sso_session %q names no [sso-session %s] section in the config file", c.session, c.session)
		}
		c.startURL, c.region = s["sso_start_url"], s["sso_region"]
		if c.startURL == "" || c.region == "" {
			return nil, fail("[sso-session %s] needs sso_start_url and sso_region", c.session)
		}
		// The profile may repeat them, as older CLIs wrote, but not
		// contradict them.
		if v := p.get("sso_start_url"); v != "" && v != c.startURL {
			return nil, fail("sso_start_url %q differs from that of [sso-session %s]", v, c.session)
		}
		if v := p.get("sso_region"); v != "" && v != c.region {
			return nil, fail("sso_region %q differs from that of [sso-session %s]", v, c.session)
		}
	} else {
		c.startURL, c.region = p.get("sso_start_url"), p.get("sso_region")
		if c.startURL == "" || c.region == "" {
			return nil, fail("without sso_session, the profile needs sso_start_url and sso_region")
		}
	}
	if c.accountID == "" || c.roleName == "" {
		return nil, fail("sso_account_id and sso_role_name are needed for credentials")
	}
	if !validRegion(c.region) {
		return nil, fail("sso_region %q is not a region name", c.region)
	}
	return c, nil
}

// validRegion reports whether s can be a region in a host name.
func validRegion(s string) bool {
	if s == "" || len(s) > 63 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// cacheKey is what the token's cache file is named after.
func (c *ssoConfig) cacheKey() string {
	if c.session != "" {
		return c.session
	}
	return c.startURL
}

// ssoCacheFile is the token's cache file under home.
func ssoCacheFile(home, key string) string {
	sum := sha1.Sum([]byte(key))
	return filepath.Join(home, ssoTokenFileDir, hex.EncodeToString(sum[:])+".json")
}

// ssoProvider trades the cached token for the role's credentials.
type ssoProvider struct {
	r    *resolver
	cfg  *ssoConfig
	file string
}

func (r *resolver) sso(cfg *ssoConfig) provider {
	return &ssoProvider{r: r, cfg: cfg, file: ssoCacheFile(r.env.home, cfg.cacheKey())}
}

func (s *ssoProvider) source() string { return "profile " + s.cfg.profile + " (IAM Identity Center)" }

func (s *ssoProvider) loginError(reason error, detail string) error {
	return &SSOLoginError{Profile: s.cfg.profile, Session: s.cfg.session, File: s.file, Reason: reason, Detail: detail}
}

// ssoToken is a token cache file: the fields used here, and all of them
// (raw) so that a rewrite keeps those it does not know.
type ssoToken struct {
	AccessToken           string `json:"accessToken"`
	ExpiresAt             string `json:"expiresAt"`
	RefreshToken          string `json:"refreshToken"`
	ClientID              string `json:"clientId"`
	ClientSecret          string `json:"clientSecret"`
	RegistrationExpiresAt string `json:"registrationExpiresAt"`

	expires time.Time
	raw     map[string]json.RawMessage
}

// readToken reads and checks the token cache file.
func (s *ssoProvider) readToken() (*ssoToken, error) {
	if s.r.env.home == "" {
		return nil, s.loginError(ErrSSOTokenMissing, "no home directory")
	}
	f, err := os.Open(s.file)
	if errors.Is(err, os.ErrNotExist) {
		return nil, s.loginError(ErrSSOTokenMissing, "")
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := readBounded(f, maxSSOToken)
	if errors.Is(err, errTooLarge) {
		return nil, s.loginError(ErrSSOTokenCorrupt, fmt.Sprintf("larger than %d KiB", maxSSOToken>>10))
	}
	if err != nil {
		return nil, err
	}
	t := &ssoToken{}
	if json.Unmarshal(b, &t.raw) != nil || json.Unmarshal(b, t) != nil {
		return nil, s.loginError(ErrSSOTokenCorrupt, "not a JSON object of the expected fields")
	}
	if t.AccessToken == "" {
		return nil, s.loginError(ErrSSOTokenCorrupt, "no accessToken")
	}
	if t.expires, err = time.Parse(time.RFC3339, t.ExpiresAt); err != nil {
		return nil, s.loginError(ErrSSOTokenCorrupt, fmt.Sprintf("expiresAt %q is not an RFC 3339 time", restio.Clip(t.ExpiresAt, 64)))
	}
	return t, nil
}

// token returns a token that has not expired, refreshing an expired one
// of an sso-session.
func (s *ssoProvider) token(ctx context.Context) (string, error) {
	t, err := s.readToken()
	if err != nil {
		return "", err
	}
	now := time.Now()
	if now.Before(t.expires) {
		return t.AccessToken, nil
	}
	if s.cfg.session == "" {
		return "", s.loginError(ErrSSOTokenExpired, "at "+t.ExpiresAt)
	}
	if t.RefreshToken == "" || t.ClientID == "" || t.ClientSecret == "" {
		return "", s.loginError(ErrSSOTokenExpired, "at "+t.ExpiresAt+", with no refresh token")
	}
	if t.RegistrationExpiresAt != "" {
		if reg, err := time.Parse(time.RFC3339, t.RegistrationExpiresAt); err == nil && !now.Before(reg) {
			return "", s.loginError(ErrSSOTokenExpired, "at "+t.ExpiresAt+", and the client registration at "+t.RegistrationExpiresAt)
		}
	}
	if err := s.refresh(ctx, t); err != nil {
		// Another process (or store) may have refreshed it first, using
		// up the refresh token: take its token if it did.
		if again, rerr := s.readToken(); rerr == nil && again.AccessToken != t.AccessToken && time.Now().Before(again.expires) {
			return again.AccessToken, nil
		}
		return "", err
	}
	return t.AccessToken, nil
}

// ssoEndpoint is where a service of IAM Identity Center is reached:
// AWS_ENDPOINT_URL_<ID>, else AWS_ENDPOINT_URL, as for STS, else host
// in the session's region.
func (s *ssoProvider) endpoint(envID, host string) string {
	ep := firstOf(s.r.env.get("AWS_ENDPOINT_URL_"+envID), s.r.env.get("AWS_ENDPOINT_URL"), "https://"+host+"."+s.cfg.region+".amazonaws.com")
	return strings.TrimSuffix(ep, "/")
}

// refresh trades the refresh token for a new token (SSO OIDC CreateToken)
// and rewrites the cache file. A refusal is ErrSSOTokenExpired.
func (s *ssoProvider) refresh(ctx context.Context, t *ssoToken) error {
	body, _ := json.Marshal(map[string]string{
		"clientId": t.ClientID, "clientSecret": t.ClientSecret,
		"grantType": "refresh_token", "refreshToken": t.RefreshToken,
	})
	b, status, err := s.call(ctx, func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.endpoint("SSO_OIDC", "oidc")+"/token", bytes.NewReader(body))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
		}
		return req, err
	})
	if err != nil {
		return fmt.Errorf("refreshing the IAM Identity Center token (SSO OIDC CreateToken): %w", err)
	}
	if status != http.StatusOK {
		var e struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		_ = json.Unmarshal(b, &e)
		detail := fmt.Sprintf("at %s; refreshing it failed: HTTP %d %s %s", t.ExpiresAt, status, restio.Clip(e.Error, 128), restio.Clip(e.Description, 512))
		if status >= 400 && status < 500 {
			return s.loginError(ErrSSOTokenExpired, strings.TrimSpace(detail))
		}
		return errors.New("IAM Identity Center: " + strings.TrimSpace(detail))
	}
	var out struct {
		AccessToken  string `json:"accessToken"`
		ExpiresIn    int64  `json:"expiresIn"`
		RefreshToken string `json:"refreshToken"`
	}
	if json.Unmarshal(b, &out) != nil || out.AccessToken == "" || out.ExpiresIn <= 0 {
		return errors.New("IAM Identity Center: the SSO OIDC CreateToken answer is not the JSON expected")
	}
	t.AccessToken = out.AccessToken
	t.expires = time.Now().Add(time.Duration(out.ExpiresIn) * time.Second).UTC()
	t.ExpiresAt = t.expires.Format(time.RFC3339)
	if out.RefreshToken != "" {
		t.RefreshToken = out.RefreshToken
	}
	for k, v := range map[string]string{"accessToken": t.AccessToken, "expiresAt": t.ExpiresAt, "refreshToken": t.RefreshToken} {
		t.raw[k], _ = json.Marshal(v)
	}
	data, err := json.MarshalIndent(t.raw, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(s.file, data); err != nil {
		return fmt.Errorf("IAM Identity Center: saving the refreshed token: %w", err)
	}
	return nil
}

// writeFileAtomic replaces path with data, mode 0600: a temporary file in
// the same directory, synced, then renamed over it.
func writeFileAtomic(path string, data []byte) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), ".godelta-sso-*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = f.Chmod(0o600); err != nil {
		return err
	}
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// call sends the request newReq makes, up to ssoRetries times while the
// answer is a 5xx or 429 or the transport fails, and returns the last
// answer's bounded body and status.
func (s *ssoProvider) call(ctx context.Context, newReq func(context.Context) (*http.Request, error)) ([]byte, int, error) {
	ctx, cancel := context.WithTimeout(ctx, stsTimeout)
	defer cancel()
	for attempt := 0; ; attempt++ {
		req, err := newReq(ctx)
		if err != nil {
			return nil, 0, errors.New("the endpoint is not a URL")
		}
		var (
			b      []byte
			status int
		)
		resp, err := s.r.client.Do(req)
		if err == nil {
			b, err = readBounded(resp.Body, maxCredAnswer)
			resp.Body.Close()
			status = resp.StatusCode
		}
		again := err != nil || status >= 500 || status == http.StatusTooManyRequests
		if !again || attempt+1 >= ssoRetries || ctx.Err() != nil {
			return b, status, err
		}
		if werr := restio.Wait(ctx, backoff(attempt)); werr != nil {
			return b, status, err
		}
	}
}

func (s *ssoProvider) retrieve(ctx context.Context) (Credentials, error) {
	token, err := s.token(ctx)
	if err != nil {
		return Credentials{}, err
	}
	q := url.Values{"account_id": {s.cfg.accountID}, "role_name": {s.cfg.roleName}}
	b, status, err := s.call(ctx, func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.endpoint("SSO", "portal.sso")+"/federation/credentials?"+q.Encode(), nil)
		if err == nil {
			req.Header.Set("x-amz-sso_bearer_token", token)
			req.Header.Set("Accept", "application/json")
		}
		return req, err
	})
	if err != nil {
		return Credentials{}, fmt.Errorf("IAM Identity Center GetRoleCredentials: %w", err)
	}
	if status != http.StatusOK {
		var e struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(b, &e)
		detail := fmt.Sprintf("HTTP %d: %s", status, restio.Clip(e.Message, 512))
		if status == http.StatusUnauthorized {
			return Credentials{}, s.loginError(ErrSSOTokenExpired, "GetRoleCredentials refused it: "+detail)
		}
		return Credentials{}, fmt.Errorf("IAM Identity Center GetRoleCredentials of role %s in account %s: %s", restio.Clip(s.cfg.roleName, 128), restio.Clip(s.cfg.accountID, 32), detail)
	}
	var out struct {
		RoleCredentials struct {
			AccessKeyID     string `json:"accessKeyId"`
			SecretAccessKey string `json:"secretAccessKey"`
			SessionToken    string `json:"sessionToken"`
			Expiration      int64  `json:"expiration"`
		} `json:"roleCredentials"`
	}
	if err := json.Unmarshal(b, &out); err != nil || out.RoleCredentials.Expiration <= 0 {
		return Credentials{}, errors.New("IAM Identity Center GetRoleCredentials: the answer is not the JSON expected")
	}
	rc := out.RoleCredentials
	return Credentials{AccessKey: rc.AccessKeyID, SecretKey: rc.SecretAccessKey, SessionToken: rc.SessionToken, Expires: time.UnixMilli(rc.Expiration)}, nil
}

package azblob

// Microsoft Entra ID tokens: the TokenSource interface, the cache of a
// store's token, and the default chain (see the package doc for its order
// and what it leaves out).
//
// Invariants: DefaultCredential reads only the environment, never the
// network; the sources that fetch (the token endpoint, the managed
// identity endpoints, the Azure CLI) are called by tokenCache only, one at
// a time; no secret (a client secret, a federated token, an IDENTITY_HEADER
// or an access token) is ever put into an error, and every answer is read
// with a bound.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/internal/restio"
)

// StorageScope is the OAuth 2 scope of Azure Storage tokens; its resource
// (for managed identity and the Azure CLI) is the scope without
// "/.default".
const StorageScope = "https://storage.azure.com/.default"

const storageResource = "https://storage.azure.com"

// TokenSource gives Microsoft Entra ID access tokens for Azure Storage
// (scope StorageScope) and when each expires. A Store caches the token
// and asks again five minutes before it expires; Token may be called from
// several goroutines, though a Store calls it from one at a time.
type TokenSource interface {
	Token(ctx context.Context) (token string, expires time.Time, err error)
}

// CredentialsError is a failure to find or fetch a token: nothing was
// sent to the blob service. It matches logstore.ErrPermission.
type CredentialsError struct {
	Source string // "environment", "workload identity", "managed identity", "Azure CLI", ...
	Err    error
}

func (e *CredentialsError) Error() string {
	return "logstore/azblob: Microsoft Entra ID token from " + e.Source + ": " + e.Err.Error()
}

func (e *CredentialsError) Unwrap() error { return e.Err }

// Is makes a CredentialsError match logstore.ErrPermission.
func (e *CredentialsError) Is(target error) bool { return target == logstore.ErrPermission }

// ErrNoCredential is the error (in a *CredentialsError) when no source of
// the default chain is available.
var ErrNoCredential = errors.New("no Microsoft Entra ID credential found (tried the environment's client secret or certificate, workload identity, managed identity and the Azure CLI)")

// errUnavailable marks a source of the chain that is not there (no
// variables, no IMDS, no az): the chain goes on to the next. Any other
// error of a source ends the walk, as in the Azure SDK's chain.
var errUnavailable = errors.New("unavailable")

const (
	refreshWindow = 5 * time.Minute  // a token is fetched again this long before it expires
	retryRefresh  = 30 * time.Second // after a failed refresh, while the token held is valid
	maxTokenBody  = 64 << 10         // a token endpoint's answer
	maxTokenFile  = 64 << 10         // a federated token file
	tokenTimeout  = 30 * time.Second // a token request
	imdsProbe     = time.Second      // IMDS's first request in the chain: off Azure nothing answers
	cliTimeout    = 10 * time.Second // az account get-access-token, as the SDK allows it
)

// tokenCache holds the token of a source for one store and fetches it
// again before it expires.
type tokenCache struct {
	src       TokenSource
	mu        sync.Mutex
	token     string
	expires   time.Time
	refreshAt time.Time
}

// get returns the cached token, fetching one first if there is none or it
// is due for refresh. A failed refresh returns the cached one while it has
// not expired.
func (c *tokenCache) get(ctx context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if c.token != "" && now.Before(c.refreshAt) {
		return c.token, nil
	}
	tok, exp, err := c.src.Token(ctx)
	if err == nil && tok == "" {
		err = errors.New("the source gave an empty token")
	}
	if err != nil {
		if c.token != "" && now.Before(c.expires) {
			c.refreshAt = now.Add(min(retryRefresh, c.expires.Sub(now)/2))
			return c.token, nil
		}
		var ce *CredentialsError
		if errors.As(err, &ce) {
			return "", err
		}
		return "", &CredentialsError{Source: "the token source", Err: err}
	}
	if exp.IsZero() {
		exp = now.Add(time.Hour)
	}
	c.token, c.expires = tok, exp
	// Five minutes early, or halfway for tokens that live less than ten
	// minutes.
	c.refreshAt = exp.Add(-min(refreshWindow, exp.Sub(now)/2))
	return tok, nil
}

// source is one link of the default chain.
type source interface {
	name() string
	fetch(ctx context.Context, hc *http.Client) (string, time.Time, error)
}

// chain is DefaultCredential's TokenSource: the first source that is
// available gives the tokens from then on.
type chain struct {
	hc      *http.Client
	sources []source
	mu      sync.Mutex
	chosen  source
}

// DefaultCredential returns the default chain of Microsoft Entra ID
// credentials, in the order of the Azure SDK's DefaultAzureCredential (see
// the package doc), reading the environment now and the network only when
// a token is asked for, through hc (nil: a client of its own).
func DefaultCredential(hc *http.Client) TokenSource {
	return defaultChain(os.Getenv, hc)
}

func defaultChain(getenv func(string) string, hc *http.Client) *chain {
	if hc == nil {
		hc = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	tenant, client := getenv("AZURE_TENANT_ID"), getenv("AZURE_CLIENT_ID")
	authority := strings.TrimSuffix(firstOf(getenv("AZURE_AUTHORITY_HOST"), "https://login.microsoftonline.com"), "/")
	c := &chain{hc: hc}
	secret, cert := getenv("AZURE_CLIENT_SECRET"), getenv("AZURE_CLIENT_CERTIFICATE_PATH")
	switch {
	case tenant == "" || client == "":
	case secret != "":
		c.sources = append(c.sources, &clientCredentials{from: "the environment (AZURE_CLIENT_SECRET)", authority: authority,
			tenant: tenant, form: url.Values{"client_id": {client}, "client_secret": {secret}}})
	case cert != "":
		c.sources = append(c.sources, &clientCredentials{from: "the environment (AZURE_CLIENT_CERTIFICATE_PATH)", authority: authority,
			tenant: tenant, form: url.Values{"client_id": {client}}, certFile: cert,
			sendChain: strings.EqualFold(getenv("AZURE_CLIENT_SEND_CERTIFICATE_CHAIN"), "true") || getenv("AZURE_CLIENT_SEND_CERTIFICATE_CHAIN") == "1"})
	}
	if file := getenv("AZURE_FEDERATED_TOKEN_FILE"); tenant != "" && client != "" && file != "" {
		c.sources = append(c.sources, &clientCredentials{from: "workload identity (AZURE_FEDERATED_TOKEN_FILE)", authority: authority,
			tenant: tenant, form: url.Values{"client_id": {client}}, assertionFile: file})
	}
	mi := &managedIdentity{clientID: client}
	if ep, hdr := getenv("IDENTITY_ENDPOINT"), getenv("IDENTITY_HEADER"); ep != "" && hdr != "" {
		mi.appService, mi.endpoint, mi.header = true, ep, hdr
	} else {
		host := strings.TrimSuffix(firstOf(getenv("AZURE_POD_IDENTITY_AUTHORITY_HOST"), "http://169.254.169.254"), "/")
		mi.endpoint, mi.probe = host+"/metadata/identity/oauth2/token", true
	}
	c.sources = append(c.sources, mi)
	c.sources = append(c.sources, &azureCLI{tenant: tenant, path: getenv("PATH")})
	return c
}

func firstOf(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// Token implements TokenSource: the chosen source's token, or, until one
// answers, each source in turn.
func (c *chain) Token(ctx context.Context) (string, time.Time, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.chosen != nil {
		tok, exp, err := c.chosen.fetch(ctx, c.hc)
		if err != nil {
			return "", time.Time{}, &CredentialsError{Source: c.chosen.name(), Err: err}
		}
		return tok, exp, nil
	}
	var skipped []string
	for _, s := range c.sources {
		tok, exp, err := s.fetch(ctx, c.hc)
		if err == nil {
			c.chosen = s
			return tok, exp, nil
		}
		if !errors.Is(err, errUnavailable) {
			return "", time.Time{}, &CredentialsError{Source: s.name(), Err: err}
		}
		skipped = append(skipped, s.name()+": "+err.Error())
	}
	return "", time.Time{}, &CredentialsError{Source: "the default chain", Err: fmt.Errorf("%w (%s)", ErrNoCredential, strings.Join(skipped, "; "))}
}

// clientCredentials is the OAuth 2 client-credentials grant at
// AUTHORITY/TENANT/oauth2/v2.0/token, with a client secret, a client
// assertion read from a file (workload identity), or one signed with a
// certificate's key (certassert.go).
type clientCredentials struct {
	from, authority, tenant string
	form                    url.Values // client_id, and client_secret
	assertionFile           string     // read again on every fetch: it is rotated
	certFile                string     // PEM certificate and key, read again on every fetch
	sendChain               bool       // the certificate chain goes in the assertion's x5c
}

func (c *clientCredentials) name() string { return c.from }

func (c *clientCredentials) fetch(ctx context.Context, hc *http.Client) (string, time.Time, error) {
	form := url.Values{"grant_type": {"client_credentials"}, "scope": {StorageScope}}
	for k, v := range c.form {
		form[k] = v
	}
	if c.assertionFile != "" {
		b, err := readFileBounded(c.assertionFile, maxTokenFile)
		if err != nil {
			return "", time.Time{}, fmt.Errorf("reading the federated token file: %w", err)
		}
		form.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
		form.Set("client_assertion", strings.TrimSpace(string(b)))
	}
	endpoint := c.authority + "/" + url.PathEscape(c.tenant) + "/oauth2/v2.0/token"
	if c.certFile != "" {
		assertion, err := certAssertion(c.certFile, c.form.Get("client_id"), endpoint, c.sendChain, time.Now())
		if err != nil {
			return "", time.Time{}, err
		}
		form.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
		form.Set("client_assertion", assertion)
	}
	ctx, cancel := context.WithTimeout(ctx, tokenTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return "", time.Time{}, errors.New("the authority host is not a URL")
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return tokenAnswer(hc, req)
}

// managedIdentity is the managed identity of the host: App Service's
// IDENTITY_ENDPOINT with IDENTITY_HEADER, else the instance metadata
// service (IMDS). clientID selects a user-assigned identity.
type managedIdentity struct {
	appService       bool
	endpoint, header string
	clientID         string
	// probe makes IMDS's first request short, and a lack of answer
	// "unavailable"; cleared once IMDS has answered.
	probe bool
}

func (m *managedIdentity) name() string {
	if m.appService {
		return "managed identity (IDENTITY_ENDPOINT)"
	}
	return "managed identity (IMDS)"
}

func (m *managedIdentity) fetch(ctx context.Context, hc *http.Client) (string, time.Time, error) {
	u, err := url.Parse(m.endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return "", time.Time{}, errors.New("the endpoint is not an http URL")
	}
	q := u.Query()
	q.Set("resource", storageResource)
	if m.appService {
		q.Set("api-version", "2019-08-01")
	} else {
		q.Set("api-version", "2018-02-01")
	}
	if m.clientID != "" {
		q.Set("client_id", m.clientID)
	}
	u.RawQuery = q.Encode()
	timeout := tokenTimeout
	if m.probe {
		timeout = imdsProbe
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", time.Time{}, err
	}
	if m.appService {
		req.Header.Set("X-IDENTITY-HEADER", m.header)
	} else {
		req.Header.Set("Metadata", "true")
	}
	tok, exp, err := tokenAnswer(hc, req)
	var te *tokenHTTPError
	switch {
	case err == nil:
		m.probe = false
	case m.probe && ctx.Err() == nil && !errors.As(err, &te):
		// Nothing answered in time, or something that is not IMDS did.
		return "", time.Time{}, fmt.Errorf("%w: no instance metadata service answered", errUnavailable)
	}
	return tok, exp, err
}

// azureCLI runs "az account get-access-token" for the storage resource.
type azureCLI struct {
	tenant string
	path   string // PATH at the time the chain was made
}

func (a *azureCLI) name() string { return "Azure CLI" }

func (a *azureCLI) fetch(ctx context.Context, _ *http.Client) (string, time.Time, error) {
	az := lookPath("az", a.path)
	if az == "" {
		return "", time.Time{}, fmt.Errorf("%w: az is not on PATH", errUnavailable)
	}
	args := []string{"account", "get-access-token", "-o", "json", "--resource", storageResource}
	if a.tenant != "" {
		args = append(args, "--tenant", a.tenant)
	}
	ctx, cancel := context.WithTimeout(ctx, cliTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, az, args...)
	var stdout, stderr limitedBuffer
	stdout.limit, stderr.limit = maxTokenBody, 4096
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if strings.Contains(msg, "az login") || strings.Contains(msg, "az account set") {
			// Installed but not logged in: the chain's end, as in the SDK.
			return "", time.Time{}, fmt.Errorf("%w: not logged in (az login)", errUnavailable)
		}
		return "", time.Time{}, fmt.Errorf("az account get-access-token: %v: %s", err, restio.Clip(redactToken(msg), 512))
	}
	var out struct {
		AccessToken string          `json:"accessToken"`
		ExpiresOnTS json.RawMessage `json:"expires_on"`
		ExpiresOn   string          `json:"expiresOn"`
	}
	if stdout.over || json.Unmarshal(stdout.Bytes(), &out) != nil || out.AccessToken == "" {
		return "", time.Time{}, errors.New("az account get-access-token gave no token in JSON")
	}
	exp := parseExpiry(out.ExpiresOnTS)
	if exp.IsZero() && out.ExpiresOn != "" {
		// Older versions: local time, "2006-01-02 15:04:05.999999".
		exp, _ = time.ParseInLocation("2006-01-02 15:04:05.999999", out.ExpiresOn, time.Local)
	}
	return out.AccessToken, exp, nil
}

// lookPath finds name in the directories of path, "" if it is not there.
func lookPath(name, path string) string {
	for dir := range strings.SplitSeq(path, string(os.PathListSeparator)) {
		if dir == "" {
			continue
		}
		p := dir + string(os.PathSeparator) + name
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// limitedBuffer keeps the first limit bytes written to it.
type limitedBuffer struct {
	bytes.Buffer
	limit int
	over  bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.limit - b.Len(); len(p) > room {
		b.over = true
		b.Buffer.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return b.Buffer.Write(p)
}

// tokenHTTPError is a token endpoint's refusal: its status and OAuth 2
// error code (never its description, which may quote the request).
type tokenHTTPError struct {
	status int
	code   string
}

func (e *tokenHTTPError) Error() string {
	if e.code != "" {
		return fmt.Sprintf("the token endpoint answered %d %s", e.status, e.code)
	}
	return fmt.Sprintf("the token endpoint answered %d", e.status)
}

// tokenAnswer sends req and reads a token answer: access_token, and
// expires_on (Unix seconds, as a number or a string) or expires_in
// (seconds, likewise).
func tokenAnswer(hc *http.Client, req *http.Request) (string, time.Time, error) {
	now := time.Now()
	resp, err := hc.Do(req)
	if err != nil {
		// The transport's error quotes the URL, whose query holds no
		// secret (the endpoints take secrets in the body or headers).
		return "", time.Time{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenBody+1))
	if err != nil {
		return "", time.Time{}, err
	}
	if len(b) > maxTokenBody {
		return "", time.Time{}, errors.New("the token endpoint's answer is too large")
	}
	var out struct {
		AccessToken string          `json:"access_token"`
		ExpiresOn   json.RawMessage `json:"expires_on"`
		ExpiresIn   json.RawMessage `json:"expires_in"`
		Error       string          `json:"error"`
	}
	jerr := json.Unmarshal(b, &out)
	if resp.StatusCode != http.StatusOK {
		code := ""
		if jerr == nil {
			code = restio.Clip(out.Error, 64)
		}
		return "", time.Time{}, &tokenHTTPError{status: resp.StatusCode, code: code}
	}
	if jerr != nil || out.AccessToken == "" {
		return "", time.Time{}, errors.New("the token endpoint's answer holds no access_token")
	}
	exp := parseExpiry(out.ExpiresOn)
	if exp.IsZero() {
		if secs := parseNumber(out.ExpiresIn); secs > 0 {
			exp = now.Add(time.Duration(secs) * time.Second)
		}
	}
	return out.AccessToken, exp, nil
}

// parseExpiry reads Unix seconds given as a JSON number or string; the
// zero time for anything else.
func parseExpiry(raw json.RawMessage) time.Time {
	if n := parseNumber(raw); n > 0 {
		return time.Unix(n, 0)
	}
	return time.Time{}
}

// parseNumber reads a positive integer given as a JSON number or string;
// 0 for anything else.
func parseNumber(raw json.RawMessage) int64 {
	s := strings.Trim(string(raw), `"`)
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > 1<<40 {
		return 0
	}
	return n
}

// readFileBounded reads at most limit bytes of the file at path.
func readFileBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, errors.New("the file is too large")
	}
	return b, nil
}

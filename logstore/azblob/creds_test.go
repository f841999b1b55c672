package azblob

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
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

// The default chain against loopback servers that speak the token
// endpoints' wire shapes: the Microsoft identity platform's OAuth 2 token
// endpoint (form POST, JSON answer with expires_in), App Service's
// IDENTITY_ENDPOINT and IMDS (GET with resource and api-version, JSON
// answer with expires_on or expires_in as strings), and a stand-in az
// program that prints what "az account get-access-token -o json" prints.

// closedURL is an http URL on which nothing listens.
const closedURL = "http://127.0.0.1:1"

// env returns a getenv over vars, with IMDS on a closed port and an empty
// PATH unless vars say otherwise.
func env(vars map[string]string) func(string) string {
	return func(name string) string {
		if v, ok := vars[name]; ok {
			return v
		}
		switch name {
		case "AZURE_POD_IDENTITY_AUTHORITY_HOST":
			return closedURL
		case "PATH":
			return ""
		}
		return ""
	}
}

// tokenServer answers every request with handle, counting them.
func tokenServer(t *testing.T, handle func(w http.ResponseWriter, r *http.Request)) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		handle(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func answerJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func TestChainClientSecret(t *testing.T) {
	srv, calls := tokenServer(t, func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		if r.Method != http.MethodPost || r.URL.Path != "/tenant-1/oauth2/v2.0/token" ||
			r.PostForm.Get("grant_type") != "client_credentials" || r.PostForm.Get("client_id") != "client-1" ||
			r.PostForm.Get("client_secret") != "secret-xyz" || r.PostForm.Get("scope") != "https://storage.azure.com/.default" {
			t.Errorf("token request %s %s %v", r.Method, r.URL.Path, r.PostForm)
			w.WriteHeader(400)
			return
		}
		answerJSON(w, map[string]any{"token_type": "Bearer", "expires_in": 3599, "ext_expires_in": 3599, "access_token": "tok-secret"})
	})
	c := defaultChain(env(map[string]string{
		"AZURE_TENANT_ID": "tenant-1", "AZURE_CLIENT_ID": "client-1", "AZURE_CLIENT_SECRET": "secret-xyz",
		"AZURE_AUTHORITY_HOST": srv.URL + "/",
	}), nil)
	for range 2 {
		tok, exp, err := c.Token(t.Context())
		if err != nil || tok != "tok-secret" || time.Until(exp) < 59*time.Minute || time.Until(exp) > time.Hour {
			t.Fatalf("Token = %q, %v, %v", tok, exp, err)
		}
	}
	if calls.Load() != 2 {
		t.Errorf("%d token requests, want 2 (the chain itself does not cache)", calls.Load())
	}
}

// A configured source that is refused ends the walk with its error,
// which names neither the secret nor the endpoint's description.
func TestChainRefusedSecret(t *testing.T) {
	srv, _ := tokenServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(401)
		answerJSON(w, map[string]any{"error": "invalid_client", "error_description": "AADSTS7000215: Invalid client secret secret-xyz provided."})
	})
	imds, imdsCalls := tokenServer(t, func(w http.ResponseWriter, r *http.Request) {
		answerJSON(w, map[string]any{"access_token": "from-imds", "expires_in": "3599"})
	})
	c := defaultChain(env(map[string]string{
		"AZURE_TENANT_ID": "t", "AZURE_CLIENT_ID": "c", "AZURE_CLIENT_SECRET": "secret-xyz",
		"AZURE_AUTHORITY_HOST": srv.URL, "AZURE_POD_IDENTITY_AUTHORITY_HOST": imds.URL,
	}), nil)
	_, _, err := c.Token(t.Context())
	var ce *CredentialsError
	if !errors.As(err, &ce) || !errors.Is(err, logstore.ErrPermission) || !strings.Contains(err.Error(), "401 invalid_client") {
		t.Fatalf("Token = %v; want a *CredentialsError with 401 invalid_client", err)
	}
	if strings.Contains(err.Error(), "secret-xyz") || strings.Contains(err.Error(), "AADSTS") {
		t.Errorf("the error shows the secret or the description: %v", err)
	}
	if imdsCalls.Load() != 0 {
		t.Errorf("the chain went on to IMDS after a refusal")
	}
}

func TestChainWorkloadIdentity(t *testing.T) {
	file := filepath.Join(t.TempDir(), "token")
	os.WriteFile(file, []byte("assertion-1\n"), 0o600)
	var seen atomic.Value
	srv, _ := tokenServer(t, func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		if r.PostForm.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" ||
			r.PostForm.Has("client_secret") || r.PostForm.Get("client_id") != "client-1" || r.URL.Path != "/tenant-1/oauth2/v2.0/token" {
			t.Errorf("token request %s %v", r.URL.Path, r.PostForm)
		}
		seen.Store(r.PostForm.Get("client_assertion"))
		answerJSON(w, map[string]any{"access_token": "tok-" + r.PostForm.Get("client_assertion"), "expires_in": 600})
	})
	c := defaultChain(env(map[string]string{
		"AZURE_TENANT_ID": "tenant-1", "AZURE_CLIENT_ID": "client-1", "AZURE_FEDERATED_TOKEN_FILE": file,
		"AZURE_AUTHORITY_HOST": srv.URL,
	}), nil)
	if tok, _, err := c.Token(t.Context()); err != nil || tok != "tok-assertion-1" {
		t.Fatalf("Token = %q, %v", tok, err)
	}
	// The file is rotated; the next fetch reads it again.
	os.WriteFile(file, []byte("assertion-2"), 0o600)
	if tok, _, err := c.Token(t.Context()); err != nil || tok != "tok-assertion-2" {
		t.Fatalf("Token after rotation = %q, %v", tok, err)
	}
	os.Remove(file)
	if _, _, err := c.Token(t.Context()); err == nil || strings.Contains(err.Error(), "assertion-2") {
		t.Errorf("Token with the file gone = %v", err)
	}
}

func TestChainAppService(t *testing.T) {
	srv, _ := tokenServer(t, func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.Method != http.MethodGet || r.URL.Path != "/msi/token" || r.Header.Get("X-IDENTITY-HEADER") != "header-secret" ||
			q.Get("api-version") != "2019-08-01" || q.Get("resource") != "https://storage.azure.com" || q.Get("client_id") != "user-mi" {
			t.Errorf("App Service request %s %s %v %q", r.Method, r.URL.Path, q, r.Header.Get("X-IDENTITY-HEADER"))
			w.WriteHeader(400)
			return
		}
		answerJSON(w, map[string]any{"access_token": "tok-app", "expires_on": "1900000000", "resource": "https://storage.azure.com", "token_type": "Bearer"})
	})
	c := defaultChain(env(map[string]string{
		"IDENTITY_ENDPOINT": srv.URL + "/msi/token", "IDENTITY_HEADER": "header-secret", "AZURE_CLIENT_ID": "user-mi",
	}), nil)
	tok, exp, err := c.Token(t.Context())
	if err != nil || tok != "tok-app" || exp.Unix() != 1900000000 {
		t.Fatalf("Token = %q, %v, %v", tok, exp, err)
	}
}

func TestChainIMDS(t *testing.T) {
	var refuse atomic.Bool
	srv, _ := tokenServer(t, func(w http.ResponseWriter, r *http.Request) {
		if refuse.Load() {
			w.WriteHeader(400)
			answerJSON(w, map[string]any{"error": "invalid_request", "error_description": "Identity not found"})
			return
		}
		q := r.URL.Query()
		if r.URL.Path != "/metadata/identity/oauth2/token" || r.Header.Get("Metadata") != "true" ||
			q.Get("api-version") != "2018-02-01" || q.Get("resource") != "https://storage.azure.com" || q.Has("client_id") {
			t.Errorf("IMDS request %s %v", r.URL.Path, q)
			w.WriteHeader(400)
			return
		}
		answerJSON(w, map[string]any{"access_token": "tok-imds", "refresh_token": "", "expires_in": "3599",
			"expires_on": "1900000001", "not_before": "1899996401", "resource": "https://storage.azure.com/", "token_type": "Bearer"})
	})
	c := defaultChain(env(map[string]string{"AZURE_POD_IDENTITY_AUTHORITY_HOST": srv.URL}), nil)
	tok, exp, err := c.Token(t.Context())
	if err != nil || tok != "tok-imds" || exp.Unix() != 1900000001 {
		t.Fatalf("Token = %q, %v, %v", tok, exp, err)
	}
	// IMDS answering an error, once it is known to be there, is an error.
	c = defaultChain(env(map[string]string{"AZURE_POD_IDENTITY_AUTHORITY_HOST": srv.URL}), nil)
	c.sources[0].(*managedIdentity).probe = false
	refuse.Store(true)
	if _, _, err := c.Token(t.Context()); err == nil || !strings.Contains(err.Error(), "400 invalid_request") {
		t.Errorf("Token from a refusing IMDS = %v", err)
	}
}

// fakeAZ writes an az program into a new directory that prints out (or
// stderr, exiting 1) and records its arguments; it returns the directory.
func fakeAZ(t *testing.T, out, stderr string) (dir, argsFile string) {
	t.Helper()
	dir = t.TempDir()
	argsFile = filepath.Join(dir, "args")
	script := "#!/bin/sh\necho \"$@\" > " + argsFile + "\n"
	if stderr != "" {
		script += "echo \"" + stderr + "\" >&2\nexit 1\n"
	} else {
		script += "cat <<'EOF'\n" + out + "\nEOF\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "az"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, argsFile
}

// With no IMDS answering, the chain reaches the Azure CLI.
func TestChainAzureCLI(t *testing.T) {
	dir, argsFile := fakeAZ(t, `{"accessToken": "tok-cli", "expiresOn": "2030-01-01 00:00:00.000000", "expires_on": 1900000002, "subscription": "s", "tenant": "t", "tokenType": "Bearer"}`, "")
	c := defaultChain(env(map[string]string{"PATH": dir, "AZURE_TENANT_ID": "tenant-1"}), nil)
	tok, exp, err := c.Token(t.Context())
	if err != nil || tok != "tok-cli" || exp.Unix() != 1900000002 {
		t.Fatalf("Token = %q, %v, %v", tok, exp, err)
	}
	args, _ := os.ReadFile(argsFile)
	if got := strings.TrimSpace(string(args)); got != "account get-access-token -o json --resource https://storage.azure.com --tenant tenant-1" {
		t.Errorf("az %s", got)
	}
	// Older versions give only expiresOn, in local time.
	dir, _ = fakeAZ(t, `{"accessToken": "tok-old", "expiresOn": "2030-01-02 03:04:05.000000"}`, "")
	c = defaultChain(env(map[string]string{"PATH": dir}), nil)
	tok, exp, err = c.Token(t.Context())
	if want := time.Date(2030, 1, 2, 3, 4, 5, 0, time.Local); err != nil || tok != "tok-old" || !exp.Equal(want) {
		t.Fatalf("Token = %q, %v, %v; want tok-old, %v", tok, exp, err, want)
	}
}

func TestChainNothing(t *testing.T) {
	notLoggedIn, _ := fakeAZ(t, "", "ERROR: Please run 'az login' to setup account.")
	for name, vars := range map[string]map[string]string{
		"no source":          {},
		"az not logged in":   {"PATH": notLoggedIn},
		"half a principal":   {"AZURE_TENANT_ID": "t", "AZURE_CLIENT_SECRET": "s"},
		"IMDS not answering": {"AZURE_POD_IDENTITY_AUTHORITY_HOST": closedURL},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := defaultChain(env(vars), nil).Token(t.Context())
			if !errors.Is(err, ErrNoCredential) || !errors.Is(err, logstore.ErrPermission) {
				t.Errorf("Token = %v; want ErrNoCredential, matching ErrPermission", err)
			}
		})
	}
}

// counting is a TokenSource whose tokens expire after ttl; fail makes it
// fail.
type counting struct {
	n    atomic.Int64
	ttl  time.Duration
	fail atomic.Bool
}

func (c *counting) Token(context.Context) (string, time.Time, error) {
	if c.fail.Load() {
		return "", time.Time{}, errors.New("down")
	}
	n := c.n.Add(1)
	return "tok-" + string(rune('0'+n)), time.Now().Add(c.ttl), nil
}

// The cache fetches once, again when the refresh is due, and keeps a
// token that has not expired when a refresh fails.
func TestTokenCache(t *testing.T) {
	src := &counting{ttl: time.Hour}
	c := &tokenCache{src: src}
	for range 3 {
		if tok, err := c.get(t.Context()); err != nil || tok != "tok-1" {
			t.Fatalf("get = %q, %v", tok, err)
		}
	}
	if src.n.Load() != 1 {
		t.Fatalf("%d fetches, want 1", src.n.Load())
	}
	if d := time.Until(c.refreshAt); d < 54*time.Minute || d > 55*time.Minute {
		t.Errorf("refresh due in %v, want five minutes before expiry", d)
	}
	c.refreshAt = time.Now().Add(-time.Second) // due
	if tok, err := c.get(t.Context()); err != nil || tok != "tok-2" {
		t.Fatalf("get when due = %q, %v", tok, err)
	}
	c.refreshAt = time.Now().Add(-time.Second)
	src.fail.Store(true)
	if tok, err := c.get(t.Context()); err != nil || tok != "tok-2" {
		t.Fatalf("get with a failed refresh = %q, %v; want the valid token", tok, err)
	}
	c.refreshAt, c.expires = time.Now().Add(-time.Second), time.Now().Add(-time.Second)
	if _, err := c.get(t.Context()); !errors.Is(err, logstore.ErrPermission) {
		t.Fatalf("get with an expired token and a failed refresh = %v", err)
	}
	// Short-lived tokens are refreshed halfway, not on every request.
	c = &tokenCache{src: &counting{ttl: 4 * time.Minute}}
	c.get(t.Context())
	if d := time.Until(c.refreshAt); d < 110*time.Second || d > 2*time.Minute {
		t.Errorf("refresh of a 4-minute token due in %v, want 2m", d)
	}
}

// writeCert writes a new self-signed certificate and its RSA key (PKCS #8)
// as PEM, the key first when keyFirst, and returns the file and the
// certificate.
func writeCert(t *testing.T, keyFirst bool) (string, *x509.Certificate) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "godelta test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pk, _ := x509.MarshalPKCS8PrivateKey(key)
	c := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	k := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pk})
	file := filepath.Join(t.TempDir(), "cert.pem")
	data := append(c, k...)
	if keyFirst {
		data = append(k, c...)
	}
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return file, cert
}

// The certificate's assertion is a PS256 JWT the token endpoint can check
// with the certificate's public key, naming the endpoint, the client and
// the certificate's SHA-256 thumbprint.
func TestChainClientCertificate(t *testing.T) {
	file, cert := writeCert(t, true)
	var endpoint string
	srv, _ := tokenServer(t, func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		if err := checkAssertion(r.PostForm.Get("client_assertion"), cert, "client-1", endpoint); err != nil ||
			r.PostForm.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" || r.PostForm.Has("client_secret") {
			t.Errorf("assertion: %v (form %v)", err, r.PostForm)
			w.WriteHeader(401)
			return
		}
		answerJSON(w, map[string]any{"access_token": "tok-cert", "expires_in": 3599})
	})
	endpoint = srv.URL + "/tenant-1/oauth2/v2.0/token"
	c := defaultChain(env(map[string]string{
		"AZURE_TENANT_ID": "tenant-1", "AZURE_CLIENT_ID": "client-1", "AZURE_CLIENT_CERTIFICATE_PATH": file,
		"AZURE_AUTHORITY_HOST": srv.URL,
	}), nil)
	if tok, _, err := c.Token(t.Context()); err != nil || tok != "tok-cert" {
		t.Fatalf("Token = %q, %v", tok, err)
	}
	// With AZURE_CLIENT_SEND_CERTIFICATE_CHAIN the header carries x5c,
	// the leaf first.
	var x5c atomic.Value
	srv2, _ := tokenServer(t, func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		h, _ := base64.RawURLEncoding.DecodeString(strings.Split(r.PostForm.Get("client_assertion"), ".")[0])
		var header struct{ X5C []string }
		json.Unmarshal(h, &header)
		x5c.Store(header.X5C)
		answerJSON(w, map[string]any{"access_token": "tok-chain", "expires_in": 3599})
	})
	c = defaultChain(env(map[string]string{
		"AZURE_TENANT_ID": "tenant-1", "AZURE_CLIENT_ID": "client-1", "AZURE_CLIENT_CERTIFICATE_PATH": file,
		"AZURE_AUTHORITY_HOST": srv2.URL, "AZURE_CLIENT_SEND_CERTIFICATE_CHAIN": "true",
	}), nil)
	if _, _, err := c.Token(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got, _ := x5c.Load().([]string); len(got) != 1 || got[0] != base64.StdEncoding.EncodeToString(cert.Raw) {
		t.Errorf("x5c = %.80q, want the certificate", got)
	}
	// A file without a key, or with a key of no certificate in it, is an
	// error of the source, which ends the walk.
	other, _ := writeCert(t, false)
	otherPEM, _ := os.ReadFile(other)
	mine, _ := os.ReadFile(file)
	for name, data := range map[string][]byte{
		"no key":         pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}),
		"key of no cert": append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}), otherPEM[strings.Index(string(otherPEM), "-----BEGIN PRIVATE KEY"):]...),
		"garbage":        []byte("not pem"),
		"encrypted key":  pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: []byte{1, 2, 3}}),
		"truncated":      mine[:len(mine)/2],
	} {
		bad := filepath.Join(t.TempDir(), "bad.pem")
		os.WriteFile(bad, data, 0o600)
		c := defaultChain(env(map[string]string{
			"AZURE_TENANT_ID": "tenant-1", "AZURE_CLIENT_ID": "client-1", "AZURE_CLIENT_CERTIFICATE_PATH": bad,
			"AZURE_AUTHORITY_HOST": srv.URL,
		}), nil)
		if _, _, err := c.Token(t.Context()); err == nil || errors.Is(err, ErrNoCredential) || !errors.Is(err, logstore.ErrPermission) {
			t.Errorf("%s: Token = %v; want the certificate source's error", name, err)
		}
	}
}

// checkAssertion verifies a PS256 client assertion with cert's key and
// checks its header and claims.
func checkAssertion(jwt string, cert *x509.Certificate, client, aud string) error {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return errors.New("not three parts")
	}
	enc := base64.RawURLEncoding
	sig, err := enc.DecodeString(parts[2])
	if err != nil {
		return err
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPSS(cert.PublicKey.(*rsa.PublicKey), crypto.SHA256, digest[:], sig, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash}); err != nil {
		return err
	}
	var header, claims map[string]any
	h, _ := enc.DecodeString(parts[0])
	c, _ := enc.DecodeString(parts[1])
	if json.Unmarshal(h, &header) != nil || json.Unmarshal(c, &claims) != nil {
		return errors.New("header or claims are not JSON")
	}
	thumb := sha256.Sum256(cert.Raw)
	if header["alg"] != "PS256" || header["typ"] != "JWT" || header["x5t#S256"] != base64.StdEncoding.EncodeToString(thumb[:]) {
		return fmt.Errorf("header %v", header)
	}
	now := float64(time.Now().Unix())
	nbf, _ := claims["nbf"].(float64)
	exp, _ := claims["exp"].(float64)
	if claims["aud"] != aud || claims["iss"] != client || claims["sub"] != client || claims["jti"] == "" || nbf > now+1 || exp < now+5*60 {
		return fmt.Errorf("claims %v", claims)
	}
	return nil
}

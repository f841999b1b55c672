package s3

// The providers that fetch credentials: STS (AssumeRole, signed, and
// AssumeRoleWithWebIdentity, unsigned), the ECS/EKS container endpoint,
// the EC2 instance metadata service (IMDSv2) and credential_process. Each
// answer is read with a bound; no secret goes into an error.

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/godelta/delta/logstore/internal/restio"
)

const (
	maxCredAnswer = 64 << 10 // an STS, container or IMDS answer
	maxTokenFile  = 64 << 10 // a web identity or container token file
	stsTimeout    = 30 * time.Second
	imdsTimeout   = 2 * time.Second // per request: off EC2 nothing answers
	processLimit  = 1 << 20
)

// readBounded reads at most limit bytes of r, failing past that.
func readBounded(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, errTooLarge
	}
	return b, nil
}

// readTokenFile reads a token file, bounded, without its surrounding
// white space.
func readTokenFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := readBounded(f, maxTokenFile)
	if err != nil {
		return "", fmt.Errorf("reading the token file %s: %w", path, err)
	}
	return strings.TrimSpace(string(b)), nil
}

// stsEndpoint is where STS is reached.
func (r *resolver) stsEndpoint(region string) string {
	return firstOf(r.env.get("AWS_ENDPOINT_URL_STS"), r.env.get("AWS_ENDPOINT_URL"), "https://sts."+region+".amazonaws.com")
}

// stsCall posts an STS query-protocol action and returns the credentials
// of its answer. signWith signs the request (AssumeRole); nil sends it
// unsigned (AssumeRoleWithWebIdentity).
func (r *resolver) stsCall(ctx context.Context, region string, form url.Values, signWith *Credentials) (Credentials, error) {
	ctx, cancel := context.WithTimeout(ctx, stsTimeout)
	defer cancel()
	form.Set("Version", "2011-06-15")
	body := []byte(form.Encode())
	endpoint := strings.TrimSuffix(r.stsEndpoint(region), "/") + "/"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return Credentials{}, errors.New("the STS endpoint is not a URL")
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	if signWith != nil {
		signV4(req, *signWith, "sts", region, payloadHash(body), time.Now())
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return Credentials{}, err
	}
	defer resp.Body.Close()
	b, err := readBounded(resp.Body, maxCredAnswer)
	if err != nil {
		return Credentials{}, fmt.Errorf("STS %s: %w", form.Get("Action"), err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error struct{ Code, Message string }
		}
		_ = xml.Unmarshal(b, &e)
		return Credentials{}, fmt.Errorf("STS %s: HTTP %d %s: %s", form.Get("Action"), resp.StatusCode, restio.Clip(e.Error.Code, 128), restio.Clip(e.Error.Message, 1024))
	}
	var out struct {
		Results []struct {
			Credentials struct {
				AccessKeyID     string `xml:"AccessKeyId"`
				SecretAccessKey string
				SessionToken    string
				Expiration      string
			}
		} `xml:",any"`
	}
	if err := xml.Unmarshal(b, &out); err != nil || len(out.Results) == 0 {
		return Credentials{}, fmt.Errorf("STS %s: the answer is not the XML expected", form.Get("Action"))
	}
	c := out.Results[0].Credentials
	exp, err := time.Parse(time.RFC3339, c.Expiration)
	if err != nil {
		return Credentials{}, fmt.Errorf("STS %s: the answer's Expiration %q is not a time", form.Get("Action"), restio.Clip(c.Expiration, 64))
	}
	return Credentials{AccessKey: c.AccessKeyID, SecretKey: c.SecretAccessKey, SessionToken: c.SessionToken, Expires: exp}, nil
}

// webIdentityProvider is STS AssumeRoleWithWebIdentity with the token of
// a file, read again on each fetch (the token rotates).
type webIdentityProvider struct {
	r                *resolver
	file, role, name string
	duration         int
}

func (r *resolver) webIdentity(file, role, name string, duration int) provider {
	return &webIdentityProvider{r: r, file: file, role: role, name: name, duration: duration}
}

func (w *webIdentityProvider) source() string { return "web identity" }

func (w *webIdentityProvider) retrieve(ctx context.Context) (Credentials, error) {
	token, err := readTokenFile(w.file)
	if err != nil {
		return Credentials{}, err
	}
	form := url.Values{
		"Action":           {"AssumeRoleWithWebIdentity"},
		"RoleArn":          {w.role},
		"RoleSessionName":  {sessionName(w.name)},
		"WebIdentityToken": {token},
	}
	if w.duration > 0 {
		form.Set("DurationSeconds", strconv.Itoa(w.duration))
	}
	return w.r.stsCall(ctx, w.r.region, form, nil)
}

// assumeRole is STS AssumeRole signed with the source's credentials.
type assumeRole struct {
	r                                     *resolver
	src                                   string
	from                                  provider
	role, sessionName, externalID, region string
	duration                              int
}

func (a *assumeRole) source() string { return a.src + " (AssumeRole)" }

func (a *assumeRole) retrieve(ctx context.Context) (Credentials, error) {
	creds, err := a.from.retrieve(ctx)
	if err != nil {
		return Credentials{}, err
	}
	form := url.Values{
		"Action":          {"AssumeRole"},
		"RoleArn":         {a.role},
		"RoleSessionName": {sessionName(a.sessionName)},
	}
	if a.externalID != "" {
		form.Set("ExternalId", a.externalID)
	}
	if a.duration > 0 {
		form.Set("DurationSeconds", strconv.Itoa(a.duration))
	}
	return a.r.stsCall(ctx, a.region, form, &creds)
}

// jsonCreds is the JSON of the container endpoint, IMDS and
// credential_process.
type jsonCreds struct {
	Version         int
	Code, Message   string
	AccessKeyID     string `json:"AccessKeyId"`
	SecretAccessKey string
	Token           string
	SessionToken    string
	Expiration      string
}

func (j *jsonCreds) credentials() (Credentials, error) {
	c := Credentials{AccessKey: j.AccessKeyID, SecretKey: j.SecretAccessKey, SessionToken: firstOf(j.Token, j.SessionToken)}
	if j.Expiration != "" {
		t, err := time.Parse(time.RFC3339, j.Expiration)
		if err != nil {
			return Credentials{}, fmt.Errorf("the Expiration %q is not a time", restio.Clip(j.Expiration, 64))
		}
		c.Expires = t
	}
	return c, nil
}

// containerProvider is the ECS/EKS credentials endpoint.
type containerProvider struct {
	r                *resolver
	url              string
	tokenFile, token string
}

// container is the container provider the environment names, or nil.
func (r *resolver) container() provider {
	if rel := r.env.get("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"); rel != "" {
		return &containerProvider{r: r, url: "http://169.254.170.2" + rel,
			tokenFile: r.env.get("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"), token: r.env.get("AWS_CONTAINER_AUTHORIZATION_TOKEN")}
	}
	if full := r.env.get("AWS_CONTAINER_CREDENTIALS_FULL_URI"); full != "" {
		return &containerProvider{r: r, url: full,
			tokenFile: r.env.get("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"), token: r.env.get("AWS_CONTAINER_AUTHORIZATION_TOKEN")}
	}
	return nil
}

func (c *containerProvider) source() string { return "the container credentials endpoint" }

// allowedContainerHost reports whether an http:// container endpoint may
// be used: loopback, or the link-local addresses of ECS and EKS Pod
// Identity. Other hosts need https, so that credentials do not cross a
// network in the clear.
func allowedContainerHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return false
	}
	return ip.IsLoopback() || ip.Equal(net.ParseIP("169.254.170.2")) || ip.Equal(net.ParseIP("169.254.170.23")) || ip.Equal(net.ParseIP("fd00:ec2::23"))
}

func (c *containerProvider) retrieve(ctx context.Context) (Credentials, error) {
	u, err := url.Parse(c.url)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Scheme == "http" && !allowedContainerHost(u.Hostname()) {
		return Credentials{}, errors.New("the container credentials URI must be https, or http to a loopback or ECS/EKS address")
	}
	token := c.token
	if c.tokenFile != "" {
		if token, err = readTokenFile(c.tokenFile); err != nil {
			return Credentials{}, err
		}
	}
	if strings.ContainsAny(token, "\r\n") {
		return Credentials{}, errors.New("the container authorization token holds a line break")
	}
	ctx, cancel := context.WithTimeout(ctx, stsTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Credentials{}, err
	}
	if token != "" {
		req.Header.Set("Authorization", token)
	}
	req.Header.Set("Accept", "application/json")
	var j jsonCreds
	if err := c.r.getJSON(req, &j); err != nil {
		return Credentials{}, err
	}
	return j.credentials()
}

// getJSON sends req and decodes its bounded JSON answer.
func (r *resolver) getJSON(req *http.Request, v *jsonCreds) error {
	resp, err := r.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := readBounded(resp.Body, maxCredAnswer)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Code, Message string }
		_ = json.Unmarshal(b, &e)
		return fmt.Errorf("HTTP %d %s: %s", resp.StatusCode, restio.Clip(e.Code, 128), restio.Clip(e.Message, 1024))
	}
	if err := json.Unmarshal(b, v); err != nil {
		return errors.New("the answer is not the JSON expected")
	}
	if v.Code != "" && v.Code != "Success" {
		return fmt.Errorf("%s: %s", restio.Clip(v.Code, 128), restio.Clip(v.Message, 1024))
	}
	return nil
}

// imdsProvider is the EC2 instance metadata service, IMDSv2.
type imdsProvider struct {
	r        *resolver
	endpoint string
}

func (r *resolver) imds() provider {
	ep := r.env.get("AWS_EC2_METADATA_SERVICE_ENDPOINT")
	if ep == "" {
		ep = "http://169.254.169.254"
		if strings.EqualFold(r.env.get("AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE"), "IPv6") {
			ep = "http://[fd00:ec2::254]"
		}
	}
	return &imdsProvider{r: r, endpoint: strings.TrimSuffix(ep, "/")}
}

func (m *imdsProvider) source() string { return "the EC2 instance metadata service" }

// call makes one IMDS request with its own short timeout and returns its
// bounded body.
func (m *imdsProvider) call(ctx context.Context, method, path string, header http.Header) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, imdsTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, m.endpoint+path, nil)
	if err != nil {
		return nil, errors.New("the IMDS endpoint is not a URL")
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := m.r.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := readBounded(resp.Body, maxCredAnswer)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("IMDS %s: HTTP %d", path, resp.StatusCode)
	}
	return b, nil
}

const imdsCredsPath = "/latest/meta-data/iam/security-credentials/"

func (m *imdsProvider) retrieve(ctx context.Context) (Credentials, error) {
	token, err := m.call(ctx, http.MethodPut, "/latest/api/token", http.Header{"X-Aws-Ec2-Metadata-Token-Ttl-Seconds": {"21600"}})
	if err != nil {
		return Credentials{}, fmt.Errorf("IMDSv2 session token: %w", err)
	}
	h := http.Header{"X-Aws-Ec2-Metadata-Token": {strings.TrimSpace(string(token))}}
	roles, err := m.call(ctx, http.MethodGet, imdsCredsPath, h)
	if err != nil {
		return Credentials{}, err
	}
	role, _, _ := strings.Cut(strings.TrimSpace(string(roles)), "\n")
	role = strings.TrimSpace(role)
	if role == "" || strings.ContainsAny(role, "/?#") {
		return Credentials{}, errors.New("IMDS: the instance has no IAM role")
	}
	b, err := m.call(ctx, http.MethodGet, imdsCredsPath+url.PathEscape(role), h)
	if err != nil {
		return Credentials{}, err
	}
	var j jsonCreds
	if err := json.Unmarshal(b, &j); err != nil {
		return Credentials{}, errors.New("IMDS: the credentials are not the JSON expected")
	}
	if j.Code != "" && j.Code != "Success" {
		return Credentials{}, fmt.Errorf("IMDS: %s", restio.Clip(j.Code, 128))
	}
	return j.credentials()
}

// process runs a profile's credential_process through the shell, as the
// AWS SDKs do, and reads its JSON (Version 1) from its standard output;
// its standard error is the program's.
type process struct {
	cmd, src string
}

func (p *process) source() string { return p.src + " (credential_process)" }

// limitedBuffer keeps at most limit bytes and fails past that.
type limitedBuffer struct {
	bytes.Buffer
	limit int
}

func (l *limitedBuffer) Write(b []byte) (int, error) {
	if l.Len()+len(b) > l.limit {
		return 0, errTooLarge
	}
	return l.Buffer.Write(b)
}

func (p *process) retrieve(ctx context.Context) (Credentials, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var cmd *exec.Cmd
	if runtime.GOOS == "windows" {
		cmd = exec.CommandContext(ctx, "cmd.exe", "/C", p.cmd)
	} else {
		cmd = exec.CommandContext(ctx, "sh", "-c", p.cmd)
	}
	out := &limitedBuffer{limit: processLimit}
	cmd.Stdout, cmd.Stderr, cmd.Stdin = out, os.Stderr, os.Stdin
	if err := cmd.Run(); err != nil {
		// The command line may hold secrets: it is not quoted.
		return Credentials{}, fmt.Errorf("credential_process failed: %w", err)
	}
	var j jsonCreds
	if err := json.Unmarshal(out.Bytes(), &j); err != nil {
		return Credentials{}, errors.New("credential_process: its output is not the JSON expected")
	}
	if j.Version != 1 {
		return Credentials{}, fmt.Errorf("credential_process: Version %d, want 1", j.Version)
	}
	return j.credentials()
}

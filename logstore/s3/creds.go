package s3

// The AWS credential chain (see the package doc for the order and what is
// not supported): where credentials come from, and their cache.
//
// Invariants: resolveCredentials reads only the environment and the
// shared files, never the network, so New fails early on a broken
// configuration and costs nothing more when the credentials are static.
// Providers that fetch (STS, IAM Identity Center, container, IMDS, a
// process) are called by credCache only, one at a time, and never put a
// secret (a key, a session token, a web identity token, a container
// authorization token, an SSO access or refresh token or client secret)
// into an error.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/godelta/delta/logstore"
)

// Credentials are AWS credentials: an access key, its secret, the session
// token of temporary credentials, and when they expire (zero for never).
type Credentials struct {
	AccessKey, SecretKey, SessionToken string
	Expires                            time.Time
}

// CredentialsError is a failure to find or fetch credentials: nothing was
// sent to S3. It matches logstore.ErrPermission.
type CredentialsError struct {
	Source string // "environment", "profile dev", "web identity", "container", "IMDS", ...
	Err    error
}

func (e *CredentialsError) Error() string {
	return "logstore/s3: AWS credentials from " + e.Source + ": " + e.Err.Error()
}

func (e *CredentialsError) Unwrap() error { return e.Err }

// Is makes a CredentialsError match logstore.ErrPermission.
func (e *CredentialsError) Is(target error) bool { return target == logstore.ErrPermission }

// ErrNoCredentials is the error (wrapped in a *CredentialsError) when no
// source of the chain had credentials.
var ErrNoCredentials = errors.New("no AWS credentials found (tried the environment, web identity, the shared files, the container and the EC2 instance metadata)")

// provider fetches credentials.
type provider interface {
	retrieve(ctx context.Context) (Credentials, error)
	source() string
}

// static is a provider of fixed credentials.
type static struct {
	c    Credentials
	from string
}

func (s static) retrieve(context.Context) (Credentials, error) { return s.c, nil }
func (s static) source() string                                { return s.from }

// failing is a provider that has none, and says why, when asked.
type failing struct {
	err  error
	from string
}

func (f failing) retrieve(context.Context) (Credentials, error) { return Credentials{}, f.err }
func (f failing) source() string                                { return f.from }

// refreshWindow is how long before they expire credentials are fetched
// again.
const refreshWindow = 5 * time.Minute

// retryRefresh is how long after a failed refresh another is tried, while
// the credentials held are still valid.
const retryRefresh = 30 * time.Second

// credCache holds the credentials of a provider and fetches them again
// before they expire. It is itself a provider (the source of an assumed
// role is cached too).
type credCache struct {
	provider  provider
	mu        sync.Mutex
	cur       Credentials
	have      bool
	refreshAt time.Time // zero: never
}

func (c *credCache) source() string { return c.provider.source() }

func (c *credCache) retrieve(ctx context.Context) (Credentials, error) { return c.get(ctx) }

// get returns the cached credentials, fetching them first if there are
// none or they are due for refresh. A failed refresh returns the cached
// ones while they have not expired.
func (c *credCache) get(ctx context.Context) (Credentials, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if c.have && (c.refreshAt.IsZero() || now.Before(c.refreshAt)) {
		return c.cur, nil
	}
	nc, err := c.provider.retrieve(ctx)
	if err == nil && (nc.AccessKey == "" || nc.SecretKey == "") {
		err = errors.New("the source gave an empty access key or secret")
	}
	if err != nil {
		if c.have && (c.cur.Expires.IsZero() || now.Before(c.cur.Expires)) {
			// Still valid: try again in a while, not on every request.
			c.refreshAt = now.Add(min(retryRefresh, c.cur.Expires.Sub(now)/2))
			return c.cur, nil
		}
		var ce *CredentialsError
		if errors.As(err, &ce) {
			return Credentials{}, err
		}
		return Credentials{}, &CredentialsError{Source: c.provider.source(), Err: err}
	}
	c.cur, c.have = nc, true
	c.refreshAt = time.Time{}
	if !nc.Expires.IsZero() {
		// Five minutes early, or halfway for credentials that live less
		// than ten minutes, so that short-lived ones are not fetched on
		// every request.
		c.refreshAt = nc.Expires.Add(-min(refreshWindow, nc.Expires.Sub(now)/2))
	}
	return nc, nil
}

// awsEnv is the environment of the AWS configuration, read once by New.
type awsEnv struct {
	region      string
	profile     string // AWS_PROFILE or AWS_DEFAULT_PROFILE
	profileSet  bool   // named by the environment, so it must exist
	home        string // the user's home directory, or ""
	configFile  string
	credsFile   string
	getenvCache map[string]string
}

func loadEnv() *awsEnv {
	e := &awsEnv{getenvCache: map[string]string{}}
	e.region = firstOf(e.get("AWS_REGION"), e.get("AWS_DEFAULT_REGION"))
	e.profile = firstOf(e.get("AWS_PROFILE"), e.get("AWS_DEFAULT_PROFILE"))
	e.profileSet = e.profile != ""
	if !e.profileSet {
		e.profile = "default"
	}
	e.home, _ = os.UserHomeDir()
	e.configFile = firstOf(e.get("AWS_CONFIG_FILE"), joinHome(e.home, ".aws/config"))
	e.credsFile = firstOf(e.get("AWS_SHARED_CREDENTIALS_FILE"), joinHome(e.home, ".aws/credentials"))
	return e
}

func joinHome(home, rel string) string {
	if home == "" {
		return ""
	}
	return home + "/" + rel
}

func (e *awsEnv) get(name string) string {
	v, ok := e.getenvCache[name]
	if !ok {
		v = os.Getenv(name)
		e.getenvCache[name] = v
	}
	return v
}

// resolveCredentials picks the source of credentials (see the package
// doc). prof is the selected profile, or nil. client carries the requests
// of STS, the container endpoint and IMDS.
func resolveCredentials(opts Options, env *awsEnv, prof *profile, region string, client *http.Client) (provider, error) {
	if opts.AccessKey != "" {
		return static{Credentials{AccessKey: opts.AccessKey, SecretKey: opts.SecretKey, SessionToken: opts.SessionToken}, "Options"}, nil
	}
	r := &resolver{env: env, region: region, client: client}
	if env.profileSet && prof != nil {
		// A profile named in the environment comes first, as in the SDKs.
		if p, err := r.fromProfile(prof, 0); p != nil || err != nil {
			return p, err
		}
		return r.fallback(), nil
	}
	if key := firstOf(env.get("AWS_ACCESS_KEY_ID"), env.get("AWS_ACCESS_KEY")); key != "" {
		secret := firstOf(env.get("AWS_SECRET_ACCESS_KEY"), env.get("AWS_SECRET_KEY"))
		if secret == "" {
			return nil, &CredentialsError{Source: "environment", Err: errors.New("AWS_ACCESS_KEY_ID is set without AWS_SECRET_ACCESS_KEY")}
		}
		return static{Credentials{AccessKey: key, SecretKey: secret, SessionToken: env.get("AWS_SESSION_TOKEN")}, "environment"}, nil
	}
	if file := env.get("AWS_WEB_IDENTITY_TOKEN_FILE"); file != "" {
		role := env.get("AWS_ROLE_ARN")
		if role == "" {
			return nil, &CredentialsError{Source: "web identity", Err: errors.New("AWS_WEB_IDENTITY_TOKEN_FILE is set without AWS_ROLE_ARN")}
		}
		return &credCache{provider: r.webIdentity(file, role, env.get("AWS_ROLE_SESSION_NAME"), 0)}, nil
	}
	if prof != nil {
		if p, err := r.fromProfile(prof, 0); p != nil || err != nil {
			return p, err
		}
	}
	return r.fallback(), nil
}

// resolver builds providers.
type resolver struct {
	env    *awsEnv
	region string
	client *http.Client
}

// fallback is the end of the chain: container credentials, else IMDS,
// else none.
func (r *resolver) fallback() provider {
	if p := r.container(); p != nil {
		return &credCache{provider: p}
	}
	if v := r.env.get("AWS_EC2_METADATA_DISABLED"); v != "" && v != "false" {
		return failing{ErrNoCredentials, "the default chain"}
	}
	return &credCache{provider: r.imds()}
}

// maxRoleChain is how many source_profile hops a role may take.
const maxRoleChain = 5

// fromProfile is the provider of a profile, or nil when the profile holds
// no credentials.
func (r *resolver) fromProfile(p *profile, depth int) (provider, error) {
	src := "profile " + p.name
	fail := func(format string, args ...any) error {
		return &CredentialsError{Source: src, Err: fmt.Errorf(format, args...)}
	}
	if p.get("login_session") != "" {
		return nil, fail(`login_session (the sign-in of "aws login") is not supported; use "aws sso login" with an sso_session, or a credential_process`)
	}
	var sso *ssoConfig
	if p.usesSSO() {
		var err error
		if sso, err = p.ssoSettings(); err != nil {
			return nil, err
		}
	}
	if role := p.get("role_arn"); role != "" {
		if p.get("mfa_serial") != "" {
			return nil, fail("roles with mfa_serial need a token code typed in; not supported")
		}
		if file := p.get("web_identity_token_file"); file != "" {
			return &credCache{provider: r.webIdentity(file, role, p.get("role_session_name"), p.durationSeconds())}, nil
		}
		var source provider
		switch sp, cs := p.get("source_profile"), p.get("credential_source"); {
		case sp != "" && cs != "":
			return nil, fail("both source_profile and credential_source are set")
		case sp == p.name:
			// A profile may be its own source: its keys (else its
			// sign-in) assume its role.
			st, err := p.staticKeys()
			switch {
			case err == nil && st != nil:
				source = st
			case err == nil && sso != nil:
				source = r.sso(sso)
			default:
				return nil, fail("source_profile names the profile itself, which has no keys")
			}
		case sp != "":
			if depth >= maxRoleChain {
				return nil, fail("source_profile chain longer than %d (a loop?)", maxRoleChain)
			}
			next, err := p.files.profile(sp)
			if err != nil {
				return nil, err
			}
			if next == nil {
				return nil, fail("source_profile %q does not exist", sp)
			}
			s, err := r.fromProfile(next, depth+1)
			if err != nil {
				return nil, err
			}
			if s == nil {
				return nil, fail("source_profile %q has no credentials", sp)
			}
			source = s
		case cs == "Environment":
			key, secret := r.env.get("AWS_ACCESS_KEY_ID"), r.env.get("AWS_SECRET_ACCESS_KEY")
			if key == "" || secret == "" {
				return nil, fail("credential_source Environment without AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
			}
			source = static{Credentials{AccessKey: key, SecretKey: secret, SessionToken: r.env.get("AWS_SESSION_TOKEN")}, "environment"}
		case cs == "Ec2InstanceMetadata":
			source = r.imds()
		case cs == "EcsContainer":
			c := r.container()
			if c == nil {
				return nil, fail("credential_source EcsContainer without AWS_CONTAINER_CREDENTIALS_RELATIVE_URI or _FULL_URI")
			}
			source = c
		case cs != "":
			return nil, fail("credential_source %q is not one of Environment, Ec2InstanceMetadata, EcsContainer", cs)
		case sso != nil:
			// The profile's own sign-in assumes its role, as in the SDKs.
			source = r.sso(sso)
		default:
			return nil, fail("role_arn without source_profile, credential_source or web_identity_token_file")
		}
		return &credCache{provider: &assumeRole{
			r: r, src: src, from: &credCache{provider: source}, role: role,
			sessionName: p.get("role_session_name"), externalID: p.get("external_id"),
			duration: p.durationSeconds(), region: firstOf(p.get("region"), r.region),
		}}, nil
	}
	if st, err := p.staticKeys(); st != nil || err != nil {
		if err != nil {
			return nil, err
		}
		return st, nil
	}
	if sso != nil {
		return &credCache{provider: r.sso(sso)}, nil
	}
	if cmd := p.get("credential_process"); cmd != "" {
		return &credCache{provider: &process{cmd: cmd, src: src}}, nil
	}
	return nil, nil
}

// sessionName is the role session name to use: the configured one, else
// one naming this package and the time.
func sessionName(configured string) string {
	if configured != "" {
		return configured
	}
	return "godelta-" + strconv.FormatInt(time.Now().UnixNano(), 10)
}

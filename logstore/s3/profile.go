package s3

// The shared config and credentials files (~/.aws/config and
// ~/.aws/credentials): INI sections of "key = value" lines. In the config
// file a profile's section is [profile NAME], or [default]; in the
// credentials file it is [NAME]. A profile's settings are those of both
// files, the credentials file's winning. Keys are case-insensitive;
// comment lines start with '#' or ';'; indented lines (the sub-settings
// of a key such as "s3 =") are skipped. The config file's [sso-session
// NAME] sections (IAM Identity Center sign-ins, which a profile names with
// sso_session) are kept apart from the profiles; other sections
// ([services X]) are ignored.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// maxConfigFile bounds what is read of a shared file.
const maxConfigFile = 4 << 20

// sharedFiles are the parsed shared files: section name to settings.
type sharedFiles struct {
	config, creds map[string]map[string]string
	sessions      map[string]map[string]string // [sso-session NAME] of the config file
}

// profile is one profile's merged settings.
type profile struct {
	name  string
	vals  map[string]string
	files *sharedFiles
}

func (p *profile) get(key string) string {
	if p == nil {
		return ""
	}
	return p.vals[key]
}

// usesSSO reports whether the profile signs in with IAM Identity Center,
// as the SDKs decide it: sso_session, or any of the legacy settings.
func (p *profile) usesSSO() bool {
	for _, k := range []string{"sso_session", "sso_start_url", "sso_region", "sso_account_id", "sso_role_name"} {
		if p.get(k) != "" {
			return true
		}
	}
	return false
}

// staticKeys is the provider of the profile's aws_access_key_id and
// aws_secret_access_key, or nil when it has none.
func (p *profile) staticKeys() (provider, error) {
	key, secret := p.get("aws_access_key_id"), p.get("aws_secret_access_key")
	if key == "" && secret == "" {
		return nil, nil
	}
	if key == "" || secret == "" {
		return nil, &CredentialsError{Source: "profile " + p.name, Err: errors.New("aws_access_key_id and aws_secret_access_key must be set together")}
	}
	return static{Credentials{AccessKey: key, SecretKey: secret, SessionToken: p.get("aws_session_token")}, "profile " + p.name}, nil
}

// durationSeconds is the profile's duration_seconds, or 0.
func (p *profile) durationSeconds() int {
	n, err := strconv.Atoi(p.get("duration_seconds"))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// loadProfile reads the shared files and returns the selected profile;
// nil when it does not exist and was not named by the environment.
func (e *awsEnv) loadProfile() (*profile, error) {
	files := &sharedFiles{}
	var err error
	if files.config, files.sessions, err = readINI(e.configFile, true); err != nil {
		return nil, &CredentialsError{Source: "the shared config file", Err: err}
	}
	if files.creds, _, err = readINI(e.credsFile, false); err != nil {
		return nil, &CredentialsError{Source: "the shared credentials file", Err: err}
	}
	p, err := files.profile(e.profile)
	if err != nil {
		return nil, err
	}
	if p == nil && e.profileSet {
		return nil, &CredentialsError{Source: "profile " + e.profile, Err: errors.New("the profile named by AWS_PROFILE is in neither shared file")}
	}
	return p, nil
}

// profile returns the named profile, or nil.
func (f *sharedFiles) profile(name string) (*profile, error) {
	c, ok1 := f.config[name]
	k, ok2 := f.creds[name]
	if !ok1 && !ok2 {
		return nil, nil
	}
	vals := map[string]string{}
	for key, v := range c {
		vals[key] = v
	}
	for key, v := range k {
		vals[key] = v
	}
	return &profile{name: name, vals: vals, files: f}, nil
}

// readINI parses a shared file; a missing file (or path "") is empty. In
// the config file (config true) only [default] and [profile NAME]
// sections are kept as profiles, under NAME, and [sso-session NAME]
// sections as sessions, under NAME.
func readINI(path string, config bool) (profiles, sessions map[string]map[string]string, err error) {
	out := map[string]map[string]string{}
	sessions = map[string]map[string]string{}
	if path == "" {
		return out, sessions, nil
	}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return out, sessions, nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxConfigFile+1))
	if err != nil {
		return nil, nil, err
	}
	if len(b) > maxConfigFile {
		return nil, nil, fmt.Errorf("%s is larger than %d bytes", path, maxConfigFile)
	}
	var cur map[string]string // nil: in an ignored section
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, maxConfigFile)
	for n := 1; sc.Scan(); n++ {
		raw := sc.Text()
		line := strings.TrimSpace(raw)
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
			continue
		case line[0] == '[':
			end := strings.IndexByte(line, ']')
			if end < 0 {
				return nil, nil, fmt.Errorf("%s:%d: a section header without ']'", path, n)
			}
			name := strings.TrimSpace(line[1:end])
			if config {
				if rest, ok := strings.CutPrefix(name, "sso-session "); ok {
					name = strings.TrimSpace(rest)
					if sessions[name] == nil {
						sessions[name] = map[string]string{}
					}
					cur = sessions[name]
					continue
				}
				if rest, ok := strings.CutPrefix(name, "profile "); ok {
					name = strings.TrimSpace(rest)
				} else if name != "default" {
					cur = nil
					continue
				}
			}
			if out[name] == nil {
				out[name] = map[string]string{}
			}
			cur = out[name]
		case raw[0] == ' ' || raw[0] == '\t':
			continue // a sub-setting
		default:
			key, val, ok := strings.Cut(line, "=")
			if !ok {
				return nil, nil, fmt.Errorf("%s:%d: not a key = value line", path, n)
			}
			if cur != nil {
				cur[strings.ToLower(strings.TrimSpace(key))] = stripComment(strings.TrimSpace(val))
			}
		}
	}
	return out, sessions, sc.Err()
}

// stripComment drops an inline comment (" #..." or " ;...") from a value.
func stripComment(v string) string {
	for i := 1; i < len(v); i++ {
		if (v[i] == '#' || v[i] == ';') && (v[i-1] == ' ' || v[i-1] == '\t') {
			return strings.TrimSpace(v[:i])
		}
	}
	return v
}

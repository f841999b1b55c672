package azblob

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"

	"github.com/godelta/delta/logstore"
)

// location is a parsed az:// or abfss:// URI.
type location struct {
	container, prefix string
	account           string // from an abfss:// host; "" for az://
}

// parseURI parses az://container/prefix, azure://container/prefix,
// abfss://container@account.dfs.core.windows.net/prefix and abfs://...
func parseURI(uri string) (location, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return location{}, fmt.Errorf("logstore/azblob: URI %q: %w", redact(uri), err)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return location{}, fmt.Errorf("logstore/azblob: URI %q: no query or fragment allowed", redact(uri))
	}
	var loc location
	switch strings.ToLower(u.Scheme) {
	case "az", "azure":
		if u.User != nil {
			return location{}, fmt.Errorf("logstore/azblob: URI %q: az://container/prefix takes no user", uri)
		}
		loc.container = u.Host
	case "abfss", "abfs":
		if u.User == nil || u.User.Username() == "" {
			return location{}, fmt.Errorf("logstore/azblob: URI %q: want %s://container@account.dfs.core.windows.net/prefix", uri, u.Scheme)
		}
		if _, hasPassword := u.User.Password(); hasPassword {
			return location{}, fmt.Errorf("logstore/azblob: URI %s://%s@...: no password allowed", u.Scheme, u.User.Username())
		}
		loc.container = u.User.Username()
		account, _, ok := strings.Cut(u.Hostname(), ".")
		if !ok || account == "" {
			return location{}, fmt.Errorf("logstore/azblob: URI %q: host must be account.dfs.core.windows.net", uri)
		}
		loc.account = account
	default:
		return location{}, fmt.Errorf("logstore/azblob: URI %q: scheme must be az, azure, abfss or abfs", uri)
	}
	if loc.container == "" {
		return location{}, fmt.Errorf("logstore/azblob: URI %q names no container", uri)
	}
	loc.prefix = strings.Trim(u.Path, "/")
	return loc, nil
}

// Open returns the Store for an az:// or abfss:// URI, with credentials
// from the environment; see the package doc. Like New, it makes one List
// Blobs request.
func Open(ctx context.Context, uri string) (*logstore.Portable, error) {
	loc, err := parseURI(uri)
	if err != nil {
		return nil, err
	}
	opts, err := envOptions(loc.account)
	if err != nil {
		return nil, err
	}
	return New(ctx, loc.container, loc.prefix, opts)
}

func getenv(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}

// envOptions reads credentials for account ("" for any) from the
// environment.
func envOptions(account string) (Options, error) {
	if cs := getenv("AZURE_STORAGE_CONNECTION_STRING"); cs != "" {
		if account == "" || strings.EqualFold(connStringField(cs, "AccountName"), account) {
			return Options{ConnectionString: cs}, nil
		}
	}
	envAccount := getenv("AZURE_STORAGE_ACCOUNT", "AZURE_STORAGE_ACCOUNT_NAME")
	opts := Options{AccountName: account}
	if account == "" {
		if envAccount == "" {
			return Options{}, fmt.Errorf("logstore/azblob: az:// needs AZURE_STORAGE_ACCOUNT or AZURE_STORAGE_CONNECTION_STRING")
		}
		opts.AccountName = envAccount
	}
	if key := getenv("AZURE_STORAGE_KEY", "AZURE_STORAGE_ACCOUNT_KEY"); key != "" && (envAccount == "" || strings.EqualFold(envAccount, opts.AccountName)) {
		opts.AccountKey = key
		return opts, nil
	}
	cred, err := azidentity.NewDefaultAzureCredential(nil)
	if err != nil {
		return Options{}, fmt.Errorf("logstore/azblob: no account key in the environment, and no default Azure credential: %w", err)
	}
	opts.Credential = cred
	return opts, nil
}

// connStringField returns the value of field in a connection string.
func connStringField(cs, field string) string {
	for part := range strings.SplitSeq(cs, ";") {
		k, v, ok := strings.Cut(part, "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), field) {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

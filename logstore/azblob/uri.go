package azblob

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

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
	opts.Credential = DefaultCredential(nil)
	return opts, nil
}

// connectionString is what a connection string says of the blob service.
type connectionString struct {
	endpoint, account, key, sas string
}

// Azurite's well-known development account, which
// UseDevelopmentStorage=true names. The key is public (it is in Azurite's
// and the Azure Storage emulator's documentation); it is no secret.
const (
	devAccount  = "devstoreaccount1"
	devKey      = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
	devEndpoint = "http://127.0.0.1:10000/" + devAccount
)

// parseConnectionString reads the fields of a connection string that
// concern the blob service. Its errors never quote the string.
func parseConnectionString(cs string) (connectionString, error) {
	fields := map[string]string{}
	for part := range strings.SplitSeq(cs, ";") {
		k, v, ok := strings.Cut(part, "=")
		if k = strings.TrimSpace(k); ok && k != "" {
			fields[strings.ToLower(k)] = strings.TrimSpace(v)
		}
	}
	var c connectionString
	if strings.EqualFold(fields["usedevelopmentstorage"], "true") {
		c = connectionString{endpoint: devEndpoint, account: devAccount, key: devKey}
		if proxy := fields["developmentstorageproxyuri"]; proxy != "" {
			u, err := url.Parse(proxy)
			if err != nil || u.Hostname() == "" {
				return connectionString{}, errors.New("logstore/azblob: invalid DevelopmentStorageProxyUri in the connection string")
			}
			c.endpoint = u.Scheme + "://" + u.Hostname() + ":10000/" + devAccount
		}
		return c, nil
	}
	c.account, c.key, c.sas = fields["accountname"], fields["accountkey"], strings.TrimPrefix(fields["sharedaccesssignature"], "?")
	c.endpoint = fields["blobendpoint"]
	if c.endpoint == "" {
		if c.account == "" {
			return connectionString{}, errors.New("logstore/azblob: the connection string has neither BlobEndpoint nor AccountName")
		}
		protocol := firstOf(fields["defaultendpointsprotocol"], "https")
		suffix := firstOf(fields["endpointsuffix"], "core.windows.net")
		c.endpoint = protocol + "://" + c.account + ".blob." + suffix
	}
	if c.key == "" && c.sas == "" {
		return connectionString{}, errors.New("logstore/azblob: the connection string has neither AccountKey nor SharedAccessSignature")
	}
	if c.key != "" && c.account == "" {
		return connectionString{}, errors.New("logstore/azblob: the connection string has an AccountKey without AccountName")
	}
	if c.key != "" {
		c.sas = ""
	}
	return c, nil
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

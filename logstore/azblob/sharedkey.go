package azblob

// Shared Key authorization of the Blob service, as the service checks it
// (the "Shared Key" scheme, versions 2009-09-19 and later).
//
// The string to sign is the verb, then eleven standard headers, each on a
// line of its own and empty when absent: Content-Encoding,
// Content-Language, Content-Length (empty for zero), Content-MD5,
// Content-Type, Date (empty: x-ms-date is sent instead), If-Modified-Since,
// If-Match, If-None-Match, If-Unmodified-Since and Range; then the
// canonicalized headers, every x-ms-* header with its name in lower case,
// sorted, as "name:value\n"; then the canonicalized resource: "/" + the
// account name + the URI path as sent (percent-encoded), and for each query
// parameter, names in lower case and sorted, "\nname:value" with the
// decoded values sorted and joined by ','. The signature is the base64
// HMAC-SHA256 of that string under the base64-decoded account key, sent as
// "Authorization: SharedKey ACCOUNT:SIGNATURE". sharedkey_test.go checks the
// string on a fixed request; every test against Azurite checks the
// signature, which the emulator verifies as the service does.

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// sharedKey is an account name and its decoded key.
type sharedKey struct {
	account string
	key     []byte
}

// standardHeaders are the headers of the string to sign, in its order,
// after the verb.
var standardHeaders = []string{
	"Content-Encoding", "Content-Language", "Content-Length", "Content-MD5", "Content-Type", "Date",
	"If-Modified-Since", "If-Match", "If-None-Match", "If-Unmodified-Since", "Range",
}

// stringToSign returns the Shared Key string to sign of req, whose body is
// contentLength bytes, for account.
func stringToSign(req *http.Request, account string, contentLength int64) string {
	var b strings.Builder
	b.WriteString(req.Method)
	b.WriteByte('\n')
	for _, h := range standardHeaders {
		v := req.Header.Get(h)
		if h == "Content-Length" {
			v = ""
			if contentLength > 0 {
				v = strconv.FormatInt(contentLength, 10)
			}
		}
		b.WriteString(v)
		b.WriteByte('\n')
	}
	var names []string
	for name := range req.Header {
		if l := strings.ToLower(name); strings.HasPrefix(l, "x-ms-") {
			names = append(names, name)
		}
	}
	slices.SortFunc(names, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) })
	for _, name := range names {
		b.WriteString(strings.ToLower(name))
		b.WriteByte(':')
		b.WriteString(strings.TrimSpace(strings.Join(req.Header[name], ",")))
		b.WriteByte('\n')
	}
	b.WriteString(canonicalResource(req.URL, account))
	return b.String()
}

// canonicalResource is "/ACCOUNT/PATH" and the sorted query parameters.
func canonicalResource(u *url.URL, account string) string {
	var b strings.Builder
	b.WriteString("/" + account)
	if p := u.EscapedPath(); p != "" {
		b.WriteString(p)
	} else {
		b.WriteByte('/')
	}
	q, _ := url.ParseQuery(u.RawQuery)
	lower := make(map[string][]string, len(q))
	for name, vals := range q {
		l := strings.ToLower(name)
		lower[l] = append(lower[l], vals...)
	}
	names := make([]string, 0, len(lower))
	for name := range lower {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		vals := lower[name]
		slices.Sort(vals)
		b.WriteString("\n" + name + ":" + strings.Join(vals, ","))
	}
	return b.String()
}

// sign sets the Authorization header of req (whose x-ms-date and
// x-ms-version are set).
func (k *sharedKey) sign(req *http.Request, contentLength int64) {
	mac := hmac.New(sha256.New, k.key)
	mac.Write([]byte(stringToSign(req, k.account, contentLength)))
	req.Header.Set("Authorization", "SharedKey "+k.account+":"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
}

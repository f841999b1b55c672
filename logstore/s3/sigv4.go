package s3

// AWS Signature Version 4, header form, as S3 and STS check it.
//
// The canonical request is the method, the URI path as sent (already
// percent-encoded by escapePath; S3 wants it encoded once, not twice as
// other services do), the query sorted by name then value with both
// strictly encoded, the signed headers (lower-case names, sorted, values
// trimmed, each "name:value\n"), their names joined by ';', and the hex
// SHA-256 of the payload. The string to sign is the algorithm, the time,
// the scope (date/region/service/aws4_request) and the hex SHA-256 of the
// canonical request; the key is the HMAC chain of "AWS4"+secret over the
// scope's parts. sigv4_test.go checks the result against the AWS SDK's
// signer on the same requests.

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// emptySHA256 is the hex SHA-256 of no bytes, the payload hash of bodiless
// requests.
const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// payloadHash is the hex SHA-256 of body.
func payloadHash(body []byte) string {
	if len(body) == 0 {
		return emptySHA256
	}
	h := sha256.Sum256(body)
	return hex.EncodeToString(h[:])
}

// signV4 signs req for service in region with c at now: it sets
// X-Amz-Date, X-Amz-Security-Token (for temporary credentials),
// X-Amz-Content-Sha256 (S3 only) and Authorization. hash is the payload's
// hex SHA-256. The signed headers are host, content-length (of a body),
// content-type, content-md5, range, if-none-match and every x-amz-*
// header.
func signV4(req *http.Request, c Credentials, service, region, hash string, now time.Time) {
	amzDate := now.UTC().Format("20060102T150405Z")
	date := amzDate[:8]
	req.Header.Set("X-Amz-Date", amzDate)
	if service == "s3" {
		req.Header.Set("X-Amz-Content-Sha256", hash)
	}
	if c.SessionToken != "" {
		req.Header.Set("X-Amz-Security-Token", c.SessionToken)
	} else {
		req.Header.Del("X-Amz-Security-Token")
	}

	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	type header struct{ name, value string }
	headers := []header{{"host", host}}
	if req.ContentLength > 0 {
		headers = append(headers, header{"content-length", strconv.FormatInt(req.ContentLength, 10)})
	}
	for name, vals := range req.Header {
		lower := strings.ToLower(name)
		switch {
		case lower == "content-type", lower == "content-md5", lower == "range", lower == "if-none-match",
			strings.HasPrefix(lower, "x-amz-"):
		default:
			continue
		}
		trimmed := make([]string, len(vals))
		for i, v := range vals {
			trimmed[i] = strings.Join(strings.Fields(v), " ")
		}
		headers = append(headers, header{lower, strings.Join(trimmed, ",")})
	}
	slices.SortFunc(headers, func(a, b header) int { return strings.Compare(a.name, b.name) })
	var canonHeaders strings.Builder
	names := make([]string, len(headers))
	for i, h := range headers {
		names[i] = h.name
		canonHeaders.WriteString(h.name + ":" + h.value + "\n")
	}
	signed := strings.Join(names, ";")

	path := req.URL.EscapedPath()
	if path == "" {
		path = "/"
	}
	canonical := strings.Join([]string{
		req.Method, path, canonicalQuery(req.URL.RawQuery),
		canonHeaders.String(), signed, hash,
	}, "\n")
	scope := date + "/" + region + "/" + service + "/aws4_request"
	sum := sha256.Sum256([]byte(canonical))
	toSign := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n" + hex.EncodeToString(sum[:])

	key := hmacSHA256([]byte("AWS4"+c.SecretKey), date)
	key = hmacSHA256(key, region)
	key = hmacSHA256(key, service)
	key = hmacSHA256(key, "aws4_request")
	sig := hex.EncodeToString(hmacSHA256(key, toSign))
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+c.AccessKey+"/"+scope+
		", SignedHeaders="+signed+", Signature="+sig)
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

// canonicalQuery is a raw query in SigV4's form: pairs sorted by name and
// value, strictly encoded, "name=" for a name without a value.
func canonicalQuery(raw string) string {
	if raw == "" {
		return ""
	}
	q, _ := url.ParseQuery(raw) // built by this package: it parses
	type pair struct{ k, v string }
	var pairs []pair
	for k, vs := range q {
		for _, v := range vs {
			pairs = append(pairs, pair{escape(k, false), escape(v, false)})
		}
	}
	slices.SortFunc(pairs, func(a, b pair) int {
		if c := strings.Compare(a.k, b.k); c != 0 {
			return c
		}
		return strings.Compare(a.v, b.v)
	})
	parts := make([]string, len(pairs))
	for i, p := range pairs {
		parts[i] = p.k + "=" + p.v
	}
	return strings.Join(parts, "&")
}

// encodeQuery is q as sent: the canonical form, but a name whose value is
// empty goes bare ("uploads", not "uploads="), as S3's subresources are
// written; both forms sign the same.
func encodeQuery(q url.Values) string {
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		for _, v := range q[k] {
			if v == "" {
				parts = append(parts, escape(k, false))
			} else {
				parts = append(parts, escape(k, false)+"="+escape(v, false))
			}
		}
	}
	return strings.Join(parts, "&")
}

// escape percent-encodes every byte of s but A-Z a-z 0-9 - . _ ~ (and '/'
// when keepSlash), with upper-case hex, as SigV4 wants.
func escape(s string, keepSlash bool) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9',
			c == '-', c == '.', c == '_', c == '~', c == '/' && keepSlash:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
		}
	}
	return b.String()
}

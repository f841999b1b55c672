package logstore

import "net/url"

// RedactURI returns uri without what may hold credentials, the user
// information, query and fragment, for error messages and logs. A local
// path (no scheme) is returned as it is; a string that does not parse as a
// URI is withheld.
func RedactURI(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return "(URI withheld)"
	}
	if u.Scheme == "" {
		return uri
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment = nil, "", false, ""
	return u.String()
}

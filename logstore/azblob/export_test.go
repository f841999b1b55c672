package azblob

// ParseURI exposes parseURI to the external tests: it returns the
// container, prefix and account ("" for az://) of a URI.
func ParseURI(uri string) (container, prefix, account string, err error) {
	loc, err := parseURI(uri)
	return loc.container, loc.prefix, loc.account, err
}

package write

import (
	"strings"
)

// HiveDefaultPartition is the directory name of a null (or empty string)
// partition value, as Hive and Spark write it. Part of the layout other
// engines expect: never change it.
const HiveDefaultPartition = "__HIVE_DEFAULT_PARTITION__"

// hiveEscape reports whether Hive (and Spark's escapePathName) escapes
// byte c in a partition directory name: the control characters, and
// " # % ' * / : = ? \ DEL { [ ] ^. NUL is escaped too, which Hive's list
// lacks, because no store accepts it in a key.
func hiveEscape(c byte) bool {
	if c < 0x20 || c == 0x7f {
		return true
	}
	return strings.IndexByte("\"#%'*/:=?\\{[]^", c) >= 0
}

const upperHex = "0123456789ABCDEF"

// escapePathName escapes s as Hive escapes a partition directory name:
// each byte to escape as %XX in upper-case hex.
func escapePathName(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if hiveEscape(c) {
			b.WriteByte('%')
			b.WriteByte(upperHex[c>>4])
			b.WriteByte(upperHex[c&15])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// partitionDir returns the directory segment col=value of one partition
// value, raw the serialized value ("" for null).
func partitionDir(col, raw string) string {
	v := HiveDefaultPartition
	if raw != "" {
		v = escapePathName(raw)
	}
	return escapePathName(col) + "=" + v
}

// uriKeep reports whether byte c stays as is in the URI path of an add: the
// unreserved characters and the sub-delimiters, '/', ':' and '@'.
func uriKeep(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-._~!$&'()*+,;=:@/", c) >= 0
}

// encodePath percent-encodes a relative store key as the path of an add
// action, a URI reference: every byte outside uriKeep, non-ASCII bytes of
// UTF-8 included, becomes %XX. A ':' in the first segment would read as a
// scheme, but escapePathName has already escaped every ':' of a
// partition directory, and file names have none.
func encodePath(key string) string {
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		c := key[i]
		if uriKeep(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(upperHex[c>>4])
		b.WriteByte(upperHex[c&15])
	}
	return b.String()
}

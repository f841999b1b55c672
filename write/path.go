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

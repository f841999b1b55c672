package logstore_test

import (
	"errors"
	"testing"

	"github.com/godelta/delta/logstore"
)

// A refused key says which rule it breaks, so that CONVERT of a file
// named a\b.parquet, or any other key, explains itself instead of saying
// only "invalid key". The rules are unchanged. (Issue 30, item 11.)
func TestCheckKeyReason(t *testing.T) {
	for _, tc := range []struct{ key, want string }{
		{"", `logstore: invalid key "": a key is not empty`},
		{"/a", `logstore: invalid key "/a": a key is relative, it does not start with '/'`},
		{"a/", `logstore: invalid key "a/": a key does not end with '/'`},
		{`a\b.parquet`, `logstore: invalid key "a\\b.parquet": a key holds no backslash ('/' separates its segments)`},
		{"a\x00b", `logstore: invalid key "a\x00b": a key holds no NUL byte`},
		{"a//b", `logstore: invalid key "a//b": a key has no empty segment`},
		{"a/./b", `logstore: invalid key "a/./b": a key has no "." or ".." segment`},
		{"..", `logstore: invalid key "..": a key has no "." or ".." segment`},
	} {
		err := logstore.CheckKey(tc.key)
		if err == nil || err.Error() != tc.want || !errors.Is(err, logstore.ErrInvalidKey) {
			t.Errorf("CheckKey(%q) = %v, want %s", tc.key, err, tc.want)
		}
	}
	// A KeyError made without a reason reads as before.
	if got := (&logstore.KeyError{Key: "k"}).Error(); got != `logstore: invalid key "k"` {
		t.Errorf("KeyError without a reason: %s", got)
	}
}

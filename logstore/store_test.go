package logstore_test

import (
	"errors"
	"testing"

	"github.com/godelta/delta/logstore"
)

func TestCheckKey(t *testing.T) {
	valid := []string{
		"a", "a/b", "_delta_log/00000000000000000000.json", ".hidden", "a/.b", "a..b", "...",
		"x=A%2FA/part-0.parquet", "a b/c d", "日本/語", "a:b",
	}
	invalid := []string{
		"", "/", "/a", "a/", "a//b", ".", "..", "./a", "a/.", "a/./b", "../a", "a/..", "a/../b",
		"a\\b", "a\x00b",
	}
	for _, key := range valid {
		if err := logstore.CheckKey(key); err != nil {
			t.Errorf("CheckKey(%q) = %v, want nil", key, err)
		}
		if err := logstore.CheckDir(key + "/"); err != nil {
			t.Errorf("CheckDir(%q) = %v, want nil", key+"/", err)
		}
	}
	for _, key := range invalid {
		err := logstore.CheckKey(key)
		var ke *logstore.KeyError
		if !errors.Is(err, logstore.ErrInvalidKey) || !errors.As(err, &ke) || ke.Key != key {
			t.Errorf("CheckKey(%q) = %v, want a *KeyError for it", key, err)
		}
	}
	for _, dir := range []string{"a", "/", "a//", "/a/", "../", "./", "a/b"} {
		if err := logstore.CheckDir(dir); !errors.Is(err, logstore.ErrInvalidKey) {
			t.Errorf("CheckDir(%q) = %v, want ErrInvalidKey", dir, err)
		}
	}
	if err := logstore.CheckDir(""); err != nil {
		t.Errorf("CheckDir(\"\") = %v, want nil", err)
	}
	if got, want := logstore.CheckKey("a\x00\"b").Error(), `logstore: invalid key "a\x00\"b": a key holds no NUL byte`; got != want {
		t.Errorf("error text = %s, want %s", got, want)
	}
}

func TestCheckRange(t *testing.T) {
	for _, r := range [][2]int64{{0, 0}, {0, 1}, {5, 0}, {1 << 62, 1 << 62}} {
		if err := logstore.CheckRange(r[0], r[1]); err != nil {
			t.Errorf("CheckRange(%d, %d) = %v", r[0], r[1], err)
		}
	}
	for _, r := range [][2]int64{{-1, 0}, {0, -1}, {-5, -5}} {
		if err := logstore.CheckRange(r[0], r[1]); !errors.Is(err, logstore.ErrInvalidRange) {
			t.Errorf("CheckRange(%d, %d) = %v, want ErrInvalidRange", r[0], r[1], err)
		}
	}
}

package main

import (
	"os"
	"path/filepath"
	"testing"
)

// --log-cache, or $GODELTA_LOG_CACHE, fills the directory with the log's
// files, and a command run again over it prints the same.
func TestLogCacheFlag(t *testing.T) {
	table := writeTable(t)
	count := func(dir string) int {
		n := 0
		filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				n++
			}
			return nil
		})
		return n
	}
	plain := mustRun(t, "describe", table).stdout

	flagDir := t.TempDir()
	if got := mustRun(t, "describe", "--log-cache", flagDir, table).stdout; got != plain {
		t.Errorf("describe with a cold cache:\n%s\nwant\n%s", got, plain)
	}
	if count(flagDir) == 0 {
		t.Error("--log-cache: nothing cached")
	}
	if got := mustRun(t, "describe", "--log-cache", flagDir, table).stdout; got != plain {
		t.Errorf("describe with a warm cache:\n%s\nwant\n%s", got, plain)
	}

	envDir := t.TempDir()
	t.Setenv(logCacheEnv, envDir)
	mustRun(t, "describe", table)
	if count(envDir) == 0 {
		t.Errorf("$%s: nothing cached", logCacheEnv)
	}
}

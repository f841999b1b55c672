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

// The source table of a merge is opened as the target is: with the log
// cache, so its log files land in the same directory.
func TestLogCacheMergeSource(t *testing.T) {
	entries := func(dir string) map[string]bool {
		got := map[string]bool{}
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				got[filepath.Base(p)] = true
			}
			return nil
		})
		return got
	}
	dir := t.TempDir()
	target, source := filepath.Join(dir, "t"), filepath.Join(dir, "s")
	for _, table := range []string{target, source} {
		mustRun(t, "create", table, "--schema", "id BIGINT NOT NULL, name STRING")
		mustRun(t, "append", table, writeFile(t, table+".csv", "id,name\n1,a\n2,b\n"))
	}
	sourceOnly := t.TempDir()
	mustRun(t, "describe", "--log-cache", sourceOnly, source)
	want := entries(sourceOnly)
	if len(want) == 0 {
		t.Fatal("describe --log-cache: nothing cached")
	}
	both := t.TempDir()
	mustRun(t, "merge", target, "--source", source, "--on", "t.id = s.id", "--delete-if", "t.id < 0", "--log-cache", both)
	got := entries(both)
	for name := range want {
		if !got[name] {
			t.Errorf("merge --log-cache: the source's log entry %s is not cached", name)
		}
	}
}

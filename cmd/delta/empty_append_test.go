package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAppendEmptyInput: an empty or header-only input commits nothing and
// says so (issue 19, item 20: before, it made an empty commit, version 1).
func TestAppendEmptyInput(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "t")
	mustRun(t, "create", root, "--schema", "id BIGINT, name STRING")
	for name, content := range map[string]string{
		"header.csv":  "id,name\n",
		"empty.jsonl": "",
	} {
		path := writeFile(t, filepath.Join(dir, name), content)
		r := mustRun(t, "append", root, path)
		if !strings.Contains(r.stdout, "nothing committed") {
			t.Errorf("%s: stdout %q, want it to say nothing was committed", name, r.stdout)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "_delta_log", "00000000000000000001.json")); !os.IsNotExist(err) {
		t.Errorf("an empty append made commit 1 (stat: %v)", err)
	}
}

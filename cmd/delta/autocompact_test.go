package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/godelta/delta/optimize"
)

// `delta append` on a table with delta.autoOptimize.autoCompact on
// compacts once the partition holds enough small files, and says so.
func TestAppendAutoCompacts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t")
	mustRun(t, "create", dir, "--schema", "id BIGINT, v STRING", "--property", "delta.autoOptimize.autoCompact=true")
	in := filepath.Join(t.TempDir(), "rows.csv")
	n := optimize.AutoCompactMinNumFiles
	for i := range n {
		if err := os.WriteFile(in, fmt.Appendf(nil, "id,v\n%d,r%d\n", i, i), 0o644); err != nil {
			t.Fatal(err)
		}
		r := mustRun(t, "append", dir, in)
		compacted := strings.Contains(r.stdout, "auto compaction")
		if compacted != (i == n-1) {
			t.Fatalf("append %d: %q", i, r.stdout)
		}
		if compacted && !strings.Contains(r.stdout, fmt.Sprintf("committed OPTIMIZE at version %d", n+1)) {
			t.Fatalf("append %d: %q, want the OPTIMIZE at version %d", i, r.stdout, n+1)
		}
	}
	var files []json.RawMessage
	decodeOne(t, mustRun(t, "files", dir, "--json").stdout, &files)
	if len(files) != 1 {
		t.Errorf("%d live files after auto compaction, want 1", len(files))
	}
	out := mustRun(t, "scan", dir, "--format", "csv").stdout
	if got := strings.Count(strings.TrimSpace(out), "\n"); got != n {
		t.Errorf("%d rows scanned (plus header), want %d:\n%s", got, n, out)
	}
	hist := mustRun(t, "history", dir).stdout
	if !strings.Contains(hist, "OPTIMIZE") {
		t.Errorf("history without the OPTIMIZE:\n%s", hist)
	}
}

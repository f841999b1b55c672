package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// files --json prints the stats' numbers as the log holds them, exactly:
// a DECIMAL(38,0) of -10^20 and a BIGINT of 2^53+1 are not read through
// float64 (which would print -1e+20 and 9007199254740992), whether the
// stats come from the commit's JSON or from a checkpoint that keeps only
// stats_parsed. (Issue 19, item 4.)
func TestFilesJSONExactStats(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "rows.csv")
	if err := os.WriteFile(csv, []byte("id,amt\n9007199254740993,-100000000000000000000\n2,5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		props []string
	}{
		{"json stats", nil},
		{"struct stats only", []string{"--property", "delta.checkpoint.writeStatsAsJson=false", "--property", "delta.checkpoint.writeStatsAsStruct=true"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
			mustRun(t, append([]string{"create", root, "--schema", "id BIGINT, amt DECIMAL(38,0)"}, tc.props...)...)
			mustRun(t, "append", root, csv)
			for _, cp := range []bool{false, true} {
				if cp {
					mustRun(t, "checkpoint", root)
				}
				out := mustRun(t, "files", root, "--json").stdout
				for _, want := range []string{`"amt": -100000000000000000000`, `"id": 9007199254740993`} {
					if !strings.Contains(out, want) {
						t.Errorf("checkpointed %v: files --json lacks %s:\n%s", cp, want, out)
					}
				}
			}
		})
	}
}

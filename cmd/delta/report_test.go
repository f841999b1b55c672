package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReportCommand(t *testing.T) {
	table := filepath.Join(testdata(t), "kernel-rs", "table-with-dv-small")

	r := mustRun(t, "report", table)
	// The table has one file of 10 rows with a deletion vector of 2
	// (kernel-rs's table-with-dv-small, whose expected scan has 8 rows).
	for _, want := range []string{"live files              1", "files with a DV  1 (100.0% of files)",
		"deleted rows     2 (20.0% of the rows of those files)", "Maintenance (estimates from the log)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, r.stdout)
		}
	}

	// --version shows an older version: version 0 has no deletion vector.
	r = mustRun(t, "report", "--version", "0", table)
	if !strings.Contains(r.stdout, "(version 0,") || !strings.Contains(r.stdout, "files with a DV  0") {
		t.Errorf("report --version 0:\n%s", r.stdout)
	}

	page := filepath.Join(t.TempDir(), "r.html")
	r = mustRun(t, "report", table, "--html", page)
	if !strings.Contains(r.stdout, page) {
		t.Errorf("stdout %q does not name the page", r.stdout)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); !strings.HasPrefix(s, "<!DOCTYPE html>") || strings.Count(s, "<svg") < 3 {
		t.Errorf("page is not an HTML report with charts:\n%.300s", s)
	}

	if r := runDelta("report"); r.code != 2 {
		t.Errorf("report without a table: exit %d, want 2", r.code)
	}
	if r := runDelta("report", filepath.Join(t.TempDir(), "none")); r.code != 1 {
		t.Errorf("report of a missing table: exit %d, want 1", r.code)
	}
	if r := runDelta("report", table, "--html", filepath.Join(t.TempDir(), "no", "such", "dir", "r.html")); r.code != 1 {
		t.Errorf("report to an unwritable file: exit %d, want 1", r.code)
	}
}

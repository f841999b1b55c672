package main

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestDeleteAndUpdate(t *testing.T) {
	for _, dvs := range []bool{false, true} {
		name := "copy-on-write"
		if dvs {
			name = "deletion-vectors"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			root := filepath.Join(dir, "t")
			mustRun(t, "create", root, "--schema", "id BIGINT NOT NULL, name STRING, n INT", "--property",
				"delta.enableDeletionVectors="+map[bool]string{true: "true", false: "false"}[dvs])
			csv := "id,name,n\n"
			for i := range 20 {
				csv += strings.Join([]string{itoa(i), "x" + itoa(i), itoa(i % 4)}, ",") + "\n"
			}
			mustRun(t, "append", root, writeFile(t, filepath.Join(dir, "a.csv"), csv))

			r := mustRun(t, "delete", root, "--where", "n = 0")
			if !strings.Contains(r.stdout, "5 rows deleted at version 2") {
				t.Fatalf("delete: %q", r.stdout)
			}
			if dvs != strings.Contains(r.stdout, "deletion vectors: 1 added") {
				t.Errorf("delete output %q", r.stdout)
			}
			var doc struct {
				Operation        string            `json:"operation"`
				Committed        bool              `json:"committed"`
				Version          int64             `json:"version"`
				Strategy         string            `json:"strategy"`
				OperationMetrics map[string]string `json:"operationMetrics"`
			}
			r = mustRun(t, "update", root, "--set", "name = upper(name), n = n + 10", "--where", "n = 1", "--json")
			decodeOne(t, r.stdout, &doc)
			if doc.Operation != "UPDATE" || !doc.Committed || doc.Version != 3 || doc.OperationMetrics["numUpdatedRows"] != "5" {
				t.Errorf("update --json: %+v", doc)
			}
			if want := map[bool]string{true: "merge-on-read", false: "copy-on-write"}[dvs]; doc.Strategy != want {
				t.Errorf("strategy %s, want %s", doc.Strategy, want)
			}
			got := strings.Split(strings.TrimSpace(mustRun(t, "scan", root, "--format", "csv").stdout), "\n")[1:]
			slices.Sort(got)
			var want []string
			for i := range 20 {
				switch i % 4 {
				case 0:
				case 1:
					want = append(want, itoa(i)+",X"+itoa(i)+","+itoa(11))
				default:
					want = append(want, itoa(i)+",x"+itoa(i)+","+itoa(i%4))
				}
			}
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("rows:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			r = mustRun(t, "delete", root, "--where", "id > 100")
			if !strings.Contains(r.stdout, "nothing committed") {
				t.Errorf("delete of nothing: %q", r.stdout)
			}
			if r := runDelta("delete", root); r.code != exitUsage {
				t.Errorf("delete without --where: exit %d", r.code)
			}
			if r := runDelta("update", root, "--set", "nope"); r.code != exitUsage {
				t.Errorf("update with a bad --set: exit %d", r.code)
			}
			if r := runDelta("update", root, "--set", "n = 'abc'"); r.code != exitFailure {
				t.Errorf("update with a value that cannot be cast: exit %d, %q", r.code, r.stderr)
			}
			r = mustRun(t, "delete", root, "--where", "true")
			if !strings.Contains(r.stdout, "15 rows deleted") {
				t.Errorf("delete everything: %q", r.stdout)
			}
		})
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

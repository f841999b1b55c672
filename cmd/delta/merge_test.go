package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestMerge(t *testing.T) {
	for _, dvs := range []bool{false, true} {
		t.Run(map[bool]string{true: "deletion-vectors", false: "copy-on-write"}[dvs], func(t *testing.T) {
			dir := t.TempDir()
			root := filepath.Join(dir, "t")
			mustRun(t, "create", root, "--schema", "id BIGINT NOT NULL, name STRING, n INT", "--property",
				"delta.enableDeletionVectors="+map[bool]string{true: "true", false: "false"}[dvs])
			csv := "id,name,n\n"
			for i := range 10 {
				csv += itoa(i) + ",x" + itoa(i) + "," + itoa(i) + "\n"
			}
			mustRun(t, "append", root, writeFile(t, filepath.Join(dir, "a.csv"), csv))

			// A CSV source with a column the table lacks (op): ids 8, 9
			// matched (9 deleted), 10, 11 new.
			src := writeFile(t, filepath.Join(dir, "s.csv"), "id,name,n,op\n8,new8,80,u\n9,new9,90,d\n10,new10,100,u\n11,new11,110,u\n")
			r := mustRun(t, "merge", root, "--source", src, "--on", "t.id = s.id",
				"--delete-if", "s.op = 'd'", "--update-all", "--insert-all")
			if !strings.Contains(r.stdout, "2 rows inserted, 1 updated, 1 deleted (of 4 source rows) at version 2") {
				t.Fatalf("merge: %q", r.stdout)
			}
			if dvs != strings.Contains(r.stdout, "deletion vectors: 1 added") {
				t.Errorf("merge output %q", r.stdout)
			}
			// A JSON lines source, explicit SET and VALUES, by-source
			// clauses, --json.
			js := writeFile(t, filepath.Join(dir, "s.jsonl"), `{"id": 0, "k": 5}`+"\n"+`{"id": 20, "k": 7}`+"\n")
			var doc struct {
				Operation        string            `json:"operation"`
				Committed        bool              `json:"committed"`
				Version          int64             `json:"version"`
				OperationMetrics map[string]string `json:"operationMetrics"`
			}
			r = mustRun(t, "merge", root, "--source", js, "--on", "t.id = s.id",
				"--update-set", "n = t.n + s.k", "--insert-values", "id = s.id, n = s.k",
				"--by-source-delete-if", "t.id < 3", "--by-source-update-set", "name = upper(name)", "--by-source-update-if", "t.n >= 100",
				"--json")
			decodeOne(t, r.stdout, &doc)
			m := doc.OperationMetrics
			if doc.Operation != "MERGE" || !doc.Committed || doc.Version != 3 || m["numSourceRows"] != "2" ||
				m["numTargetRowsInserted"] != "1" || m["numTargetRowsMatchedUpdated"] != "1" ||
				m["numTargetRowsNotMatchedBySourceDeleted"] != "2" || m["numTargetRowsNotMatchedBySourceUpdated"] != "2" {
				t.Errorf("merge --json: %+v", doc)
			}
			got := strings.Split(strings.TrimSpace(mustRun(t, "scan", root, "--format", "csv").stdout), "\n")[1:]
			slices.Sort(got)
			want := []string{"0,x0,5", "10,NEW10,100", "11,NEW11,110", "20,,7", "3,x3,3", "4,x4,4", "5,x5,5", "6,x6,6", "7,x7,7", "8,new8,80"}
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("rows:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			// Another table at a version as the source: version 1 has
			// ids 0..9; deleting matches removes them all.
			r = mustRun(t, "merge", root, "--source", root+"@1", "--on", "t.id = s.id", "--delete-if", "true")
			if !strings.Contains(r.stdout, "0 rows inserted, 0 updated, 7 deleted (of 10 source rows)") {
				t.Errorf("merge from a table version: %q", r.stdout)
			}
			for _, bad := range [][]string{
				{"merge", root, "--on", "t.id = s.id", "--update-all"},
				{"merge", root, "--source", src, "--on", "t.id = s.id"},
				{"merge", root, "--source", src, "--on", "t.id = s.id", "--update-all", "--update-set", "n = 1"},
				{"merge", root, "--source", src, "--on", "t.id = s.id", "--insert-if", "s.n > 1"},
			} {
				if r := runDelta(bad...); r.code != exitUsage {
					t.Errorf("%q: exit %d, want usage", bad, r.code)
				}
			}
			if r := runDelta("merge", root, "--source", src, "--on", "t.nope = s.id", "--update-all"); r.code != exitFailure {
				t.Errorf("unknown column: exit %d", r.code)
			}
		})
	}
}

// --merge-schema: the source's new column joins the table's schema in the
// merge's commit (MERGE WITH SCHEMA EVOLUTION).
func TestMergeSchemaFlag(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "t")
	mustRun(t, "create", root, "--schema", "id BIGINT NOT NULL, name STRING")
	mustRun(t, "append", root, writeFile(t, filepath.Join(dir, "a.csv"), "id,name\n1,a\n2,b\n"))
	src := writeFile(t, filepath.Join(dir, "s.csv"), "id,name,tag\n2,B,t2\n3,c,t3\n")
	mustRun(t, "merge", root, "--source", src, "--on", "t.id = s.id", "--update-all", "--insert-all", "--merge-schema")
	got := strings.Split(strings.TrimSpace(mustRun(t, "scan", root, "--format", "csv").stdout), "\n")
	header, rows := got[0], got[1:]
	slices.Sort(rows)
	if header != "id,name,tag" || !slices.Equal(rows, []string{"1,a,", "2,B,t2", "3,c,t3"}) {
		t.Fatalf("after merge --merge-schema:\n%s", strings.Join(got, "\n"))
	}
	if v := mustRun(t, "describe", root, "--json").stdout; !strings.Contains(v, `"version": 2`) && !strings.Contains(v, `"version":2`) {
		t.Errorf("describe: want version 2 (one commit for the merge): %s", v)
	}
}

// merge --memory spills a source over the budget to --spill-dir, leaves
// nothing there, and gives what the merge in memory gives.
func TestMergeMemoryFlag(t *testing.T) {
	dir := t.TempDir()
	csv := "id,name,n\n"
	for i := range 300 {
		csv += itoa(i) + ",x" + itoa(i) + "," + itoa(i) + "\n"
	}
	src := "id,name,n\n"
	for i := 200; i < 700; i++ {
		src += itoa(i) + ",new" + itoa(i) + "," + itoa(i*10) + "\n"
	}
	srcFile := writeFile(t, filepath.Join(dir, "s.csv"), src)
	spill := filepath.Join(dir, "spill")
	if err := os.Mkdir(spill, 0o755); err != nil {
		t.Fatal(err)
	}
	var scans []string
	for _, extra := range [][]string{nil, {"--memory", "2KB", "--spill-dir", spill}} {
		root := filepath.Join(dir, fmt.Sprint("t", len(scans)))
		mustRun(t, "create", root, "--schema", "id BIGINT NOT NULL, name STRING, n INT")
		mustRun(t, "append", root, writeFile(t, filepath.Join(dir, "a.csv"), csv))
		r := mustRun(t, append([]string{"merge", root, "--source", srcFile, "--on", "t.id = s.id",
			"--delete-if", "s.n % 3 = 0", "--update-all", "--insert-all", "--by-source-delete-if", "t.id < 10"}, extra...)...)
		if !strings.Contains(r.stdout, "400 rows inserted, 67 updated, 43 deleted (of 500 source rows) at version 2") {
			t.Fatalf("merge %q: %q", extra, r.stdout)
		}
		got := strings.Split(strings.TrimSpace(mustRun(t, "scan", root, "--format", "csv").stdout), "\n")
		slices.Sort(got)
		scans = append(scans, strings.Join(got, "\n"))
	}
	if scans[0] != scans[1] {
		t.Errorf("spilled merge gives another table:\n%s\nin memory:\n%s", scans[1], scans[0])
	}
	if left, _ := os.ReadDir(spill); len(left) > 0 {
		t.Errorf("spill files left: %v", left)
	}
	root := filepath.Join(dir, "t0")
	for _, bad := range [][]string{{"--memory", "lots"}, {"--memory", "0"}} {
		if r := runDelta(append([]string{"merge", root, "--source", srcFile, "--on", "t.id = s.id", "--update-all"}, bad...)...); r.code != exitUsage {
			t.Errorf("%q: exit %d, want usage", bad, r.code)
		}
	}
	// Spill files never go inside the table root.
	if r := runDelta("merge", root, "--source", srcFile, "--on", "t.id = s.id", "--update-all", "--memory", "1KB", "--spill-dir", filepath.Join(root, "_tmp")); r.code != exitFailure || !strings.Contains(r.stderr, "inside the table root") {
		t.Errorf("spill dir in the table: exit %d, %q", r.code, r.stderr)
	}
}

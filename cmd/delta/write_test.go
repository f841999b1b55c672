package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCreateAndAppend(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "t")
	r := mustRun(t, "create", root, "--schema", "id BIGINT NOT NULL, name STRING, ts TIMESTAMP, amount DECIMAL(10,2), tags ARRAY<STRING>, day DATE",
		"--partition-by", "day", "--property", "delta.constraints.pos=id > 0", "--property", "delta.enableChangeDataFeed=true")
	if !strings.Contains(r.stdout, "created") {
		t.Fatalf("create: %q", r.stdout)
	}
	if r := runDelta("create", root, "--schema", "id BIGINT"); r.code != exitFailure || !strings.Contains(r.stderr, "exist") {
		t.Fatalf("create over an existing table: exit %d, %q", r.code, r.stderr)
	}
	if r := runDelta("create", filepath.Join(dir, "u"), "--schema", "id NOPE"); r.code != exitUsage {
		t.Fatalf("bad --schema: exit %d, %q", r.code, r.stderr)
	}

	csvPath := writeFile(t, filepath.Join(dir, "a.csv"), "id,name,ts,amount,tags,day\n"+
		"1,one,2026-01-02 03:04:05,1.50,\"[\"\"x\"\",\"\"y\"\"]\",2026-01-02\n"+
		"2,,2026-01-02T03:04:05.5Z,,,2026-01-03\n")
	jsonPath := writeFile(t, filepath.Join(dir, "b.jsonl"), `{"id":3,"name":"three","amount":3.25,"tags":[],"day":"2026-01-02"}`+"\n"+
		`{"ID":4,"ts":"2026-05-06T07:08:09Z","day":null}`+"\n")
	r = mustRun(t, "append", root, csvPath, jsonPath)
	if !strings.Contains(r.stdout, "appended 4 rows at version 1") {
		t.Fatalf("append: %q", r.stdout)
	}
	got := mustRun(t, "scan", root, "--format", "jsonl").stdout
	lines := strings.Split(strings.TrimSpace(got), "\n")
	slices.Sort(lines)
	want := []string{
		`{"id":1,"name":"one","ts":"2026-01-02T03:04:05Z","amount":1.50,"tags":["x","y"],"day":"2026-01-02"}`,
		`{"id":2,"name":null,"ts":"2026-01-02T03:04:05.500Z","amount":null,"tags":null,"day":"2026-01-03"}`,
		`{"id":3,"name":"three","ts":null,"amount":3.25,"tags":[],"day":"2026-01-02"}`,
		`{"id":4,"name":null,"ts":"2026-05-06T07:08:09Z","amount":null,"tags":null,"day":null}`,
	}
	if !slices.Equal(lines, want) {
		t.Fatalf("scan after append:\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	// The rows written read back as Parquet too: append the table's own
	// data files' rows again through a .parquet input.
	var pq string
	filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err == nil && strings.HasSuffix(p, ".parquet") && !strings.Contains(p, "_delta_log") && pq == "" {
			pq = p
		}
		return nil
	})
	if pq == "" {
		t.Fatal("no data file written")
	}
	// Its partition column is not in the file, so those rows have day null.
	pqCopy := filepath.Join(dir, "c.parquet")
	data, err := os.ReadFile(pq)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, pqCopy, string(data))
	if r := mustRun(t, "append", root, pqCopy); !strings.Contains(r.stdout, "at version 2") {
		t.Fatalf("append parquet: %q", r.stdout)
	}

	// Bad rows name the file, row and column, and commit nothing.
	for _, tc := range []struct{ file, content, want string }{
		{"bad1.csv", "id,name\nx,1\n", `line 2, column "id"`},
		{"bad2.csv", "id,nope\n1,2\n", `column "nope" is not in the table`},
		{"bad3.jsonl", `{"id":5}` + "\n" + `{"id":"five"}` + "\n", `line 2, column "id"`},
		{"bad4.csv", "id,name\n1,ok\n-1,neg\n", "bad4.csv: line 3: write: CHECK constraint pos"},
		{"bad5.csv", "name\nnoid\n", "bad5.csv: line 2: write: NOT NULL id"},
		{"bad6.txt", "x", "unknown input format"},
	} {
		r := runDelta("append", root, writeFile(t, filepath.Join(dir, tc.file), tc.content))
		if r.code != exitFailure || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("append %s: exit %d, %q; want %q", tc.file, r.code, r.stderr, tc.want)
		}
		checkErrorLine(t, "append "+tc.file, r.stderr)
	}
	if v := mustRun(t, "describe", root, "--json").stdout; !strings.Contains(v, `"version": 2,`) {
		t.Errorf("a failed append committed something:\n%s", v)
	}
	// The change data feed of the append.
	header, rows := csvRows(t, "changes", root, "--from", "1", "--to", "1")
	if len(rows) != 4 || header[len(header)-3] != "_change_type" || rows[0][len(header)-3] != "insert" {
		t.Errorf("changes: %v %v", header, rows)
	}
}

// Several `delta append` processes at once on one table all succeed.
func TestConcurrentAppendProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "delta")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	root := filepath.Join(dir, "t")
	mustRun(t, "create", root, "--schema", "id BIGINT NOT NULL, p STRING", "--partition-by", "p")
	const procs, rowsEach = 6, 50
	var wg sync.WaitGroup
	errs := make([]error, procs)
	for i := range procs {
		var sb strings.Builder
		sb.WriteString("id,p\n")
		for k := range rowsEach {
			fmt.Fprintf(&sb, "%d,p%d\n", i*rowsEach+k, k%3)
		}
		file := writeFile(t, filepath.Join(dir, fmt.Sprintf("in%d.csv", i)), sb.String())
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := exec.Command(bin, "append", root, file).CombinedOutput()
			if err != nil {
				errs[i] = fmt.Errorf("%v: %s", err, out)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	_, rows := csvRows(t, "scan", root, "--columns", "id")
	ids := column(rows, 0)
	if len(ids) != procs*rowsEach {
		t.Fatalf("%d rows, want %d", len(ids), procs*rowsEach)
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("row %s appended twice", id)
		}
		seen[id] = true
	}
	if v := mustRun(t, "describe", root, "--json").stdout; !strings.Contains(v, fmt.Sprintf(`"version": %d,`, procs)) {
		t.Errorf("want version %d after %d appends:\n%s", procs, procs, v)
	}
}

func TestDemo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	r := mustRun(t, "demo", dir)
	for _, step := range []string{"create", "append", "scan", "time travel", "checkpoint", "constraint", "delete", "optimize", "vacuum", "history"} {
		if !strings.Contains(r.stdout, "\n"+step) {
			t.Errorf("demo output lacks the %s step:\n%s", step, r.stdout)
		}
	}
	if r := runDelta("demo", dir); r.code != exitFailure {
		t.Errorf("demo into an existing table: exit %d", r.code)
	}
}

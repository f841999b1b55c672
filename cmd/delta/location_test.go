package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
)

// The regression tests of the location issue, through the CLI: each
// finding lost data or made a table unreadable.

// idTable creates a table at dir with ids 1..3 in one file and returns
// the file's path in the log (relative).
func idTable(t *testing.T, dir string) string {
	t.Helper()
	mustRun(t, "create", dir, "--schema", "id BIGINT")
	csv := filepath.Join(t.TempDir(), "rows.csv")
	if err := os.WriteFile(csv, []byte("id\n1\n2\n3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "append", dir, csv)
	files := strings.Fields(mustRun(t, "files", dir).stdout)
	for _, f := range files {
		if strings.HasSuffix(f, ".parquet") {
			return f
		}
	}
	t.Fatalf("no data file listed: %v", files)
	return ""
}

// rewriteCommit replaces old with new in the text of commit v of dir.
func rewriteCommit(t *testing.T, dir string, v int, old, new string) {
	t.Helper()
	p := filepath.Join(dir, "_delta_log", fmt.Sprintf("%020d.json", v))
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("commit %d has no %q:\n%s", v, old, b)
	}
	if err := os.WriteFile(p, []byte(strings.ReplaceAll(string(b), old, new)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// age makes every file under dir ten days old, so that VACUUM with a
// retention of 0h finds them eligible whatever the clock's resolution.
func age(t *testing.T, dir string) {
	t.Helper()
	then := time.Now().Add(-10 * 24 * time.Hour)
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			os.Chtimes(p, then, then)
		}
		return nil
	})
}

func ids(t *testing.T, table string, extra ...string) []string {
	t.Helper()
	r := mustRun(t, append([]string{"scan", table, "--columns", "id", "--format", "csv"}, extra...)...)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")[1:]
	slices.Sort(lines)
	return lines
}

// Finding 1: a live file spelled file://localhost/<root>/... is read by
// scan and kept by VACUUM, in both modes.
func TestVacuumKeepsLocalhostURI(t *testing.T) {
	for _, mode := range [][]string{nil, {"--lite"}} {
		dir := filepath.Join(t.TempDir(), "t")
		f := idTable(t, dir)
		rewriteCommit(t, dir, 1, `"path":"`+f+`"`, `"path":"file://localhost`+filepath.ToSlash(dir)+"/"+f+`"`)
		if got := ids(t, dir); !slices.Equal(got, []string{"1", "2", "3"}) {
			t.Fatalf("before VACUUM: ids %v", got)
		}
		age(t, dir)
		mustRun(t, append([]string{"vacuum", dir, "--retain", "0h", "--force"}, mode...)...)
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("VACUUM %v deleted the live file: %v", mode, err)
		}
		if got := ids(t, dir); !slices.Equal(got, []string{"1", "2", "3"}) {
			t.Errorf("after VACUUM %v: ids %v", mode, got)
		}
	}
}

// Finding 2: CONVERT of a file whose name has a ':' makes a path that
// reads back to that file, and VACUUM keeps it (CONVERT works in place:
// it is the user's only copy).
func TestConvertColonInName(t *testing.T) {
	type rec struct {
		ID int64 `parquet:"id"`
	}
	dir := t.TempDir()
	name := "export-2024-01-01T10:00:00.parquet"
	if err := parquet.WriteFile(filepath.Join(dir, name), []rec{{1}, {2}}); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "convert", dir)
	if got := ids(t, dir); !slices.Equal(got, []string{"1", "2"}) {
		t.Fatalf("after CONVERT: ids %v", got)
	}
	age(t, dir)
	mustRun(t, "vacuum", dir, "--retain", "0h", "--force")
	if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
		t.Fatalf("VACUUM deleted the converted file: %v", err)
	}
	if got := ids(t, dir); !slices.Equal(got, []string{"1", "2"}) {
		t.Errorf("after VACUUM: ids %v", got)
	}
}

// Finding 3: a lite VACUUM never deletes _delta_log files a remove or a
// cdc action names.
func TestVacuumLiteSparesTheLog(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t")
	f := idTable(t, dir)
	csv := filepath.Join(t.TempDir(), "more.csv")
	if err := os.WriteFile(csv, []byte("id\n4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "append", dir, csv)
	old := time.Now().Add(-10 * 24 * time.Hour).UnixMilli()
	// A commit that removes log files by name, as a hostile or broken
	// writer might.
	entry := func(p string) string {
		return `{"remove":{"path":"` + p + `","deletionTimestamp":` + strconv.FormatInt(old, 10) + `,"dataChange":true}}` + "\n"
	}
	commit := `{"commitInfo":{"operation":"DELETE"}}` + "\n" + entry("_delta_log/00000000000000000001.json") +
		entry("_delta_log/_last_checkpoint") + entry("./_delta_log/00000000000000000000.json") + entry("a/../_delta_log/00000000000000000002.json")
	if err := os.WriteFile(filepath.Join(dir, "_delta_log", "00000000000000000003.json"), []byte(commit), 0o644); err != nil {
		t.Fatal(err)
	}
	age(t, dir)
	mustRun(t, "vacuum", dir, "--lite", "--retain", "0h", "--force")
	for _, k := range []string{"00000000000000000000.json", "00000000000000000001.json", "00000000000000000002.json"} {
		if _, err := os.Stat(filepath.Join(dir, "_delta_log", k)); err != nil {
			t.Errorf("lite VACUUM deleted %s: %v", k, err)
		}
	}
	if got := ids(t, dir); !slices.Equal(got, []string{"1", "2", "3", "4"}) {
		t.Errorf("after VACUUM: ids %v (file %s)", got, f)
	}
}

// Finding 4: CLONE refuses a target inside the source, one that contains
// it, and a non-empty directory that holds no table; CONVERT refuses a
// directory that holds another table. The outer table's VACUUM would
// otherwise delete the inner table's files.
func TestCloneConvertOverlap(t *testing.T) {
	base := t.TempDir()
	src := filepath.Join(base, "src")
	idTable(t, src)
	junk := filepath.Join(base, "junk")
	if err := os.MkdirAll(junk, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(junk, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{filepath.Join(src, "inner"), base, junk} {
		r := runDelta("clone", src, target)
		if r.code == 0 {
			t.Errorf("clone %s %s succeeded", src, target)
		}
		if _, err := os.Stat(filepath.Join(target, "_delta_log")); err == nil && target != src {
			t.Errorf("clone into %s left a log", target)
		}
	}
	if r := runDelta("convert", base); r.code == 0 {
		t.Errorf("convert of a directory holding a table succeeded")
	}
	if _, err := os.Stat(filepath.Join(base, "_delta_log")); err == nil {
		t.Errorf("convert of %s left a log", base)
	}
}

// Finding 5: a shallow clone keeps reading its source once log cleanup
// has deleted its commit 0, and a clone of a clone reads the first
// source's files.
func TestCloneOutlivesCommit0(t *testing.T) {
	base := t.TempDir()
	src, c1, c2 := filepath.Join(base, "src"), filepath.Join(base, "c1"), filepath.Join(base, "c2")
	idTable(t, src)
	mustRun(t, "clone", src, c1)
	mustRun(t, "clone", c1, c2)
	if got := ids(t, c2); !slices.Equal(got, []string{"1", "2", "3"}) {
		t.Errorf("the clone of the clone reads ids %v", got)
	}
	// Log cleanup of c1: a checkpoint, then commit 0 gone.
	csv := filepath.Join(t.TempDir(), "more.csv")
	if err := os.WriteFile(csv, []byte("id\n4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "append", c1, csv)
	mustRun(t, "checkpoint", c1)
	if err := os.Remove(filepath.Join(c1, "_delta_log", "00000000000000000000.json")); err != nil {
		t.Fatal(err)
	}
	if got := ids(t, c1); !slices.Equal(got, []string{"1", "2", "3", "4"}) {
		t.Errorf("after cleanup, the clone reads ids %v", got)
	}
	// Its VACUUM still never touches the source.
	age(t, base)
	mustRun(t, "vacuum", c1, "--retain", "0h", "--force")
	if got := ids(t, src); !slices.Equal(got, []string{"1", "2", "3"}) {
		t.Errorf("after the clone's VACUUM, the source reads ids %v", got)
	}
}

// Finding 6: CLONE encodes the source root, so a directory named g%41,
// or holding '#' or '?', is read as itself.
func TestCloneEncodesTheRoot(t *testing.T) {
	for _, name := range []string{"g%41", "a#b", "q?x", "sp ace"} {
		base := t.TempDir()
		src := filepath.Join(base, name)
		idTable(t, src)
		if err := os.MkdirAll(filepath.Join(base, "gA"), 0o755); err != nil {
			t.Fatal(err)
		}
		c := filepath.Join(base, "clone")
		mustRun(t, "clone", src, c)
		if got := ids(t, c); !slices.Equal(got, []string{"1", "2", "3"}) {
			t.Errorf("clone of %q reads ids %v", name, got)
		}
	}
}

// Finding 8: CLONE of a version whose files were vacuumed is refused, as
// RESTORE is, instead of making an unreadable clone.
func TestCloneOfVacuumedVersion(t *testing.T) {
	base := t.TempDir()
	src := filepath.Join(base, "src")
	idTable(t, src)
	mustRun(t, "delete", src, "--where", "id > 0", "--strategy", "copy-on-write")
	age(t, src)
	mustRun(t, "vacuum", src, "--retain", "0h", "--force")
	r := runDelta("clone", src, filepath.Join(base, "c"), "--version", "1")
	if r.code == 0 {
		t.Fatalf("clone of a vacuumed version succeeded")
	}
	if !strings.Contains(r.stderr, "missing") {
		t.Errorf("the error does not say files are missing: %s", r.stderr)
	}
}

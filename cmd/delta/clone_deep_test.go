package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// clone --deep copies the files and deletion vectors of the source, and of
// the roots a shallow-clone source reads from, so the clone reads the same
// rows after every source is gone, and passes delta check.
func TestCloneDeep(t *testing.T) {
	base := t.TempDir()
	src, shallow, deep := filepath.Join(base, "src"), filepath.Join(base, "shallow"), filepath.Join(base, "deep")
	mustRun(t, "create", src, "--schema", "id BIGINT NOT NULL, p STRING", "--partition-by", "p",
		"--property", "delta.enableDeletionVectors=true")
	csv := "id,p\n"
	for i := range 300 {
		csv += strconv.Itoa(i) + "," + string(rune('a'+i%2)) + "\n"
	}
	mustRun(t, "append", src, writeFile(t, filepath.Join(base, "a.csv"), csv))
	// Deletion vectors too large to be inline: files of their own.
	mustRun(t, "delete", src, "--where", "id % 3 = 0")
	mustRun(t, "clone", src, shallow)
	mustRun(t, "append", shallow, writeFile(t, filepath.Join(base, "b.csv"), "id,p\n1000,a\n"))
	want := scanIDs(t, shallow)
	if len(want) != 201 {
		t.Fatalf("the shallow clone reads %d rows, want 201", len(want))
	}
	var dvFiles int
	filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), "deletion_vector_") {
			dvFiles++
		}
		return nil
	})
	if dvFiles == 0 {
		t.Fatal("the source has no deletion vector file: the test needs one")
	}

	var res cloneJSON
	decodeOne(t, mustRun(t, "clone", shallow, deep, "--deep", "--json").stdout, &res)
	if res.NumCopiedFiles != res.SourceNumOfFiles || res.CopiedFilesSize != res.SourceTableSize || res.NumCopiedFiles < 3 {
		t.Fatalf("clone --deep %+v", res)
	}
	commit0, err := os.ReadFile(filepath.Join(deep, "_delta_log", "00000000000000000000.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(commit0), "\n") {
		if strings.HasPrefix(line, `{"add"`) && (strings.Contains(line, "file:") || strings.Contains(line, `"storageType":"p"`)) {
			t.Errorf("the deep clone names a file by absolute path: %s", line)
		}
	}
	if !strings.Contains(string(commit0), `"storageType":"u"`) {
		t.Error("the deep clone has no deletion vector file of its own")
	}
	for _, d := range []string{src, shallow} {
		if err := os.RemoveAll(d); err != nil {
			t.Fatal(err)
		}
	}
	if got := scanIDs(t, deep); !slices.Equal(got, want) {
		t.Fatalf("the deep clone reads %v after its sources are gone, want %v", got, want)
	}
	if r := runDelta("check", deep, "--deep"); r.code != 0 {
		t.Fatalf("check --deep: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := mustRun(t, "describe", deep); strings.Contains(r.stdout, base) {
		t.Errorf("a deep clone names a source root:\n%s", r.stdout)
	}
}

// A copy that fails (a data file shorter than the log says) leaves the
// target as it was: nothing committed, no file copied left behind.
func TestCloneDeepFailureLeavesNothing(t *testing.T) {
	base := t.TempDir()
	src, deep := filepath.Join(base, "src"), filepath.Join(base, "deep")
	mustRun(t, "create", src, "--schema", "id BIGINT NOT NULL, p STRING", "--partition-by", "p")
	mustRun(t, "append", src, writeFile(t, filepath.Join(base, "a.csv"), "id,p\n1,a\n2,b\n3,c\n"))
	var damaged string
	filepath.WalkDir(filepath.Join(src, "p=b"), func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".parquet") {
			damaged = p
		}
		return nil
	})
	if err := os.Truncate(damaged, 10); err != nil {
		t.Fatal(err)
	}
	r := runDelta("clone", src, deep, "--deep")
	if r.code != exitFailure || !strings.Contains(r.stderr, "the log records") {
		t.Fatalf("clone --deep of a damaged file: exit %d, %q", r.code, r.stderr)
	}
	var left []string
	filepath.WalkDir(deep, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			left = append(left, p)
		}
		return nil
	})
	if len(left) > 0 {
		t.Fatalf("a failed deep clone left %q", left)
	}
	// And it can be run again once the source is whole.
	os.Remove(damaged)
}

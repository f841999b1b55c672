//go:build unix

package main

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/godelta/delta"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/schema"
)

// Issue 24, finding 7: commands that write a local table never write
// through a symbolic link beneath its root. A directory the table writes
// into (a partition, _symlink_format_manifest, metadata/, _change_data)
// linked to a directory elsewhere makes the command fail with the
// store's "path escapes the table root", and leaves that directory as it
// was.

// linkOut makes target, a directory outside the table, and name, a path
// under the table, a symbolic link to it.
func linkOut(t *testing.T, target, name string) {
	t.Helper()
	if err := os.MkdirAll(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, name); err != nil {
		t.Fatal(err)
	}
}

// snapshotDir returns every file under dir with its size and SHA-256, and
// every directory as "dir".
func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			got[rel] = "dir"
			return nil
		}
		b, err := os.ReadFile(p)
		got[rel] = fmt.Sprintf("%d bytes, sha256 %x", len(b), sha256.Sum256(b))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// mustFailEscaping runs the command and checks that it fails with the
// store's error for a link beneath the root, on one line. It does not stop
// the test, so that what the command wrote is checked too.
func mustFailEscaping(t *testing.T, args ...string) {
	t.Helper()
	r := runDelta(args...)
	if r.panicked != "" {
		t.Fatalf("delta %s panicked: %s", strings.Join(args, " "), r.panicked)
	}
	if r.code != exitFailure || !strings.Contains(r.stderr, "path escapes the table root") || !strings.Contains(r.stderr, "symbolic link") {
		t.Errorf("delta %s: exit %d, %q; want exit %d and the escape error", strings.Join(args, " "), r.code, r.stderr, exitFailure)
	}
	checkErrorLine(t, args[0], r.stderr)
	t.Logf("delta %s: %s", args[0], r.stderr)
}

// noCommit checks that the table's log has no commit of version v.
func noCommit(t *testing.T, root string, v int) {
	t.Helper()
	name := filepath.Join(root, "_delta_log", strings.Repeat("0", 20-len(itoa(v)))+itoa(v)+".json")
	if _, err := os.Stat(name); err == nil {
		t.Errorf("version %d was committed", v)
	}
}

// (a) A partition directory linked out of the table: append fails, the
// outside directory stays empty, nothing is committed.
func TestAppendIntoLinkedPartition(t *testing.T) {
	dir := t.TempDir()
	root, outside := filepath.Join(dir, "t"), filepath.Join(dir, "outside")
	mustRun(t, "create", root, "--schema", "id BIGINT NOT NULL, p STRING", "--partition-by", "p")
	linkOut(t, outside, filepath.Join(root, "p=a"))
	csv := writeFile(t, filepath.Join(dir, "a.csv"), "id,p\n1,a\n2,a\n")
	mustFailEscaping(t, "append", root, csv)
	// The same append through the library: the error keeps its kinds.
	tbl, err := delta.Open(t.Context(), root)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	_, err = tbl.AppendRows(t.Context(), [][]schema.Value{{schema.LongValue(3), schema.StringValue("a")}}, delta.WriteOptions{})
	if !errors.Is(err, deltaerr.ErrPathEscapesRoot) || !errors.Is(err, logstore.ErrPermission) {
		t.Errorf("AppendRows = %v, want ErrPathEscapesRoot and ErrPermission", err)
	}
	if got := snapshotDir(t, outside); len(got) != 1 {
		t.Errorf("written outside the table: %v", got)
	}
	noCommit(t, root, 1)
}

// (b) _symlink_format_manifest linked out of the table: generate-manifest
// writes nothing there.
func TestGenerateManifestIntoLinkedDir(t *testing.T) {
	dir := t.TempDir()
	root, outside := filepath.Join(dir, "t"), filepath.Join(dir, "outside")
	mustRun(t, "create", root, "--schema", "id BIGINT NOT NULL, p STRING", "--partition-by", "p")
	mustRun(t, "append", root, writeFile(t, filepath.Join(dir, "a.csv"), "id,p\n1,a\n2,b\n"))
	linkOut(t, outside, filepath.Join(root, "_symlink_format_manifest"))
	mustFailEscaping(t, "generate-manifest", root)
	if got := snapshotDir(t, outside); len(got) != 1 {
		t.Errorf("written outside the table: %v", got)
	}
}

// (c) A UniForm table whose metadata/ is a link to a directory elsewhere
// that holds Iceberg metadata with a version-hint.text (another table's,
// here this table's own, moved out): iceberg --sync fails and leaves every
// file there byte-identical.
func TestIcebergSyncIntoLinkedMetadata(t *testing.T) {
	dir := t.TempDir()
	root, outside := filepath.Join(dir, "t"), filepath.Join(dir, "outside")
	mustRun(t, "create", root, "--schema", "id BIGINT NOT NULL, name STRING", "--property", "delta.universalFormat.enabledFormats=iceberg")
	mustRun(t, "append", root, writeFile(t, filepath.Join(dir, "a.csv"), "id,name\n1,a\n"))
	if err := os.Rename(filepath.Join(root, "metadata"), outside); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(outside, "version-hint.text")); err != nil {
		t.Fatal(err)
	}
	// A commit whose conversion fails (a file where metadata/ goes), so
	// that the Iceberg metadata is one version behind.
	placeholder := writeFile(t, filepath.Join(root, "metadata"), "not a directory")
	mustRun(t, "append", root, writeFile(t, filepath.Join(dir, "b.csv"), "id,name\n2,b\n"))
	if err := os.Remove(placeholder); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "metadata")); err != nil {
		t.Fatal(err)
	}
	before := snapshotDir(t, outside)
	hint, err := os.ReadFile(filepath.Join(outside, "version-hint.text"))
	if err != nil {
		t.Fatal(err)
	}
	mustFailEscaping(t, "iceberg", root, "--sync")
	if b, err := os.ReadFile(filepath.Join(outside, "version-hint.text")); err != nil || string(b) != string(hint) {
		t.Errorf("version-hint.text outside the table is now %q (%v), was %q", b, err, hint)
	}
	if got := snapshotDir(t, outside); !maps.Equal(got, before) {
		t.Errorf("outside the table:\n got %v\nwant %v", got, before)
	}
}

// (d) _change_data linked out of a table with the change data feed on:
// an UPDATE fails, writes nothing there, and commits nothing.
func TestUpdateChangeDataIntoLinkedDir(t *testing.T) {
	for _, dvs := range []string{"false", "true"} {
		t.Run("deletionVectors="+dvs, func(t *testing.T) {
			dir := t.TempDir()
			root, outside := filepath.Join(dir, "t"), filepath.Join(dir, "outside")
			mustRun(t, "create", root, "--schema", "id BIGINT NOT NULL, name STRING",
				"--property", "delta.enableChangeDataFeed=true", "--property", "delta.enableDeletionVectors="+dvs)
			mustRun(t, "append", root, writeFile(t, filepath.Join(dir, "a.csv"), "id,name\n1,a\n2,b\n3,c\n"))
			linkOut(t, outside, filepath.Join(root, "_change_data"))
			mustFailEscaping(t, "update", root, "--set", "name = 'z'", "--where", "id = 1")
			if got := snapshotDir(t, outside); len(got) != 1 {
				t.Errorf("written outside the table: %v", got)
			}
			noCommit(t, root, 2)
		})
	}
}

//go:build unix && !aix && !solaris && !godelta_portablewalk

package local_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/godelta/delta/logstore/local"
)

// A writer holds its directory open: a link swapped in for that directory
// while the writer streams does not take the file out of the root, which
// a walk by path (the portable one) cannot promise.
func TestWriterKeepsItsDirectory(t *testing.T) {
	base := t.TempDir()
	root, outside := filepath.Join(base, "table"), filepath.Join(base, "outside")
	mkdir(t, outside)
	s, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.NewWriter(t.Context(), "p=1/part-0.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(root, "p=1"), filepath.Join(root, "moved")); err != nil {
		t.Fatal(err)
	}
	symlink(t, outside, filepath.Join(root, "p=1"))
	if _, err := w.Write([]byte("data")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "moved", "part-0.parquet")); err != nil || string(b) != "data" {
		t.Errorf("the file in the directory the writer opened: %q, %v", b, err)
	}
	if got := tree(t, outside); len(got) != 1 {
		t.Errorf("outside the root: %v", got)
	}
}

package local_test

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
)

// tree returns what is under dir, without following links: each path
// relative to dir, with a file's content, "dir" for a directory, or
// "-> target" for a symbolic link.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			got[rel] = "-> " + target
		case d.IsDir():
			got[rel] = "dir"
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			got[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// writeOps are the three ways to write an object; each returns the first
// error it meets.
var writeOps = []struct {
	name  string
	write func(t *testing.T, s logstore.Store, key string, data []byte) error
}{
	{"Put", func(t *testing.T, s logstore.Store, key string, data []byte) error {
		return s.Put(t.Context(), key, data)
	}},
	{"PutIfAbsent", func(t *testing.T, s logstore.Store, key string, data []byte) error {
		return s.PutIfAbsent(t.Context(), key, data)
	}},
	{"NewWriter", func(t *testing.T, s logstore.Store, key string, data []byte) error {
		w, err := s.NewWriter(t.Context(), key)
		if err != nil {
			return err
		}
		if _, err := w.Write(data); err != nil {
			return err
		}
		return w.Close()
	}},
}

// No write goes through a symbolic link beneath the root, wherever the
// link is on the key's path and wherever it points: a directory elsewhere,
// a file elsewhere, nowhere, or back inside the root. The write fails
// with deltaerr.ErrPathEscapesRoot (and logstore.ErrPermission, a certain
// failure), and nothing is created or changed outside the root, nor
// inside it. A root that is itself reached through a link is written as
// before. (Issue 24, finding 7.)
func TestWritesDoNotFollowLinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	tests := []struct {
		name string
		key  string
		// setup makes links under root (which has a directory "real"
		// holding a file "kept") pointing into outside (which has a
		// directory "dir" holding a file "version-hint.text", and a file
		// "secret").
		setup func(t *testing.T, root, outside string)
	}{
		{"first component, absolute link out", "metadata/version-hint.text", func(t *testing.T, root, outside string) {
			symlink(t, filepath.Join(outside, "dir"), filepath.Join(root, "metadata"))
		}},
		{"first component, relative link out", "metadata/version-hint.text", func(t *testing.T, root, outside string) {
			rel, err := filepath.Rel(root, filepath.Join(outside, "dir"))
			if err != nil {
				t.Fatal(err)
			}
			symlink(t, rel, filepath.Join(root, "metadata"))
		}},
		{"middle component", "a=1/b=2/c=3/part-0.parquet", func(t *testing.T, root, outside string) {
			mkdir(t, filepath.Join(root, "a=1"))
			symlink(t, filepath.Join(outside, "dir"), filepath.Join(root, "a=1", "b=2"))
		}},
		{"middle component, missing below the link", "_change_data/new/cdc-0.parquet", func(t *testing.T, root, outside string) {
			symlink(t, filepath.Join(outside, "dir"), filepath.Join(root, "_change_data"))
		}},
		{"final name, a link to a file outside", "real/version-hint.text", func(t *testing.T, root, outside string) {
			symlink(t, filepath.Join(outside, "secret"), filepath.Join(root, "real", "version-hint.text"))
		}},
		{"final name, a link to a file outside, at the root", "_last_checkpoint", func(t *testing.T, root, outside string) {
			symlink(t, filepath.Join(outside, "secret"), filepath.Join(root, "_last_checkpoint"))
		}},
		{"final name, a link to a directory outside", "real/x", func(t *testing.T, root, outside string) {
			symlink(t, filepath.Join(outside, "dir"), filepath.Join(root, "real", "x"))
		}},
		{"dangling link as a directory", "gone/f", func(t *testing.T, root, outside string) {
			symlink(t, filepath.Join(outside, "missing"), filepath.Join(root, "gone"))
		}},
		{"dangling link as the final name", "real/gone", func(t *testing.T, root, outside string) {
			symlink(t, filepath.Join(outside, "missing"), filepath.Join(root, "real", "gone"))
		}},
		{"link inside pointing inside", "in/f", func(t *testing.T, root, outside string) {
			symlink(t, "real", filepath.Join(root, "in"))
		}},
		{"link inside pointing inside, final name", "real/alias", func(t *testing.T, root, outside string) {
			symlink(t, "kept", filepath.Join(root, "real", "alias"))
		}},
	}
	for _, op := range writeOps {
		for _, tc := range tests {
			t.Run(op.name+"/"+tc.name, func(t *testing.T) {
				base := t.TempDir()
				root, outside := filepath.Join(base, "table"), filepath.Join(base, "outside")
				mkdir(t, filepath.Join(root, "real"))
				mkdir(t, filepath.Join(outside, "dir"))
				writeFile(t, filepath.Join(root, "real", "kept"), "kept")
				writeFile(t, filepath.Join(outside, "dir", "version-hint.text"), "7")
				writeFile(t, filepath.Join(outside, "secret"), "secret")
				tc.setup(t, root, outside)
				beforeOut, beforeIn := tree(t, outside), tree(t, root)

				s, err := local.New(root)
				if err != nil {
					t.Fatal(err)
				}
				err = op.write(t, s, tc.key, []byte("overwritten"))
				if !errors.Is(err, deltaerr.ErrPathEscapesRoot) || !errors.Is(err, logstore.ErrPermission) || !logstore.IsCertainFailure(err) {
					t.Fatalf("err = %v; want ErrPathEscapesRoot, ErrPermission, a certain failure", err)
				}
				if errors.Is(err, logstore.ErrAlreadyExists) || errors.Is(err, logstore.ErrOutcomeUnknown) {
					t.Errorf("err = %v is also already-exists or unknown", err)
				}
				msg := err.Error()
				if strings.Count(msg, deltaerr.ErrPathEscapesRoot.Error()) != 1 || !strings.Contains(msg, "symbolic link") ||
					!strings.Contains(msg, `"`+tc.key+`"`) || strings.Contains(msg, "permission denied") || strings.Contains(msg, "nothing was written") {
					t.Errorf("message %q: want the key, the link, and the kind once", msg)
				}
				if got := tree(t, outside); !maps.Equal(got, beforeOut) {
					t.Errorf("outside the root:\n got %v\nwant %v", got, beforeOut)
				}
				if got := tree(t, root); !maps.Equal(got, beforeIn) {
					t.Errorf("inside the root:\n got %v\nwant %v", got, beforeIn)
				}
			})
		}
	}
}

// A root reached through symbolic links is written as before, and so are
// real directories beneath it; only names beneath the root are checked.
func TestWritesThroughLinkedRoot(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	base := t.TempDir()
	mkdir(t, filepath.Join(base, "disk", "table"))
	symlink(t, filepath.Join(base, "disk"), filepath.Join(base, "mnt"))
	symlink(t, filepath.Join(base, "mnt", "table"), filepath.Join(base, "t"))
	for _, op := range writeOps {
		for _, root := range []string{filepath.Join(base, "t"), filepath.Join(base, "mnt", "table")} {
			s, err := local.New(root)
			if err != nil {
				t.Fatal(err)
			}
			key := "p=" + op.name + "/" + filepath.Base(root)
			if err := op.write(t, s, key, []byte(op.name)); err != nil {
				t.Errorf("%s through %s: %v", op.name, root, err)
				continue
			}
			if b, err := os.ReadFile(filepath.Join(base, "disk", "table", filepath.FromSlash(key))); err != nil || string(b) != op.name {
				t.Errorf("%s through %s: file %q, %v", op.name, root, b, err)
			}
		}
	}
	// A root that does not exist yet is made through the link in its path.
	s, err := local.New(filepath.Join(base, "mnt", "new", "table"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(t.Context(), "_delta_log/x", []byte("x")); err != nil {
		t.Fatalf("Put under a missing root behind a link: %v", err)
	}
	if _, err := os.Stat(filepath.Join(base, "disk", "new", "table", "_delta_log", "x")); err != nil {
		t.Error(err)
	}
}

func symlink(t *testing.T, target, name string) {
	t.Helper()
	if err := os.Symlink(target, name); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o666); err != nil {
		t.Fatal(err)
	}
}

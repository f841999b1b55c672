package local_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/logstore/storetest"
)

func newStore(t *testing.T, opts ...local.Option) (*logstore.Portable, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := local.New(dir, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s, dir
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) logstore.Store {
		s, _ := newStore(t)
		return s
	})
}

func TestConformanceWithoutSync(t *testing.T) {
	storetest.Run(t, func(t *testing.T) logstore.Store {
		s, _ := newStore(t, local.WithoutSync())
		return s
	})
}

// tempFiles returns the temporary files anywhere under root.
func tempFiles(t *testing.T, root string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if local.IsTemp(d.Name()) {
			found = append(found, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

func listKeys(t *testing.T, s logstore.Store, dir string) []string {
	t.Helper()
	var keys []string
	for info, err := range s.List(t.Context(), dir, "") {
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, info.Key)
	}
	return keys
}

// Writes leave no temporary file behind, whether they win, lose or fail.
func TestNoTempFilesLeft(t *testing.T) {
	s, root := newStore(t)
	ctx := t.Context()
	for i := range 3 {
		err := s.PutIfAbsent(ctx, "_delta_log/k", []byte{byte(i)})
		if i > 0 && !errors.Is(err, logstore.ErrAlreadyExists) {
			t.Fatalf("PutIfAbsent #%d = %v, want ErrAlreadyExists", i, err)
		}
		if err := s.Put(ctx, "_delta_log/p", []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Put(ctx, "f", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "f/under-a-file", []byte("x")); err == nil {
		t.Fatal("Put below a file succeeded")
	}
	if found := tempFiles(t, root); len(found) != 0 {
		t.Errorf("temporary files left: %q", found)
	}
	entries, err := os.ReadDir(filepath.Join(root, "_delta_log"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"k", "p"}) {
		t.Errorf("_delta_log holds %q, want [k p]", names)
	}
}

// Temporary files, such as a crash leaves, are invisible through the
// Store: not listed, and refused as keys.
func TestTempFilesHidden(t *testing.T) {
	s, root := newStore(t)
	ctx := t.Context()
	if err := s.Put(ctx, "_delta_log/00000000000000000000.json", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	const tmp = ".godelta-0123456789abcdef.tmp"
	if !local.IsTemp(tmp) {
		t.Fatalf("%q is not a temporary name", tmp)
	}
	for _, p := range []string{tmp, "_delta_log/" + tmp} {
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(p)), []byte("partial"), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	// Names that only look a little like one are ordinary objects.
	for _, key := range []string{".godelta-x", "godelta-x.tmp", ".tmp", "_delta_log/.00000000000000000001.json.tmp"} {
		if local.IsTemp(key[strings.LastIndexByte(key, '/')+1:]) {
			t.Fatalf("%q counts as temporary", key)
		}
		if err := s.Put(ctx, key, []byte("x")); err != nil {
			t.Fatalf("Put(%q): %v", key, err)
		}
	}
	if got, want := listKeys(t, s, ""), []string{".godelta-x", ".tmp", "godelta-x.tmp"}; !slices.Equal(got, want) {
		t.Errorf("List(root) = %q, want %q", got, want)
	}
	if got, want := listKeys(t, s, "_delta_log/"), []string{"_delta_log/.00000000000000000001.json.tmp", "_delta_log/00000000000000000000.json"}; !slices.Equal(got, want) {
		t.Errorf("List(_delta_log/) = %q, want %q", got, want)
	}
	for _, key := range []string{tmp, "_delta_log/" + tmp} {
		if _, err := s.Get(ctx, key); !errors.Is(err, logstore.ErrInvalidKey) {
			t.Errorf("Get(%q) = %v, want ErrInvalidKey", key, err)
		}
		if err := s.PutIfAbsent(ctx, key, []byte("x")); !errors.Is(err, logstore.ErrInvalidKey) {
			t.Errorf("PutIfAbsent(%q) = %v, want ErrInvalidKey", key, err)
		}
		if err := s.Delete(ctx, key); !errors.Is(err, logstore.ErrInvalidKey) {
			t.Errorf("Delete(%q) = %v, want ErrInvalidKey", key, err)
		}
	}
	// A directory with a temporary-looking name is fine: only the last
	// segment of a key is reserved.
	if err := s.Put(ctx, ".godelta-dir.tmp/x", []byte("x")); err != nil {
		t.Errorf("Put into a temporary-looking directory: %v", err)
	}
}

// PutIfAbsent and Put create every missing directory, up to the root.
func TestPutCreatesDirectories(t *testing.T) {
	root := filepath.Join(t.TempDir(), "not", "yet", "there")
	s, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if got := listKeys(t, s, ""); len(got) != 0 {
		t.Fatalf("List of a missing root = %q, want empty", got)
	}
	const key = "a/b/c/_delta_log/00000000000000000000.json"
	if err := s.PutIfAbsent(ctx, key, []byte("commit")); err != nil {
		t.Fatalf("PutIfAbsent in a missing directory: %v", err)
	}
	if b, err := s.Get(ctx, key); err != nil || string(b) != "commit" {
		t.Fatalf("Get = %q, %v", b, err)
	}
	if err := s.Put(ctx, "x/y/z", []byte("put")); err != nil {
		t.Fatalf("Put in a missing directory: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "x", "y", "z")); err != nil || string(b) != "put" {
		t.Fatalf("file on disk = %q, %v", b, err)
	}
}

// Without hard links, PutIfAbsent still lets exactly one writer win.
func TestNoLinkFallback(t *testing.T) {
	s, root := newStore(t)
	local.DisableLinks(s)
	ctx := t.Context()
	if err := s.PutIfAbsent(ctx, "new/dir/k", []byte("first")); err != nil {
		t.Fatal(err)
	}
	if err := s.PutIfAbsent(ctx, "new/dir/k", []byte("second")); !errors.Is(err, logstore.ErrAlreadyExists) {
		t.Fatalf("second PutIfAbsent = %v, want ErrAlreadyExists", err)
	}
	if b, _ := s.Get(ctx, "new/dir/k"); string(b) != "first" {
		t.Fatalf("Get = %q, want first", b)
	}
	for round := range 5 {
		key := fmt.Sprintf("race/%d/_delta_log/%020d.json", round, round)
		const writers = 32
		errs := make([]error, writers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range writers {
			wg.Go(func() {
				<-start
				errs[i] = s.PutIfAbsent(ctx, key, []byte(strings.Repeat(fmt.Sprint(i), 100+i)))
			})
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("round %d: writers %d and %d both won", round, winner, i)
			case err == nil:
				winner = i
			case !errors.Is(err, logstore.ErrAlreadyExists):
				t.Fatalf("round %d: writer %d: %v", round, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no winner", round)
		}
		if b, err := s.Get(ctx, key); err != nil || string(b) != strings.Repeat(fmt.Sprint(winner), 100+winner) {
			t.Fatalf("round %d: Get = %q, %v; want writer %d's bytes", round, b, err, winner)
		}
	}
	if found := tempFiles(t, root); len(found) != 0 {
		t.Errorf("temporary files left: %q", found)
	}
}

// A directory is not an object, and no method mistakes it for one.
func TestDirectoryIsNotObject(t *testing.T) {
	s, root := newStore(t)
	ctx := t.Context()
	if err := s.Put(ctx, "d/x", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "d"); !errors.Is(err, logstore.ErrNotFound) {
		t.Errorf("Get(dir) = %v, want ErrNotFound", err)
	}
	err := s.PutIfAbsent(ctx, "d", []byte("x"))
	if err == nil || errors.Is(err, logstore.ErrAlreadyExists) || errors.Is(err, logstore.ErrNotFound) {
		t.Errorf("PutIfAbsent over a directory = %v, want a plain error", err)
	}
	if err := s.Put(ctx, "d", []byte("x")); err == nil {
		t.Error("Put over a directory succeeded")
	}
	if err := s.Delete(ctx, "d"); err != nil {
		t.Errorf("Delete(dir) = %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "d", "x")); err != nil {
		t.Errorf("the directory's file is gone: %v", err)
	}
	// An emptied directory is left in place, and lists as empty.
	if err := s.Delete(ctx, "d/x"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(root, "d")); err != nil || !fi.IsDir() {
		t.Errorf("Delete removed the emptied directory: %v", err)
	}
	if err := os.Mkdir(filepath.Join(root, "empty"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "empty"); err != nil {
		t.Errorf("Delete of an empty directory name = %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "empty")); err != nil {
		t.Errorf("Delete removed an empty directory: %v", err)
	}
}

// Errors keep the os error reachable.
func TestErrorsWrapOSErrors(t *testing.T) {
	s, _ := newStore(t)
	_, err := s.Get(t.Context(), "missing")
	var pe *fs.PathError
	if !errors.Is(err, logstore.ErrNotFound) || !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) {
		t.Errorf("Get(missing) = %v (%T): want ErrNotFound, fs.ErrNotExist and a *fs.PathError", err, err)
	}
	if err := s.Put(t.Context(), "f", []byte("x")); err != nil {
		t.Fatal(err)
	}
	_, err = s.Stat(t.Context(), "f/below")
	if !errors.Is(err, logstore.ErrNotFound) {
		t.Errorf("Stat below a file = %v, want ErrNotFound", err)
	}
	err = s.PutIfAbsent(t.Context(), "f/below", []byte("x"))
	if err == nil || errors.Is(err, logstore.ErrNotFound) || errors.Is(err, logstore.ErrAlreadyExists) {
		t.Errorf("PutIfAbsent below a file = %v, want a plain error", err)
	}
}

// Symbolic links are followed; dangling ones are not listed.
func TestSymlinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	s, root := newStore(t)
	ctx := t.Context()
	if err := s.Put(ctx, "target", []byte("content")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("target", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("nowhere", filepath.Join(root, "dangling")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "dir"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("dir", filepath.Join(root, "dirlink")); err != nil {
		t.Fatal(err)
	}
	if got, want := listKeys(t, s, ""), []string{"link", "target"}; !slices.Equal(got, want) {
		t.Errorf("List = %q, want %q", got, want)
	}
	if b, err := s.Get(ctx, "link"); err != nil || string(b) != "content" {
		t.Errorf("Get(link) = %q, %v", b, err)
	}
	if info, err := s.Stat(ctx, "link"); err != nil || info.Size != 7 {
		t.Errorf("Stat(link) = %+v, %v", info, err)
	}
	if _, err := s.Stat(ctx, "dangling"); !errors.Is(err, logstore.ErrNotFound) {
		t.Errorf("Stat(dangling) = %v, want ErrNotFound", err)
	}
}

func TestNew(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := local.New(file); err == nil {
		t.Error("New over a file succeeded")
	}
	if _, err := local.New(""); err == nil {
		t.Error("New with an empty root succeeded")
	}
	t.Chdir(t.TempDir())
	s, err := local.NewDriver("rel")
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(s.Root()) || filepath.Base(s.Root()) != "rel" {
		t.Errorf("Root() = %q, want an absolute path ending in rel", s.Root())
	}
}

func BenchmarkPutIfAbsent(b *testing.B) {
	for _, tc := range []struct {
		name string
		opts []local.Option
	}{{"sync", nil}, {"nosync", []local.Option{local.WithoutSync()}}} {
		b.Run(tc.name, func(b *testing.B) {
			s, err := local.New(b.TempDir(), tc.opts...)
			if err != nil {
				b.Fatal(err)
			}
			data := []byte(strings.Repeat("x", 4096))
			i := 0
			for b.Loop() {
				if err := s.PutIfAbsent(b.Context(), fmt.Sprintf("_delta_log/%020d.json", i), data); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// TestOpen checks the file URIs and plain paths logstore.Open sends to this
// backend, and the URI of the store each gives.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	want := "file://" + filepath.ToSlash(filepath.Join(dir, "t"))
	for _, uri := range []string{filepath.Join(dir, "t"), "t", "./t/", "file://" + filepath.Join(dir, "t"), "file:" + filepath.Join(dir, "t"), "file://localhost" + filepath.Join(dir, "t")} {
		s, err := logstore.Open(t.Context(), uri)
		if err != nil {
			t.Errorf("Open(%q): %v", uri, err)
			continue
		}
		if got := s.URI(); got != want {
			t.Errorf("Open(%q).URI() = %q, want %q", uri, got, want)
		}
		if l, ok := logstore.DriverOf[*local.Store](s); !ok || l.Root() != filepath.Join(dir, "t") {
			t.Errorf("Open(%q): driver %v, %v; want a *local.Store at %s", uri, l, ok, filepath.Join(dir, "t"))
		}
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
	if _, err := logstore.Open(t.Context(), "file://host/x"); !errors.Is(err, logstore.ErrInvalidKey) {
		t.Errorf("Open(file://host/x) = %v, want ErrInvalidKey", err)
	}
}

// TestPermission checks that a refused file operation is ErrPermission.
func TestPermission(t *testing.T) {
	if runtime.GOOS == "windows" || os.Geteuid() == 0 {
		t.Skip("needs a POSIX file system and a user that permissions apply to")
	}
	s, root := newStore(t)
	if err := os.Chmod(root, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(root, 0o700) })
	err := s.Put(t.Context(), "a", []byte("x"))
	var pe *fs.PathError
	if !errors.Is(err, logstore.ErrPermission) || !errors.As(err, &pe) {
		t.Errorf("Put in a read-only directory = %v, want ErrPermission with a *fs.PathError", err)
	}
}

// List and Delete never go through a symbolic link out of the root: a
// _delta_log/_sidecars linked to a directory elsewhere is neither listed
// nor deleted through, while links that stay inside the root, and a root
// that is itself a link, work as before. (Issue 19, item 11.)
func TestSymlinksOutOfRoot(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	ctx := t.Context()
	base := t.TempDir()
	outside := filepath.Join(base, "elsewhere")
	root := filepath.Join(base, "table")
	for _, d := range []string{outside, filepath.Join(root, "_delta_log"), filepath.Join(root, "inner")} {
		if err := os.MkdirAll(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(outside, "precious.parquet"), filepath.Join(root, "inner", "a.parquet")} {
		if err := os.WriteFile(f, []byte("x"), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	mustLink := func(target, name string) {
		t.Helper()
		if err := os.Symlink(target, name); err != nil {
			t.Fatal(err)
		}
	}
	mustLink(outside, filepath.Join(root, "_delta_log", "_sidecars"))     // absolute, out
	mustLink("../../elsewhere", filepath.Join(root, "_delta_log", "rel")) // relative, out
	mustLink("../inner", filepath.Join(root, "_delta_log", "in"))         // stays inside
	mustLink(root, filepath.Join(base, "rootlink"))                       // the root itself a link

	tests := []struct {
		root, dir string
		wantList  []string // nil with wantErr
		wantErr   bool
	}{
		{root, "_delta_log/_sidecars/", nil, true},
		{root, "_delta_log/rel/", nil, true},
		{root, "_delta_log/in/", []string{"_delta_log/in/a.parquet"}, false},
		{root, "inner/", []string{"inner/a.parquet"}, false},
		{filepath.Join(base, "rootlink"), "inner/", []string{"inner/a.parquet"}, false},
		{filepath.Join(base, "rootlink"), "_delta_log/_sidecars/", nil, true},
		{root, "missing/", nil, false},
	}
	for _, tc := range tests {
		s, err := local.New(tc.root)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		var listErr error
		for obj, err := range s.List(ctx, tc.dir, "") {
			if err != nil {
				listErr = err
				break
			}
			got = append(got, obj.Key)
		}
		if tc.wantErr {
			if !errors.Is(listErr, logstore.ErrPermission) || len(got) != 0 {
				t.Errorf("%s: List(%s) = %q, %v; want nothing and ErrPermission", tc.root, tc.dir, got, listErr)
			}
			key := tc.dir + "precious.parquet"
			if err := s.Delete(ctx, key); !errors.Is(err, logstore.ErrPermission) {
				t.Errorf("%s: Delete(%s) = %v, want ErrPermission", tc.root, key, err)
			}
		} else if listErr != nil || !slices.Equal(got, tc.wantList) {
			t.Errorf("%s: List(%s) = %q, %v; want %q", tc.root, tc.dir, got, listErr, tc.wantList)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "precious.parquet")); err != nil {
		t.Errorf("the file outside the root: %v", err)
	}
	// Deleting a link removes the link, not what it points to; deleting
	// through a link that stays inside works.
	s, _ := local.New(root)
	if err := s.Delete(ctx, "_delta_log/_sidecars"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(root, "_delta_log", "_sidecars")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the link is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "precious.parquet")); err != nil {
		t.Errorf("deleting the link reached its target: %v", err)
	}
	if err := s.Delete(ctx, "_delta_log/in/a.parquet"); err != nil {
		t.Errorf("delete through a link inside the root: %v", err)
	}
}

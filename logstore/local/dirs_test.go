package local_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
)

func TestListDirsSkipsSymlinks(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	outside := t.TempDir()
	s, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a=1/f", "a=2/b=x/f", "top"} {
		if err := s.Put(ctx, k, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "a=1"), filepath.Join(root, "innerlink")); err != nil {
		t.Fatal(err)
	}
	list := func(dir string) []string {
		var got []string
		for d, err := range logstore.ListDirs(ctx, s, dir) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, d)
		}
		return got
	}
	if got, want := list(""), []string{"a=1/", "a=2/"}; !slices.Equal(got, want) {
		t.Errorf("root dirs = %q, want %q", got, want)
	}
	if got, want := list("a=2/"), []string{"a=2/b=x/"}; !slices.Equal(got, want) {
		t.Errorf("a=2 dirs = %q, want %q", got, want)
	}
	if got := list("missing/"); len(got) != 0 {
		t.Errorf("missing dir lists %q", got)
	}
	// A directory reached through a link out of the root is refused.
	for _, err := range logstore.ListDirs(ctx, s, "link/") {
		if err == nil {
			t.Fatal("listing through a link out of the root succeeded")
		}
		if !errors.Is(err, logstore.ErrPermission) {
			t.Fatalf("err = %v, want ErrPermission", err)
		}
	}
}

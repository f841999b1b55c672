//go:build unix

package local_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
)

// hangLimit is how long a call may take before the test calls it hung. It
// is no performance bound: the calls take microseconds, a hang forever.
const hangLimit = 30 * time.Second

// returns runs f and fails the test if it has not returned within
// hangLimit (then f stays blocked in its goroutine until the test binary
// exits).
func returns(t *testing.T, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(hangLimit):
		t.Fatalf("%s still blocked after %v", what, hangLimit)
		return nil
	}
}

// TestNonRegularFiles checks issue 19 item 14: a named pipe (or a link to
// one, or to a device) where an object would be is refused with
// ErrNotRegular before it is opened for a blocking read. Before, Get and
// GetRange of a pipe with no writer blocked forever, in an open(2) that no
// context or signal could end.
func TestNonRegularFiles(t *testing.T) {
	s, root := newStore(t)
	ctx := t.Context()
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o666); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if err := os.Symlink("fifo", filepath.Join(root, "fifolink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(os.DevNull, filepath.Join(root, "null")); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "regular", []byte("x")); err != nil {
		t.Fatal(err)
	}
	ops := []struct {
		name string
		call func(key string) error
	}{
		{"Get", func(key string) error { _, err := s.Get(ctx, key); return err }},
		{"GetRange", func(key string) error { _, err := s.GetRange(ctx, key, 0, 10); return err }},
		{"Stat", func(key string) error { _, err := s.Stat(ctx, key); return err }},
	}
	for _, key := range []string{"fifo", "fifolink", "null"} {
		for _, op := range ops {
			err := returns(t, op.name+"("+key+")", func() error { return op.call(key) })
			if !errors.Is(err, local.ErrNotRegular) || !strings.Contains(err.Error(), filepath.Join(root, key)) {
				t.Errorf("%s(%s) = %v, want ErrNotRegular naming the path", op.name, key, err)
			}
			if errors.Is(err, logstore.ErrNotFound) {
				t.Errorf("%s(%s) = %v, which also matches ErrNotFound", op.name, key, err)
			}
		}
	}
	// A pipe is not listed, and holds its name: PutIfAbsent there is
	// refused as taken, at once.
	if got, want := listKeys(t, s, ""), []string{"regular"}; !slices.Equal(got, want) {
		t.Errorf("List = %q, want %q", got, want)
	}
	err := returns(t, "PutIfAbsent(fifo)", func() error { return s.PutIfAbsent(ctx, "fifo", []byte("y")) })
	if !errors.Is(err, logstore.ErrAlreadyExists) {
		t.Errorf("PutIfAbsent(fifo) = %v, want ErrAlreadyExists", err)
	}
}

package logstore_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/testutil/countstore"
)

func TestWindowReader(t *testing.T) {
	ctx := t.Context()
	const window = 4
	for _, size := range []int{0, 1, window - 1, window, window + 1, 3 * window} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			s := countstore.New(memory.New(), nil)
			want := bytes.Repeat([]byte("abcdefg"), size)[:size]
			if err := s.Put(ctx, "k", want); err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(logstore.NewWindowReader(ctx, s, "k", window))
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("read %q, %v; want %q", got, err, want)
			}
			// One GetRange per window, and one more that comes back short
			// when the size is a multiple of the window.
			if n, wantN := s.Counts().Ranges, int64(size/window+1); n != wantN {
				t.Errorf("%d GetRange calls, want %d", n, wantN)
			}
		})
	}
	_, err := io.ReadAll(logstore.NewWindowReader(ctx, memory.New(), "missing", 0))
	if !errors.Is(err, logstore.ErrNotFound) {
		t.Errorf("missing object: %v, want ErrNotFound", err)
	}
}

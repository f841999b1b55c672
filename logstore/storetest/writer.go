package storetest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/godelta/delta/logstore"
)

// WriterOptions tune RunWriter for a backend.
type WriterOptions struct {
	// PartSize is the size of the pieces the backend sends (an S3 part,
	// an Azure block); the suite writes objects of several parts and a
	// remainder, and aborts writes that have sent parts. 0 means 1 MiB.
	PartSize int
	// Leftovers returns what the backend keeps of writes that did not
	// finish (temporary files, pending multipart uploads), as names for
	// the test's messages. After every aborted or failed write the suite
	// requires none. Nil skips the check, for backends whose leftovers are
	// not observable (uncommitted Azure blocks, cancelled GCS sessions),
	// which the suite still requires to be invisible through the Store.
	Leftovers func(t *testing.T, s logstore.Store) []string
}

// RunWriter runs the suite of logstore.Writer against the stores newStore
// makes. Like Run, it calls
// newStore once per subtest, and expects an empty store.
func RunWriter(t *testing.T, newStore func(t *testing.T) logstore.Store, opts WriterOptions) {
	if opts.PartSize <= 0 {
		opts.PartSize = 1 << 20
	}
	tests := []struct {
		name string
		fn   func(t *testing.T, s logstore.Store, opts WriterOptions)
	}{
		{"SmallPieces", testWriterSmallPieces},
		{"BigPieces", testWriterBigPieces},
		{"MultiPart", testWriterMultiPart},
		{"ZeroBytes", testWriterZeroBytes},
		{"Replaces", testWriterReplaces},
		{"Abort", testWriterAbort},
		{"AbortAfterParts", testWriterAbortAfterParts},
		{"CancelledContext", testWriterCancelled},
		{"InvalidKey", testWriterInvalidKey},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, newStore(t), opts)
		})
	}
}

// randomBytes returns n bytes of a stream seeded by seed.
func randomBytes(seed uint64, n int) []byte {
	b := make([]byte, n)
	rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8)}).Read(b)
	return b
}

func newWriter(t *testing.T, ctx context.Context, s logstore.Store, key string) logstore.Writer {
	t.Helper()
	w, err := s.NewWriter(ctx, key)
	if err != nil {
		t.Fatalf("NewWriter(%q): %v", key, err)
	}
	return w
}

// writeIn writes data to w in pieces of the sizes next returns, checking
// every count.
func writeIn(t *testing.T, w io.Writer, data []byte, next func() int) {
	t.Helper()
	for len(data) > 0 {
		n := min(len(data), max(1, next()))
		got, err := w.Write(data[:n])
		if err != nil || got != n {
			t.Fatalf("Write of %d bytes = %d, %v", n, got, err)
		}
		data = data[n:]
	}
}

// wantBytes checks that key holds want, through Get, Stat and List.
func wantBytes(t *testing.T, s logstore.Store, key string, want []byte) {
	t.Helper()
	got := mustGet(t, s, key)
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Fatalf("Get(%q): %d bytes, want %d; first difference at byte %d", key, len(got), len(want), i)
	}
	info, err := s.Stat(t.Context(), key)
	if err != nil || info.Size != int64(len(want)) {
		t.Fatalf("Stat(%q) = %+v, %v; want size %d", key, info, err, len(want))
	}
}

// wantNothing checks that the store holds no object at all under dir (the
// test's objects all live there), nor a leftover of a write.
func wantNothing(t *testing.T, s logstore.Store, opts WriterOptions, dir string) {
	t.Helper()
	if keys := listKeys(t, s, dir, ""); len(keys) != 0 {
		t.Errorf("List(%q) = %q, want nothing", dir, keys)
	}
	wantNoLeftovers(t, s, opts)
}

func wantNoLeftovers(t *testing.T, s logstore.Store, opts WriterOptions) {
	t.Helper()
	if opts.Leftovers == nil {
		return
	}
	if left := opts.Leftovers(t, s); len(left) != 0 {
		t.Errorf("leftovers of unfinished writes: %q", left)
	}
}

// testWriterSmallPieces writes an object a few bytes at a time: nothing is
// visible before Close, all of it after.
func testWriterSmallPieces(t *testing.T, s logstore.Store, opts WriterOptions) {
	const key = "d/small"
	data := randomBytes(1, 3*opts.PartSize/2+11)
	w := newWriter(t, t.Context(), s, key)
	r := rand.New(rand.NewPCG(1, 2))
	writeIn(t, w, data, func() int { return 1 + r.IntN(4096) })
	wantNotFound(t, s, key)
	if keys := listKeys(t, s, "d/", ""); len(keys) != 0 {
		t.Errorf("List before Close = %q, want nothing", keys)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	wantBytes(t, s, key, data)
	wantKeys(t, s, "d/", "", []string{key})
	wantNoLeftovers(t, s, opts)
	// A closed writer is done: Abort does nothing, Write and Close fail.
	if err := w.Abort(); err != nil {
		t.Errorf("Abort after Close: %v", err)
	}
	if _, err := w.Write([]byte("x")); err == nil {
		t.Error("Write after Close succeeded")
	}
	if err := w.Close(); err == nil {
		t.Error("second Close succeeded")
	}
	wantBytes(t, s, key, data)
}

// testWriterBigPieces writes objects in one Write, below one part and of
// several.
func testWriterBigPieces(t *testing.T, s logstore.Store, opts WriterOptions) {
	for i, size := range []int{1, 1000, opts.PartSize - 1, opts.PartSize, opts.PartSize + 1, 2*opts.PartSize + 5} {
		key := "big/" + string(rune('a'+i))
		data := randomBytes(uint64(10+i), size)
		w := newWriter(t, t.Context(), s, key)
		if n, err := w.Write(data); err != nil || n != size {
			t.Fatalf("Write of %d bytes = %d, %v", size, n, err)
		}
		if err := w.Close(); err != nil {
			t.Fatalf("Close of %d bytes: %v", size, err)
		}
		wantBytes(t, s, key, data)
	}
	wantNoLeftovers(t, s, opts)
}

// testWriterMultiPart writes three parts and a remainder in pieces that
// straddle part boundaries; the object reads back byte-identical, and is
// invisible until Close though parts have been sent.
func testWriterMultiPart(t *testing.T, s logstore.Store, opts WriterOptions) {
	const key = "mp/object"
	data := randomBytes(3, 3*opts.PartSize+opts.PartSize/3+7)
	w := newWriter(t, t.Context(), s, key)
	half := len(data) / 2
	writeIn(t, w, data[:half], func() int { return 64<<10 + 13 })
	wantNotFound(t, s, key)
	writeIn(t, w, data[half:], func() int { return opts.PartSize/2 + 1 })
	wantNotFound(t, s, key)
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	wantBytes(t, s, key, data)
	if b, err := s.GetRange(t.Context(), key, int64(opts.PartSize)-3, 6); err != nil || !bytes.Equal(b, data[opts.PartSize-3:opts.PartSize+3]) {
		t.Errorf("GetRange across the first part boundary = %d bytes, %v; want the written bytes", len(b), err)
	}
	wantNoLeftovers(t, s, opts)
}

// testWriterZeroBytes closes a writer nothing was written to: an empty
// object.
func testWriterZeroBytes(t *testing.T, s logstore.Store, opts WriterOptions) {
	w := newWriter(t, t.Context(), s, "z/empty")
	if n, err := w.Write(nil); err != nil || n != 0 {
		t.Fatalf("Write(nil) = %d, %v", n, err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	wantBytes(t, s, "z/empty", []byte{})
	wantKeys(t, s, "z/", "", []string{"z/empty"})
}

// testWriterReplaces replaces an existing object, small and multi-part:
// the old content stays until Close.
func testWriterReplaces(t *testing.T, s logstore.Store, opts WriterOptions) {
	for _, size := range []int{5, 2*opts.PartSize + 3} {
		const key = "r/obj"
		put(t, s, key, "old content")
		data := randomBytes(uint64(size), size)
		w := newWriter(t, t.Context(), s, key)
		writeIn(t, w, data, func() int { return 100 << 10 })
		wantContent(t, s, key, "old content")
		if err := w.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		wantBytes(t, s, key, data)
	}
	wantKeys(t, s, "r/", "", []string{"r/obj"})
}

// testWriterAbort aborts a small write: nothing lands, Abort may be
// repeated, and the writer refuses further use.
func testWriterAbort(t *testing.T, s logstore.Store, opts WriterOptions) {
	w := newWriter(t, t.Context(), s, "a/never")
	writeIn(t, w, []byte("some bytes"), func() int { return 4 })
	for i := range 2 {
		if err := w.Abort(); err != nil {
			t.Fatalf("Abort #%d: %v", i+1, err)
		}
	}
	if _, err := w.Write([]byte("x")); err == nil {
		t.Error("Write after Abort succeeded")
	}
	if err := w.Close(); err == nil {
		t.Error("Close after Abort succeeded")
	}
	wantNotFound(t, s, "a/never")
	wantNothing(t, s, opts, "a/")

	// An aborted replace leaves the old object.
	put(t, s, "a/kept", "old")
	w = newWriter(t, t.Context(), s, "a/kept")
	writeIn(t, w, []byte("new"), func() int { return 1 })
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	wantContent(t, s, "a/kept", "old")
	wantNoLeftovers(t, s, opts)

	// A writer aborted before any Write.
	if err := newWriter(t, t.Context(), s, "a/none").Abort(); err != nil {
		t.Fatal(err)
	}
	wantNotFound(t, s, "a/none")
	wantNoLeftovers(t, s, opts)
}

// testWriterAbortAfterParts aborts a write that has sent parts.
func testWriterAbortAfterParts(t *testing.T, s logstore.Store, opts WriterOptions) {
	w := newWriter(t, t.Context(), s, "ap/never")
	writeIn(t, w, randomBytes(4, 2*opts.PartSize+100), func() int { return 256 << 10 })
	if err := w.Abort(); err != nil {
		t.Fatalf("Abort: %v", err)
	}
	if err := w.Abort(); err != nil {
		t.Fatalf("second Abort: %v", err)
	}
	wantNotFound(t, s, "ap/never")
	wantNothing(t, s, opts, "ap/")
}

// testWriterCancelled cancels the context of writes, before and after
// parts were sent: Close fails with the context's error and nothing lands.
func testWriterCancelled(t *testing.T, s logstore.Store, opts WriterOptions) {
	for _, size := range []int{10, 2*opts.PartSize + 1} {
		key := "c/obj"
		ctx, cancel := context.WithCancel(t.Context())
		w := newWriter(t, ctx, s, key)
		writeIn(t, w, randomBytes(5, size), func() int { return 512 << 10 })
		cancel()
		if err := w.Close(); !errors.Is(err, context.Canceled) {
			t.Fatalf("Close after cancel (%d bytes) = %v, want context.Canceled", size, err)
		}
		if err := w.Abort(); err != nil {
			t.Errorf("Abort after a failed Close: %v", err)
		}
		wantNotFound(t, s, key)
		wantNothing(t, s, opts, "c/")
	}
	// A Write after the cancel fails too.
	ctx, cancel := context.WithCancel(t.Context())
	w := newWriter(t, ctx, s, "c/w")
	cancel()
	if _, err := w.Write([]byte("x")); !errors.Is(err, context.Canceled) {
		t.Errorf("Write after cancel = %v, want context.Canceled", err)
	}
	if err := w.Close(); err == nil {
		t.Error("Close after a failed Write succeeded")
	}
	wantNotFound(t, s, "c/w")
	// NewWriter on a cancelled context refuses.
	if _, err := s.NewWriter(ctx, "c/x"); !errors.Is(err, context.Canceled) {
		t.Errorf("NewWriter on a cancelled context = %v, want context.Canceled", err)
	}
	wantNothing(t, s, opts, "c/")
}

func testWriterInvalidKey(t *testing.T, s logstore.Store, _ WriterOptions) {
	for _, key := range []string{"", "/abs", "dir/", "a//b", "a/../b", "./a"} {
		if w, err := s.NewWriter(t.Context(), key); !errors.Is(err, logstore.ErrInvalidKey) {
			if w != nil {
				w.Abort()
			}
			t.Errorf("NewWriter(%q) = %v, want ErrInvalidKey", key, err)
		}
	}
}

package logstore

import (
	"context"
	"io"
)

// WindowSize is the window of NewWindowReader's GetRange calls when it is
// given none: 8 MiB, large enough that a commit file of ordinary size is one
// request (as one Get would be), small enough that a reader holds little.
const WindowSize = 8 << 20

// NewWindowReader returns an io.Reader over the object at key that reads it
// front to back in GetRange calls of window bytes (WindowSize when window is
// not positive), so that an object of any size is streamed in bounded
// memory, over any Store, with no Stat first. The object is over at the
// first window that comes back short. Store errors are returned as the store
// gave them, so errors.Is(err, ErrNotFound) works, on the first Read of a
// missing object. Each call is made with ctx.
//
// The object must not change while it is read, which holds for the files of
// a Delta log: they are written once and never modified in place.
func NewWindowReader(ctx context.Context, store Store, key string, window int) io.Reader {
	if window <= 0 {
		window = WindowSize
	}
	return &windowReader{ctx: ctx, store: store, key: key, window: int64(window)}
}

type windowReader struct {
	ctx    context.Context
	store  Store
	key    string
	window int64
	off    int64  // offset of the next window
	buf    []byte // what is left of the last window
	eof    bool   // the last window was short: nothing follows buf
}

func (r *windowReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if r.eof {
			return 0, io.EOF
		}
		b, err := r.store.GetRange(r.ctx, r.key, r.off, r.window)
		if err != nil {
			return 0, err
		}
		r.off += int64(len(b))
		r.eof = int64(len(b)) < r.window
		r.buf = b
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

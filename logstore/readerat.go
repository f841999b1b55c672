package logstore

import (
	"context"
	"fmt"
	"io"
)

// ReaderAt returns an io.ReaderAt over the first size bytes of the object at
// key, for readers such as parquet-go that want random access plus a size
// (take size from Stat). Each ReadAt is one GetRange call, made with ctx, so
// cancelling ctx fails every later ReadAt; nothing is cached or read ahead.
//
// ReadAt follows the io.ReaderAt contract: it is safe for parallel calls, a
// read that reaches size returns the bytes before it and io.EOF, and a
// negative offset is ErrInvalidRange. If the object turns out shorter than
// size, the read returns what there was and io.ErrUnexpectedEOF. Store
// errors are returned as the store gave them, so errors.Is(err, ErrNotFound)
// still works.
func ReaderAt(ctx context.Context, store Store, key string, size int64) io.ReaderAt {
	return &readerAt{ctx: ctx, store: store, key: key, size: size}
}

type readerAt struct {
	ctx   context.Context
	store Store
	key   string
	size  int64
}

func (r *readerAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("logstore: ReadAt %s: %w: offset %d", quote(r.key), ErrInvalidRange, off)
	}
	if len(p) == 0 {
		return 0, nil
	}
	if off >= r.size {
		return 0, io.EOF
	}
	want := min(int64(len(p)), r.size-off)
	b, err := r.store.GetRange(r.ctx, r.key, off, want)
	if err != nil {
		return 0, err
	}
	n := copy(p[:want], b)
	switch {
	case int64(n) < want:
		return n, io.ErrUnexpectedEOF
	case n < len(p):
		return n, io.EOF
	}
	return n, nil
}

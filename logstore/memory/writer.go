package memory

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/godelta/delta/logstore"
)

// NewWriter returns a logstore.Writer that gathers the object in a buffer
// of its own and installs it at key, under the write lock, at Close: as
// Put, readers see the old object or the new one, whole. ctx is checked at
// every Write and at Close; once it is cancelled the writer discards its
// buffer and returns the error.
func (s *Store) NewWriter(ctx context.Context, key string) (logstore.Writer, error) {
	// The portable layer checked key, context and the closed state.
	return &writer{s: s, ctx: ctx, key: key, buf: &bytes.Buffer{}}, nil
}

// writer is the Writer of NewWriter; buf is nil once it is done.
type writer struct {
	s   *Store
	ctx context.Context
	key string
	buf *bytes.Buffer
	err error // why it is done
}

var errWriterClosed = errors.New("logstore/memory: writer is closed")

// Write implements io.Writer.
func (w *writer) Write(b []byte) (int, error) {
	if w.buf == nil {
		return 0, w.err
	}
	if err := w.ctx.Err(); err != nil {
		return 0, w.fail(err)
	}
	return w.buf.Write(b)
}

// Close installs the object.
func (w *writer) Close() error {
	if w.buf == nil {
		return w.err
	}
	if err := w.ctx.Err(); err != nil {
		return w.fail(err)
	}
	data := w.buf.Bytes() // owned by the writer alone, so by the Store now
	w.buf, w.err = nil, errWriterClosed
	w.s.mu.Lock()
	w.s.objects[w.key] = object{data: data, modTime: w.s.now()}
	w.s.mu.Unlock()
	return nil
}

// Abort discards the buffer; after Close it does nothing.
func (w *writer) Abort() error {
	if w.buf != nil {
		w.buf, w.err = nil, fmt.Errorf("logstore/memory: write %q: aborted", w.key)
	}
	return nil
}

func (w *writer) fail(err error) error {
	w.buf, w.err = nil, fmt.Errorf("logstore/memory: write %q: %w", w.key, err)
	return w.err
}

package gcs

import (
	"context"
	"errors"
	"fmt"

	"github.com/godelta/delta/logstore"
)

// NewWriter returns a logstore.Writer that streams the object at key. It
// holds one chunk of Options.ChunkSize bytes (16 MiB by default); an object
// that fits in it goes in one request at Close, as Put sends it. A larger
// one goes as a resumable upload, begun when the chunk first fills: each
// full chunk is sent when more bytes follow it, and Close sends the last
// with the object's size, which makes the object visible, whole. Chunks
// are retried as the protocol has it (see the package doc). Abort, a
// failed Write, or a cancelled ctx cancels the session, which leaves
// nothing at the key.
func (s *Store) NewWriter(ctx context.Context, key string) (logstore.Writer, error) {
	// The portable layer checked key, context and the closed state.
	return &writer{s: s, ctx: ctx, key: key, buf: make([]byte, 0, min(s.chunkSize, 64<<10))}, nil
}

// writer is the Writer of NewWriter.
type writer struct {
	s    *Store
	ctx  context.Context
	key  string
	buf  []byte   // bytes not yet sent, at most s.chunkSize
	sess *session // the resumable upload, once a chunk was sent
	done bool
	err  error // why the writer is done
}

var errWriterClosed = errors.New("logstore/gcs: writer is closed")

// Write implements io.Writer.
func (w *writer) Write(b []byte) (int, error) {
	if w.done {
		return 0, w.err
	}
	if err := w.ctx.Err(); err != nil {
		return 0, w.fail(err)
	}
	n := 0
	for len(b) > 0 {
		if len(w.buf) == w.s.chunkSize {
			// More bytes follow a full chunk: it is not the last.
			if err := w.flush(); err != nil {
				return n, w.fail(err)
			}
		}
		k := min(len(b), w.s.chunkSize-len(w.buf))
		w.buf = append(w.buf, b[:k]...)
		b, n = b[k:], n+k
	}
	return n, nil
}

// flush sends the full chunk, beginning the session before the first.
func (w *writer) flush() error {
	if w.sess == nil {
		sess, err := w.s.startSession(w.ctx, w.key, nil, -1, false, "")
		if err != nil {
			return err
		}
		w.sess = sess
	}
	if err := w.sess.upload(w.ctx, w.buf, false); err != nil {
		return err
	}
	w.buf = w.buf[:0]
	return nil
}

// Close sends what is left and makes the object visible.
func (w *writer) Close() error {
	if w.done {
		return w.err
	}
	if err := w.ctx.Err(); err != nil {
		return w.fail(err)
	}
	var err error
	if w.sess == nil {
		err = w.s.upload(w.ctx, w.key, w.buf, false, "")
	} else {
		err = w.sess.upload(w.ctx, w.buf, true)
	}
	if err != nil {
		return w.fail(err)
	}
	w.done, w.err, w.buf = true, errWriterClosed, nil
	return nil
}

// Abort cancels the upload; after a Close, or a second time, it does
// nothing.
func (w *writer) Abort() error {
	if w.done {
		return nil
	}
	w.stop()
	w.err = fmt.Errorf("logstore/gcs: write gs://%s/%s%s: aborted", w.s.name, w.s.prefix, w.key)
	return nil
}

// stop ends the writer and cancels its session, if one was begun.
func (w *writer) stop() {
	w.done, w.buf = true, nil
	if w.sess != nil {
		w.sess.cancel(w.ctx)
		w.sess = nil
	}
}

// fail ends the writer with err, cancelling the upload.
func (w *writer) fail(err error) error {
	w.stop()
	w.err = w.s.wrap(w.ctx, "write", w.key, err)
	return w.err
}

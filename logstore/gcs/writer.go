package gcs

import (
	"context"
	"errors"
	"fmt"

	"cloud.google.com/go/storage"

	"github.com/godelta/delta/logstore"
)

// NewWriter returns a logstore.Writer that streams the object at key
// through the SDK's storage.Writer: a resumable upload in chunks of
// Options.ChunkSize (the SDK holds one chunk in memory, 16 MiB by
// default), each chunk retried on transient errors like Put (an
// unconditional upload of the same bytes may be repeated). GCS makes the
// object visible, whole, only when Close finishes the upload. Abort, a
// failed Write, or a cancelled ctx cancels the upload, which leaves
// nothing at the key.
func (s *Store) NewWriter(ctx context.Context, key string) (logstore.Writer, error) {
	// The portable layer checked key, context and the closed state.
	uctx, cancel := context.WithCancel(ctx)
	obj := s.object(key).Retryer(storage.WithPolicy(storage.RetryAlways))
	sw := obj.NewWriter(uctx)
	sw.ContentType = "application/octet-stream"
	sw.ChunkSize = s.chunkSize
	return &writer{s: s, ctx: ctx, key: key, w: sw, cancel: cancel}, nil
}

// writer is the Writer of NewWriter; w is nil once it is done.
type writer struct {
	s      *Store
	ctx    context.Context // the caller's, for errors
	key    string
	w      *storage.Writer
	cancel context.CancelFunc // of the upload's context
	err    error              // why the writer is done
}

var errWriterClosed = errors.New("logstore/gcs: writer is closed")

// Write implements io.Writer.
func (w *writer) Write(b []byte) (int, error) {
	if w.w == nil {
		return 0, w.err
	}
	if err := w.ctx.Err(); err != nil {
		return 0, w.fail(err)
	}
	n, err := w.w.Write(b)
	if err != nil {
		return n, w.fail(err)
	}
	return n, nil
}

// Close finishes the upload.
func (w *writer) Close() error {
	if w.w == nil {
		return w.err
	}
	if err := w.ctx.Err(); err != nil {
		return w.fail(err)
	}
	err := w.w.Close()
	w.w = nil
	w.cancel()
	if err != nil {
		w.err = w.s.wrap(w.ctx, "write", w.key, err)
		return w.err
	}
	w.err = errWriterClosed
	return nil
}

// Abort cancels the upload; after a successful Close it does nothing.
func (w *writer) Abort() error {
	if w.w == nil {
		return nil
	}
	w.stop()
	w.err = fmt.Errorf("logstore/gcs: write gs://%s/%s%s: aborted", w.s.name, w.s.prefix, w.key)
	return nil
}

// stop cancels the upload and waits for the SDK's goroutine to end.
func (w *writer) stop() {
	w.cancel()
	_ = w.w.Close() // the cancelled upload's error
	w.w = nil
}

// fail ends the writer with err, cancelling the upload.
func (w *writer) fail(err error) error {
	w.stop()
	w.err = w.s.wrap(w.ctx, "write", w.key, err)
	return w.err
}

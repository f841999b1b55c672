package logstore

// The multipart upload pipeline shared by the object-store Writers (an S3
// multipart upload, an Azure block blob's staged blocks): NewPartWriter
// and the PartUploader a driver gives it.
//
// A part Writer fills one part buffer of PartConfig.Size bytes. When the
// buffer is full and more bytes come, the upload is begun (before the
// first such part) and the full buffer is sent with PartUploader.Part by a
// goroutine while Write fills a second buffer; before that second buffer
// is sent in its turn, the first part's request must have ended. So a part
// Writer holds at most two part buffers, and at most one part is in
// flight. At Close, an object that never filled more than one buffer is a
// single Put (no upload was begun); otherwise the last part, of any size,
// is sent and Complete makes the object visible, whole, from the parts in
// order. Any failure, a cancelled ctx, or Abort ends the upload with
// PartUploader.Abort, called on a context of its own (the caller's may be
// the reason for the failure) after the part in flight has ended, so that
// no part lands after the abort.

import (
	"context"
	"fmt"
	"time"
)

// PartUploader is what a driver gives NewPartWriter: the requests of one
// multipart upload of one object. The Writer calls its methods one at a
// time, in the order Begin, Part 1, Part 2, ..., Complete (or Abort), or
// Put alone; only Part runs on a goroutine of its own, and never while
// another method runs.
type PartUploader interface {
	// Put stores an object of at most one part (possibly empty) in one
	// request; no upload is begun.
	Put(ctx context.Context, data []byte) error
	// Begin starts the multipart upload, before the first part.
	Begin(ctx context.Context) error
	// Part uploads part n (from 1) and returns what Complete needs of it
	// (an ETag, a block id). data is the Writer's buffer: Part must not
	// keep it after it returns.
	Part(ctx context.Context, n int, data []byte) (string, error)
	// Complete makes the object visible from the parts, in order.
	Complete(ctx context.Context, parts []string) error
	// Abort discards the upload. It is called at most once, only after a
	// Begin that succeeded, never while a part is in flight, and on a
	// context of its own that outlives the caller's.
	Abort(ctx context.Context) error
}

// PartConfig is the shape of a part Writer's upload and the errors it
// returns, which stay the driver's own.
type PartConfig struct {
	// Size is the size of every part but the last, and of each of the two
	// buffers. It must be positive.
	Size int
	// MaxParts is the limit on the parts of one upload; 0 means none.
	MaxParts int
	// Unit names the parts in the error past MaxParts ("parts", "blocks");
	// "" means "parts".
	Unit string
	// Wrap turns the cause of a failure (a request's error, the caller's
	// ctx.Err(), the error past MaxParts) into the error the Writer returns
	// from then on. Nil returns the cause as it is.
	Wrap func(err error) error
	// Closed is the error of Write and Close after a Close that succeeded.
	Closed error
	// Aborted is the error of Write and Close after Abort.
	Aborted error
}

// abortTimeout bounds PartUploader.Abort, which runs on a context detached
// from the caller's.
const abortTimeout = 30 * time.Second

// NewPartWriter returns a Writer that streams one object through u, in
// parts of cfg.Size bytes; see the comment at the top of parts.go. Nothing
// is sent before the first part is full or Close. Cancelling ctx fails the
// part in flight; the next Write or Close then aborts the upload and
// returns the error.
func NewPartWriter(ctx context.Context, cfg PartConfig, u PartUploader) Writer {
	if cfg.Unit == "" {
		cfg.Unit = "parts"
	}
	if cfg.Wrap == nil {
		cfg.Wrap = func(err error) error { return err }
	}
	return &partWriter{ctx: ctx, cfg: cfg, u: u, buf: make([]byte, 0, cfg.Size)}
}

// partWriter is the Writer of NewPartWriter.
type partWriter struct {
	ctx context.Context
	cfg PartConfig
	u   PartUploader

	buf   []byte // the part being filled, cap cfg.Size
	spare []byte // the other buffer, once a part has been sent

	begun    bool     // Begin succeeded and Abort has not been called
	parts    []string // what Complete needs of each part sent, in order
	inflight chan partResult

	done bool
	err  error // why the writer is done
}

// partResult is the outcome of one PartUploader.Part.
type partResult struct {
	id  string
	err error
}

// Write implements io.Writer.
func (w *partWriter) Write(b []byte) (int, error) {
	if w.done {
		return 0, w.err
	}
	if err := w.ctx.Err(); err != nil {
		return 0, w.fail(err)
	}
	n := 0
	for len(b) > 0 {
		if len(w.buf) == w.cfg.Size {
			if err := w.sendPart(); err != nil {
				return n, w.fail(err)
			}
		}
		k := min(len(b), w.cfg.Size-len(w.buf))
		w.buf = append(w.buf, b[:k]...)
		b = b[k:]
		n += k
	}
	return n, nil
}

// sendPart starts the upload of the full buffer, after the part before it
// has ended, and takes the other buffer for the next part.
func (w *partWriter) sendPart() error {
	if err := w.wait(); err != nil {
		return err
	}
	if w.cfg.MaxParts > 0 && len(w.parts) >= w.cfg.MaxParts {
		return fmt.Errorf("more than %d %s of %d bytes", w.cfg.MaxParts, w.cfg.Unit, w.cfg.Size)
	}
	if len(w.parts) == 0 {
		if err := w.u.Begin(w.ctx); err != nil {
			return err
		}
		w.begun = true
	}
	w.parts = append(w.parts, "")
	n, part, done := len(w.parts), w.buf, make(chan partResult, 1)
	w.inflight = done
	go func() {
		id, err := w.u.Part(w.ctx, n, part)
		done <- partResult{id: id, err: err}
	}()
	if w.spare == nil {
		w.spare = make([]byte, 0, w.cfg.Size)
	}
	w.buf, w.spare = w.spare[:0], part
	return nil
}

// wait ends the part in flight, if any, and returns its error.
func (w *partWriter) wait() error {
	if w.inflight == nil {
		return nil
	}
	r := <-w.inflight
	w.inflight = nil
	if r.err == nil {
		w.parts[len(w.parts)-1] = r.id
	}
	return r.err
}

// Close sends what is left and makes the object visible.
func (w *partWriter) Close() error {
	if w.done {
		return w.err
	}
	if err := w.ctx.Err(); err != nil {
		return w.fail(err)
	}
	if len(w.parts) == 0 {
		if err := w.u.Put(w.ctx, w.buf); err != nil {
			return w.fail(err)
		}
		w.finish()
		return nil
	}
	if len(w.buf) > 0 {
		if err := w.sendPart(); err != nil {
			return w.fail(err)
		}
	}
	if err := w.wait(); err != nil {
		return w.fail(err)
	}
	if err := w.u.Complete(w.ctx, w.parts); err != nil {
		return w.fail(err)
	}
	w.finish()
	return nil
}

// finish marks a writer whose object landed as done.
func (w *partWriter) finish() {
	w.done, w.err = true, w.cfg.Closed
	w.begun = false
	w.buf, w.spare = nil, nil
}

// Abort ends the upload, if one was begun, and drops the buffers; it
// returns the error of PartUploader.Abort. After Close, or a second time,
// it does nothing.
func (w *partWriter) Abort() error {
	if w.done {
		return nil
	}
	w.done, w.err = true, w.cfg.Aborted
	return w.abort()
}

// abort waits for the part in flight and aborts the upload.
func (w *partWriter) abort() error {
	_ = w.wait()
	w.buf, w.spare = nil, nil
	if !w.begun {
		return nil
	}
	w.begun = false
	ctx, cancel := context.WithTimeout(context.WithoutCancel(w.ctx), abortTimeout)
	defer cancel()
	return w.u.Abort(ctx)
}

// fail ends the writer with err, wrapped by cfg.Wrap, aborting the upload,
// and returns that error.
func (w *partWriter) fail(err error) error {
	w.done = true
	w.err = w.cfg.Wrap(err)
	if aerr := w.abort(); aerr != nil {
		w.err = fmt.Errorf("%w (and aborting the upload: %w)", w.err, aerr)
	}
	return w.err
}

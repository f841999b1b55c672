package s3

// Streaming writes: NewWriter and its multipart upload.
//
// A Writer fills one part buffer of WriterPartSize bytes. When the buffer
// is full and more bytes come, the multipart upload is created (on the
// first such part) and the full buffer is sent with UploadPart by a
// goroutine while Write fills a second buffer; before that second buffer
// is sent in its turn, the first part's upload must have ended. So a
// Writer holds at most two part buffers, and at most one part is in flight.
// At Close, an object that never filled more than one buffer is a single
// PutObject (no upload was created); otherwise the last part, of any size,
// is uploaded and CompleteMultipartUpload makes the object visible, whole.
// Any failure, a cancelled ctx, or Abort ends the upload with
// AbortMultipartUpload, sent on a context of its own (the caller's may be
// the reason for the failure), after the part in flight has ended, so that
// no part lands after the abort.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	s3api "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/godelta/delta/logstore"
)

// DefaultWriterPartSize is the part size of a Writer's multipart upload
// when Options.WriterPartSize is 0. With at most two buffers, a Writer
// holds 16 MiB.
const DefaultWriterPartSize = 8 << 20

// maxParts is S3's limit on the parts of one upload: with 8 MiB parts, an
// object of up to 78 GiB.
const maxParts = 10000

// writerOptions defaults and checks Options.WriterPartSize.
func writerOptions(opts *Options) error {
	if opts.WriterPartSize == 0 {
		opts.WriterPartSize = DefaultWriterPartSize
	}
	if opts.WriterPartSize < minPartSize {
		return fmt.Errorf("logstore/s3: writer part size %d is below S3's minimum of 5 MiB", opts.WriterPartSize)
	}
	return nil
}

// NewWriter returns a logstore.Writer that streams the object at key: a
// multipart upload of parts of Options.WriterPartSize bytes, or one
// PutObject for an object of at most one part. See the comment at the top
// of writer.go. Nothing is sent before the first part is full or Close.
// Cancelling ctx fails the part in flight; the next Write or Close then
// aborts the upload and returns the error.
func (s *Store) NewWriter(ctx context.Context, key string) (logstore.Writer, error) {
	// The portable layer checked key, context and the closed state.
	size := s.writerPartSize
	if size == 0 {
		size = DefaultWriterPartSize // a Store not made by New
	}
	return &writer{s: s, ctx: ctx, key: key, full: aws.String(s.prefix + key), partSize: size,
		buf: make([]byte, 0, size)}, nil
}

// writer is the Writer of NewWriter.
type writer struct {
	s        *Store
	ctx      context.Context
	key      string
	full     *string // the object's name in the bucket
	partSize int64

	buf   []byte // the part being filled, cap partSize
	spare []byte // the other buffer, once a part has been sent

	uploadID *string // nil until the first part is sent
	parts    []types.CompletedPart
	inflight chan partResult // the part being uploaded; nil when none

	done bool
	err  error // why the writer is done
}

var errWriterClosed = errors.New("logstore/s3: writer is closed")

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
		if int64(len(w.buf)) == w.partSize {
			if err := w.sendPart(); err != nil {
				return n, w.fail(err)
			}
		}
		k := min(len(b), int(w.partSize)-len(w.buf))
		w.buf = append(w.buf, b[:k]...)
		b = b[k:]
		n += k
	}
	return n, nil
}

// sendPart starts the upload of the full buffer, after the part before it
// has ended, and takes the other buffer for the next part.
func (w *writer) sendPart() error {
	if err := w.wait(); err != nil {
		return err
	}
	if len(w.parts) >= maxParts {
		return fmt.Errorf("more than %d parts of %d bytes", maxParts, w.partSize)
	}
	if w.uploadID == nil {
		out, err := w.s.client.CreateMultipartUpload(w.ctx, &s3api.CreateMultipartUploadInput{
			Bucket: aws.String(w.s.bucket),
			Key:    w.full,
		})
		if err != nil {
			return err
		}
		w.uploadID = out.UploadId
	}
	num := int32(len(w.parts) + 1)
	w.parts = append(w.parts, types.CompletedPart{PartNumber: aws.Int32(num)})
	part, done := w.buf, make(chan partResult, 1)
	w.inflight = done
	go func() {
		out, err := w.s.client.UploadPart(w.ctx, &s3api.UploadPartInput{
			Bucket:        aws.String(w.s.bucket),
			Key:           w.full,
			UploadId:      w.uploadID,
			PartNumber:    aws.Int32(num),
			Body:          bytes.NewReader(part),
			ContentLength: aws.Int64(int64(len(part))),
		})
		if err != nil {
			done <- partResult{err: err}
			return
		}
		done <- partResult{etag: out.ETag}
	}()
	if w.spare == nil {
		w.spare = make([]byte, 0, w.partSize)
	}
	w.buf, w.spare = w.spare[:0], part
	return nil
}

// wait ends the part in flight, if any, and returns its error.
func (w *writer) wait() error {
	if w.inflight == nil {
		return nil
	}
	r := <-w.inflight
	w.inflight = nil
	if r.err == nil {
		w.parts[len(w.parts)-1].ETag = r.etag
	}
	return r.err
}

// partResult is the outcome of one UploadPart.
type partResult struct {
	etag *string
	err  error
}

// Close sends what is left and makes the object visible.
func (w *writer) Close() error {
	if w.done {
		return w.err
	}
	if err := w.ctx.Err(); err != nil {
		return w.fail(err)
	}
	if w.uploadID == nil {
		_, err := w.s.client.PutObject(w.ctx, &s3api.PutObjectInput{
			Bucket:        aws.String(w.s.bucket),
			Key:           w.full,
			Body:          bytes.NewReader(w.buf),
			ContentLength: aws.Int64(int64(len(w.buf))),
		})
		if err != nil {
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
	_, err := w.s.client.CompleteMultipartUpload(w.ctx, &s3api.CompleteMultipartUploadInput{
		Bucket:          aws.String(w.s.bucket),
		Key:             w.full,
		UploadId:        w.uploadID,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: w.parts},
	})
	if err != nil {
		return w.fail(err)
	}
	w.finish()
	return nil
}

// finish marks a writer whose object landed as done.
func (w *writer) finish() {
	w.done, w.err = true, errWriterClosed
	w.buf, w.spare = nil, nil
}

// Abort ends the upload, if one was created, and drops the buffers. After
// a successful Close it does nothing.
func (w *writer) Abort() error {
	if w.done {
		return nil
	}
	w.done, w.err = true, fmt.Errorf("logstore/s3: write %q: aborted", w.key)
	return w.abort()
}

// abort waits for the part in flight and aborts the multipart upload.
func (w *writer) abort() error {
	_ = w.wait()
	w.buf, w.spare = nil, nil
	if w.uploadID == nil {
		return nil
	}
	id := w.uploadID
	w.uploadID = nil
	ctx, cancel := context.WithTimeout(context.WithoutCancel(w.ctx), 30*time.Second)
	defer cancel()
	_, err := w.s.client.AbortMultipartUpload(ctx, &s3api.AbortMultipartUploadInput{
		Bucket: aws.String(w.s.bucket), Key: w.full, UploadId: id,
	})
	if err != nil && apiCode(err) != "NoSuchUpload" {
		return w.s.wrap("abort write", w.key, err)
	}
	return nil
}

// fail ends the writer with err, aborting the upload, and returns err as
// the Store's other methods wrap theirs.
func (w *writer) fail(err error) error {
	w.done = true
	w.err = w.s.wrap("write", w.key, err)
	if aerr := w.abort(); aerr != nil {
		w.err = fmt.Errorf("%w (and aborting the upload: %w)", w.err, aerr)
	}
	return w.err
}

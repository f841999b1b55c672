package s3

// Streaming writes: NewWriter and its multipart upload.
//
// A Writer is logstore.NewPartWriter over the requests of one S3 multipart
// upload (the uploader below). It fills one part buffer of WriterPartSize
// bytes. When the buffer is full and more bytes come, the multipart upload
// is created (on the first such part) and the full buffer is sent with
// UploadPart by a goroutine while Write fills a second buffer; before that
// second buffer is sent in its turn, the first part's upload must have
// ended. So a Writer holds at most two part buffers, and at most one part
// is in flight. At Close, an object that never filled more than one buffer
// is a single PutObject (no upload was created); otherwise the last part,
// of any size, is uploaded and CompleteMultipartUpload makes the object
// visible, whole. Any failure, a cancelled ctx, or Abort ends the upload
// with AbortMultipartUpload, sent on a context of its own (the caller's
// may be the reason for the failure), after the part in flight has ended,
// so that no part lands after the abort.

import (
	"context"
	"errors"
	"fmt"

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
	u := &uploader{s: s, key: key, full: s.prefix + key}
	return logstore.NewPartWriter(ctx, logstore.PartConfig{
		Size:     int(size),
		MaxParts: maxParts,
		Wrap:     func(err error) error { return s.wrap("write", key, err) },
		Closed:   errWriterClosed,
		Aborted:  fmt.Errorf("logstore/s3: write %q: aborted", key),
	}, u), nil
}

var errWriterClosed = errors.New("logstore/s3: writer is closed")

// uploader is the logstore.PartUploader of one Writer: the requests of its
// multipart upload of key.
type uploader struct {
	s        *Store
	key      string
	full     string // the object's name in the bucket
	uploadID string // set by Begin, before the first Part
}

// Put is one PutObject, for an object of at most one part.
func (u *uploader) Put(ctx context.Context, data []byte) error {
	return u.s.putObject(ctx, u.full, data)
}

// Begin creates the multipart upload.
func (u *uploader) Begin(ctx context.Context) error {
	id, err := u.s.createUpload(ctx, u.full)
	if err != nil {
		return err
	}
	u.uploadID = id
	return nil
}

// Part sends part n with UploadPart and returns its ETag.
func (u *uploader) Part(ctx context.Context, n int, data []byte) (string, error) {
	return u.s.uploadPart(ctx, u.full, u.uploadID, n, data)
}

// Complete is CompleteMultipartUpload of the parts' ETags, numbered from 1.
func (u *uploader) Complete(ctx context.Context, etags []string) error {
	return u.s.completeUpload(ctx, u.full, u.uploadID, etags)
}

// Abort is AbortMultipartUpload; an upload the service no longer knows is
// already gone.
func (u *uploader) Abort(ctx context.Context) error {
	if err := u.s.abortUpload(ctx, u.full, u.uploadID); err != nil {
		return u.s.wrap("abort write", u.key, err)
	}
	return nil
}

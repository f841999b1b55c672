package azblob

// Streaming writes: NewWriter, as staged blocks of a block blob.
//
// A Writer is logstore.NewPartWriter over the requests of one block blob
// (the uploader below), with a block for a part. It fills one block buffer
// of WriterBlockSize bytes. When it is full and more bytes come, a
// goroutine stages it (Put Block) while Write fills a second buffer; before
// that one is staged in its turn, the first block's request must have
// ended. So a Writer holds at most two block buffers, and at most one block
// is in flight. At Close, an object that never filled more than one buffer
// is a single Put Blob; otherwise the last block is staged and one Put
// Block List commits them all, which replaces the blob whole. Every block
// carries its Content-MD5. There is no upload to begin or abort: Abort,
// a failure or a cancelled ctx only stop the Writer, after the block in
// flight has ended, and commit nothing.
//
// Block ids are base64 of "godelta-" + the writer's own random UUID + a
// six-digit block number: all of one length (the service requires that of
// the ids of one blob), and unique to the writer, so two writers of one key
// never stage over each other's blocks; the last commit wins, whole.
// Blocks staged by an aborted or failed Writer stay uncommitted, invisible,
// until the service drops them (after a week), or the next commit of the
// blob does.

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/godelta/delta/logstore"
)

// WriterBlockSize is the size of the blocks a Writer stages: 8 MiB, so a
// Writer holds 16 MiB, and a blob of the service's 50,000 blocks is up to
// 390 GiB.
const WriterBlockSize = 8 << 20

// maxBlocks is the service's limit on the committed blocks of a blob.
const maxBlocks = 50000

// NewWriter returns a logstore.Writer that streams the blob at key as
// staged blocks; see the comment at the top of writer.go. Nothing is sent
// before the first block is full or Close. Cancelling ctx fails the block
// in flight; the next Write or Close returns the error and commits nothing.
func (s *Store) NewWriter(ctx context.Context, key string) (logstore.Writer, error) {
	// The portable layer checked key, context and the closed state.
	u := &uploader{s: s, key: key, b: blocks{s: s, blob: s.prefix + key, idPrefix: "godelta-" + uuid.NewString() + "-"}}
	return logstore.NewPartWriter(ctx, logstore.PartConfig{
		Size:     WriterBlockSize,
		MaxParts: maxBlocks,
		Unit:     "blocks",
		Wrap: func(err error) error {
			if cerr := ctx.Err(); err == cerr {
				// The caller's check of ctx: this call sent nothing.
				return &Error{Op: "write", Key: s.uri(key), Kind: cerr}
			}
			return s.wrap(ctx, "write", key, err)
		},
		Closed:  errWriterClosed,
		Aborted: &Error{Op: "write", Key: s.uri(key), Kind: errAborted},
	}, u), nil
}

var (
	errWriterClosed = errors.New("logstore/azblob: writer is closed")
	errAborted      = errors.New("logstore/azblob: write aborted")
)

// uploader is the logstore.PartUploader of one Writer: the requests of
// one block blob.
type uploader struct {
	s   *Store
	key string
	b   blocks
}

// Put is one Put Blob, for a blob of at most one block.
func (u *uploader) Put(ctx context.Context, data []byte) error {
	resp, err := u.s.do(ctx, u.s.putBlobRequest(u.key, data))
	if err != nil {
		return err
	}
	drain(resp)
	return nil
}

// Begin does nothing: blocks are staged without an upload to create.
func (u *uploader) Begin(context.Context) error { return nil }

// Part stages block n with its Content-MD5 and returns its id.
func (u *uploader) Part(ctx context.Context, n int, data []byte) (string, error) {
	return u.b.stage(ctx, n-1, data)
}

// Complete is one Put Block List of the staged blocks, in order.
func (u *uploader) Complete(ctx context.Context, ids []string) error {
	return u.b.commit(ctx, ids)
}

// Abort does nothing: the staged blocks are left to the service.
func (u *uploader) Abort(context.Context) error { return nil }

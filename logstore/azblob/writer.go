package azblob

// Streaming writes: NewWriter, as staged blocks of a block blob.
//
// A Writer fills one block buffer of WriterBlockSize bytes. When it is
// full and more bytes come, a goroutine stages it (Put Block) while Write
// fills a second buffer; before that one is staged in its turn, the first
// block's request must have ended. So a Writer holds at most two block
// buffers, and at most one block is in flight. At Close, an object that
// never filled more than one buffer is a single Put Blob; otherwise the
// last block is staged and one Put Block List commits them all, which
// replaces the blob whole. Every block carries its Content-MD5.
//
// Block ids are base64 of "godelta-" + the writer's own random UUID + a
// six-digit block number: all of one length (the service requires that of
// the ids of one blob), and unique to the writer, so two writers of one key
// never stage over each other's blocks; the last commit wins, whole.
// Blocks staged by an aborted or failed Writer stay uncommitted, invisible,
// until the service drops them (after a week), or the next commit of the
// blob does.

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
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
	return &writer{s: s, ctx: ctx, key: key, bb: s.client.NewBlockBlobClient(s.prefix + key),
		idPrefix: "godelta-" + uuid.NewString() + "-", buf: make([]byte, 0, WriterBlockSize)}, nil
}

// writer is the Writer of NewWriter.
type writer struct {
	s        *Store
	ctx      context.Context
	key      string
	bb       *blockblob.Client
	idPrefix string

	buf   []byte // the block being filled
	spare []byte // the other buffer, once a block has been staged

	ids      []string   // staged (or in flight), in order
	inflight chan error // the block being staged; nil when none
	done     bool
	err      error // why the writer is done
}

var errWriterClosed = errors.New("logstore/azblob: writer is closed")

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
		if len(w.buf) == WriterBlockSize {
			if err := w.stage(); err != nil {
				return n, w.fail(err)
			}
		}
		k := min(len(b), WriterBlockSize-len(w.buf))
		w.buf = append(w.buf, b[:k]...)
		b = b[k:]
		n += k
	}
	return n, nil
}

// stage starts staging the buffer, after the block before it has ended,
// and takes the other buffer for the next block.
func (w *writer) stage() error {
	if err := w.wait(); err != nil {
		return err
	}
	if len(w.ids) >= maxBlocks {
		return fmt.Errorf("more than %d blocks of %d bytes", maxBlocks, WriterBlockSize)
	}
	id := base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "%s%06d", w.idPrefix, len(w.ids)))
	w.ids = append(w.ids, id)
	block, done := w.buf, make(chan error, 1)
	w.inflight = done
	go func() {
		_, err := w.bb.StageBlock(w.ctx, id, streaming.NopCloser(bytes.NewReader(block)), &blockblob.StageBlockOptions{
			TransactionalValidation: contentMD5(block),
		})
		done <- err
	}()
	if w.spare == nil {
		w.spare = make([]byte, 0, WriterBlockSize)
	}
	w.buf, w.spare = w.spare[:0], block
	return nil
}

// wait ends the block in flight, if any, and returns its error.
func (w *writer) wait() error {
	if w.inflight == nil {
		return nil
	}
	err := <-w.inflight
	w.inflight = nil
	return err
}

// Close stages what is left and commits the blob.
func (w *writer) Close() error {
	if w.done {
		return w.err
	}
	if err := w.ctx.Err(); err != nil {
		return w.fail(err)
	}
	if len(w.ids) == 0 {
		_, err := w.bb.Upload(w.ctx, streaming.NopCloser(bytes.NewReader(w.buf)), &blockblob.UploadOptions{
			TransactionalValidation: contentMD5(w.buf),
		})
		if err != nil {
			return w.fail(err)
		}
		w.finish()
		return nil
	}
	if len(w.buf) > 0 {
		if err := w.stage(); err != nil {
			return w.fail(err)
		}
	}
	if err := w.wait(); err != nil {
		return w.fail(err)
	}
	if _, err := w.bb.CommitBlockList(w.ctx, w.ids, nil); err != nil {
		return w.fail(err)
	}
	w.finish()
	return nil
}

func (w *writer) finish() {
	w.done, w.err = true, errWriterClosed
	w.buf, w.spare = nil, nil
}

// Abort drops the buffers, after the block in flight has ended; the
// staged blocks are left to the service. After Close it does nothing.
func (w *writer) Abort() error {
	if w.done {
		return nil
	}
	_ = w.wait()
	w.done = true
	w.err = &Error{Op: "write", Key: w.s.uri(w.key), Kind: errAborted}
	w.buf, w.spare = nil, nil
	return nil
}

var errAborted = errors.New("logstore/azblob: write aborted")

// fail ends the writer with err, classified as the other methods' errors.
func (w *writer) fail(err error) error {
	_ = w.wait()
	w.done = true
	w.buf, w.spare = nil, nil
	if cerr := w.ctx.Err(); err == cerr {
		// The caller's check of ctx: this call sent nothing.
		w.err = &Error{Op: "write", Key: w.s.uri(w.key), Kind: cerr}
	} else {
		w.err = w.s.wrap(w.ctx, "write", w.key, err)
	}
	return w.err
}

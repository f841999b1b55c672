package write

import (
	"bytes"
	"context"

	"github.com/godelta/delta/logstore"
)

// sink is where one data file goes as the datafile.Writer produces it:
// a logstore.Writer when the store streams (logstore.WriterStore), so
// that a file is never held whole in memory, else a buffer that Close
// puts whole. Nothing is visible at key until Close returns nil. n counts
// the bytes written, which is the file's size once it is closed.
type sink struct {
	store logstore.Store
	key   string
	sw    logstore.Writer // nil when buffered
	buf   bytes.Buffer
	n     int64
}

// openSink starts the file at key.
func openSink(ctx context.Context, store logstore.Store, key string) (*sink, error) {
	s := &sink{store: store, key: key}
	if ws, ok := store.(logstore.WriterStore); ok {
		sw, err := ws.NewWriter(ctx, key)
		if err != nil {
			return nil, err
		}
		s.sw = sw
	}
	return s, nil
}

// Write implements io.Writer.
func (s *sink) Write(p []byte) (int, error) {
	var n int
	var err error
	if s.sw != nil {
		n, err = s.sw.Write(p)
	} else {
		n, err = s.buf.Write(p)
	}
	s.n += int64(n)
	return n, err
}

// Close makes the file visible at its key: it closes the store's writer,
// or puts the buffer. On failure it aborts what was written.
func (s *sink) Close(ctx context.Context) error {
	if s.sw == nil {
		err := s.store.Put(ctx, s.key, s.buf.Bytes())
		s.buf = bytes.Buffer{}
		return err
	}
	if err := s.sw.Close(); err != nil {
		s.sw.Abort()
		return err
	}
	return nil
}

// Abort discards the file: nothing lands at its key. It is safe after a
// failed Write or Close, and may be repeated.
func (s *sink) Abort() {
	if s.sw != nil {
		s.sw.Abort()
	}
	s.buf = bytes.Buffer{}
}

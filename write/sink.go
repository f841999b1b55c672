package write

import (
	"context"

	"github.com/godelta/delta/logstore"
)

// sink is where one data file goes as the datafile.Writer produces it:
// the store's streaming Writer (logstore.Store.NewWriter), so that a file
// is never held whole in memory. Nothing is visible at key until Close
// returns nil. n counts the bytes written, which is the file's size once
// it is closed.
type sink struct {
	key string
	sw  logstore.Writer
	n   int64
}

// openSink starts the file at key.
func openSink(ctx context.Context, store logstore.Store, key string) (*sink, error) {
	sw, err := store.NewWriter(ctx, key)
	if err != nil {
		return nil, err
	}
	return &sink{key: key, sw: sw}, nil
}

// Write implements io.Writer.
func (s *sink) Write(p []byte) (int, error) {
	n, err := s.sw.Write(p)
	s.n += int64(n)
	return n, err
}

// Close makes the file visible at its key. On failure it aborts what was
// written.
func (s *sink) Close() error {
	if err := s.sw.Close(); err != nil {
		s.sw.Abort()
		return err
	}
	return nil
}

// Abort discards the file: nothing lands at its key. It is safe after a
// failed Write or Close, and may be repeated.
func (s *sink) Abort() { s.sw.Abort() }

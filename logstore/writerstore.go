package logstore

import "context"

// WriterStore is a Store that streams objects.
//
// It is optional for now: callers that write large objects (package write,
// for data files) check for it with a type assertion and fall back to a
// buffer and Put when a Store lacks it. Every backend in this module
// implements it; once Store itself has NewWriter, this interface is the
// same method set and may go.
type WriterStore interface {
	NewWriter(ctx context.Context, key string) (Writer, error)
}

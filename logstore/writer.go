package logstore

import "io"

// Writer streams one object to the store. Nothing is visible at the key until Close returns nil;
// then the object replaces any object at the key, whole. Abort discards what was written (safe
// after a failed Write or Close, and idempotent). A Writer is not safe for concurrent use.
//
// A Writer comes from Store.NewWriter(ctx, key); cancelling ctx aborts the write, so a Close
// after that returns an error and nothing becomes visible.
type Writer interface {
	io.Writer
	Close() error
	Abort() error
}

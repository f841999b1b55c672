// Package countstore wraps a logstore.Store and counts what is read from
// it: listings, and the Get and GetRange calls and bytes on the keys a test
// cares about (say, checkpoint files); Requests lists those reads in order. Tests use it to assert what an
// operation reads, by count and bytes rather than by time.
//
// A Store is safe for concurrent use; it changes nothing it passes on.
package countstore

import (
	"context"
	"iter"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/godelta/delta/logstore"
)

// Counts are the reads a Store has seen since it was made or last Reset.
type Counts struct {
	// Lists is the number of List calls, on any directory.
	Lists int64
	// Gets and Ranges are the Get and GetRange calls on matching keys,
	// Bytes the bytes they returned.
	Gets, Ranges, Bytes int64
}

// Store counts the reads of the store it wraps.
type Store struct {
	logstore.Store
	match func(key string) bool

	lists, gets, ranges, bytes atomic.Int64

	mu       sync.Mutex
	requests []Request
}

// Request is one read the Store passed on, in the order they came:
// every List, and the Get, GetRange and Stat calls on matching keys.
type Request struct {
	// Op is "list", "get", "range" or "stat".
	Op string
	// Key is the key read, or the directory listed.
	Key string
	// After is a listing's startAfter.
	After string
}

// String is the request as a test writes it: "list DIR", "list DIR after
// KEY", or the op and the key.
func (r Request) String() string {
	if r.Op == "list" && r.After != "" {
		return "list " + r.Key + " after " + r.After
	}
	return r.Op + " " + r.Key
}

// Requests returns the reads so far, in order.
func (s *Store) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

func (s *Store) record(r Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r)
	s.mu.Unlock()
}

// New wraps inner, counting Get and GetRange on the keys match accepts (on
// every key for a nil match).
func New(inner logstore.Store, match func(key string) bool) *Store {
	return &Store{Store: inner, match: match}
}

// Unwrap returns the wrapped store.
func (s *Store) Unwrap() logstore.Store { return s.Store }

// Counts returns the counts so far.
func (s *Store) Counts() Counts {
	return Counts{Lists: s.lists.Load(), Gets: s.gets.Load(), Ranges: s.ranges.Load(), Bytes: s.bytes.Load()}
}

// Reset sets the counts to zero.
func (s *Store) Reset() {
	s.lists.Store(0)
	s.gets.Store(0)
	s.ranges.Store(0)
	s.bytes.Store(0)
	s.mu.Lock()
	s.requests = nil
	s.mu.Unlock()
}

func (s *Store) counted(key string) bool { return s.match == nil || s.match(key) }

// Get passes the call on, counting it.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	b, err := s.Store.Get(ctx, key)
	if s.counted(key) {
		s.gets.Add(1)
		s.bytes.Add(int64(len(b)))
		s.record(Request{Op: "get", Key: key})
	}
	return b, err
}

// GetRange passes the call on, counting it.
func (s *Store) GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error) {
	b, err := s.Store.GetRange(ctx, key, offset, length)
	if s.counted(key) {
		s.ranges.Add(1)
		s.bytes.Add(int64(len(b)))
		s.record(Request{Op: "range", Key: key})
	}
	return b, err
}

// Stat passes the call on, recording it in Requests.
func (s *Store) Stat(ctx context.Context, key string) (logstore.ObjectInfo, error) {
	if s.counted(key) {
		s.record(Request{Op: "stat", Key: key})
	}
	return s.Store.Stat(ctx, key)
}

// List passes the call on, counting it.
func (s *Store) List(ctx context.Context, dir, startAfter string) iter.Seq2[logstore.ObjectInfo, error] {
	s.lists.Add(1)
	s.record(Request{Op: "list", Key: dir, After: startAfter})
	return s.Store.List(ctx, dir, startAfter)
}

// Package countstore wraps a logstore.Store and counts what is read from
// it: listings, and the Get and GetRange calls and bytes on the keys a test
// cares about (say, checkpoint files). Tests use it to assert what an
// operation reads, by count and bytes rather than by time.
//
// A Store is safe for concurrent use; it changes nothing it passes on.
package countstore

import (
	"context"
	"iter"
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
}

func (s *Store) counted(key string) bool { return s.match == nil || s.match(key) }

// Get passes the call on, counting it.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	b, err := s.Store.Get(ctx, key)
	if s.counted(key) {
		s.gets.Add(1)
		s.bytes.Add(int64(len(b)))
	}
	return b, err
}

// GetRange passes the call on, counting it.
func (s *Store) GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error) {
	b, err := s.Store.GetRange(ctx, key, offset, length)
	if s.counted(key) {
		s.ranges.Add(1)
		s.bytes.Add(int64(len(b)))
	}
	return b, err
}

// List passes the call on, counting it.
func (s *Store) List(ctx context.Context, dir, startAfter string) iter.Seq2[logstore.ObjectInfo, error] {
	s.lists.Add(1)
	return s.Store.List(ctx, dir, startAfter)
}

package location

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/godelta/delta/logstore"
)

// Stores opens the stores of the trusted outside roots that one reading
// needs (a scan's run, a file reader, a rewrite, a CLONE's check), each on
// first use and at most once, and closes them all in Close.
//
// Who owns them: the reading that made the set, and it alone, closes it,
// once every read that may use it has stopped. The table's own store is
// never closed by it.
type Stores struct {
	loc    *Location
	mu     sync.Mutex
	m      map[string]logstore.Store
	closed bool
}

// NewStores returns an empty set over l.
func (l *Location) NewStores() *Stores { return &Stores{loc: l} }

// Location returns the location the set resolves paths with.
func (s *Stores) Location() *Location { return s.loc }

// Open returns the store of ref: the table's for Root "", else the
// outside root's, opened on first use. After Close it fails with
// logstore.ErrClosed.
func (s *Stores) Open(ctx context.Context, ref Ref) (logstore.Store, error) {
	if ref.Root == "" {
		return s.loc.store, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("outside root %s: the reader is closed: %w", logstore.RedactURI(ref.Root), logstore.ErrClosed)
	}
	if st, ok := s.m[ref.Root]; ok {
		return st, nil
	}
	st, err := logstore.Open(ctx, ref.Root)
	if err != nil {
		return nil, fmt.Errorf("opening the outside root %s: %w", logstore.RedactURI(ref.Root), err)
	}
	if s.m == nil {
		s.m = map[string]logstore.Store{}
	}
	s.m[ref.Root] = st
	return st, nil
}

// Locate resolves p (see Location.Resolve) and opens its store.
func (s *Stores) Locate(ctx context.Context, p string) (logstore.Store, string, error) {
	ref, err := s.loc.Resolve(ctx, p)
	if err != nil {
		return nil, "", err
	}
	st, err := s.Open(ctx, ref)
	if err != nil {
		return nil, "", err
	}
	return st, ref.Key, nil
}

// Close closes every store the set opened, once; a second Close returns
// nil. Opening fails from then on.
func (s *Stores) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	for root, st := range s.m {
		if err := st.Close(); err != nil {
			errs = append(errs, fmt.Errorf("closing the outside root %s: %w", logstore.RedactURI(root), err))
		}
	}
	s.m = nil
	return errors.Join(errs...)
}

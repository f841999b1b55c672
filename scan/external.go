package scan

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/internal/dv"
	"github.com/godelta/delta/logstore"
)

// externalStores are the stores of Options.ExternalRoots that one reading
// opened, by root, each opened on first use and at most once.
//
// Who owns them: the reading that made the set, and it alone, closes it,
// once every read that may use it has stopped. A run of a Scan or Changes
// (one call of Rows or Batches) makes its own set and closes it when the
// run returns, whatever the exit (the end, the loop stopped early, an
// error, a cancelled context): runOrdered has waited for its workers by
// then. A FileReader makes one set for its life and closes it in Close.
// Nothing else opens external roots: every caller, in scan and above it
// (write, dml, optimize, the root package), passes root URIs only.
type externalStores struct {
	mu     sync.Mutex
	m      map[string]logstore.Store
	closed bool
}

// open returns the store of root, opening it on first use. After close it
// fails with logstore.ErrClosed.
func (e *externalStores) open(ctx context.Context, root string) (logstore.Store, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, fmt.Errorf("external root %s: the reader is closed: %w", logstore.RedactURI(root), logstore.ErrClosed)
	}
	if s, ok := e.m[root]; ok {
		return s, nil
	}
	s, err := logstore.Open(ctx, root)
	if err != nil {
		return nil, fmt.Errorf("opening external root %s: %w", logstore.RedactURI(root), err)
	}
	if e.m == nil {
		e.m = map[string]logstore.Store{}
	}
	e.m[root] = s
	return s, nil
}

// close closes every store the set opened, once; a second close returns
// nil. Opening fails from then on.
func (e *externalStores) close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	var errs []error
	for root, s := range e.m {
		if err := s.Close(); err != nil {
			errs = append(errs, fmt.Errorf("closing external root %s: %w", logstore.RedactURI(root), err))
		}
	}
	e.m = nil
	return errors.Join(errs...)
}

// locate returns the store and key of a file path from the log: the
// table's store for a path under the root (dataKey), else the store of the
// Options.ExternalRoots entry the absolute path lies under, from ext. A
// path under neither fails as dataKey does.
func (s *reader) locate(ctx context.Context, ext *externalStores, p string) (logstore.Store, string, error) {
	key, err := s.dataKey(p)
	if err == nil || !isAbsolute(p) || len(s.opts.ExternalRoots) == 0 {
		return s.store, key, err
	}
	pp := canonicalURI(p)
	for _, root := range s.opts.ExternalRoots {
		rest, ok := strings.CutPrefix(pp, strings.TrimSuffix(canonicalURI(root), "/")+"/")
		if !ok {
			continue
		}
		k, kerr := relativeKey(rest, p)
		if kerr != nil {
			return nil, "", kerr
		}
		st, oerr := ext.open(ctx, root)
		if oerr != nil {
			return nil, "", oerr
		}
		return st, k, nil
	}
	return nil, "", err
}

// loadDV loads a deletion vector: one of storage type "p" outside the
// table root from its external root's store in ext, any other as dv.Load
// does.
func (s *reader) loadDV(ctx context.Context, ext *externalStores, d *actions.DeletionVector) (*dv.Bitmap, error) {
	if d != nil && d.StorageType == dv.StorageAbsolute && len(s.opts.ExternalRoots) > 0 {
		if _, err := s.resolveAbs(d.PathOrInlineDv); err != nil {
			st, key, lerr := s.locate(ctx, ext, d.PathOrInlineDv)
			if lerr != nil {
				return nil, lerr
			}
			return dv.Load(ctx, st, d, func(string) (string, error) { return key, nil })
		}
	}
	return dv.Load(ctx, s.store, d, s.resolveAbs)
}

package scan

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/internal/dv"
	"github.com/godelta/delta/logstore"
)

// externalStores are the stores of Options.ExternalRoots a reader opened,
// by root.
type externalStores struct {
	mu sync.Mutex
	m  map[string]logstore.Store
}

func (e *externalStores) open(ctx context.Context, root string) (logstore.Store, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
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

// locate returns the store and key of a file path from the log: the
// table's store for a path under the root (dataKey), else the store of the
// Options.ExternalRoots entry the absolute path lies under. A path under
// neither fails as dataKey does.
func (s *reader) locate(ctx context.Context, p string) (logstore.Store, string, error) {
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
		st, oerr := s.ext.open(ctx, root)
		if oerr != nil {
			return nil, "", oerr
		}
		return st, k, nil
	}
	return nil, "", err
}

// loadDV loads a deletion vector: one of storage type "p" outside the
// table root from its external root's store, any other as dv.Load does.
func (s *reader) loadDV(ctx context.Context, d *actions.DeletionVector) (*dv.Bitmap, error) {
	if d != nil && d.StorageType == dv.StorageAbsolute && len(s.opts.ExternalRoots) > 0 {
		if _, err := s.resolveAbs(d.PathOrInlineDv); err != nil {
			st, key, lerr := s.locate(ctx, d.PathOrInlineDv)
			if lerr != nil {
				return nil, lerr
			}
			return dv.Load(ctx, st, d, func(string) (string, error) { return key, nil })
		}
	}
	return dv.Load(ctx, s.store, d, s.resolveAbs)
}

package fileset

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/internal/dv"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/snapshot"
)

// fileKey is the protocol's logical file key: canonical path and the
// deletion vector's unique id.
func fileKey(p string, d *actions.DeletionVector) string {
	k := snapshot.CanonicalPath(p)
	if d != nil {
		k += "\x00" + d.UniqueID()
	}
	return k
}

// liveFiles returns the live files of snap keyed by fileKey.
func liveFiles(ctx context.Context, snap *snapshot.Snapshot) (map[string]*actions.Add, []string, error) {
	files := map[string]*actions.Add{}
	var order []string
	for a, err := range snap.Files(ctx) {
		if err != nil {
			return nil, nil, err
		}
		k := fileKey(a.Path, a.DeletionVector)
		if _, ok := files[k]; !ok {
			order = append(order, k)
		}
		files[k] = a
	}
	return files, order, nil
}

// locator finds the store and key of file paths of a table at root,
// opening the stores of files outside it (a clone's sources) as needed.
type locator struct {
	store logstore.Store
	root  string
	mu    sync.Mutex
	other map[string]logstore.Store // by directory URI
}

func newLocator(store logstore.Store) *locator {
	return &locator{store: store, root: store.URI(), other: map[string]logstore.Store{}}
}

// close closes the stores locate opened.
func (l *locator) close() {
	for _, s := range l.other {
		s.Close()
	}
}

// locate returns the store and key of the file at p (a path as the log
// writes it).
func (l *locator) locate(ctx context.Context, p string) (logstore.Store, string, error) {
	if k, ok := snapshot.KeyOf(l.root, p); ok {
		return l.store, k, nil
	}
	if !snapshot.IsAbsolutePath(p) {
		return nil, "", fmt.Errorf("file path %q leaves the table root", p)
	}
	c := snapshot.CanonicalPath(p)
	if strings.HasPrefix(c, "/") {
		c = "file://" + c
	}
	dir, name := path.Split(c)
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.other[dir]
	if !ok {
		var err error
		if s, err = logstore.Open(ctx, strings.TrimSuffix(dir, "/")); err != nil {
			return nil, "", fmt.Errorf("opening the store of %s: %w", logstore.RedactURI(p), err)
		}
		l.other[dir] = s
	}
	return s, name, nil
}

// dvFile returns the path, as a log would write it, of the file a
// deletion vector is stored in; "" for an inline vector.
func dvFile(d *actions.DeletionVector) (string, error) {
	switch {
	case d == nil || d.StorageType == dv.StorageInline:
		return "", nil
	case d.StorageType == dv.StorageAbsolute:
		return d.PathOrInlineDv, nil
	}
	return dv.RelativePath(d)
}

// missing returns the paths (data files and deletion-vector files) of adds
// that storage lacks, at most limit of them, sorted; it checks with a
// bounded number of Stats at once.
func missing(ctx context.Context, l *locator, adds []*actions.Add, limit int) ([]string, error) {
	var paths []string
	seen := map[string]bool{}
	for _, a := range adds {
		for _, p := range []string{a.Path, ""} {
			if p == "" {
				f, err := dvFile(a.DeletionVector)
				if err != nil {
					return nil, err
				}
				p = f
			}
			if p != "" && !seen[p] {
				seen[p] = true
				paths = append(paths, p)
			}
		}
	}
	var (
		mu      sync.Mutex
		gone    []string
		firstEr error
		wg      sync.WaitGroup
	)
	sem := make(chan struct{}, 16)
	for _, p := range paths {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			store, key, err := l.locate(ctx, p)
			if err == nil {
				_, err = store.Stat(ctx, key)
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, logstore.ErrNotFound):
				gone = append(gone, p)
			case err != nil && firstEr == nil:
				firstEr = err
			}
		})
	}
	wg.Wait()
	if firstEr != nil {
		return nil, firstEr
	}
	slices.Sort(gone)
	if len(gone) > limit {
		gone = gone[:limit]
	}
	return gone, nil
}

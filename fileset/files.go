package fileset

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/location"
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

// missing returns the paths (data files and deletion-vector files) of adds
// that storage lacks, at most limit of them, sorted; it checks with a
// bounded number of Stats at once. Paths resolve through loc, the table's
// Location: a path it cannot place is an error, not a missing file.
func missing(ctx context.Context, loc *location.Location, adds []*actions.Add, limit int) ([]string, error) {
	stores := loc.NewStores()
	defer stores.Close()
	var paths []string
	seen := map[string]bool{}
	for _, a := range adds {
		for _, p := range []string{a.Path, ""} {
			if p == "" {
				f, _, err := location.DVPath(a.DeletionVector)
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
			store, key, err := stores.Locate(ctx, p)
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

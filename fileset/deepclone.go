package fileset

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/internal/dv"
	"github.com/godelta/delta/location"
	"github.com/godelta/delta/logstore"
)

// copyWorkers is how many files a deep clone copies at once.
const copyWorkers = 8

// copyJob is one file a deep clone copies: from where the source's
// Location places it to key in the target.
type copyJob struct {
	from location.Ref
	key  string
	size int64 // the size the log records; -1 for a deletion vector file
}

// deepCopy makes adds (the source's live files, as its log writes them)
// the adds of a deep clone in target: every data file and deletion-vector
// file is copied to the same key under the target's root (a file of the
// source's own root) or to its key under the root it lives in (a file a
// shallow clone source reads from elsewhere), and the adds name the copies
// by relative paths. Two files that would land on one key are refused
// (deltaerr.ErrInvalidArgument), never overwritten. It returns the number
// and bytes of the data files copied. On an error the files it wrote are
// deleted again: the target held nothing before (checkCloneTarget), and a
// failed clone commits nothing.
func deepCopy(ctx context.Context, src *location.Location, target logstore.Store, adds []actions.Add) (n, size int64, err error) {
	var jobs []copyJob
	dest := map[string]location.Ref{} // target key -> the file copied there
	place := func(p string, sz int64) (string, error) {
		ref, err := src.Resolve(ctx, p)
		if err != nil {
			return "", err
		}
		if prev, ok := dest[ref.Key]; ok {
			if prev != ref {
				return "", fmt.Errorf("%s and %s would both be copied to %s: %w", p, prev.Root+"/"+prev.Key, ref.Key, deltaerr.ErrInvalidArgument)
			}
			return ref.Key, nil // a deletion vector file shared by several files
		}
		dest[ref.Key] = ref
		jobs = append(jobs, copyJob{from: ref, key: ref.Key, size: sz})
		return ref.Key, nil
	}
	for i := range adds {
		a := &adds[i]
		key, err := place(a.Path, a.Size)
		if err != nil {
			return 0, 0, err
		}
		a.Path = location.EncodePath(key)
		n++
		size += a.Size
		if d := a.DeletionVector; d != nil {
			p, ok, err := location.DVPath(d)
			if err != nil {
				return 0, 0, fmt.Errorf("deletion vector of %s: %w", a.Path, err)
			}
			if !ok {
				continue // inline
			}
			key, err := place(p, -1)
			if err != nil {
				return 0, 0, fmt.Errorf("deletion vector of %s: %w", a.Path, err)
			}
			if d.StorageType == dv.StorageRelative && sameRelativeDV(d, key) {
				continue
			}
			// A vector named by an absolute path (as a shallow clone names
			// its source's) is named where the copy is: relatively when the
			// file name has the form of one ("u"), else by absolute path.
			nd := *d
			if rel, ok := dv.RelativePathOrInline(key); ok {
				nd.StorageType, nd.PathOrInlineDv = dv.StorageRelative, rel
			} else {
				nd.StorageType, nd.PathOrInlineDv = dv.StorageAbsolute, location.EncodeRoot(target.URI())+"/"+location.EncodePath(key)
			}
			a.DeletionVector = &nd
		}
	}
	if err := copyAll(ctx, src, target, jobs); err != nil {
		return 0, 0, err
	}
	return n, size, nil
}

// sameRelativeDV reports whether the relative ("u") vector d names key.
func sameRelativeDV(d *actions.DeletionVector, key string) bool {
	k, err := dv.RelativePath(d)
	return err == nil && k == key
}

// copyAll copies jobs with copyWorkers workers; on an error it stops and
// deletes every copy it made.
func copyAll(ctx context.Context, src *location.Location, target logstore.Store, jobs []copyJob) error {
	stores := src.NewStores()
	defer stores.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		firstErr error
		written  []string
		wg       sync.WaitGroup
	)
	work := make(chan copyJob)
	for range min(copyWorkers, len(jobs)) {
		wg.Go(func() {
			for j := range work {
				err := copyOne(ctx, stores, target, j)
				mu.Lock()
				if err == nil {
					written = append(written, j.key)
				} else if firstErr == nil {
					firstErr = err
					cancel()
				}
				mu.Unlock()
			}
		})
	}
	for _, j := range jobs {
		if ctx.Err() != nil {
			break
		}
		work <- j
	}
	close(work)
	wg.Wait()
	if firstErr == nil {
		return nil
	}
	cleanup := context.WithoutCancel(ctx)
	for _, k := range written {
		_ = target.Delete(cleanup, k) // ours: written by this clone a moment ago
	}
	return firstErr
}

// copyOne streams one file from the source to the target, and checks a
// data file's size against the log.
func copyOne(ctx context.Context, stores *location.Stores, target logstore.Store, j copyJob) error {
	from, err := stores.Open(ctx, j.from)
	if err != nil {
		return err
	}
	w, err := target.NewWriter(ctx, j.key)
	if err != nil {
		return err
	}
	n, err := io.Copy(w, logstore.NewWindowReader(ctx, from, j.from.Key, 0))
	if err == nil && j.size >= 0 && n != j.size {
		err = deltaerr.Corruptf(j.from.Key, "the file holds %d bytes; the log records %d", n, j.size)
	}
	if err != nil {
		_ = w.Abort()
		return fmt.Errorf("copying %s: %w", j.from.Key, err)
	}
	return w.Close()
}

package tablecheck

import (
	"context"
	"errors"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/internal/dv"
	"github.com/godelta/delta/location"
	"github.com/godelta/delta/logstore"
)

// checkFiles checks every live data file of the latest version and its
// deletion vector, and with Options.Deep its footer.
func checkFiles(ctx context.Context, c *checker) error {
	if c.snap == nil {
		return nil
	}
	v := c.snap.Version()
	stores := c.snap.Location().NewStores()
	defer stores.Close()
	var deep *deepChecker
	if c.opts.Deep {
		var err error
		if deep, err = newDeepChecker(c.snap); err != nil {
			return err
		}
	}
	for a, err := range c.snap.Files(ctx) {
		if err != nil {
			if ctx.Err() != nil || !errors.Is(err, deltaerr.ErrCorrupt) {
				return err
			}
			c.report(KindLog, v, "", "the live files of the latest version cannot be read: %v", err)
			return nil
		}
		c.rep.Checked["files"]++
		store, key, ok, err := c.locate(ctx, stores, v, a.Path)
		if err != nil {
			return err
		}
		if ok {
			found, err := c.checkSize(ctx, store, key, v, a)
			if err != nil {
				return err
			}
			if found && deep != nil {
				if err := deep.check(ctx, c, store, key, v, a); err != nil {
					return err
				}
			}
		}
		if a.DeletionVector != nil {
			if err := c.checkDV(ctx, stores, v, a); err != nil {
				return err
			}
		}
	}
	return nil
}

// locate resolves a path of the log to its store and key through the
// table's Location, the one resolver, reporting a path that escapes the
// root or cannot be decoded (ok false). err is set only when the check
// cannot go on.
func (c *checker) locate(ctx context.Context, stores *location.Stores, v int64, path string) (store logstore.Store, key string, ok bool, err error) {
	ref, err := stores.Location().Resolve(ctx, path)
	switch {
	case err == nil:
	case errors.Is(err, deltaerr.ErrPathEscapesRoot):
		c.report(KindPathEscapes, v, path, "the path lies outside the table root and every root it trusts: %v", err)
		return nil, "", false, nil
	case errors.Is(err, deltaerr.ErrCorrupt):
		c.report(KindPathEscapes, v, path, "the path cannot be decoded: %v", err)
		return nil, "", false, nil
	default:
		return nil, "", false, err
	}
	store, err = stores.Open(ctx, ref)
	if err != nil {
		if ctx.Err() != nil {
			return nil, "", false, ctx.Err()
		}
		c.report(KindCloneRoot, v, path, "the root %s the file lies under cannot be opened: %v", ref.Root, err)
		return nil, "", false, nil
	}
	return store, ref.Key, true, nil
}

// checkSize checks that a data file exists with its logged size; found is
// false when it does not exist.
func (c *checker) checkSize(ctx context.Context, store logstore.Store, key string, v int64, a *actions.Add) (found bool, err error) {
	info, err := store.Stat(ctx, key)
	switch {
	case errors.Is(err, logstore.ErrNotFound):
		c.report(KindMissingFile, v, a.Path, "the data file is not in the store (key %s)", key)
		return false, nil
	case err != nil:
		return false, err
	case info.Size != a.Size:
		c.report(KindFileSize, v, a.Path, "the data file has %d bytes, the log says %d", info.Size, a.Size)
	}
	return true, nil
}

// checkDV reads a file's deletion vector and checks it against its
// descriptor (internal/dv's Load: size, CRC-32, cardinality).
func (c *checker) checkDV(ctx context.Context, stores *location.Stores, v int64, a *actions.Add) error {
	d := a.DeletionVector
	c.rep.Checked["deletionVectors"]++
	dvPath, stored, err := location.DVPath(d)
	if err != nil {
		c.report(KindDeletionVector, v, a.Path, "the deletion vector descriptor is invalid: %v", err)
		return nil
	}
	store := c.snap.Store()
	var resolveAbs func(string) (string, error)
	if stored {
		st, key, ok, err := c.locate(ctx, stores, v, dvPath)
		if err != nil || !ok {
			return err
		}
		if d.StorageType == dv.StorageAbsolute {
			store = st
			resolveAbs = func(string) (string, error) { return key, nil }
		}
	}
	if _, err := dv.Load(ctx, store, d, resolveAbs); err != nil {
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, logstore.ErrNotFound):
			c.report(KindDeletionVector, v, a.Path, "the deletion vector file %s is missing", dvPath)
		case errors.Is(err, deltaerr.ErrCorrupt), errors.Is(err, deltaerr.ErrUnsupportedFeature):
			c.report(KindDeletionVector, v, a.Path, "the deletion vector does not match its descriptor: %v", err)
		default:
			return err
		}
	}
	return nil
}

var errNoLog = errors.New("no Delta log there")

// checkCloneRoots opens and lists each outside root the table trusts.
func checkCloneRoots(ctx context.Context, c *checker) error {
	if c.snap == nil {
		return nil
	}
	loc := c.snap.Location()
	stores := loc.NewStores()
	defer stores.Close()
	for _, root := range loc.TrustedRoots(ctx) {
		c.rep.Checked["cloneRoots"]++
		st, err := stores.Open(ctx, location.Ref{Root: root})
		if err == nil {
			// A clone's source is a table: its log lists at least one file.
			err = errNoLog
			for _, lerr := range st.List(ctx, deltalog.LogDir, "") {
				err = lerr
				break
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			c.report(KindCloneRoot, c.snap.Version(), root, "a root the table trusts cannot be read: %v", err)
		}
	}
	return nil
}

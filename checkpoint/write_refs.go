package checkpoint

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
)

// SidecarRefs returns a function for deltalog.CleanupOptions.SidecarRefs:
// it reads only the sidecar column of a checkpoint in store and returns the
// names of the sidecar files it references, relative to
// _delta_log/_sidecars/ and percent-decoded. An absolute sidecar URI
// counts by its last path segment, so that a file it may name is kept.
func SidecarRefs(store logstore.Store) func(ctx context.Context, parts []deltalog.LogFile) ([]string, error) {
	return func(ctx context.Context, parts []deltalog.LogFile) ([]string, error) {
		keys := make([]string, len(parts))
		for i, p := range parts {
			keys[i] = p.Key
		}
		var names []string
		err := Read(ctx, store, keys, Sidecar, func(batch []actions.Action) error {
			for _, a := range batch {
				if a.Sidecar == nil {
					continue
				}
				p := a.Sidecar.Path
				if u, err := url.Parse(p); err == nil {
					if dec, err := url.PathUnescape(u.EscapedPath()); err == nil {
						p = dec
					}
				}
				if u, err := url.Parse(a.Sidecar.Path); err == nil && (u.Scheme != "" || strings.HasPrefix(u.Path, "/")) {
					p = p[strings.LastIndexByte(p, '/')+1:]
				}
				names = append(names, p)
			}
			return nil
		})
		return names, err
	}
}

// Verify returns a function for deltalog.CleanupOptions.Verify: it reads
// the checkpoint made of parts in full, every action kind of every part,
// every page of every column, and the sidecar files it names, and
// returns nil only when all of it decodes and the checkpoint holds the
// one protocol and the one metaData every checkpoint must. A reader that
// cannot read a checkpoint passes over it; Verify says beforehand whether
// one will, so that cleanup does not rely on it. A damaged checkpoint
// gives a *deltaerr.CorruptError; a missing part wraps
// logstore.ErrNotFound.
func Verify(store logstore.Store) func(ctx context.Context, parts []deltalog.LogFile) error {
	return func(ctx context.Context, parts []deltalog.LogFile) error {
		keys := make([]string, len(parts))
		for i, p := range parts {
			keys[i] = p.Key
		}
		var protocols, metadatas int
		err := Read(ctx, store, keys, All, func(batch []actions.Action) error {
			for i := range batch {
				if batch[i].Protocol != nil {
					protocols++
				}
				if batch[i].Metadata != nil {
					metadatas++
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if protocols != 1 || metadatas != 1 {
			return &deltaerr.CorruptError{Path: keys[0],
				Reason: fmt.Sprintf("the checkpoint holds %d protocol and %d metaData actions, not one of each", protocols, metadatas)}
		}
		return nil
	}
}

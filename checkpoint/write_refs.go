package checkpoint

import (
	"context"
	"net/url"
	"strings"

	"github.com/godelta/delta/actions"
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

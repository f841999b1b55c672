package gcs

import (
	"context"
	"iter"
	"slices"
	"strings"

	"github.com/godelta/delta/logstore"
)

var _ logstore.DirLister = (*Store)(nil)

// ListDirs implements logstore.DirLister with the prefixes of a listing
// delimited by '/'.
func (s *Store) ListDirs(ctx context.Context, dir string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		var dirs []string
		for page, err := range s.pages(ctx, s.prefix+dir, "", "prefixes,nextPageToken") {
			if err != nil {
				yield("", s.wrap(ctx, "list dirs", dir, err))
				return
			}
			for _, p := range page.Prefixes {
				d, ok := strings.CutPrefix(p, s.prefix)
				if ok && strings.HasPrefix(d, dir) && len(d) > len(dir)+1 && logstore.CheckDir(d) == nil {
					dirs = append(dirs, d)
				}
			}
		}
		slices.Sort(dirs)
		for _, d := range slices.Compact(dirs) {
			if !yield(d, nil) {
				return
			}
		}
	}
}

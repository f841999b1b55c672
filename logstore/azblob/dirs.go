package azblob

import (
	"context"
	"iter"
	"slices"
	"strings"

	"github.com/godelta/delta/logstore"
)

var _ logstore.DirLister = (*Store)(nil)

// ListDirs implements logstore.DirLister with the blob prefixes of a
// hierarchical listing delimited by '/'.
func (s *Store) ListDirs(ctx context.Context, dir string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		var dirs []string
		marker := ""
		for {
			page, err := s.listPage(ctx, s.prefix+dir, "", marker, s.pageSize)
			if err != nil {
				yield("", s.wrap(ctx, "list dirs", dir, err))
				return
			}
			for _, p := range page.Blobs.BlobPrefix {
				name, err := p.Name.decode()
				if err != nil {
					continue
				}
				d, ok := strings.CutPrefix(name, s.prefix)
				if ok && strings.HasPrefix(d, dir) && len(d) > len(dir)+1 && logstore.CheckDir(d) == nil {
					dirs = append(dirs, d)
				}
			}
			if page.NextMarker == "" || page.NextMarker == marker {
				break
			}
			marker = page.NextMarker
		}
		slices.Sort(dirs)
		for _, d := range slices.Compact(dirs) {
			if !yield(d, nil) {
				return
			}
		}
	}
}

package memory

import (
	"context"
	"iter"
	"slices"
	"strings"

	"github.com/godelta/delta/logstore"
)

var _ logstore.DirLister = (*Store)(nil)

// ListDirs implements logstore.DirLister: the distinct key prefixes one
// segment below dir that some object has, in byte order.
func (s *Store) ListDirs(ctx context.Context, dir string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		seen := map[string]bool{}
		s.mu.RLock()
		for key := range s.objects {
			name, ok := strings.CutPrefix(key, dir)
			if !ok {
				continue
			}
			if i := strings.IndexByte(name, '/'); i > 0 {
				seen[dir+name[:i+1]] = true
			}
		}
		s.mu.RUnlock()
		dirs := make([]string, 0, len(seen))
		for d := range seen {
			dirs = append(dirs, d)
		}
		slices.Sort(dirs)
		for _, d := range dirs {
			if !yield(d, nil) {
				return
			}
		}
	}
}

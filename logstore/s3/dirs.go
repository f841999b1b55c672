package s3

import (
	"context"
	"iter"
	"slices"
	"strings"

	"github.com/godelta/delta/logstore"
)

var _ logstore.DirLister = (*Store)(nil)

// ListDirs implements logstore.DirLister with the common prefixes of a
// listing delimited by '/'.
func (s *Store) ListDirs(ctx context.Context, dir string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		var dirs []string
		token := ""
		for {
			out, err := s.listPage(ctx, s.prefix+dir, "", token)
			if err != nil {
				yield("", s.wrap("list dirs", dir, err))
				return
			}
			for _, cp := range out.CommonPrefixes {
				d, ok := strings.CutPrefix(cp.Prefix, s.prefix)
				if ok && strings.HasPrefix(d, dir) && len(d) > len(dir)+1 && logstore.CheckDir(d) == nil {
					dirs = append(dirs, d)
				}
			}
			if !out.IsTruncated || out.NextContinuationToken == "" {
				break
			}
			token = out.NextContinuationToken
		}
		slices.Sort(dirs)
		for _, d := range slices.Compact(dirs) {
			if !yield(d, nil) {
				return
			}
		}
	}
}

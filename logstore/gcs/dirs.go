package gcs

import (
	"context"
	"errors"
	"iter"
	"slices"
	"strings"

	"cloud.google.com/go/storage"
	"google.golang.org/api/iterator"

	"github.com/godelta/delta/logstore"
)

var _ logstore.DirLister = (*Store)(nil)

// ListDirs implements logstore.DirLister with the prefixes of a listing
// delimited by '/'.
func (s *Store) ListDirs(ctx context.Context, dir string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		q := &storage.Query{Prefix: s.prefix + dir, Delimiter: "/"}
		if err := q.SetAttrSelection([]string{"Name"}); err != nil {
			yield("", err)
			return
		}
		it := s.bucket.Objects(ctx, q)
		if s.pageSize > 0 {
			it.PageInfo().MaxSize = s.pageSize
		}
		var dirs []string
		for {
			attrs, err := it.Next()
			if errors.Is(err, iterator.Done) {
				break
			}
			if err != nil {
				yield("", s.wrap(ctx, "list dirs", dir, err))
				return
			}
			if attrs.Prefix == "" {
				continue // an object
			}
			d, ok := strings.CutPrefix(attrs.Prefix, s.prefix)
			if ok && strings.HasPrefix(d, dir) && len(d) > len(dir)+1 && logstore.CheckDir(d) == nil {
				dirs = append(dirs, d)
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

package azblob

import (
	"context"
	"iter"
	"slices"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/godelta/delta/logstore"
)

var _ logstore.DirLister = (*Store)(nil)

// ListDirs implements logstore.DirLister with the blob prefixes of a
// hierarchical listing delimited by '/'.
func (s *Store) ListDirs(ctx context.Context, dir string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		prefix := s.prefix + dir
		opts := &container.ListBlobsHierarchyOptions{Prefix: &prefix}
		if s.pageSize > 0 {
			opts.MaxResults = &s.pageSize
		}
		pager := s.client.NewListBlobsHierarchyPager("/", opts)
		var dirs []string
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				yield("", s.wrap(ctx, "list dirs", dir, err))
				return
			}
			for _, p := range page.Segment.BlobPrefixes {
				if p.Name == nil {
					continue
				}
				d, ok := strings.CutPrefix(*p.Name, s.prefix)
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

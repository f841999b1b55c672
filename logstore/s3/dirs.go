package s3

import (
	"context"
	"iter"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	s3api "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/godelta/delta/logstore"
)

var _ logstore.DirLister = (*Store)(nil)

// ListDirs implements logstore.DirLister with the common prefixes of a
// listing delimited by '/'.
func (s *Store) ListDirs(ctx context.Context, dir string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		in := &s3api.ListObjectsV2Input{
			Bucket:    aws.String(s.bucket),
			Prefix:    aws.String(s.prefix + dir),
			Delimiter: aws.String("/"),
		}
		if s.pageSize > 0 {
			in.MaxKeys = aws.Int32(s.pageSize)
		}
		var dirs []string
		for {
			out, err := s.client.ListObjectsV2(ctx, in)
			if err != nil {
				yield("", s.wrap("list dirs", dir, err))
				return
			}
			for _, cp := range out.CommonPrefixes {
				d, ok := strings.CutPrefix(aws.ToString(cp.Prefix), s.prefix)
				if ok && strings.HasPrefix(d, dir) && len(d) > len(dir)+1 && logstore.CheckDir(d) == nil {
					dirs = append(dirs, d)
				}
			}
			if !aws.ToBool(out.IsTruncated) || aws.ToString(out.NextContinuationToken) == "" {
				break
			}
			in.ContinuationToken = out.NextContinuationToken
		}
		slices.Sort(dirs)
		for _, d := range slices.Compact(dirs) {
			if !yield(d, nil) {
				return
			}
		}
	}
}

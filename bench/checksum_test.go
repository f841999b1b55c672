package bench

import (
	"context"
	"fmt"
	"testing"

	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/internal/checksum"
	"github.com/godelta/delta/internal/checksum/crcwriter"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/testutil/countstore"
)

// BenchmarkDescribe loads the latest version of a synthetic table (a
// checkpoint of n files, then 10 commits that set no protocol or
// metadata) and asks what a describe asks: protocol and metadata. It
// reports what one load reads from the store (every key counted:
// listings, Get and GetRange calls and bytes), without and with the
// version checksum of the latest version. Without it, Load reads the
// checkpoint's protocol and metaData columns; with it, only the .crc
// (and one Stat of the checkpoint, which countstore does not count).
//
// With size=true it also asks for the number and size of the live files,
// as delta describe does: from the checksum when Load used one, else from
// the replay, which reads the checkpoint's add column.
//
//	go test ./bench/ -run XXX -bench Describe -benchtime 20x
func BenchmarkDescribe(b *testing.B) {
	sizes := []int{40_000, 100_000}
	if *large {
		sizes = append(sizes, 1_000_000)
	}
	ctx := context.Background()
	for _, n := range sizes {
		store := table(b, n)
		for _, withCRC := range []bool{false, true} {
			if withCRC {
				snap, err := snapshot.Load(ctx, store, deltalog.Latest)
				if err != nil {
					b.Fatal(err)
				}
				c, err := crcwriter.Compute(ctx, snap)
				if err != nil {
					b.Fatal(err)
				}
				if err := checksum.Write(ctx, store, snap.Version(), c); err != nil {
					b.Fatal(err)
				}
			}
			for _, size := range []bool{false, true} {
				b.Run(fmt.Sprintf("files=%d/crc=%v/size=%v", n, withCRC, size), func(b *testing.B) {
					cs := countstore.New(store, nil)
					for b.Loop() {
						s, err := snapshot.Load(ctx, cs, deltalog.Latest)
						if err != nil {
							b.Fatal(err)
						}
						if s.Metadata().ID == "" || s.Protocol().MinReaderVersion == 0 || (s.Checksum() != nil) != withCRC {
							b.Fatal("no protocol or metadata, or the checksum not used as expected")
						}
						if !size {
							continue
						}
						files := int64(-1)
						if c := s.Checksum(); c != nil {
							files = c.NumFiles
						} else if files, err = s.NumFiles(ctx); err != nil {
							b.Fatal(err)
						}
						if files != int64(n+50) {
							b.Fatalf("%d files, want %d", files, n+50)
						}
					}
					c := cs.Counts()
					per := func(v int64) float64 { return float64(v) / float64(b.N) }
					b.ReportMetric(per(c.Bytes), "readB/op")
					b.ReportMetric(per(c.Gets+c.Ranges), "reads/op")
					b.ReportMetric(per(c.Lists), "lists/op")
				})
			}
		}
	}
}

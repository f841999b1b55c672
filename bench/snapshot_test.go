// Package bench holds the benchmarks recorded in bench/RESULTS.md. Run them
// with
//
//	go test ./bench/ -run XXX -bench . -benchmem
//
// and add -large for the 1,000,000-file table.
package bench

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/godelta/delta/bench/synth"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/snapshot"
)

var large = flag.Bool("large", false, "also benchmark the 1,000,000-file table")

// table builds (once per benchmark) a synthetic table on local disk.
func table(b *testing.B, n int) *logstore.Portable {
	b.Helper()
	dir := filepath.Join(b.TempDir(), "t")
	store, err := local.New(dir, local.WithoutSync())
	if err != nil {
		b.Fatal(err)
	}
	if _, err := synth.Build(context.Background(), store, n, 10); err != nil {
		b.Fatal(err)
	}
	return store
}

func BenchmarkSnapshotLoad(b *testing.B) {
	sizes := []int{10_000, 100_000}
	if *large {
		sizes = append(sizes, 1_000_000)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			store := table(b, n)
			want := int64(n + 10*10 - 10*5)
			b.ResetTimer()
			for b.Loop() {
				s, err := snapshot.Load(context.Background(), store, deltalog.Latest)
				if err != nil {
					b.Fatal(err)
				}
				if got, err := s.NumFiles(context.Background()); err != nil || got != want {
					b.Fatalf("NumFiles = %d (%v), want %d", got, err, want)
				}
			}
		})
	}
}

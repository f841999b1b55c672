package bench

import (
	"context"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/godelta/delta/deltaarrow"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/snapshot"
)

// The Arrow benchmarks (issue 18) read a table of the scan benchmark's
// shape, arrowFiles files of scanRowsPerFile rows: 10M rows by default,
// GODELTA_ARROW_BENCH_FILES=4 for 1M on a slow machine.
var arrowTableOnce struct {
	sync.Once
	dir   string
	files []string
	bytes int64
	err   error
}

func arrowFiles() int {
	if n, err := strconv.Atoi(os.Getenv("GODELTA_ARROW_BENCH_FILES")); err == nil && n > 0 {
		return n
	}
	return 40
}

func arrowTable(b *testing.B) (dir string, files []string, size int64) {
	b.Helper()
	s := &arrowTableOnce
	s.Do(func() { s.dir, s.files, s.bytes, s.err = writeScanTable(arrowFiles(), scanRowsPerFile) })
	if s.err != nil {
		b.Fatal(s.err)
	}
	return s.dir, s.files, s.bytes
}

// BenchmarkArrow compares, one file at a time, an Arrow scan through
// deltaarrow (scan batches converted to Arrow records), the row scan it is
// built on (scan batches of schema.Value), and arrow-go's own Parquet
// reader (pqarrow) of the same files: the bare read the issue targets
// (Arrow scan at most 1.2x of it).
func BenchmarkArrow(b *testing.B) {
	dir, files, size := arrowTable(b)
	rows := len(files) * scanRowsPerFile
	store, err := local.New(dir)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	newScan := func(b *testing.B, conc int) *scan.Scan {
		snap, err := snapshot.Load(ctx, store, deltalog.Latest)
		if err != nil {
			b.Fatal(err)
		}
		s, err := scan.New(snap, scan.Options{Concurrency: conc})
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	done := func(b *testing.B, n int) {
		if n != rows {
			b.Fatalf("%d rows, want %d", n, rows)
		}
	}
	arrowScan := func(b *testing.B, conc int) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			r, err := deltaarrow.NewReader(ctx, newScan(b, conc), nil) // the default allocator
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for r.Next() {
				n += int(r.RecordBatch().NumRows())
			}
			if err := r.Err(); err != nil {
				b.Fatal(err)
			}
			r.Release()
			done(b, n)
		}
		b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	}
	// One file at a time, as the bare read; then the scan's default, which
	// reads the next file while the last one's batches are converted.
	b.Run("deltaarrow/files-at-once=1", func(b *testing.B) { arrowScan(b, 1) })
	b.Run("deltaarrow/files-at-once=GOMAXPROCS", func(b *testing.B) { arrowScan(b, 0) })
	b.Run("row-scan/files-at-once=1", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			for batch, err := range newScan(b, 1).Batches(ctx) {
				if err != nil {
					b.Fatal(err)
				}
				n += batch.Len
			}
			done(b, n)
		}
		b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	b.Run("pqarrow-bare", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			for _, name := range files {
				pf, err := file.OpenParquetFile(name, false)
				if err != nil {
					b.Fatal(err)
				}
				fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 8192}, memory.DefaultAllocator)
				if err != nil {
					b.Fatal(err)
				}
				rr, err := fr.GetRecordReader(ctx, nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				for rr.Next() {
					n += int(rr.RecordBatch().NumRows())
				}
				if err := rr.Err(); err != nil {
					b.Fatal(err)
				}
				rr.Release()
				pf.Close()
			}
			done(b, n)
		}
		b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
}

// Command optbench measures OPTIMIZE throughput (issue 15): compaction and
// Z-order of a table of many small files, against a bare parquet-go
// read-and-write of the same rows. Each mode runs in its own process, so
// the peak RSS it prints (getrusage maxrss) is that mode's alone.
//
//	go build -o /tmp/optbench ./bench/cmd/optbench
//	/tmp/optbench -mode setup -files 1000 -rows 10000 /tmp/opt-src   # 10M rows
//	cp -r /tmp/opt-src /tmp/opt-a && /tmp/optbench -mode compact /tmp/opt-a
//	cp -r /tmp/opt-src /tmp/opt-b && /tmp/optbench -mode zorder /tmp/opt-b
//	/tmp/optbench -mode bare /tmp/opt-src
//
// The rows are (id BIGINT, value DOUBLE, name STRING, ts TIMESTAMP, opt
// INT nullable), as the scan benchmark's. bare reads every live data file
// of the table with parquet-go's GenericReader and writes the rows with a
// GenericWriter (snappy) into one file, the floor for what a compaction of
// those files into one file costs.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/parquet-go/parquet-go"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/optimize"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
)

type row struct {
	ID    int64     `parquet:"id"`
	Value float64   `parquet:"value"`
	Name  string    `parquet:"name"`
	TS    time.Time `parquet:"ts,timestamp(microsecond)"`
	Opt   *int32    `parquet:"opt,optional"`
}

func main() {
	mode := flag.String("mode", "", "setup, compact, zorder, hilbert or bare")
	files := flag.Int("files", 1000, "setup: number of files")
	rows := flag.Int("rows", 10000, "setup: rows per file")
	sortMem := flag.Int64("sort-memory", 0, "zorder/hilbert: sort memory budget in bytes (0: default)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile to this file")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "optbench:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: optbench -mode MODE DIR")
		os.Exit(2)
	}
	dir := flag.Arg(0)
	ctx := context.Background()
	start := time.Now()
	var n int64
	var err error
	switch *mode {
	case "setup":
		n, err = setup(ctx, dir, *files, *rows)
	case "compact":
		n, err = run(ctx, dir, optimize.Options{})
	case "zorder":
		n, err = run(ctx, dir, optimize.Options{ZOrderBy: []string{"id", "value"}, SortMemory: *sortMem})
	case "hilbert":
		n, err = run(ctx, dir, optimize.Options{HilbertBy: []string{"id", "value"}, SortMemory: *sortMem})
	case "bare":
		n, err = bare(ctx, dir)
	default:
		err = fmt.Errorf("unknown mode %q", *mode)
	}
	if err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "optbench:", err)
		os.Exit(1)
	}
	el := time.Since(start)
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	fmt.Printf("%s: %d rows in %.2f s = %.0f rows/s, peak RSS %d MiB\n", *mode, n, el.Seconds(), float64(n)/el.Seconds(), ru.Maxrss/1024)
}

func tableSchema() *schema.StructType {
	return &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.Long},
		{Name: "value", Type: schema.Double},
		{Name: "name", Type: schema.String},
		{Name: "ts", Type: schema.Timestamp},
		{Name: "opt", Type: schema.Integer, Nullable: true},
	}}
}

// setup writes files of rows each, one append (one file) per file, ids
// shuffled so that Z-order has work to do.
func setup(ctx context.Context, dir string, files, rows int) (int64, error) {
	tbl, err := delta.Create(ctx, dir, delta.TableSpec{Schema: tableSchema()})
	if err != nil {
		return 0, err
	}
	defer tbl.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	var n int64
	for f := range files {
		b := schema.Batch{Len: rows, Columns: make([][]schema.Value, 5)}
		for i := range rows {
			id := rng.Int64N(int64(files * rows))
			var opt schema.Value
			if i%3 != 0 {
				opt = schema.IntegerValue(int32(i))
			}
			vals := []schema.Value{schema.LongValue(id), schema.DoubleValue(rng.Float64() * 1000), schema.StringValue(fmt.Sprintf("name-%d-%d", f, i%100)),
				schema.TimestampValue(1_700_000_000_000_000 + int64(f*rows+i)*1000), opt}
			for j, v := range vals {
				b.Columns[j] = append(b.Columns[j], v)
			}
		}
		if _, err := tbl.Append(ctx, func(yield func(delta.RowBatch, error) bool) { yield(b, nil) }, delta.WriteOptions{Txn: delta.TxnOptions{NoCheckpoint: f%100 != 99}}); err != nil {
			return n, err
		}
		n += int64(rows)
	}
	_, err = tbl.Checkpoint(ctx)
	return n, err
}

func run(ctx context.Context, dir string, opts optimize.Options) (int64, error) {
	tbl, err := delta.Open(ctx, dir)
	if err != nil {
		return 0, err
	}
	defer tbl.Close()
	res, err := tbl.Optimize(ctx, opts)
	if err != nil {
		return 0, err
	}
	if !res.Committed {
		return 0, errors.New("nothing optimized")
	}
	fmt.Printf("files %d -> %d, bytes %d -> %d, sort runs %d\n", res.Metrics.NumFilesRemoved, res.Metrics.NumFilesAdded,
		res.Metrics.FilesRemoved.TotalSize, res.Metrics.FilesAdded.TotalSize, res.Metrics.SortRuns)
	return res.Metrics.NumRowsWritten, nil
}

// bare reads every live file with parquet-go and writes the rows into one
// new file.
func bare(ctx context.Context, dir string) (int64, error) {
	tbl, err := delta.Open(ctx, dir)
	if err != nil {
		return 0, err
	}
	defer tbl.Close()
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		return 0, err
	}
	out, err := os.Create(filepath.Join(os.TempDir(), "optbench-bare.parquet"))
	if err != nil {
		return 0, err
	}
	defer os.Remove(out.Name())
	defer out.Close()
	w := parquet.NewGenericWriter[row](out, parquet.Compression(&parquet.Snappy))
	buf := make([]row, 4096)
	var n int64
	for a, err := range snap.Files(ctx) {
		if err != nil {
			return n, err
		}
		f, err := os.Open(filepath.Join(dir, snapshot.CanonicalPath(a.Path)))
		if err != nil {
			return n, err
		}
		r := parquet.NewGenericReader[row](f)
		for {
			k, err := r.Read(buf)
			if k > 0 {
				if _, err := w.Write(buf[:k]); err != nil {
					return n, err
				}
				n += int64(k)
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				return n, err
			}
		}
		r.Close()
		f.Close()
	}
	return n, w.Close()
}

// Command dmlbench measures DELETE, UPDATE and MERGE (issues 13, 29): the time, the
// bytes written and the peak RSS of one operation on a local table, in a
// process of its own so that the peak is the operation's alone, and a bare
// parquet-go read-and-rewrite of the same data files for comparison.
//
//	go build -o /tmp/dmlbench ./bench/cmd/dmlbench
//	/tmp/dmlbench -gen /tmp/dml10m -rows 10000000        # the table, once
//	cp -r /tmp/dml10m /tmp/run && /tmp/dmlbench -run /tmp/run -op delete -strategy cow
//	cp -r /tmp/dml10m /tmp/run && /tmp/dmlbench -run /tmp/run -op update -strategy dv
//	/tmp/dmlbench -bare /tmp/dml10m -out /tmp/bare        # parquet-go alone
//
// -op merge upserts the table in -source (a table of the same columns,
// such as bench/cmd/genmerge writes) into the -run table: WHEN MATCHED
// THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT * on t.id = s.id, the
// source held in -memory bytes at most (0: the default, 256 MiB), spilled
// beyond; -spill-dir is where (default the system's temp directory):
//
//	/tmp/genmerge -rows 10000000 -source 20000000 /tmp/m
//	/tmp/dmlbench -run /tmp/m/target -op merge -source /tmp/m/source -memory 268435456
//
// The table: id BIGINT NOT NULL, v STRING ("value-<id>"), n INT (id % 1000),
// d DOUBLE, with deletion vectors enabled (so both strategies can run on
// it: -strategy cow forces copy-on-write), in data files of -target bytes.
// The operations touch 1% of the rows, spread over every file
// (id % 100 = 7): DELETE ... WHERE id % 100 = 7, UPDATE ... SET d = d + 1,
// v = concat(v, '!') WHERE id % 100 = 7. The bare rewrite reads every data
// file with parquet-go and writes it again without those rows, which is
// the least a copy-on-write DELETE must do.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/parquet-go/parquet-go"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/schema"
)

const batchRows = 8192

func main() {
	gen := flag.String("gen", "", "create the table in `DIR`")
	rows := flag.Int64("rows", 10_000_000, "rows of the table, with -gen")
	target := flag.Int64("target", 64<<20, "target data file size, with -gen")
	run := flag.String("run", "", "run -op on the table in `DIR` (it is changed)")
	op := flag.String("op", "delete", "delete, update or merge")
	source := flag.String("source", "", "with -op merge, the source table `DIR`")
	memory := flag.Int64("memory", 0, "with -op merge, the source's memory budget in `BYTES` (0: the default)")
	spillDir := flag.String("spill-dir", "", "with -op merge, the `DIR` of the spill files")
	strategy := flag.String("strategy", "cow", "cow (copy-on-write) or dv (deletion vectors)")
	bare := flag.String("bare", "", "rewrite the data files of the table in `DIR` with parquet-go alone")
	out := flag.String("out", "", "with -bare, the directory to write to")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile to `FILE`")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "dmlbench:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	var err error
	switch {
	case *gen != "":
		err = generate(*gen, *rows, *target)
	case *run != "":
		if *op == "merge" {
			err = runMerge(*run, *source, *strategy, *memory, *spillDir)
		} else {
			err = runOp(*run, *op, *strategy)
		}
	case *bare != "":
		err = bareRewrite(*bare, *out)
	default:
		flag.Usage()
		os.Exit(2)
	}
	if err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "dmlbench:", err)
		os.Exit(1)
	}
}

func generate(dir string, rows, target int64) error {
	ctx := context.Background()
	sch, err := schema.ParseDDL("id BIGINT NOT NULL, v STRING, n INT, d DOUBLE")
	if err != nil {
		return err
	}
	tbl, err := delta.Create(ctx, dir, delta.TableSpec{Schema: sch,
		Properties: map[string]string{"delta.enableDeletionVectors": "true"}})
	if err != nil {
		return err
	}
	defer tbl.Close()
	batches := func(yield func(delta.RowBatch, error) bool) {
		for start := int64(0); start < rows; start += batchRows {
			n := min(batchRows, rows-start)
			b := delta.RowBatch{Len: int(n), Columns: make([][]schema.Value, 4)}
			for i := range n {
				id := start + i
				b.Columns[0] = append(b.Columns[0], schema.LongValue(id))
				b.Columns[1] = append(b.Columns[1], schema.StringValue(fmt.Sprint("value-", id)))
				b.Columns[2] = append(b.Columns[2], schema.IntegerValue(int32(id%1000)))
				b.Columns[3] = append(b.Columns[3], schema.DoubleValue(float64(id)/7))
			}
			if !yield(b, nil) {
				return
			}
		}
	}
	t0 := time.Now()
	res, err := tbl.Append(ctx, iter.Seq2[delta.RowBatch, error](batches), delta.WriteOptions{TargetFileSize: target})
	if err != nil {
		return err
	}
	files, size, err := dataFiles(dir)
	if err != nil {
		return err
	}
	fmt.Printf("generated %d rows at version %d: %d files, %d bytes, %.1f s\n", rows, res.Version, len(files), size, time.Since(t0).Seconds())
	return nil
}

func runOp(dir, op, strategy string) error {
	ctx := context.Background()
	tbl, err := delta.Open(ctx, dir)
	if err != nil {
		return err
	}
	defer tbl.Close()
	opts := delta.DMLOptions{Strategy: delta.StrategyCopyOnWrite}
	if strategy == "dv" {
		opts.Strategy = delta.StrategyMergeOnRead
	}
	const where = "id % 100 = 7"
	t0, c0 := time.Now(), cpuTime()
	var res delta.DMLResult
	switch op {
	case "delete":
		res, err = tbl.Delete(ctx, where, opts)
	case "update":
		res, err = tbl.UpdateRows(ctx, "d = d + 1, v = concat(v, '!')", where, opts)
	default:
		return fmt.Errorf("unknown -op %q", op)
	}
	if err != nil {
		return err
	}
	elapsed, cpu := time.Since(t0), cpuTime()-c0
	m := res.Metrics
	written := m.NumAddedBytes + m.ChangeFileBytes + m.DVBytes
	fmt.Printf("%s %s: %.2f s (CPU %.2f s), %d rows deleted, %d updated, %d copied; files +%d -%d; DVs +%d; written %.1f MB (data %d, DV %d); peak RSS %d MiB\n",
		op, res.Strategy, elapsed.Seconds(), cpu.Seconds(), m.NumDeletedRows, m.NumUpdatedRows, m.NumCopiedRows,
		m.NumAddedFiles, m.NumRemovedFiles, m.NumDeletionVectorsAdded, float64(written)/1e6, m.NumAddedBytes, m.DVBytes, maxRSS()>>20)
	return nil
}

// runMerge upserts the table in src into the table in dir.
func runMerge(dir, src, strategy string, memory int64, spillDir string) error {
	if src == "" {
		return fmt.Errorf("-op merge needs -source")
	}
	ctx := context.Background()
	tbl, err := delta.Open(ctx, dir)
	if err != nil {
		return err
	}
	defer tbl.Close()
	stbl, err := delta.Open(ctx, src)
	if err != nil {
		return err
	}
	defer stbl.Close()
	ssnap, err := stbl.Snapshot(ctx)
	if err != nil {
		return err
	}
	source, err := delta.MergeTable(ctx, ssnap, delta.ScanOptions{})
	if err != nil {
		return err
	}
	opts := delta.DMLOptions{Strategy: delta.StrategyCopyOnWrite}
	if strategy == "dv" {
		opts.Strategy = delta.StrategyMergeOnRead
	}
	t0, c0 := time.Now(), cpuTime()
	res, err := tbl.Merge(source, "t.id = s.id").WhenMatchedUpdateAll("").WhenNotMatchedInsertAll("").
		WithMemoryBudget(memory, spillDir).Options(opts).Execute(ctx)
	if err != nil {
		return err
	}
	elapsed, cpu := time.Since(t0), cpuTime()-c0
	m := res.Merge
	fmt.Printf("merge %s (memory %d): %.2f s (CPU %.2f s), %d source rows, %d inserted, %d updated, %d copied; files +%d -%d; written %.1f MB; source %.1f s; peak RSS %d MiB\n",
		res.Strategy, memory, elapsed.Seconds(), cpu.Seconds(), m.NumSourceRows, m.NumTargetRowsInserted, m.NumTargetRowsUpdated, m.NumTargetRowsCopied,
		m.NumTargetFilesAdded, m.NumTargetFilesRemoved, float64(m.NumTargetBytesAdded)/1e6, float64(m.MaterializeSourceTimeMs)/1e3, maxRSS()>>20)
	return nil
}

// bareRewrite reads each data file of the table with parquet-go and
// writes it again, without the rows of id % 100 = 7, snappy compressed.
func bareRewrite(dir, out string) error {
	if out == "" {
		return fmt.Errorf("-bare needs -out")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	files, _, err := dataFiles(dir)
	if err != nil {
		return err
	}
	t0, c0 := time.Now(), cpuTime()
	var written, kept, dropped int64
	buf := make([]parquet.Row, 1024)
	for i, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		st, _ := f.Stat()
		pf, err := parquet.OpenFile(f, st.Size())
		if err != nil {
			return err
		}
		leaf, ok := pf.Schema().Lookup("id")
		if !ok {
			return fmt.Errorf("%s: no id column", name)
		}
		of, err := os.Create(filepath.Join(out, fmt.Sprintf("part-%05d.parquet", i)))
		if err != nil {
			return err
		}
		w := parquet.NewWriter(of, pf.Schema(), parquet.Compression(&parquet.Snappy))
		for _, rg := range pf.RowGroups() {
			rows := rg.Rows()
			for {
				n, rerr := rows.ReadRows(buf)
				for _, r := range buf[:n] {
					var id int64
					for _, v := range r {
						if v.Column() == leaf.ColumnIndex {
							id = v.Int64()
							break
						}
					}
					if id%100 == 7 {
						dropped++
						continue
					}
					kept++
					if _, err := w.WriteRows([]parquet.Row{r}); err != nil {
						return err
					}
				}
				if rerr == io.EOF {
					break
				}
				if rerr != nil {
					return rerr
				}
			}
			rows.Close()
		}
		if err := w.Close(); err != nil {
			return err
		}
		info, _ := of.Stat()
		written += info.Size()
		of.Close()
		f.Close()
	}
	fmt.Printf("bare parquet-go rewrite: %.2f s (CPU %.2f s), %d rows kept, %d dropped, %d files, written %.1f MB; peak RSS %d MiB\n",
		time.Since(t0).Seconds(), (cpuTime() - c0).Seconds(), kept, dropped, len(files), float64(written)/1e6, maxRSS()>>20)
	return nil
}

// dataFiles lists the Parquet data files under dir (not the log).
func dataFiles(dir string) ([]string, int64, error) {
	var files []string
	var size int64
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "_delta_log" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			info, err := d.Info()
			if err != nil {
				return err
			}
			files = append(files, p)
			size += info.Size()
		}
		return nil
	})
	return files, size, err
}

// maxRSS is the peak resident set of this process, in bytes.
func maxRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Maxrss << 10 // kilobytes on Linux
}

// cpuTime is the user and system CPU time this process used: on a shared
// machine a fairer measure of the work than the elapsed time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

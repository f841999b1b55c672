// Command boundedbench measures one operation on a large table, in its own
// process, and prints its time, its peak RSS (getrusage ru_maxrss) and the
// Go heap in use after a collection at the end (bench/RESULTS.md, issue
// 26):
//
//	go build -o /tmp/boundedbench ./bench/cmd/boundedbench
//	/tmp/boundedbench -op open  /tmp/godelta-compare/t1000000  # Load + NumFiles
//	/tmp/boundedbench -op plan  /tmp/godelta-compare/t1000000  # cold Load + scan.New + Files, selective
//	/tmp/boundedbench -op count /tmp/godelta-compare/t1000000  # cold Load + sum of numRecords of every live file (StreamFiles)
//	/tmp/boundedbench -op load  /tmp/godelta-compare/t1000000  # Load alone (protocol and metaData)
//
// -heap FILE writes a heap profile at the end, after a collection, while
// the snapshot is still reachable.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/internal/statsjson"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/snapshot"
)

// selective is bench/compare's scan-plan predicate: one partition value
// and a range of ids only a few files hold.
const selective = "date = '2026-03-03' AND id >= 10000000 AND id < 10500000"

func main() {
	op := flag.String("op", "open", "load, open, plan or count")
	pred := flag.String("pred", selective, "the predicate of -op plan")
	heap := flag.String("heap", "", "write a heap profile to this file at the end")
	cpu := flag.String("cpu", "", "write a CPU profile of the operation to this file")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: boundedbench [-op OP] [-pred P] [-heap FILE] DIR")
		os.Exit(2)
	}
	ctx := context.Background()
	store, err := local.New(flag.Arg(0))
	check(err)
	if *cpu != "" {
		f, err := os.Create(*cpu)
		check(err)
		check(pprof.StartCPUProfile(f))
	}
	t := time.Now()
	snap, err := snapshot.Load(ctx, store, deltalog.Latest)
	check(err)
	var note string
	switch *op {
	case "load":
		note = fmt.Sprintf("version %d", snap.Version())
	case "open":
		n, err := snap.NumFiles(ctx)
		check(err)
		note = fmt.Sprintf("%d files", n)
	case "plan":
		p, err := expr.Parse(*pred)
		check(err)
		sc, err := scan.New(snap, scan.Options{Predicate: p})
		check(err)
		n := 0
		for _, err := range sc.Files(ctx) {
			check(err)
			n++
		}
		m := sc.Metrics()
		note = fmt.Sprintf("%d files planned of %d (skipped %d on partitions, %d on stats)", n, m.FilesTotal, m.FilesSkippedPart, m.FilesSkippedStat)
	case "count":
		// The rows of the table from the stats alone, streamed: no file
		// table is built, nothing is kept but the sum.
		var rows, files int64
		for a, err := range snap.StreamFiles(ctx, nil) {
			check(err)
			n, ok, err := statsjson.NumRecords(a.Stats)
			check(err)
			if !ok {
				check(fmt.Errorf("file %s has no numRecords", a.Path))
			}
			rows += n
			files++
		}
		note = fmt.Sprintf("%d rows in %d files", rows, files)
	default:
		check(fmt.Errorf("unknown -op %q", *op))
	}
	elapsed := time.Since(t)
	if *cpu != "" {
		pprof.StopCPUProfile()
	}
	runtime.GC()
	if *heap != "" {
		f, err := os.Create(*heap)
		check(err)
		check(pprof.WriteHeapProfile(f))
		check(f.Close())
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	var ru syscall.Rusage
	check(syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	fmt.Printf("%s: %.0f ms, peak RSS %.1f MB, heap in use %.1f MB: %s\n", *op,
		float64(elapsed.Microseconds())/1000, float64(ru.Maxrss)/1024, float64(ms.HeapInuse)/(1<<20), note)
	runtime.KeepAlive(snap)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "boundedbench:", err)
		os.Exit(1)
	}
}

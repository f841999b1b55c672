// Command genmerge writes the two tables of the MERGE benchmark (issue 13)
// under DIR: DIR/target, N rows (id 0..N-1, name, n, spread over files of
// the default target size), and DIR/source, S rows of which half match
// target ids spread evenly over the whole table (every target file holds
// some) and half are new ids. Then, for example:
//
//	go run ./bench/cmd/genmerge -rows 10000000 -source 100000 /tmp/m10m
//	/usr/bin/time -f "%e s %M KB" delta merge /tmp/m10m/target --source /tmp/m10m/source \
//	    --on 't.id = s.id' --update-all --insert-all
//
// -dv creates the target with delta.enableDeletionVectors=true; -file-size
// rolls its data files at that many bytes.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/godelta/delta/bench/mergedata"
)

func main() {
	rows := flag.Int64("rows", 1_000_000, "target rows")
	src := flag.Int64("source", 100_000, "source rows (half matched)")
	dv := flag.Bool("dv", false, "target with deletion vectors on")
	fileSize := flag.Int64("file-size", 0, "target data file size in bytes (0: the default, 128 MiB)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: genmerge [-rows N] [-source S] [-dv] [-file-size B] DIR")
		os.Exit(2)
	}
	if err := mergedata.MergeTables(context.Background(), flag.Arg(0), *rows, *src, *dv, *fileSize); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("target %d rows, source %d rows (%d matched) under %s\n", *rows, *src, *src/2, flag.Arg(0))
}

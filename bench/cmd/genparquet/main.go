// Command genparquet writes a Hive-partitioned directory of small Parquet
// files, the input of the CONVERT TO DELTA benchmark (bench/RESULTS.md,
// "Issue 14: CONVERT"):
//
//	go run ./bench/cmd/genparquet -files 10000 -rows 100 -parts 100 /tmp/p10k
//
// Files are named part-<n>.parquet under day=<k>/, each with -rows rows of
// (id BIGINT, name STRING, score DOUBLE).
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/parquet-go/parquet-go"
)

type row struct {
	ID    int64   `parquet:"id"`
	Name  string  `parquet:"name"`
	Score float64 `parquet:"score"`
}

func main() {
	files := flag.Int("files", 10000, "number of files")
	rows := flag.Int("rows", 100, "rows per file")
	parts := flag.Int("parts", 100, "number of partitions (day=0..parts-1)")
	flag.Parse()
	if flag.NArg() != 1 {
		log.Fatal("usage: genparquet [-files N] [-rows R] [-parts P] DIR")
	}
	dir := flag.Arg(0)
	buf := make([]row, *rows)
	for f := range *files {
		for i := range buf {
			id := int64(f**rows + i)
			buf[i] = row{ID: id, Name: fmt.Sprintf("name-%d", id), Score: float64(id) / 7}
		}
		p := filepath.Join(dir, fmt.Sprintf("day=%d", f%*parts), fmt.Sprintf("part-%05d.parquet", f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			log.Fatal(err)
		}
		if err := parquet.WriteFile(p, buf); err != nil {
			log.Fatal(err)
		}
	}
}

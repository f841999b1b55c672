// Command gentable writes a synthetic benchmark table (see package synth)
// to a local directory:
//
//	go run ./bench/cmd/gentable -files 100000 -commits 10 DIR
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/godelta/delta/bench/synth"
	"github.com/godelta/delta/logstore/local"
)

func main() {
	files := flag.Int("files", 100_000, "live files in the checkpoint")
	commits := flag.Int("commits", 10, "JSON commits after the checkpoint")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: gentable [-files N] [-commits K] DIR")
		os.Exit(2)
	}
	store, err := local.New(flag.Arg(0), local.WithoutSync())
	if err == nil {
		var live int
		live, err = synth.Build(context.Background(), store, *files, *commits)
		fmt.Printf("%s: %d live files\n", flag.Arg(0), live)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gentable:", err)
		os.Exit(1)
	}
}

// Command localonly prints the latest version and the number of live files
// of a Delta table on the local disk. It imports only the root package,
// which links the local and memory backends and no cloud SDK, so its binary
// size shows what a local-only program pays (bench/RESULTS.md, issue 12):
//
//	go build -o /tmp/localonly ./bench/cmd/localonly && ls -l /tmp/localonly
//	go list -deps ./bench/cmd/localonly | grep -E 'aws|azure|cloud.google'  # prints nothing
//
// Usage: localonly PATH
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/godelta/delta"
	_ "github.com/godelta/delta/logstore/local" // file:// and plain paths (the root package imports it too)
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: localonly PATH")
		os.Exit(2)
	}
	if err := run(context.Background(), os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "localonly:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, path string) error {
	t, err := delta.Open(ctx, path)
	if err != nil {
		return err
	}
	defer t.Close()
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return err
	}
	n, err := snap.NumFiles(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("%s: version %d, %d live files\n", path, snap.Version(), n)
	return nil
}

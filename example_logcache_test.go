package delta_test

import (
	"context"
	"fmt"
	"os"

	delta "github.com/godelta/delta"
)

// A log cache directory makes a second open of a table, in this process
// or a later one, read the log files it has seen from local disk: on an
// object store (s3://, gs://, az://) that is the checkpoint and the old
// commits, and only the new commits are read from the store. A memory
// table stands in for one here.
func ExampleOpenWith_logCache() {
	ctx := context.Background()
	created, err := exampleEvents(ctx, "example-logcache", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer created.Close()
	cache, err := os.MkdirTemp("", "logcache")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(cache)

	for range 2 { // cold, then warm
		tbl, err := delta.OpenWith(ctx, "memory://example-logcache", delta.OpenOptions{
			LogCacheDir:      cache,
			LogCacheMaxBytes: 256 << 20,
		})
		if err != nil {
			fmt.Println(err)
			return
		}
		snap, err := tbl.Snapshot(ctx)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("version", snap.Version())
		tbl.Close()
	}
	// Output:
	// version 3
	// version 3
}

// Command logcachebench measures what opening a synthetic table (see
// package synth) on the S3 test server reads from the server, through the
// log cache (OpenOptions.LogCacheDir): cold (empty cache), warm (a new
// process over the filled cache), and warm after 10 new commits; and,
// for comparison, without the cache. "Open" is loading the latest
// snapshot and walking every live file, so the whole checkpoint is read.
// Requests and bytes are counted on the client side, by
// testutil/countstore, under the cache.
//
//	eval "$(bash scripts/test-servers.sh env)"
//	go run ./bench/cmd/logcachebench -files 1000000
//
// It needs versitygw (scripts/test-servers.sh install). With -data DIR the
// server keeps its objects in DIR, and a later run with the same -files
// reuses the table instead of writing it again.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/bench/synth"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/internal/logcache"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/s3"
	"github.com/godelta/delta/testutil/countstore"
	"github.com/godelta/delta/testutil/testserver"
)

func main() {
	files := flag.Int("files", 100_000, "live files in the checkpoint")
	data := flag.String("data", "", "server data directory to keep (default: a temporary one)")
	max := flag.Int64("cache-max", 4<<30, "log cache cap in bytes")
	flag.Parse()
	if err := run(*files, *data, *max); err != nil {
		fmt.Fprintln(os.Stderr, "logcachebench:", err)
		os.Exit(1)
	}
}

func run(n int, data string, max int64) error {
	ctx := context.Background()
	var (
		srv *testserver.Server
		cfg testserver.S3Config
		err error
	)
	if data == "" {
		srv, cfg, err = testserver.StartS3()
	} else {
		// Fixed keys, so a restarted server on the same data signs alike.
		srv, cfg, err = testserver.StartS3In(data, testserver.S3Config{AccessKey: "GODELTABENCH", SecretKey: "godelta-bench-secret"})
	}
	if err != nil {
		return err
	}
	defer srv.Stop()
	prefix := fmt.Sprintf("synth-%d", n)
	open := func() (logstore.Store, error) {
		return s3.New(ctx, cfg.Bucket, prefix, s3.Options{Endpoint: cfg.Endpoint, Region: cfg.Region,
			PathStyle: true, AccessKey: cfg.AccessKey, SecretKey: cfg.SecretKey})
	}
	st, err := open()
	if err != nil {
		return err
	}
	defer st.Close()
	if _, err := st.Stat(ctx, deltalog.CommitKey(10)); err == nil {
		fmt.Printf("reusing the table at s3://%s/%s\n", cfg.Bucket, prefix)
	} else {
		start := time.Now()
		if _, err := synth.Build(ctx, st, n, 10); err != nil {
			return err
		}
		fmt.Printf("built a %d-file table (checkpoint at 0, commits 1..10) at s3://%s/%s in %s\n", n, cfg.Bucket, prefix, time.Since(start).Round(time.Second))
	}
	// Start from 10 commits, whatever earlier runs added.
	for v := int64(11); ; v++ {
		if _, err := st.Stat(ctx, deltalog.CommitKey(v)); err != nil {
			break
		}
		if err := st.Delete(ctx, deltalog.CommitKey(v)); err != nil {
			return err
		}
	}
	cache, err := os.MkdirTemp("", "logcachebench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(cache)

	fmt.Println()
	fmt.Println("| open | version | live files | lists | stats | gets | ranges | bytes read | wall |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	measure := func(name string, cached bool) error {
		inner, err := open()
		if err != nil {
			return err
		}
		cs := countstore.New(inner, nil)
		var store logstore.Store = cs
		if cached {
			if store, err = logcache.New(cs, cache, max); err != nil {
				return err
			}
		}
		defer store.Close()
		start := time.Now()
		tbl, err := delta.OpenStore(ctx, "s3://"+cfg.Bucket+"/"+prefix, store)
		if err != nil {
			return err
		}
		snap, err := tbl.Snapshot(ctx)
		if err != nil {
			return err
		}
		live := 0
		for _, err := range snap.Files(ctx) {
			if err != nil {
				return err
			}
			live++
		}
		wall := time.Since(start)
		c := cs.Counts()
		stats := 0
		for _, r := range cs.Requests() {
			if r.Op == "stat" {
				stats++
			}
		}
		fmt.Printf("| %s | %d | %d | %d | %d | %d | %d | %s | %s |\n", name, snap.Version(), live, c.Lists, stats, c.Gets, c.Ranges, bytes(c.Bytes), wall.Round(time.Millisecond))
		return nil
	}
	if err := measure("no cache", false); err != nil {
		return err
	}
	if err := measure("cold cache", true); err != nil {
		return err
	}
	if err := measure("warm cache", true); err != nil {
		return err
	}
	for v := int64(11); v <= 20; v++ {
		if err := synth.Commit(ctx, st, v, n); err != nil {
			return err
		}
	}
	if err := measure("warm cache, 10 new commits", true); err != nil {
		return err
	}
	var size int64
	for info, err := range st.List(ctx, deltalog.LogDir, "") {
		if err == nil && strings.HasSuffix(info.Key, ".checkpoint.parquet") {
			size += info.Size
		}
	}
	fmt.Printf("\ncheckpoint: %s\n", bytes(size))
	return nil
}

func bytes(n int64) string {
	switch {
	case n >= 10<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 10<<10:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}

// Command consumer tails a Delta table as a queue: it prints each batch of
// new rows and stores its position in a cursor file after the batch, so
// that, killed and run again, it continues where it stopped and sees every
// row once, in order.
//
//	go run ./examples/consumer -table /tmp/queue -cursor /tmp/queue.offset
//	go run ./examples/consumer -table 's3://godelta-test/queue?endpoint=http://127.0.0.1:PORT&region=us-east-1&path_style=true' -cursor /tmp/s3queue.offset
//
// Without a stored position it starts with the table's whole content, as a
// Spark stream does. It follows the table until interrupted; -once reads
// what is there and exits. Commits that only compact files print nothing.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/godelta/delta"
	"github.com/godelta/delta/examples/internal/exampleenv"
	"github.com/godelta/delta/stream"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "consumer:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("consumer", flag.ContinueOnError)
	table := fs.String("table", "", "table path or s3:// URI (required)")
	cursorPath := fs.String("cursor", "", "file that keeps the consumer's position (required)")
	once := fs.Bool("once", false, "read what the table holds and exit")
	maxFiles := fs.Int("max-files", 100, "data files per batch, at most")
	poll := fs.Duration("poll", 10*time.Millisecond, "first wait between polls once caught up (doubles to 1s)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *table == "" || *cursorPath == "" {
		return fmt.Errorf("-table and -cursor are required")
	}
	t, err := exampleenv.Open(ctx, *table, false)
	if err != nil {
		return err
	}
	defer t.Close()
	cursor := stream.FileCursor{Path: *cursorPath}
	opts := delta.StreamOptions{MaxFilesPerTrigger: *maxFiles, PollInterval: *poll, MaxPollInterval: time.Second}
	if off, ok, err := cursor.Load(ctx); err != nil {
		return err
	} else if ok {
		opts.Start = stream.FromOffset(off)
		fmt.Fprintf(out, "resuming at %s\n", off)
	}
	src, err := t.Stream(ctx, opts)
	if err != nil {
		return err
	}
	for {
		var b *delta.StreamBatch
		if *once {
			var ok bool
			if b, ok, err = src.TryNext(ctx); err == nil && !ok {
				return nil
			}
		} else {
			b, err = src.Next(ctx)
		}
		if err != nil {
			return err
		}
		// Process the batch: here, count its rows and see how old the
		// newest is. A real consumer writes its output here (to a Delta
		// table with Sink.Write(b.End.Seq()), say, which stores the
		// position in the same commit).
		rows, newest := 0, int64(0)
		for r, err := range b.Rows(ctx) {
			if err != nil {
				return err
			}
			rows++
			if v, ok := r.Get("produced_at"); ok {
				newest = max(newest, v.Int64())
			}
		}
		first, last := b.Versions()
		fmt.Fprintf(out, "versions %d-%d: %d rows, %d files, newest produced %v ago\n", first, last, rows, b.NumFiles(),
			time.Since(time.UnixMicro(newest)).Round(time.Millisecond))
		if err := cursor.Save(ctx, b.End); err != nil {
			return err
		}
	}
}

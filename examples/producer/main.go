// Command producer appends numbered batches of rows to a Delta table
// exactly once, with compaction running beside it: kill it at any point
// and run it again, and every batch is in the table once.
//
//	go run ./examples/producer -table /tmp/queue -batches 100
//	go run ./examples/producer -table 's3://godelta-test/queue?endpoint=http://127.0.0.1:PORT&region=us-east-1&path_style=true'
//
// (for S3, start the test server with go run ./examples/s3server, which
// prints the table URI and the credentials to export). The table is
// created when missing. Batch n is committed with txn(app-id, n) in the
// same commit as its rows (stream.Sink); on start the producer asks the
// table for the last batch of its app id and continues after it.
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

	"github.com/godelta/delta/examples/internal/exampleenv"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/stream"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "producer:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("producer", flag.ContinueOnError)
	table := fs.String("table", "", "table path or s3:// URI (required)")
	appID := fs.String("app-id", "example-producer", "application id: the txn appId of its batches")
	batches := fs.Int64("batches", 20, "batches to produce in all (numbered 0 to N-1)")
	rows := fs.Int("rows", 100, "rows per batch")
	interval := fs.Duration("interval", 0, "pause between batches")
	compactEvery := fs.Duration("compact-every", time.Second, "run compaction this often beside the producer (0: never)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *table == "" {
		return fmt.Errorf("-table is required")
	}
	t, err := exampleenv.Open(ctx, *table, true)
	if err != nil {
		return err
	}
	defer t.Close()
	sink, err := t.Sink(*appID, stream.SinkOptions{})
	if err != nil {
		return err
	}
	next := int64(0)
	if last, ok, err := sink.LastVersion(ctx); err != nil {
		return err
	} else if ok {
		next = last + 1
		fmt.Fprintf(out, "resuming after batch %d\n", last)
	}

	// Compaction beside the producer: dataChange=false commits that never
	// conflict with its appends, and that consumers never see.
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if *compactEvery <= 0 {
			return
		}
		tick := time.NewTicker(*compactEvery)
		defer tick.Stop()
		for {
			select {
			case <-cctx.Done():
				return
			case <-tick.C:
			}
			res, err := stream.Compact(cctx, t.Store(), stream.CompactOptions{})
			if err == nil && res.Removed > 0 {
				fmt.Fprintf(out, "compacted %d files into %d at version %d\n", res.Removed, res.Added, res.Commit.Version)
			}
		}
	}()
	defer func() { cancel(); <-done }()

	for b := next; b < *batches; b++ {
		res, err := sink.Write(ctx, b, batch(b, *rows))
		if err != nil {
			return err
		}
		if res.Skipped {
			fmt.Fprintf(out, "batch %d was already committed\n", b)
		} else {
			fmt.Fprintf(out, "batch %d committed at version %d\n", b, res.Commit.Version)
		}
		if *interval > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(*interval):
			}
		}
	}
	return nil
}

// batch returns the rows of batch b, in the table's column order.
func batch(b int64, n int) func(func(schema.Batch, error) bool) {
	return func(yield func(schema.Batch, error) bool) {
		now := schema.TimestampValue(time.Now().UnixMicro())
		cols := make([][]schema.Value, 4)
		for i := range n {
			cols[0] = append(cols[0], schema.LongValue(b))
			cols[1] = append(cols[1], schema.LongValue(int64(i)))
			cols[2] = append(cols[2], now)
			cols[3] = append(cols[3], schema.StringValue(fmt.Sprintf("message %d of batch %d", i, b)))
		}
		yield(schema.Batch{Len: n, Columns: cols}, nil)
	}
}

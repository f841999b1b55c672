package bench

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/godelta/delta"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/logstore/s3"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/stream"
	"github.com/godelta/delta/testutil/testserver"
	"github.com/godelta/delta/txn"
)

// BenchmarkStream measures the table as a message queue (issue 16): a
// producer commits b.N batches through stream.Sink while a consumer tails
// the table with stream.Source and compaction runs beside both.
// Reported: end-to-end latency from the producer's commit returning to the
// consumer holding the batch's rows (p50, p99, ms), and the producer's
// commits/s and rows/s. "paced" commits every 20 ms (latency at a light
// load); "flat-out" commits as fast as it can (throughput).
//
//	go test ./bench/ -run XXX -bench Stream -benchtime 300x
func BenchmarkStream(b *testing.B) {
	for _, backend := range []string{"local", "s3"} {
		for _, mode := range []struct {
			name string
			pace time.Duration
			rows int
		}{{"paced", 20 * time.Millisecond, 100}, {"flat-out", 0, 100}} {
			b.Run(backend+"/"+mode.name, func(b *testing.B) {
				store := streamStore(b, backend)
				runStream(b, store, mode.pace, mode.rows)
			})
		}
	}
}

func streamStore(b *testing.B, backend string) logstore.Store {
	b.Helper()
	if backend == "local" {
		st, err := local.New(filepath.Join(b.TempDir(), "queue"))
		if err != nil {
			b.Fatal(err)
		}
		return st
	}
	srv, cfg, err := testserver.StartS3()
	testserver.Require(b, srv, err)
	b.Cleanup(srv.Stop)
	st, err := s3.New(context.Background(), cfg.Bucket, fmt.Sprintf("queue-%d", time.Now().UnixNano()),
		s3.Options{Region: cfg.Region, Endpoint: cfg.Endpoint, PathStyle: true, AccessKey: cfg.AccessKey, SecretKey: cfg.SecretKey})
	if err != nil {
		b.Fatal(err)
	}
	return st
}

func runStream(b *testing.B, store logstore.Store, pace time.Duration, rows int) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sch, _ := schema.ParseDDL("batch BIGINT NOT NULL, seq BIGINT NOT NULL, payload STRING")
	tbl, err := delta.CreateStore(ctx, "queue", store, delta.TableSpec{Schema: sch})
	if err != nil {
		b.Fatal(err)
	}
	sink, err := stream.NewSink(store, "bench", stream.SinkOptions{NoPostCommit: true})
	if err != nil {
		b.Fatal(err)
	}
	src, err := tbl.Stream(ctx, delta.StreamOptions{Start: stream.FromLatest(), PollInterval: time.Millisecond, MaxPollInterval: 5 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	n := b.N
	committed := make([]time.Time, n)
	seen := make([]time.Time, n)
	var wg sync.WaitGroup
	var consumerErr error
	wg.Add(2)
	go func() { // consumer
		defer wg.Done()
		got := 0
		for got < n {
			bt, err := src.Next(ctx)
			if err != nil {
				consumerErr = err
				return
			}
			for r, err := range bt.Rows(ctx) {
				if err != nil {
					consumerErr = err
					return
				}
				id := r.Values()[0].Int64()
				if seen[id].IsZero() {
					seen[id] = time.Now()
					got++
				}
			}
		}
	}()
	compactions := 0
	stop := make(chan struct{})
	go func() { // compaction beside both
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
			res, err := stream.Compact(ctx, store, stream.CompactOptions{})
			if err != nil && !errors.Is(err, txn.ErrConflict) && ctx.Err() == nil {
				b.Error(err)
				return
			}
			if res.Removed > 0 {
				compactions++
			}
		}
	}()
	payload := schema.StringValue("a message of some forty bytes, give or take")
	b.ResetTimer()
	start := time.Now()
	for i := range n {
		cols := [][]schema.Value{make([]schema.Value, rows), make([]schema.Value, rows), make([]schema.Value, rows)}
		for j := range rows {
			cols[0][j], cols[1][j], cols[2][j] = schema.LongValue(int64(i)), schema.LongValue(int64(j)), payload
		}
		batch := func(yield func(schema.Batch, error) bool) { yield(schema.Batch{Len: rows, Columns: cols}, nil) }
		res, err := sink.Write(ctx, int64(i), batch)
		if err != nil {
			b.Fatal(err)
		}
		committed[i] = time.Now()
		txn.PostCommit(ctx, &res.Commit) // the checkpoints due, after the commit's time is taken
		if pace > 0 {
			time.Sleep(pace)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	close(stop)
	wg.Wait()
	if consumerErr != nil {
		b.Fatal(consumerErr)
	}
	lat := make([]float64, n)
	for i := range n {
		lat[i] = max(0, seen[i].Sub(committed[i]).Seconds()*1000)
	}
	slices.Sort(lat)
	b.ReportMetric(lat[n/2], "p50-ms")
	b.ReportMetric(lat[min(n-1, n*99/100)], "p99-ms")
	b.ReportMetric(float64(n)/elapsed.Seconds(), "commits/s")
	b.ReportMetric(float64(n*rows)/elapsed.Seconds(), "rows/s")
	b.ReportMetric(float64(compactions), "compactions")
}

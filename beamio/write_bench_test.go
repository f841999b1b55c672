package beamio

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/godelta/delta"
	"github.com/godelta/delta/actions"
)

// TestBenchWrite times one side of the write benchmark of bench/RESULTS.md
// (issue 27), so that each side runs in a process of its own and
// /usr/bin/time reports that side's peak memory: BEAMIO_BENCH_WRITE_SIDE
// is "prism" (Write on Prism, BEAMIO_BENCH_WRITE_SHARDS writer tasks,
// default DefaultShards) or "inproc" (the library's Table.Append in this
// process), of BEAMIO_BENCH_WRITE_ROWS rows of the test table (partitioned
// by part, 4 partitions, with its NOT NULL column and CHECK constraint).
// Skipped without the variables. It times; it asserts that the write
// committed every row.
func TestBenchWrite(t *testing.T) {
	side := os.Getenv("BEAMIO_BENCH_WRITE_SIDE")
	n, _ := strconv.ParseInt(os.Getenv("BEAMIO_BENCH_WRITE_ROWS"), 10, 64)
	if side == "" || n <= 0 {
		t.Skip("BEAMIO_BENCH_WRITE_SIDE and BEAMIO_BENCH_WRITE_ROWS not set")
	}
	table := newTable(t)
	ctx := context.Background()
	var rows int64
	start := time.Now()
	switch side {
	case "prism":
		shards, _ := strconv.Atoi(os.Getenv("BEAMIO_BENCH_WRITE_SHARDS"))
		if shards <= 0 {
			shards = DefaultShards
		}
		if err := run(t, writePipeline(table, n, t.Name(), WriteOptions{WriteID: "bench", Shards: shards})); err != nil {
			t.Fatal(err)
		}
		res := collectedResults(t.Name())
		if len(res) != 1 || !res[0].Committed {
			t.Fatalf("results %+v, want one commit", res)
		}
		rows = res[0].Rows
		t.Logf("prism: %d rows in %v, %d writer tasks, %d files", rows, time.Since(start), shards, res[0].Files)
	case "inproc":
		tb, err := delta.Open(ctx, table)
		if err != nil {
			t.Fatal(err)
		}
		defer tb.Close()
		// The same rows, in the row writer's batch size.
		if _, err := tb.Append(ctx, rowBatches(rowsOf(0, n), 4), delta.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		elapsed := time.Since(start)
		snap, err := tb.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var adds []actions.Add
		for a, err := range snap.Files(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			adds = append(adds, *a)
		}
		rows = countRows(adds)
		files := len(adds)
		t.Logf("inproc: %d rows in %v, one task, %d files", rows, elapsed, files)
	default:
		t.Fatalf("BEAMIO_BENCH_WRITE_SIDE=%q: want prism or inproc", side)
	}
	if rows != n {
		t.Fatalf("%d rows committed, want %d", rows, n)
	}
}

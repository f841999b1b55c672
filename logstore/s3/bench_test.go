package s3_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/godelta/delta"
	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/txn"
)

// BenchmarkCommitLatency compares a Delta commit through txn (update the
// snapshot, Begin, Add, Commit: a listing, a read of the previous commit
// and the conditional PUT) with a bare conditional PUT of an object of the
// same size, on the same server. Run it with -benchtime=500x for 500
// commits; it reports the median and 99th percentile of each.
func BenchmarkCommitLatency(b *testing.B) {
	b.Run("txn", func(b *testing.B) {
		st := newStore(b)
		ctx := context.Background()
		sch, _ := schema.ParseDDL("id BIGINT")
		tbl, err := delta.CreateStore(ctx, "bench", st, delta.TableSpec{Schema: sch})
		if err != nil {
			b.Fatal(err)
		}
		snap, err := tbl.Snapshot(ctx)
		if err != nil {
			b.Fatal(err)
		}
		var lat, commitLat []time.Duration
		i := 0
		for b.Loop() {
			start := time.Now()
			if snap, err = snap.Update(ctx); err != nil {
				b.Fatal(err)
			}
			commitStart := time.Now()
			tx := txn.Begin(snap, txn.Options{Operation: "WRITE", NoCheckpoint: true})
			tx.Add(benchAdd(i))
			if _, err := tx.Commit(ctx); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(start))
			commitLat = append(commitLat, time.Since(commitStart))
			i++
		}
		data, err := st.Get(ctx, fmt.Sprintf("_delta_log/%020d.json", i))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(len(data)), "commit-bytes")
		report(b, lat, "")
		// The commit alone, the snapshot being current (a writer that
		// keeps its snapshot up to date between commits).
		report(b, commitLat, "commit-")
	})
	b.Run("put", func(b *testing.B) {
		st := newStore(b)
		ctx := context.Background()
		data := make([]byte, 466) // the size of txn's commits (its commit-bytes)
		for i := range data {
			data[i] = 'x'
		}
		var lat []time.Duration
		i := 0
		for b.Loop() {
			start := time.Now()
			if err := st.PutIfAbsent(ctx, fmt.Sprintf("_delta_log/%020d.json", i), data); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(start))
			i++
		}
		report(b, lat, "")
	})
}

func benchAdd(i int) actions.Add {
	return actions.Add{
		Path: fmt.Sprintf("part-%05d-0b8c9d2e-1f3a-4b5c-8d6e-7f8091a2b3c4-c000.snappy.parquet", i),
		Size: 4096, ModificationTime: time.Now().UnixMilli(), DataChange: true,
		Stats: `{"numRecords":100,"minValues":{"id":0},"maxValues":{"id":99},"nullCount":{"id":0}}`,
	}
}

func report(b *testing.B, lat []time.Duration, prefix string) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), prefix+"p50-ms")
	b.ReportMetric(pct(0.99), prefix+"p99-ms")
}

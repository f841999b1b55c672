package backendtest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/godelta/delta"
	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/txn"
)

// BarePut writes data at key (relative to the store's prefix) with the
// cloud SDK alone, conditionally on no object being there: the floor a
// Delta commit is measured against.
type BarePut func(ctx context.Context, key string, data []byte) error

// CommitLatency measures a Delta commit through txn (a blind append of one
// file, the writer's snapshot current, checkpoints off) against bare, a
// conditional PUT of an object of the same size on the same server. Each
// iteration does one of each, their order alternating, so that both see
// the same server state: emulators warm up (Node's JIT in Azurite) and slow
// down as a bucket fills (fake-gcs-server's memory backend scans it on every
// write), and measuring one after the other would charge that drift to
// whichever ran first. Warm-up iterations run before the timing.
//
// It reports, in milliseconds, p50 and p99 of the commit ("commit-"), of
// the bare PUT ("bare-"), and of the commit with the Snapshot.Update a
// writer that is not current does first ("update+commit-"); the ratio of
// the medians; and the median time a commit spends outside its one store
// call ("overhead-p50-us": encoding and bookkeeping). Run with
// -benchtime=500x for 500 commits.
func CommitLatency(b *testing.B, st logstore.Store, bare BarePut) {
	ctx := b.Context()
	ts := &timedPut{Store: st}
	sch, err := schema.ParseDDL("id BIGINT")
	if err != nil {
		b.Fatal(err)
	}
	tbl, err := delta.CreateStore(ctx, tableName(st), ts, delta.TableSpec{Schema: sch})
	if err != nil {
		b.Fatal(err)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		b.Fatal(err)
	}
	var (
		commitLat, updateLat, bareLat, overhead []time.Duration
		data                                    []byte // as large as a commit
		i                                       int
	)
	commit := func() time.Duration {
		start := time.Now()
		next, err := snap.Update(ctx)
		if err != nil {
			b.Fatal(err)
		}
		snap = next
		updated := time.Now()
		tx := txn.Begin(snap, txn.Options{Operation: "WRITE", NoCheckpoint: true})
		tx.Add(actions.Add{
			Path: fmt.Sprintf("part-%05d-0b8c9d2e-1f3a-4b5c-8d6e-7f8091a2b3c4-c000.snappy.parquet", i),
			Size: 4096, ModificationTime: time.Now().UnixMilli(), DataChange: true,
			Stats: `{"numRecords":100,"minValues":{"id":0},"maxValues":{"id":99},"nullCount":{"id":0}}`,
		})
		res, err := tx.Commit(ctx)
		if err != nil {
			b.Fatal(err)
		}
		end := time.Now()
		if data == nil {
			info, err := st.Stat(ctx, deltalog.CommitKey(res.Version))
			if err != nil {
				b.Fatal(err)
			}
			data = make([]byte, info.Size)
			for j := range data {
				data[j] = 'a' + byte(j%26)
			}
		}
		updateLat = append(updateLat, end.Sub(start))
		overhead = append(overhead, end.Sub(updated)-ts.last)
		return end.Sub(updated)
	}
	put := func() time.Duration {
		start := time.Now()
		if err := bare(ctx, fmt.Sprintf("bare/_delta_log/%020d.json", i), data); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	step := func() {
		if i%2 == 0 {
			commitLat = append(commitLat, commit())
			bareLat = append(bareLat, put())
		} else {
			bareLat = append(bareLat, put())
			commitLat = append(commitLat, commit())
		}
		i++
	}
	commit() // learns the commit's size, which the bare PUT copies
	i++
	const warmUp = 50
	for range warmUp {
		step()
	}
	commitLat, updateLat, bareLat, overhead = nil, nil, nil, nil
	for b.Loop() {
		step()
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	c50, c99 := percentiles(commitLat)
	p50, p99 := percentiles(bareLat)
	u50, u99 := percentiles(updateLat)
	o50, _ := percentiles(overhead)
	b.ReportMetric(ms(c50), "commit-p50-ms")
	b.ReportMetric(ms(c99), "commit-p99-ms")
	b.ReportMetric(ms(p50), "bare-p50-ms")
	b.ReportMetric(ms(p99), "bare-p99-ms")
	b.ReportMetric(ms(u50), "update+commit-p50-ms")
	b.ReportMetric(ms(u99), "update+commit-p99-ms")
	b.ReportMetric(float64(c50)/float64(max(p50, 1)), "ratio-p50")
	b.ReportMetric(float64(o50.Microseconds()), "overhead-p50-us")
	b.ReportMetric(float64(len(data)), "commit-bytes")
	b.ReportMetric(0, "ns/op") // the percentiles say it better
}

// percentiles returns the median and 99th percentile of lat, sorting it.
func percentiles(lat []time.Duration) (p50, p99 time.Duration) {
	if len(lat) == 0 {
		return 0, 0
	}
	slices.Sort(lat)
	return lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)]
}

// timedPut is a store that remembers how long its last PutIfAbsent took.
type timedPut struct {
	logstore.Store
	last time.Duration
}

func (t *timedPut) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	start := time.Now()
	err := t.Store.PutIfAbsent(ctx, key, data)
	t.last = time.Since(start)
	return err
}

package bench

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/iceberg"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/tableconfig"
	"github.com/godelta/delta/txn"
	"github.com/godelta/delta/write"
)

var icebergCommits = flag.Int("iceberg-commits", 1000, "commits converted by BenchmarkIcebergConvert")

// BenchmarkIcebergConvert commits -iceberg-commits blind appends of one
// file each to a UniForm Iceberg table on local disk (checkpoints every 10
// commits, as by default) and converts each version to Iceberg right
// after its commit, as the post-commit hook does. Only the conversion is
// timed; it reports the mean conversion time of the first, middle and last
// hundred commits, which stay flat when conversion is incremental (one new
// manifest, one manifest list, one metadata file per commit, whatever the
// number of files).
//
// "all-snapshots" keeps every snapshot in the metadata, as the default
// does within delta.logRetentionDuration: the metadata file, which Iceberg
// rewrites whole at each commit, grows by one snapshot per commit.
// "max-snapshots=100" expires all but the last 100 (Options.MaxSnapshots).
func BenchmarkIcebergConvert(b *testing.B) {
	for _, max := range []int{0, 100} {
		name := "all-snapshots"
		if max > 0 {
			name = fmt.Sprintf("max-snapshots=%d", max)
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				r := icebergConvertRun(b, *icebergCommits, iceberg.Options{MaxSnapshots: max})
				b.ReportMetric(r.ms[0], "ms/conv-first100")
				b.ReportMetric(r.ms[1], "ms/conv-mid100")
				b.ReportMetric(r.ms[2], "ms/conv-last100")
				b.ReportMetric(r.reqs[0], "req/conv-first100")
				b.ReportMetric(r.reqs[2], "req/conv-last100")
				b.ReportMetric(r.kb[0], "KB/conv-first100")
				b.ReportMetric(r.kb[2], "KB/conv-last100")
			}
		})
	}
}

// ioCount counts the requests and bytes (read and written) that go
// through a store: the work of a conversion, which timing on a shared
// machine only approximates.
type ioCount struct {
	logstore.Store
	reqs, bytes atomic.Int64
}

func (s *ioCount) Get(ctx context.Context, key string) ([]byte, error) {
	b, err := s.Store.Get(ctx, key)
	s.reqs.Add(1)
	s.bytes.Add(int64(len(b)))
	return b, err
}

func (s *ioCount) Stat(ctx context.Context, key string) (logstore.ObjectInfo, error) {
	s.reqs.Add(1)
	return s.Store.Stat(ctx, key)
}

func (s *ioCount) Put(ctx context.Context, key string, data []byte) error {
	s.reqs.Add(1)
	s.bytes.Add(int64(len(data)))
	return s.Store.Put(ctx, key, data)
}

func (s *ioCount) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	s.reqs.Add(1)
	s.bytes.Add(int64(len(data)))
	return s.Store.PutIfAbsent(ctx, key, data)
}

// convertRun holds the means over the first, middle and last hundred
// conversions.
type convertRun struct{ ms, reqs, kb [3]float64 }

func icebergConvertRun(b *testing.B, commits int, opts iceberg.Options) convertRun {
	ctx := context.Background()
	disk, err := local.New(filepath.Join(b.TempDir(), "t"))
	if err != nil {
		b.Fatal(err)
	}
	store := &ioCount{Store: disk}
	p, m, err := write.NewTable(write.TableSpec{
		Schema: &schema.StructType{Fields: []schema.StructField{
			{Name: "id", Type: schema.Long}, {Name: "name", Type: schema.String, Nullable: true},
		}},
		Properties: map[string]string{tableconfig.KeyUniversalFormatEnabledFormats: "iceberg"},
	})
	if err != nil {
		b.Fatal(err)
	}
	create := txn.BeginCreate(store, txn.Options{})
	create.SetProtocol(p)
	create.SetMetadata(m)
	if _, err := create.Commit(ctx); err != nil {
		b.Fatal(err)
	}
	snap, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		b.Fatal(err)
	}
	idPhys := snap.Schema().Fields[0].PhysicalName(snap.Config().ColumnMappingMode())
	times := make([]time.Duration, 0, commits)
	reqs := make([]float64, 0, commits)
	kbs := make([]float64, 0, commits)
	for i := range commits {
		tx := txn.Begin(snap, txn.Options{})
		tx.Add(actions.Add{Path: fmt.Sprintf("part-%08d.parquet", i), Size: 1 << 20, ModificationTime: 1, DataChange: true,
			PartitionValues: map[string]string{},
			Stats:           fmt.Sprintf(`{"numRecords":1000,"minValues":{%q:%d},"maxValues":{%q:%d},"nullCount":{%q:0}}`, idPhys, i*1000, idPhys, i*1000+999, idPhys)})
		res, err := tx.Commit(ctx)
		if err != nil {
			b.Fatal(err)
		}
		txn.PostCommit(ctx, &res)
		if snap, err = snap.Update(ctx); err != nil {
			b.Fatal(err)
		}
		store.reqs.Store(0)
		store.bytes.Store(0)
		start := time.Now()
		r, err := iceberg.Convert(ctx, snap, opts)
		if err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(start))
		reqs = append(reqs, float64(store.reqs.Load()))
		kbs = append(kbs, float64(store.bytes.Load())/1024)
		if r.Snapshots != 1 {
			b.Fatalf("commit %d: %d snapshots converted", i, r.Snapshots)
		}
	}
	w := min(100, commits/3)
	windows := [3][2]int{{0, w}, {commits/2 - w/2, commits/2 + w/2}, {commits - w, commits}}
	var out convertRun
	for k, win := range windows {
		var ms, rq, kb float64
		for i := win[0]; i < win[1]; i++ {
			ms += float64(times[i].Microseconds()) / 1000
			rq += reqs[i]
			kb += kbs[i]
		}
		n := float64(win[1] - win[0])
		out.ms[k], out.reqs[k], out.kb[k] = ms/n, rq/n, kb/n
	}
	return out
}

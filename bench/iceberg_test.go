package bench

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/iceberg"
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
				first, mid, last := icebergConvertRun(b, *icebergCommits, iceberg.Options{MaxSnapshots: max})
				b.ReportMetric(first, "ms/conv-first100")
				b.ReportMetric(mid, "ms/conv-mid100")
				b.ReportMetric(last, "ms/conv-last100")
			}
		})
	}
}

func icebergConvertRun(b *testing.B, commits int, opts iceberg.Options) (first, mid, last float64) {
	ctx := context.Background()
	store, err := local.New(filepath.Join(b.TempDir(), "t"))
	if err != nil {
		b.Fatal(err)
	}
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
		start := time.Now()
		r, err := iceberg.Convert(ctx, snap, opts)
		if err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(start))
		if r.Snapshots != 1 {
			b.Fatalf("commit %d: %d snapshots converted", i, r.Snapshots)
		}
	}
	mean := func(ts []time.Duration) float64 {
		var sum time.Duration
		for _, t := range ts {
			sum += t
		}
		return float64(sum.Microseconds()) / 1000 / float64(len(ts))
	}
	w := min(100, commits/3)
	return mean(times[:w]), mean(times[commits/2-w/2 : commits/2+w/2]), mean(times[commits-w:])
}

package azblob_test

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore/azblob"
	"github.com/godelta/delta/txn"
)

// reportLatency reports the median and 99th percentile of lat.
func reportLatency(b *testing.B, lat []time.Duration, prefix string) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(lat[len(lat)/2]), prefix+"p50-ms")
	b.ReportMetric(ms(lat[min(len(lat)-1, len(lat)*99/100)]), prefix+"p99-ms")
	b.ReportMetric(0, "ns/op") // the percentiles say it better
}

// BenchmarkCommitLatency compares a Delta commit through txn (snapshot
// update, Begin, Add, Commit) with a bare conditional upload
// (If-None-Match: *) of a blob of the same size, on the same Azurite. Run
// with -benchtime=500x for 500 commits.
func BenchmarkCommitLatency(b *testing.B) {
	s := newStore(b, azblob.Options{})
	ctx := b.Context()
	tbl, err := delta.CreateStore(ctx, "az://bench", s, delta.TableSpec{Schema: ddl(b, "id BIGINT NOT NULL")})
	if err != nil {
		b.Fatal(err)
	}
	var commitSize int64
	b.Run("txn", func(b *testing.B) {
		snap, err := tbl.Snapshot(ctx)
		if err != nil {
			b.Fatal(err)
		}
		lat := make([]time.Duration, 0, b.N)
		var commitLat []time.Duration // the commit alone, the snapshot current
		now := time.Now().UnixMilli()
		i := 0
		for b.Loop() {
			t0 := time.Now()
			if snap, err = snap.Update(ctx); err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			tx := txn.Begin(snap, txn.Options{Operation: "WRITE", NoCheckpoint: true})
			tx.Add(actions.Add{Path: fmt.Sprintf("part-%05d.parquet", i), Size: 1234, ModificationTime: now, DataChange: true,
				Stats: `{"numRecords":10,"minValues":{"id":0},"maxValues":{"id":9},"nullCount":{"id":0}}`})
			v, err := tx.Commit(ctx)
			if err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
			commitLat = append(commitLat, time.Since(t1))
			i++
			if commitSize == 0 {
				info, err := s.Stat(ctx, deltalog.CommitKey(v))
				if err != nil {
					b.Fatal(err)
				}
				commitSize = info.Size
			}
		}
		reportLatency(b, lat, "")
		reportLatency(b, commitLat, "commit-")
		b.ReportMetric(float64(commitSize), "commit-bytes")
	})
	if commitSize == 0 {
		commitSize = 700
	}
	data := bytes.Repeat([]byte("x"), int(commitSize))
	b.Run("bare", func(b *testing.B) {
		client := s.Client()
		lat := make([]time.Duration, 0, b.N)
		i := 0
		for b.Loop() {
			name := fmt.Sprintf("%sbare/%020d.json", s.Prefix(), i)
			i++
			t0 := time.Now()
			_, err := client.NewBlockBlobClient(name).Upload(ctx, streaming.NopCloser(bytes.NewReader(data)), &blockblob.UploadOptions{
				AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: new(azcore.ETagAny)}},
			})
			if err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
		}
		reportLatency(b, lat, "")
	})
	b.Run("store", func(b *testing.B) {
		lat := make([]time.Duration, 0, b.N)
		i := 0
		for b.Loop() {
			key := fmt.Sprintf("store/%020d.json", i)
			i++
			t0 := time.Now()
			if err := s.PutIfAbsent(ctx, key, data); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
		}
		reportLatency(b, lat, "")
	})
}

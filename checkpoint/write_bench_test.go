package checkpoint_test

import (
	"context"
	"fmt"
	"iter"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/checkpoint"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
)

// benchState is a table state of n partitioned files with JSON stats.
type benchState struct {
	p     actions.Protocol
	m     actions.Metadata
	sch   *schema.StructType
	cfg   *tableconfig.Config
	files []actions.Add
}

func newBenchState(b *testing.B, n int, conf map[string]string) *benchState {
	b.Helper()
	sch, err := schema.ParseDDL("id BIGINT, name STRING, ts TIMESTAMP, p STRING")
	if err != nil {
		b.Fatal(err)
	}
	created := int64(1)
	s := &benchState{p: actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2},
		m: actions.Metadata{ID: "bench", Format: actions.Format{Provider: "parquet"}, SchemaString: sch.String(),
			PartitionColumns: []string{"p"}, Configuration: conf, CreatedTime: &created},
		sch: sch}
	if s.cfg, err = tableconfig.New(s.p, s.m); err != nil {
		b.Fatal(err)
	}
	for i := range n {
		part := fmt.Sprintf("p%d", i%16)
		s.files = append(s.files, actions.Add{
			Path:             fmt.Sprintf("p=%s/part-%05d-0f3b2c1a-8d4e-4f6a-9b7c-%012d.c000.snappy.parquet", part, i, i),
			PartitionValues:  map[string]string{"p": part},
			Size:             int64(100000 + i),
			ModificationTime: int64(1700000000000 + i),
			DataChange:       true,
			Stats: fmt.Sprintf(`{"numRecords":%d,"minValues":{"id":%d,"name":"a%d","ts":"2024-01-01T00:00:00.000Z"},"maxValues":{"id":%d,"name":"z%d","ts":"2024-01-02T00:00:00.000Z"},"nullCount":{"id":0,"name":%d,"ts":0}}`,
				1000+i%7, i*1000, i, i*1000+999, i, i%3),
		})
	}
	return s
}

func (s *benchState) Version() int64              { return 10 }
func (s *benchState) Protocol() actions.Protocol  { return s.p }
func (s *benchState) Metadata() actions.Metadata  { return s.m }
func (s *benchState) Schema() *schema.StructType  { return s.sch }
func (s *benchState) Config() *tableconfig.Config { return s.cfg }
func (s *benchState) Files(context.Context) iter.Seq2[*actions.Add, error] {
	return func(yield func(*actions.Add, error) bool) {
		for i := range s.files {
			if !yield(&s.files[i], nil) {
				return
			}
		}
	}
}
func (s *benchState) Tombstones(context.Context) iter.Seq2[*actions.Remove, error] {
	return func(func(*actions.Remove, error) bool) {}
}
func (s *benchState) Txns(context.Context) iter.Seq2[actions.Txn, error] {
	return func(func(actions.Txn, error) bool) {}
}
func (s *benchState) Domains(context.Context) iter.Seq2[actions.DomainMetadata, error] {
	return func(func(actions.DomainMetadata, error) bool) {}
}

func benchWrite(b *testing.B, n int, conf map[string]string) {
	st := newBenchState(b, n, conf)
	b.ReportAllocs()
	var size int64
	for b.Loop() {
		lc, err := checkpoint.Write(context.Background(), memory.New(), st, checkpoint.WriteOptions{})
		if err != nil {
			b.Fatal(err)
		}
		size = *lc.SizeInBytes
	}
	b.ReportMetric(float64(size), "bytes/checkpoint")
}

// BenchmarkWrite100k writes a classic checkpoint of 100,000 files with
// JSON stats; ...Struct with stats_parsed and partitionValues_parsed too.
func BenchmarkWrite100k(b *testing.B) { benchWrite(b, 100_000, nil) }
func BenchmarkWrite100kStruct(b *testing.B) {
	benchWrite(b, 100_000, map[string]string{"delta.checkpoint.writeStatsAsStruct": "true"})
}

package checkpoint

import (
	"context"
	"os"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/godelta/delta/actions"
)

// benchCheckpoint writes a classic checkpoint of protocol, metaData and n
// adds into a temporary directory and returns a store over it and the key.
func benchCheckpoint(b *testing.B, n int) (dirStore, string, int64) {
	b.Helper()
	rows := append(headRows(), fileRows(n)...)
	// Spark's defaults: 128 MiB row groups, 1 MiB pages.
	data := writeRows(b, rows, parquet.PageBufferSize(1<<20))
	store := dirStore{b.TempDir()}
	key := "_delta_log/00000000000000000100.checkpoint.parquet"
	if err := store.Put(context.Background(), key, data); err != nil {
		b.Fatal(err)
	}
	return store, key, int64(len(data))
}

func benchRead(b *testing.B, n int, want ActionSet, wantAdds int) {
	store, key, size := benchCheckpoint(b, n)
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		adds := 0
		err := Read(context.Background(), store, []string{key}, want, func(batch []actions.Action) error {
			for i := range batch {
				if batch[i].Add != nil {
					adds++
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		if adds != wantAdds {
			b.Fatalf("got %d adds, want %d", adds, wantAdds)
		}
	}
}

// BenchmarkRead100k reads every action of a checkpoint of 100,000 files.
func BenchmarkRead100k(b *testing.B) { benchRead(b, 100_000, All, 100_000) }

// BenchmarkRead100kProtocolMetadata reads only protocol and metaData.
func BenchmarkRead100kProtocolMetadata(b *testing.B) {
	benchRead(b, 100_000, Protocol|Metadata, 0)
}

// BenchmarkRead1M reads every action of a checkpoint of 1,000,000 files.
// Writing the file takes a while, so it runs only when GODELTA_BENCH_1M is
// set.
func BenchmarkRead1M(b *testing.B) {
	if os.Getenv("GODELTA_BENCH_1M") == "" {
		b.Skip("set GODELTA_BENCH_1M=1 to run")
	}
	benchRead(b, 1_000_000, All, 1_000_000)
}

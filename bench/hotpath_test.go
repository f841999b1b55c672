package bench

import (
	"context"
	"fmt"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/bench/synth"
	"github.com/godelta/delta/checkpoint"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
)

// memTable builds a synthetic table of n checkpoint files in memory.
func memTable(b *testing.B, n int) *logstore.Portable {
	b.Helper()
	store := memory.New()
	if _, err := synth.Build(context.Background(), store, n, 10); err != nil {
		b.Fatal(err)
	}
	return store
}

// BenchmarkDecodeCommit decodes one commit of 1,000 adds and 500 removes
// (the synthetic commit shape, scaled up).
func BenchmarkDecodeCommit(b *testing.B) {
	var acts []actions.Action
	for i := range 1000 {
		a := synth.File(i)
		acts = append(acts, actions.Action{Add: &a})
	}
	for i := range 500 {
		a := synth.File(i)
		acts = append(acts, actions.Action{Remove: &actions.Remove{Path: a.Path, DataChange: true}})
	}
	data, err := actions.EncodeCommit(acts)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		got, err := actions.DecodeCommit("00000000000000000001.json", data)
		if err != nil || len(got) != 1500 {
			b.Fatal(len(got), err)
		}
	}
}

// BenchmarkReplayMemory loads the latest snapshot of a table on the
// memory store: checkpoint decode plus commit replay, without disk I/O.
func BenchmarkReplayMemory(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			store := memTable(b, n)
			b.ReportAllocs()
			for b.Loop() {
				s, err := snapshot.Load(context.Background(), store, deltalog.Latest)
				if err != nil {
					b.Fatal(err)
				}
				if got, err := s.NumFiles(context.Background()); err != nil || got != int64(n+50) {
					b.Fatal(got, err)
				}
			}
		})
	}
}

// BenchmarkSnapshotFiles iterates the live files of a loaded snapshot.
func BenchmarkSnapshotFiles(b *testing.B) {
	store := memTable(b, 100_000)
	s, err := snapshot.Load(context.Background(), store, deltalog.Latest)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for _, err := range s.Files(context.Background()) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 100_050 {
			b.Fatal(n)
		}
	}
}

// BenchmarkSnapshotUpdate applies 10 new commits to a loaded snapshot
// whose files were read, and counts the files of the result (which the
// updated snapshot works out on first use).
func BenchmarkSnapshotUpdate(b *testing.B) {
	store := memTable(b, 100_000)
	s, err := snapshot.Load(context.Background(), store, deltalog.Latest)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.NumFiles(context.Background()); err != nil {
		b.Fatal(err)
	}
	for v := int64(11); v <= 20; v++ {
		if err := synth.Commit(context.Background(), store, v, 100_000); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		s2, err := s.Update(context.Background())
		if err != nil || s2.Version() != 20 {
			b.Fatal(err)
		}
		if n, err := s2.NumFiles(context.Background()); err != nil || n != 100_100 {
			b.Fatal(n, err)
		}
	}
}

// BenchmarkStatsDecode decodes the stats JSON of one synthetic file, for
// all columns and for one predicate column.
func BenchmarkStatsDecode(b *testing.B) {
	store := memTable(b, 10)
	s, err := snapshot.Load(context.Background(), store, deltalog.Latest)
	if err != nil {
		b.Fatal(err)
	}
	raw := synth.File(12345).Stats
	for _, cols := range [][]string{nil, {"id"}} {
		b.Run(fmt.Sprintf("columns=%v", cols), func(b *testing.B) {
			d := expr.NewStatsDecoder(s.Schema(), schema.ColumnMappingNone, cols)
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := d.Decode(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCheckpointDecode reads the add actions of a 100,000-file
// checkpoint from memory.
func BenchmarkCheckpointDecode(b *testing.B) {
	store := memTable(b, 100_000)
	keys := []string{deltalog.ClassicCheckpointKey(0)}
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		err := checkpoint.Read(context.Background(), store, keys, checkpoint.Add, func(batch []actions.Action) error {
			n += len(batch)
			return nil
		})
		if err != nil || n != 100_000 {
			b.Fatal(n, err)
		}
	}
}

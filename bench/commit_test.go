package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/txn"
)

// newCommitTable creates an empty table on local disk (synced writes, as
// in production) and returns its store.
func newCommitTable(b *testing.B) *logstore.Portable {
	b.Helper()
	store, err := local.New(filepath.Join(b.TempDir(), "t"))
	if err != nil {
		b.Fatal(err)
	}
	acts := []actions.Action{
		{Protocol: &actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}},
		{Metadata: &actions.Metadata{ID: "bench", Format: actions.Format{Provider: "parquet"}, SchemaString: scanSchema, Configuration: map[string]string{}}},
	}
	data, err := actions.EncodeCommit(acts)
	if err != nil {
		b.Fatal(err)
	}
	if err := store.PutIfAbsent(context.Background(), deltalog.CommitKey(0), data); err != nil {
		b.Fatal(err)
	}
	return store
}

func benchAdd(i int) actions.Add {
	return actions.Add{Path: fmt.Sprintf("part-%08d.parquet", i), Size: 1 << 20, ModificationTime: 1, DataChange: true,
		PartitionValues: map[string]string{}, Stats: `{"numRecords":1000,"minValues":{"id":0},"maxValues":{"id":999},"nullCount":{"id":0}}`}
}

// BenchmarkCommit is one blind append of one file through txn: build the
// commit (commitInfo, txnId) and put it. The snapshot is brought up to date
// between commits, outside the timing, as a long-running writer would.
// "commit" leaves out the checkpoint due every 10 commits; "with-checkpoints"
// includes it (and the log cleanup after it), amortized.
func BenchmarkCommit(b *testing.B) {
	b.Run("commit", func(b *testing.B) { benchCommit(b, true) })
	b.Run("with-checkpoints", func(b *testing.B) { benchCommit(b, false) })
}

func benchCommit(b *testing.B, noCheckpoint bool) {
	ctx := context.Background()
	store := newCommitTable(b)
	snap, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		tx := txn.Begin(snap, txn.Options{Operation: "WRITE", NoCheckpoint: noCheckpoint})
		tx.Add(benchAdd(i))
		res, err := tx.Commit(ctx)
		if err != nil {
			b.Fatal(err)
		}
		txn.PostCommit(ctx, &res) // the checkpoints of with-checkpoints
		if res.PostCommit.Err != nil {
			b.Fatal(res.PostCommit.Err)
		}
		i++
		b.StopTimer()
		if snap, err = snap.Update(ctx); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkBarePutIfAbsent is the floor under BenchmarkCommit: the same
// store writing a commit file of the same shape, already encoded.
func BenchmarkBarePutIfAbsent(b *testing.B) {
	ctx := context.Background()
	store := newCommitTable(b)
	info := &actions.CommitInfo{Operation: "WRITE"}
	v := int64(1)
	for b.Loop() {
		b.StopTimer()
		add := benchAdd(int(v))
		data, err := actions.EncodeCommit([]actions.Action{{CommitInfo: info}, {Add: &add}})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := store.PutIfAbsent(ctx, deltalog.CommitKey(v), data); err != nil {
			b.Fatal(err)
		}
		v++
	}
}

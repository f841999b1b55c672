package snapshot_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/txn"
)

// Readers loading the latest snapshot while a writer commits through txn,
// with a checkpoint every few commits and log cleanup after each deleting
// everything before it, never fail, and each sees versions that never go
// back. The local store lists a directory in hash order while files are
// created and deleted, so listings here do race the writer.
func TestLoadWhileCommitting(t *testing.T) {
	const versions = 200
	ctx := context.Background()
	// Without fsync: the test is about listings, not durability, and
	// syncing would only slow the writer down.
	store, err := local.New(t.TempDir(), local.WithoutSync())
	if err != nil {
		t.Fatal(err)
	}
	// The writer's clock runs three days ahead, so that with a retention
	// of one day every commit before the newest checkpoint has expired.
	clock := func() time.Time { return time.Now().Add(72 * time.Hour) }
	opts := txn.Options{Clock: clock}
	create := txn.BeginCreate(store, opts)
	create.SetProtocol(actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2})
	create.SetMetadata(actions.Metadata{
		ID:           "race",
		Format:       actions.Format{Provider: "parquet", Options: map[string]string{}},
		SchemaString: `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}`,
		Configuration: map[string]string{
			"delta.checkpointInterval":   "5",
			"delta.logRetentionDuration": "interval 1 days",
		},
	})
	if _, err := create.Commit(ctx); err != nil {
		t.Fatal(err)
	}

	var done atomic.Bool
	var wg sync.WaitGroup
	const readers = 4
	loads := make([]int, readers)
	errs := make(chan error, readers)
	for r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := int64(-1)
			var prev *snapshot.Snapshot
			for i := 0; !done.Load(); i++ {
				// Odd readers alternate loads with updates of the
				// snapshot they hold, which list from its version on.
				var s *snapshot.Snapshot
				var err error
				switch {
				case r%2 == 1 && i%2 == 1 && prev != nil:
					s, err = prev.Update(ctx)
				case r == 0:
					// A reader that finds no _last_checkpoint (it is
					// optional) lists the whole log every time.
					s, err = snapshot.Load(ctx, noHint{store}, deltalog.Latest)
				default:
					s, err = snapshot.Load(ctx, store, deltalog.Latest)
				}
				if err != nil {
					errs <- fmt.Errorf("reader %d after version %d: %w", r, last, err)
					return
				}
				if s.Version() < last {
					errs <- fmt.Errorf("reader %d: version %d after %d", r, s.Version(), last)
					return
				}
				last, prev = s.Version(), s
				loads[r]++
			}
		}()
	}

	snap, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	var cleaned int
	for v := 1; v < versions; v++ {
		tx := txn.Begin(snap, opts)
		tx.Add(actions.Add{Path: fmt.Sprintf("f%d.parquet", v), PartitionValues: map[string]string{}, Size: 1, ModificationTime: 1, DataChange: true})
		res, err := tx.Commit(ctx)
		if err != nil {
			t.Fatal(err)
		}
		txn.PostCommit(ctx, &res)
		if res.PostCommit.Err != nil {
			t.Fatal(res.PostCommit.Err)
		}
		cleaned += res.PostCommit.LogFilesDeleted
		if snap, err = snap.Update(ctx); err != nil {
			t.Fatal(err)
		}
	}
	done.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if snap.Version() != versions-1 {
		t.Errorf("writer ended at version %d, want %d", snap.Version(), versions-1)
	}
	if cleaned == 0 {
		t.Error("log cleanup deleted nothing: the test does not race it")
	}
	t.Logf("loads per reader %v, log files cleaned %d", loads, cleaned)
}

// noHint is a store without the _last_checkpoint hint.
type noHint struct{ logstore.Store }

func (s noHint) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	if key == deltalog.LastCheckpointKey {
		return nil, fmt.Errorf("noHint: %s: %w", key, logstore.ErrNotFound)
	}
	return s.Store.GetRange(ctx, key, off, n)
}

func (s noHint) Get(ctx context.Context, key string) ([]byte, error) {
	if key == deltalog.LastCheckpointKey {
		return nil, fmt.Errorf("noHint: %s: %w", key, logstore.ErrNotFound)
	}
	return s.Store.Get(ctx, key)
}

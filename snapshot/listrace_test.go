package snapshot_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/txn"
)

// raceStore makes the listings of _delta_log race a writer and log cleanup
// the way the test arranges:
//
//   - a key in hide, with n, is left out of the first n listings; with
//     hideReads it is also not found by Stat and reads until the (n+1)th
//     listing starts (a store whose listing and reads lag behind a write);
//   - the keys in cleanup are deleted as soon as the first listing has
//     ended (log cleanup running between a reader's listing and its reads).
//
// Until arm is called (or when armed is set at construction), the store
// only passes calls through.
type raceStore struct {
	logstore.Store
	hideReads bool

	mu      sync.Mutex
	armed   bool
	lists   int // listings of _delta_log/ started
	hide    map[string]int
	cleanup []string
}

func (s *raceStore) arm() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.armed, s.lists = true, 0
}

func (s *raceStore) hidden(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.hide[key]
	return s.armed && ok && s.lists <= n
}

func (s *raceStore) listings() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lists
}

func (s *raceStore) notFound(key string) error {
	return fmt.Errorf("raceStore: %s: %w", key, logstore.ErrNotFound)
}

func (s *raceStore) Get(ctx context.Context, key string) ([]byte, error) {
	if s.hideReads && s.hidden(key) {
		return nil, s.notFound(key)
	}
	return s.Store.Get(ctx, key)
}

func (s *raceStore) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	if s.hideReads && s.hidden(key) {
		return nil, s.notFound(key)
	}
	return s.Store.GetRange(ctx, key, off, n)
}

func (s *raceStore) Stat(ctx context.Context, key string) (logstore.ObjectInfo, error) {
	if s.hideReads && s.hidden(key) {
		return logstore.ObjectInfo{}, s.notFound(key)
	}
	return s.Store.Stat(ctx, key)
}

func (s *raceStore) List(ctx context.Context, dir, after string) iter.Seq2[logstore.ObjectInfo, error] {
	return func(yield func(logstore.ObjectInfo, error) bool) {
		s.mu.Lock()
		armed := s.armed
		s.mu.Unlock()
		if dir != deltalog.LogDir || !armed {
			for o, err := range s.Store.List(ctx, dir, after) {
				if !yield(o, err) {
					return
				}
			}
			return
		}
		s.mu.Lock()
		s.lists++
		first := s.lists == 1
		s.mu.Unlock()
		for o, err := range s.Store.List(ctx, dir, after) {
			if err == nil && s.hidden(o.Key) {
				continue
			}
			if !yield(o, err) {
				return
			}
		}
		if first {
			for _, key := range s.cleanup {
				if err := s.Store.Delete(ctx, key); err != nil {
					panic(err)
				}
			}
		}
	}
}

// rawTable commits versions 0..3 to a memory store, one file each.
func rawTable(t *testing.T) *logstore.Portable {
	s := memory.New()
	commit(t, s, 0, proto1, meta, add("a"))
	commit(t, s, 1, add("b"))
	commit(t, s, 2, add("c"))
	commit(t, s, 3, add("d"))
	return s
}

// A listing that shows commit 3 but not commit 2 (which was written first)
// is listed again: Load and Update serve the newest version, with every
// file. A commit that never shows up is ErrMissingLogFile, after a bounded
// number of listings.
func TestListingHidesCommit(t *testing.T) {
	ctx := context.Background()
	c2, c3 := deltalog.CommitKey(2), deltalog.CommitKey(3)
	tests := []struct {
		name      string
		hide      map[string]int
		hideReads bool
		version   int64
		update    bool // Update a snapshot of version 1 instead of Load
		wantErr   error
		wantLists int
	}{
		{"listing and reads lag behind commit 2", map[string]int{c2: 1}, true, deltalog.Latest, false, nil, 2},
		{"listing lags behind commit 2, reads do not", map[string]int{c2: 1}, false, deltalog.Latest, false, nil, 1},
		{"lag over two listings", map[string]int{c2: 2}, true, deltalog.Latest, false, nil, 3},
		{"update across a lagging commit", map[string]int{c2: 1}, true, deltalog.Latest, true, nil, 2},
		{"version asked for, listing ends before it", map[string]int{c3: 1}, false, 3, false, nil, 2},
		{"version asked for, hole below it", map[string]int{c2: 1}, true, 3, false, nil, 2},
		{"commit 2 never shows", map[string]int{c2: 1 << 30}, true, deltalog.Latest, false, deltaerr.ErrMissingLogFile, deltalog.RelistAttempts},
		{"update, commit 2 never shows", map[string]int{c2: 1 << 30}, true, deltalog.Latest, true, deltaerr.ErrMissingLogFile, deltalog.RelistAttempts},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := &raceStore{Store: rawTable(t), hide: tt.hide, hideReads: tt.hideReads}
			var got *snapshot.Snapshot
			var err error
			if tt.update {
				var prev *snapshot.Snapshot
				if prev, err = snapshot.Load(ctx, rs, 1); err != nil {
					t.Fatal(err)
				}
				rs.arm()
				got, err = prev.Update(ctx)
			} else {
				rs.arm()
				got, err = snapshot.Load(ctx, rs, tt.version)
			}
			if n := rs.listings(); n != tt.wantLists {
				t.Errorf("%d listings, want %d", n, tt.wantLists)
			}
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Version() != 3 {
				t.Errorf("version %d, want 3", got.Version())
			}
			if p := paths(got); !slices.Equal(p, []string{"a", "b", "c", "d"}) {
				t.Errorf("files %v, want a b c d", p)
			}
		})
	}
}

// cleanupTable commits versions 0..12 through txn to a memory store, one
// file each, with checkpoints at 5 and 10, and deletes the optional
// _last_checkpoint hint, so that readers list the whole log.
func cleanupTable(t *testing.T) *logstore.Portable {
	t.Helper()
	ctx := context.Background()
	// Every write is a second after the one before, so that each commit
	// has a time of its own to travel to.
	d := memory.NewDriver()
	var ticks atomic.Int64
	start := time.Now().Add(-time.Hour)
	d.SetClock(func() time.Time { return start.Add(time.Duration(ticks.Add(1)) * time.Second) })
	store := logstore.NewPortable(d)
	createTable(t, store, txn.Options{}, map[string]string{"delta.checkpointInterval": "5"}, true)
	for v := 1; v <= 12; v++ {
		snap, err := snapshot.Load(ctx, store, deltalog.Latest)
		if err != nil {
			t.Fatal(err)
		}
		appendFile(t, snap, txn.Options{}, fmt.Sprintf("f%d", v))
	}
	for _, v := range []int64{5, 10} {
		if _, err := store.Stat(ctx, deltalog.ClassicCheckpointKey(v)); err != nil {
			t.Fatalf("checkpoint %d: %v", v, err)
		}
	}
	if err := store.Delete(ctx, deltalog.LastCheckpointKey); err != nil {
		t.Fatal(err)
	}
	return store
}

// Log cleanup that runs between a reader's listing and its reads (the
// listing missed the new checkpoint at 10; cleanup then deleted what came
// before it) makes the reader list again, not fail: Load, time travel by
// timestamp and History all see the log as cleanup left it.
func TestCleanupBesideReader(t *testing.T) {
	ctx := context.Background()
	cp5, cp10 := deltalog.ClassicCheckpointKey(5), deltalog.ClassicCheckpointKey(10)
	commits := func(from, to int64) []string {
		var keys []string
		for v := from; v <= to; v++ {
			keys = append(keys, deltalog.CommitKey(v))
		}
		return keys
	}
	cleanups := []struct {
		name    string
		deleted []string
	}{
		{"cleanup deletes the commits the listing named", append(commits(0, 9), cp5)},
		{"cleanup deletes the checkpoint the listing named", append(commits(0, 4), cp5)},
	}
	var ts12 time.Time // of version 12 of the table under test
	var want []string  // its files
	readers := []struct {
		name string
		read func(rs *raceStore) error // arms rs before it reads
	}{
		{"Load", func(rs *raceStore) error {
			rs.arm()
			s, err := snapshot.Load(ctx, rs, deltalog.Latest)
			if err != nil {
				return err
			}
			if cp, _ := s.Segment().CheckpointVersion(); s.Version() != 12 || cp != 10 {
				return fmt.Errorf("version %d from checkpoint %d, want 12 from 10", s.Version(), cp)
			}
			if p := paths(s); !slices.Equal(p, want) {
				return fmt.Errorf("files %v, want %v", p, want)
			}
			return nil
		}},
		{"Update of a snapshot older than the cleanup", func(rs *raceStore) error {
			old, err := snapshot.Load(ctx, rs, 3)
			if err != nil {
				return err
			}
			rs.arm()
			s, err := old.Update(ctx)
			if err != nil {
				return err
			}
			if s.Version() != 12 {
				return fmt.Errorf("version %d, want 12", s.Version())
			}
			if p := paths(s); !slices.Equal(p, want) {
				return fmt.Errorf("files %v, want %v", p, want)
			}
			return nil
		}},
		{"LoadAsOf", func(rs *raceStore) error {
			rs.arm()
			s, err := snapshot.LoadAsOf(ctx, rs, ts12)
			if err != nil {
				return err
			}
			if s.Version() != 12 {
				return fmt.Errorf("version %d, want 12", s.Version())
			}
			return nil
		}},
		{"History", func(rs *raceStore) error {
			rs.arm()
			h, err := snapshot.History(ctx, rs, 0)
			if err != nil {
				return err
			}
			if len(h) == 0 || h[0].Version != 12 || h[len(h)-1].Version > 10 {
				return fmt.Errorf("history of %d commits, want 12 down to 10 or older", len(h))
			}
			return nil
		}},
	}
	for _, c := range cleanups {
		for _, r := range readers {
			t.Run(c.name+"/"+r.name, func(t *testing.T) {
				rs := &raceStore{Store: cleanupTable(t), hide: map[string]int{cp10: 1}, cleanup: c.deleted}
				s, err := snapshot.Load(ctx, rs, 12)
				if err != nil {
					t.Fatal(err)
				}
				ts12, want = s.Timestamp(), paths(s)
				if err := r.read(rs); err != nil {
					t.Fatal(err)
				}
				if n := rs.listings(); n < 2 {
					t.Errorf("%d listings: the reader did not meet the cleanup", n)
				}
			})
		}
	}
}

// createTable creates, through txn, a table of one long column with the
// table properties conf, and the file f0 when withFile.
func createTable(t *testing.T, store logstore.Store, opts txn.Options, conf map[string]string, withFile bool) {
	t.Helper()
	create := txn.BeginCreate(store, opts)
	create.SetProtocol(actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2})
	create.SetMetadata(actions.Metadata{
		ID:            "race",
		Format:        actions.Format{Provider: "parquet", Options: map[string]string{}},
		SchemaString:  `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}`,
		Configuration: conf,
	})
	if withFile {
		create.Add(actions.Add{Path: "f0", PartitionValues: map[string]string{}, Size: 1, ModificationTime: 1, DataChange: true})
	}
	if _, err := create.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// appendFile commits the file path on top of snap through txn and runs
// the maintenance the commit made due (a checkpoint, then log cleanup). It
// returns the number of log files the cleanup deleted.
func appendFile(t *testing.T, snap *snapshot.Snapshot, opts txn.Options, path string) int {
	t.Helper()
	ctx := context.Background()
	tx := txn.Begin(snap, opts)
	tx.Add(actions.Add{Path: path, PartitionValues: map[string]string{}, Size: 1, ModificationTime: 1, DataChange: true})
	res, err := tx.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	txn.PostCommit(ctx, &res)
	if res.PostCommit.Err != nil {
		t.Fatal(res.PostCommit.Err)
	}
	return res.PostCommit.LogFilesDeleted
}

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
	createTable(t, store, opts, map[string]string{
		"delta.checkpointInterval":   "5",
		"delta.logRetentionDuration": "interval 1 days",
	}, false)

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
		cleaned += appendFile(t, snap, opts, fmt.Sprintf("f%d.parquet", v))
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

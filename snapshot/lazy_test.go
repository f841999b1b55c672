package snapshot_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/godelta/delta/bench/synth"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/testutil/countstore"
)

// What Load reads, and what waits for the first accessor that needs it, is
// asserted by counting the reads of checkpoint files.

func isCheckpoint(key string) bool { return strings.Contains(key, ".checkpoint.") }

// synthTable is a synthetic table (bench/synth): a checkpoint at version 0
// with n files, then commits 1..10, each file written one second after the
// one before. It returns the store, counting checkpoint reads, and the
// checkpoint's bytes.
func synthTable(t *testing.T, n int) (*countstore.Store, []byte) {
	t.Helper()
	ctx := context.Background()
	d := memory.NewDriver()
	clock := time.UnixMilli(1_700_000_000_000)
	d.SetClock(func() time.Time { clock = clock.Add(time.Second); return clock })
	mem := logstore.NewPortable(d)
	if _, err := synth.Build(ctx, mem, n, 10); err != nil {
		t.Fatal(err)
	}
	data, err := mem.Get(ctx, deltalog.ClassicCheckpointKey(0))
	if err != nil {
		t.Fatal(err)
	}
	return countstore.New(mem, isCheckpoint), data
}

// chunk is the byte range of one column chunk of a Parquet file.
type chunk struct{ off, n int64 }

// columnChunks returns the chunks of the columns under top (such as
// "add") in a Parquet file.
func columnChunks(t *testing.T, data []byte, top string) []chunk {
	t.Helper()
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var out []chunk
	for _, rg := range f.Metadata().RowGroups {
		for _, c := range rg.Columns {
			md := c.MetaData
			if len(md.PathInSchema) == 0 || md.PathInSchema[0] != top {
				continue
			}
			off := md.DataPageOffset
			if md.DictionaryPageOffset > 0 && md.DictionaryPageOffset < off {
				off = md.DictionaryPageOffset
			}
			out = append(out, chunk{off, md.TotalCompressedSize})
		}
	}
	return out
}

func total(chunks []chunk) (n int64) {
	for _, c := range chunks {
		n += c.n
	}
	return n
}

func livePaths(t *testing.T, s *snapshot.Snapshot) []string {
	t.Helper()
	var out []string
	for f, err := range s.Files(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f.Path)
	}
	slices.Sort(out)
	return out
}

func TestLoadReadsNoFileColumns(t *testing.T) {
	ctx := context.Background()
	const n = 40_000
	store, data := synthTable(t, n)
	addBytes := total(columnChunks(t, data, "add"))
	if addBytes < int64(len(data))*3/4 {
		t.Fatalf("add columns are %d of %d bytes: too few for the test to tell", addBytes, len(data))
	}
	v5, err := snapshot.Load(ctx, store, 5)
	if err != nil {
		t.Fatal(err)
	}
	at5 := v5.Timestamp()

	for _, tc := range []struct {
		name string
		load func() (*snapshot.Snapshot, error)
		want int64 // version
	}{
		{"Load latest", func() (*snapshot.Snapshot, error) { return snapshot.Load(ctx, store, deltalog.Latest) }, 10},
		{"Load at version", func() (*snapshot.Snapshot, error) { return snapshot.Load(ctx, store, 3) }, 3},
		{"LoadAsOf", func() (*snapshot.Snapshot, error) { return snapshot.LoadAsOf(ctx, store, at5) }, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store.Reset()
			s, err := tc.load()
			if err != nil {
				t.Fatal(err)
			}
			if s.Version() != tc.want || s.Schema() == nil || len(s.Metadata().PartitionColumns) != 1 {
				t.Fatalf("version %d, metadata %+v", s.Version(), s.Metadata())
			}
			loaded := store.Counts()
			if loaded.Bytes*4 > addBytes {
				t.Errorf("Load read %d bytes of the checkpoint; its add columns are %d", loaded.Bytes, addBytes)
			}
			// Txns read their own columns, not the adds.
			if _, ok, err := s.TxnVersion(ctx, "none"); ok || err != nil {
				t.Errorf("TxnVersion: %v %v", ok, err)
			}
			if c := store.Counts(); c.Bytes*4 > addBytes {
				t.Errorf("Load and TxnVersion read %d bytes of the checkpoint", c.Bytes)
			}
			// The files are read when asked for, and only then.
			got, err := s.NumFiles(ctx)
			if want := int64(n + 5*tc.want); err != nil || got != want {
				t.Errorf("NumFiles = %d, %v; want %d", got, err, want)
			}
			c := store.Counts()
			t.Logf("checkpoint %d bytes, add columns %d; Load read %d bytes in %d ranges, NumFiles %d more",
				len(data), addBytes, loaded.Bytes, loaded.Ranges, c.Bytes-loaded.Bytes)
			if c.Bytes-loaded.Bytes < addBytes/2 {
				t.Errorf("NumFiles read only %d bytes of the checkpoint", c.Bytes-loaded.Bytes)
			}
		})
	}
}

func TestLoadAsOfListsOnce(t *testing.T) {
	ctx := context.Background()
	store, _ := synthTable(t, 1000)
	v5, err := snapshot.Load(ctx, store, 5)
	if err != nil {
		t.Fatal(err)
	}
	store.Reset()
	if _, err := snapshot.Load(ctx, store, 5); err != nil {
		t.Fatal(err)
	}
	one := store.Counts()

	for _, at := range []time.Time{v5.Timestamp(), v5.Timestamp().Add(500 * time.Millisecond)} {
		store.Reset()
		s, err := snapshot.LoadAsOf(ctx, store, at)
		if err != nil || s.Version() != 5 {
			t.Fatalf("LoadAsOf(%v) = %v, %v", at, s, err)
		}
		// One listing serves the latest version's metadata, the search
		// and the target; both versions share the checkpoint, whose
		// protocol and metaData are read once.
		if c := store.Counts(); c.Lists != 1 || c.Ranges != one.Ranges || c.Bytes != one.Bytes {
			t.Errorf("LoadAsOf read %+v; one Load reads %+v", c, one)
		}
	}
	if _, err := snapshot.LoadAsOf(ctx, store, time.UnixMilli(0)); !errors.Is(err, deltaerr.ErrTimestampOutOfRange) {
		t.Errorf("before the first commit: %v", err)
	}
}

func TestFilesConcurrent(t *testing.T) {
	ctx := context.Background()
	store, _ := synthTable(t, 5000)
	// The reads of one replay, on a snapshot of its own.
	single, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	store.Reset()
	want := livePaths(t, single)
	oneReplay := store.Counts()
	if oneReplay.Ranges == 0 {
		t.Fatal("a replay read nothing")
	}
	store.Reset()
	livePaths(t, single)
	if again := store.Counts(); again != (countstore.Counts{}) {
		t.Fatalf("a second Files read the checkpoint again: %+v", again)
	}

	s, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	store.Reset()
	const goroutines = 16
	got := make([][]string, goroutines)
	var wg sync.WaitGroup
	for i := range goroutines {
		wg.Go(func() {
			for f, err := range s.Files(ctx) {
				if err != nil {
					t.Error(err)
					return
				}
				got[i] = append(got[i], f.Path)
			}
			slices.Sort(got[i])
		})
	}
	wg.Wait()
	for i := range goroutines {
		if !slices.Equal(got[i], want) {
			t.Errorf("goroutine %d saw %d files, want %d", i, len(got[i]), len(want))
		}
	}
	if c := store.Counts(); c != oneReplay {
		t.Errorf("16 concurrent Files read %+v; one replay reads %+v", c, oneReplay)
	}
}

func TestCancelledReplayIsRetried(t *testing.T) {
	store, _ := synthTable(t, 100)
	s, err := snapshot.Load(context.Background(), store, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.NumFiles(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("NumFiles with a cancelled ctx: %v", err)
	}
	for _, err := range s.Files(ctx) {
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Files with a cancelled ctx: %v", err)
		}
	}
	if n, err := s.NumFiles(context.Background()); err != nil || n != 150 {
		t.Fatalf("NumFiles after a cancelled one = %d, %v; want 150", n, err)
	}
}

func TestDamagedAddColumnFailsOnlyOnFiles(t *testing.T) {
	ctx := context.Background()
	intact, err := snapshot.Load(ctx, corpusTable(t, cpTable), deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	want := livePaths(t, intact)

	// damage overwrites the add column chunks of the checkpoint at 10.
	damage := func(t *testing.T, s logstore.Store) {
		key := deltalog.ClassicCheckpointKey(10)
		data, err := s.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		chunks := columnChunks(t, data, "add")
		if len(chunks) == 0 {
			t.Fatal("no add column in the checkpoint")
		}
		for _, c := range chunks {
			for i := c.off; i < c.off+c.n; i++ {
				data[i] = 0xff
			}
		}
		if err := s.Put(ctx, key, data); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("commits left to rebuild from", func(t *testing.T) {
		s := corpusTable(t, cpTable)
		damage(t, s)
		snap, err := snapshot.Load(ctx, s, deltalog.Latest)
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		if cp, ok := snap.Segment().CheckpointVersion(); !ok || cp != 10 {
			t.Errorf("Load did not use the checkpoint: %d %v", cp, ok)
		}
		// The damage is found by the file replay, which rebuilds the
		// state at 10 from the commits.
		if got := livePaths(t, snap); !slices.Equal(got, want) {
			t.Errorf("files %v, want %v", got, want)
		}
		if n, err := snap.NumFiles(ctx); err != nil || n != int64(len(want)) {
			t.Errorf("NumFiles = %d, %v", n, err)
		}
	})
	t.Run("nothing to rebuild from", func(t *testing.T) {
		s := corpusTable(t, cpTable)
		damage(t, s)
		for v := range int64(10) {
			if err := s.Delete(ctx, deltalog.CommitKey(v)); err != nil {
				t.Fatal(err)
			}
		}
		snap, err := snapshot.Load(ctx, s, deltalog.Latest)
		if err != nil || snap.Version() != 14 {
			t.Fatalf("Load: %v", err)
		}
		// Txns and domains are other columns: still readable.
		for _, err := range snap.Txns(ctx) {
			if err != nil {
				t.Errorf("Txns: %v", err)
			}
		}
		for range 2 { // a failure is not cached: the second call fails the same way
			n, err := snap.NumFiles(ctx)
			var ce *deltaerr.CorruptError
			if !errors.Is(err, deltaerr.ErrCorrupt) || !errors.As(err, &ce) {
				t.Errorf("NumFiles = %d, %v; want a CorruptError", n, err)
			}
			seen := 0
			for f, err := range snap.Files(ctx) {
				seen++
				if f != nil || !errors.Is(err, deltaerr.ErrCorrupt) {
					t.Errorf("Files yielded %v, %v; want one ErrCorrupt", f, err)
				}
			}
			if seen != 1 {
				t.Errorf("Files yielded %d times, want once", seen)
			}
		}
	})
}

func TestUpdateKeepsLaziness(t *testing.T) {
	ctx := context.Background()
	const n = 2000
	store, _ := synthTable(t, n)
	lazySnap, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	replayed, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	livePaths(t, replayed)
	if err := synth.Commit(ctx, store, 11, n); err != nil {
		t.Fatal(err)
	}
	fresh, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	want := livePaths(t, fresh)

	for _, tc := range []struct {
		name string
		from *snapshot.Snapshot
		// checkpoint reads of Files on the updated snapshot
		filesRead bool
	}{
		{"from a snapshot that never read its files", lazySnap, true},
		{"from a snapshot that did", replayed, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store.Reset()
			up, err := tc.from.Update(ctx)
			if err != nil || up.Version() != 11 {
				t.Fatalf("Update: %v", err)
			}
			if c := store.Counts(); c != (countstore.Counts{Lists: 1}) {
				t.Errorf("Update read %+v; want one listing and no checkpoint read", c)
			}
			if got := livePaths(t, up); !slices.Equal(got, want) {
				t.Errorf("%d files after Update, want %d", len(got), len(want))
			}
			if c := store.Counts(); (c.Ranges > 0) != tc.filesRead {
				t.Errorf("Files on the updated snapshot read %+v of the checkpoint", c)
			}
		})
	}
}

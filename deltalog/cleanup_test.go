package deltalog_test

import (
	"bytes"
	"context"
	"errors"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/checkpoint"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/snapshot"
)

func TestLastCheckpointChecksum(t *testing.T) {
	tests := []struct {
		name, json, want string
		wantErr          bool
	}{
		{"spec vector", `{"k0":"'v 0'", "checksum": "adsaskfljadfkjadfkj", "k1":{"k2": 2, "k3": ["v3", [1, 2], {"k4": "v4", "k5": ["v5", "v6", "v7"]}]}}`,
			"6a92d155a59bf2eecbd4b4ec7fd1f875", false},
		{"checksum ignored", `{"k0":"'v 0'", "k1":{"k2": 2, "k3": ["v3", [1, 2], {"k4": "v4", "k5": ["v5", "v6", "v7"]}]}}`,
			"6a92d155a59bf2eecbd4b4ec7fd1f875", false},
		{"key order ignored", `{"k1":{"k3": ["v3", [1, 2], {"k5": ["v5", "v6", "v7"], "k4": "v4"}], "k2": 2}, "k0":"'v 0'"}`,
			"6a92d155a59bf2eecbd4b4ec7fd1f875", false},
		{"duplicate key", `{"a":1,"a":2}`, "", true},
		{"not an object", `[1,2]`, "", true},
		{"trailing data", `{"a":1} x`, "", true},
	}
	for _, tc := range tests {
		got, err := deltalog.LastCheckpointChecksum([]byte(tc.json))
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("%s: %q, %v; want %q, error %v", tc.name, got, err, tc.want, tc.wantErr)
		}
		if err != nil && !errors.Is(err, deltaerr.ErrCorrupt) {
			t.Errorf("%s: error %v is not ErrCorrupt", tc.name, err)
		}
	}
}

func corpus(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("GODELTA_TESTDATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "testdata")
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		if os.Getenv("CI") != "" {
			t.Fatalf("corpus missing at %s", dir)
		}
		t.Skipf("corpus missing at %s", dir)
	}
	return dir
}

// TestLastCheckpointChecksumCorpus checks every checksum Spark and others
// wrote in the corpus, and that a changed byte breaks it.
func TestLastCheckpointChecksumCorpus(t *testing.T) {
	checked := 0
	filepath.WalkDir(corpus(t), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.Name() != "_last_checkpoint" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil || !strings.Contains(string(data), `"checksum"`) {
			return nil
		}
		checked++
		if err := deltalog.VerifyLastCheckpoint(data); err != nil {
			t.Errorf("%s: %v", p, err)
		}
		bad := strings.Replace(string(data), `"version":`, `"version":1`, 1)
		if err := deltalog.VerifyLastCheckpoint([]byte(bad)); !errors.Is(err, deltaerr.ErrCorrupt) {
			t.Errorf("%s changed: %v, want ErrCorrupt", p, err)
		}
		return nil
	})
	if checked == 0 {
		t.Error("no _last_checkpoint with a checksum in the corpus")
	}
	t.Logf("%d checksums verified", checked)
}

func TestWriteLastCheckpoint(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	size := int64(1234)
	lc := deltalog.LastCheckpoint{Version: 7, Size: 12, SizeInBytes: &size, Checksum: "stale"}
	if err := deltalog.WriteLastCheckpoint(ctx, store, lc); err != nil {
		t.Fatal(err)
	}
	data, _ := store.Get(ctx, deltalog.LastCheckpointKey)
	if !strings.HasPrefix(string(data), `{"version":7,"size":12,`) {
		t.Errorf("written %s: want version and size first", data)
	}
	if err := deltalog.VerifyLastCheckpoint(data); err != nil {
		t.Error(err)
	}
	got, err := deltalog.ReadLastCheckpoint(ctx, store)
	if err != nil || got.Version != 7 || got.Size != 12 || *got.SizeInBytes != 1234 || got.Checksum == "stale" || got.Checksum == "" {
		t.Errorf("read back %+v, %v", got, err)
	}
	if err := deltalog.WriteLastCheckpoint(ctx, store, deltalog.LastCheckpoint{Version: -1}); !errors.Is(err, deltaerr.ErrInvalidArgument) {
		t.Errorf("negative version: %v", err)
	}
}

// ---- cleanup ----

var day = 24 * time.Hour

// logTable builds, in a local store, a table of n commits, commit v
// written at base + v days, with checkpoints at the versions in cps (V2
// with sidecars when v2 is set), and returns the store.
func logTable(t *testing.T, n int, cps []int64, v2 bool, base time.Time) (*logstore.Portable, string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	store, err := local.New(dir, local.WithoutSync())
	if err != nil {
		t.Fatal(err)
	}
	proto := actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}
	var conf map[string]string
	if v2 {
		proto = actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{actions.FeatureV2Checkpoint}, WriterFeatures: []string{actions.FeatureV2Checkpoint}}
		conf = map[string]string{"delta.checkpointPolicy": "v2"} // V2 checkpoints are written under the v2 policy
	}
	at := func(v int64) time.Time { return base.Add(time.Duration(v) * day) }
	for v := int64(0); v < int64(n); v++ {
		acts := []actions.Action{{Add: &actions.Add{Path: "f" + string(rune('a'+v)) + ".parquet", PartitionValues: map[string]string{}, Size: v, DataChange: true}}}
		if v == 0 {
			acts = append([]actions.Action{{Protocol: &proto}, {Metadata: &actions.Metadata{ID: "x", SchemaString: `{"type":"struct","fields":[]}`,
				Format: actions.Format{Provider: "parquet"}, Configuration: conf}}}, acts...)
		}
		data, _ := actions.EncodeCommit(acts)
		if err := store.PutIfAbsent(ctx, deltalog.CommitKey(v), data); err != nil {
			t.Fatal(err)
		}
		// Spark's .crc, and the Hadoop side files Spark writes on a
		// local file system beside the commit and the .crc.
		for _, k := range []string{deltalog.CRCKey(v), sideFile(deltalog.CommitKey(v)), sideFile(deltalog.CRCKey(v))} {
			if err := store.Put(ctx, k, []byte("{}")); err != nil {
				t.Fatal(err)
			}
		}
		for _, k := range []string{deltalog.CommitKey(v), deltalog.CRCKey(v)} {
			os.Chtimes(filepath.Join(dir, filepath.FromSlash(k)), at(v), at(v))
		}
		if !slices.Contains(cps, v) {
			continue
		}
		snap, err := snapshot.Load(ctx, store, v)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := checkpoint.Write(ctx, store, snap, checkpoint.WriteOptions{SidecarMinActions: 1}); err != nil {
			t.Fatal(err)
		}
	}
	// Every checkpoint gets the time of its version's commit, sidecars
	// that of the first.
	files, _ := deltalog.List(ctx, store, 0)
	for _, f := range files {
		if f.Kind.IsCheckpoint() {
			os.Chtimes(filepath.Join(dir, filepath.FromSlash(f.Key)), at(f.Version), at(f.Version))
		}
	}
	for _, k := range keys(t, store, deltalog.SidecarDir) {
		os.Chtimes(filepath.Join(dir, "_delta_log", filepath.FromSlash(k)), base, base)
	}
	return store, dir
}

// sideFile is the Hadoop checksum file of key: .<name>.crc beside it.
func sideFile(key string) string {
	i := strings.LastIndexByte(key, '/') + 1
	return key[:i] + "." + key[i:] + ".crc"
}

func keys(t *testing.T, store logstore.Store, dir string) []string {
	var out []string
	for obj, err := range store.List(context.Background(), dir, "") {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.TrimPrefix(obj.Key, deltalog.LogDir))
	}
	return out
}

func TestCleanup(t *testing.T) {
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC) // commit v at base + v days
	tests := []struct {
		name      string
		commits   int
		cps       []int64
		v2        bool
		now       time.Time
		retention time.Duration
		wantCP    int64 // oldest checkpoint kept; -1 for no cleanup
	}{
		// Cut-off 2024-01-06: commit 5 is the cut-off commit, checkpoint 4 kept.
		{"classic", 10, []int64{2, 4, 7}, false, base.Add(35*day + 3*time.Hour), 30 * day, 4},
		// A checkpoint exactly at the cut-off commit.
		{"checkpoint at cutoff", 10, []int64{2, 5, 7}, false, base.Add(35 * day), 30 * day, 5},
		// Nothing is old enough.
		{"young log", 10, []int64{2, 4}, false, base.Add(10 * day), 30 * day, -1},
		// Old commits but no checkpoint at or before the cut-off commit.
		{"no old checkpoint", 10, []int64{8}, false, base.Add(35 * day), 30 * day, -1},
		// Everything is old: the latest checkpoint is kept, with all after it.
		{"all expired", 10, []int64{3, 6}, false, base.Add(400 * day), 30 * day, 6},
		// V2 with sidecars: those of deleted checkpoints go, the kept ones stay.
		{"v2 sidecars", 10, []int64{2, 4, 7}, true, base.Add(35*day + 3*time.Hour), 30 * day, 4},
		{"default retention", 10, []int64{2, 4, 7}, false, base.Add(35*day + 3*time.Hour), 0, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			store, _ := logTable(t, tc.commits, tc.cps, tc.v2, base)
			beforeSidecars := keys(t, store, deltalog.SidecarDir)
			res, err := deltalog.Cleanup(ctx, store, deltalog.CleanupOptions{
				Retention:   tc.retention,
				Now:         func() time.Time { return tc.now },
				SidecarRefs: checkpoint.SidecarRefs(store),
				Verify:      checkpoint.Verify(store),
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.CheckpointVersion != tc.wantCP {
				t.Fatalf("kept checkpoint %d, want %d (deleted %v)", res.CheckpointVersion, tc.wantCP, res.Deleted)
			}
			files, _ := deltalog.List(ctx, store, 0)
			earliest := int64(0)
			if tc.wantCP >= 0 {
				earliest = tc.wantCP
			}
			for _, f := range files {
				if f.Version < earliest {
					t.Errorf("%s survived, before the kept checkpoint %d", f.Key, earliest)
				}
			}
			// Everything from the kept checkpoint on is intact, .crc
			// and side files included; those before it are gone.
			for v := int64(0); v < int64(tc.commits); v++ {
				for _, k := range []string{deltalog.CRCKey(v), sideFile(deltalog.CommitKey(v)), sideFile(deltalog.CRCKey(v))} {
					if _, err := store.Stat(ctx, k); (err == nil) != (v >= earliest) {
						t.Errorf("%s after cleanup down to %d: %v", k, earliest, err)
					}
				}
			}
			for v := earliest; v < int64(tc.commits); v++ {
				if _, err := store.Stat(ctx, deltalog.CommitKey(v)); err != nil {
					t.Errorf("commit %d: %v", v, err)
				}
				s, err := snapshot.Load(ctx, store, v)
				if err != nil {
					t.Errorf("load %d: %v", v, err)
					continue
				}
				if n, err := s.NumFiles(t.Context()); n != v+1 || err != nil {
					t.Errorf("version %d has %d files (%v), want %d", v, n, err, v+1)
				}
			}
			for v := int64(0); v < earliest; v++ {
				if _, err := snapshot.Load(ctx, store, v); !errors.Is(err, deltaerr.ErrVersionNotFound) {
					t.Errorf("load %d after cleanup: %v, want ErrVersionNotFound", v, err)
				}
			}
			// Sidecars: exactly those the remaining checkpoints name are left.
			var want []string
			for _, f := range files {
				if f.Kind.IsCheckpoint() {
					names, err := checkpoint.SidecarRefs(store)(ctx, []deltalog.LogFile{f})
					if err != nil {
						t.Fatal(err)
					}
					for _, n := range names {
						want = append(want, "_sidecars/"+n)
					}
				}
			}
			slices.Sort(want)
			got := keys(t, store, deltalog.SidecarDir)
			if tc.wantCP < 0 {
				want = beforeSidecars
			}
			if !slices.Equal(got, want) {
				t.Errorf("sidecars left %v, want %v", got, want)
			}
			if tc.v2 && len(got) == 0 {
				t.Error("no sidecars left")
			}
		})
	}
}

func TestCleanupKeepsYoungOrphanSidecars(t *testing.T) {
	ctx := context.Background()
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	store, dir := logTable(t, 6, []int64{2, 4}, true, base)
	now := base.Add(40 * day)
	young := deltalog.SidecarDir + "0f0e0d0c-0b0a-4908-8706-050403020100.parquet"
	old := deltalog.SidecarDir + "00010203-0405-4607-8809-0a0b0c0d0e0f.parquet"
	// Old, unreferenced, but not named as the protocol names sidecars
	// (<uuid>.parquet): not Cleanup's to delete. (Issue 19, item 11.)
	foreign := []string{deltalog.SidecarDir + "old.parquet", deltalog.SidecarDir + "00010203-0405-4607-8809-0a0b0c0d0e0f.parquet.bak",
		deltalog.SidecarDir + "00010203-0405-4607-8809-0a0b0c0d0e0f.json", deltalog.SidecarDir + "notes.txt"}
	for _, k := range append([]string{young, old}, foreign...) {
		if err := store.Put(ctx, k, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	os.Chtimes(filepath.Join(dir, filepath.FromSlash(young)), now.Add(-time.Hour), now.Add(-time.Hour))
	for _, k := range append([]string{old}, foreign...) {
		os.Chtimes(filepath.Join(dir, filepath.FromSlash(k)), now.Add(-3*day), now.Add(-3*day))
	}
	res, err := deltalog.Cleanup(ctx, store, deltalog.CleanupOptions{Now: func() time.Time { return now }, SidecarRefs: checkpoint.SidecarRefs(store), Verify: checkpoint.Verify(store)})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(res.Deleted, old) || slices.Contains(res.Deleted, young) {
		t.Errorf("deleted %v: want %s deleted and %s kept", res.Deleted, old, young)
	}
	for _, k := range foreign {
		if slices.Contains(res.Deleted, k) {
			t.Errorf("deleted %s, which is not a sidecar name", k)
		}
		if _, err := store.Stat(ctx, k); err != nil {
			t.Errorf("%s: %v", k, err)
		}
	}
	// Without SidecarRefs no sidecar is touched; DryRun deletes nothing.
	store, _ = logTable(t, 6, []int64{2, 4}, true, base)
	before := keys(t, store, deltalog.LogDir)
	res, err = deltalog.Cleanup(ctx, store, deltalog.CleanupOptions{Now: func() time.Time { return now }, DryRun: true, Verify: checkpoint.Verify(store)})
	if err != nil || len(res.Deleted) == 0 {
		t.Fatalf("dry run: %+v, %v", res, err)
	}
	for _, k := range res.Deleted {
		if strings.HasPrefix(k, deltalog.SidecarDir) {
			t.Errorf("%s planned for deletion without SidecarRefs", k)
		}
	}
	if after := keys(t, store, deltalog.LogDir); !slices.Equal(before, after) {
		t.Errorf("dry run changed the log: %v -> %v", before, after)
	}
	if _, err := deltalog.Cleanup(ctx, store, deltalog.CleanupOptions{Retention: -day, Verify: checkpoint.Verify(store)}); !errors.Is(err, deltaerr.ErrInvalidArgument) {
		t.Errorf("negative retention: %v", err)
	}
	// Without Verify no checkpoint can be relied on: refused, nothing deleted.
	if _, err := deltalog.Cleanup(ctx, store, deltalog.CleanupOptions{Now: func() time.Time { return now }}); !errors.Is(err, deltaerr.ErrInvalidArgument) {
		t.Errorf("no Verify: %v", err)
	}
	if after := keys(t, store, deltalog.LogDir); !slices.Equal(before, after) {
		t.Errorf("cleanup without Verify changed the log: %v -> %v", before, after)
	}
}

// A _last_checkpoint whose checksum does not match its content is refused
// as corrupt, so that readers fall back to listing.
func TestReadLastCheckpointChecksum(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	lc := deltalog.LastCheckpoint{Version: 10, Size: 3}
	data, err := deltalog.EncodeLastCheckpoint(lc)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Put(ctx, deltalog.LastCheckpointKey, data); err != nil {
		t.Fatal(err)
	}
	if got, err := deltalog.ReadLastCheckpoint(ctx, store); err != nil || got.Version != 10 {
		t.Fatalf("good hint: %+v, %v", got, err)
	}
	bad := bytes.Replace(data, []byte(`"version":10`), []byte(`"version":11`), 1)
	if bytes.Equal(bad, data) {
		t.Fatalf("test setup: no version in %s", data)
	}
	if err := store.Put(ctx, deltalog.LastCheckpointKey, bad); err != nil {
		t.Fatal(err)
	}
	if _, err := deltalog.ReadLastCheckpoint(ctx, store); !errors.Is(err, deltaerr.ErrCorrupt) {
		t.Fatalf("edited hint: %v, want ErrCorrupt", err)
	}
}

// hidingStore lists every object but one, as a directory listing that
// races a writer can.
type hidingStore struct {
	logstore.Store
	hide string
}

func (h hidingStore) List(ctx context.Context, dir, after string) iter.Seq2[logstore.ObjectInfo, error] {
	return func(yield func(logstore.ObjectInfo, error) bool) {
		for o, err := range h.Store.List(ctx, dir, after) {
			if err == nil && o.Key == h.hide {
				continue
			}
			if !yield(o, err) {
				return
			}
		}
	}
}

// A commit missing from a listing between two listed ones is looked up.
func TestListFillsGaps(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	for v := range 4 {
		if err := store.PutIfAbsent(ctx, deltalog.CommitKey(int64(v)), []byte("{}\n")); err != nil {
			t.Fatal(err)
		}
	}
	files, err := deltalog.List(ctx, hidingStore{store, deltalog.CommitKey(2)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var versions []int64
	for _, f := range files {
		versions = append(versions, f.Version)
	}
	if !slices.Equal(versions, []int64{0, 1, 2, 3}) {
		t.Fatalf("versions %v, want 0..3", versions)
	}
	// A commit that is really missing stays missing.
	if err := store.Delete(ctx, deltalog.CommitKey(2)); err != nil {
		t.Fatal(err)
	}
	files, err = deltalog.List(ctx, store, 0)
	if err != nil || len(files) != 3 {
		t.Fatalf("%d files, %v", len(files), err)
	}
}

// checkpointProtection, exception (a) of the RFC: a cleanup that truncates
// below the protected version creates no checkpoint there: the classic
// copy of a UUID checkpoint below it is not made, and the expired commits
// still go. At or above it, the copy is made as usual.
func TestCleanupCheckpointProtection(t *testing.T) {
	ctx := context.Background()
	base := time.Now().Add(-100 * day)
	for _, tc := range []struct {
		protected int64
		copies    int
	}{{0, 1}, {8, 1}, {10, 0}} {
		store, _ := logTable(t, 12, []int64{4, 8}, true, base)
		calls := 0
		res, err := deltalog.Cleanup(ctx, store, deltalog.CleanupOptions{
			Verify:          checkpoint.Verify(store),
			ClassicCopy:     func(context.Context, []deltalog.LogFile) error { calls++; return nil },
			ProtectedBefore: tc.protected,
		})
		if err != nil {
			t.Fatal(err)
		}
		if calls != tc.copies {
			t.Errorf("protected before %d: %d classic copies made, want %d", tc.protected, calls, tc.copies)
		}
		if len(res.Deleted) == 0 {
			t.Errorf("protected before %d: nothing deleted", tc.protected)
		}
	}
}

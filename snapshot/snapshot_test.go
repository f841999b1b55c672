package snapshot_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/snapshot"
)

func corpusTable(t *testing.T, rel string) *logstore.Portable {
	t.Helper()
	dir := os.Getenv("GODELTA_TESTDATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "testdata")
	}
	root := filepath.Join(dir, rel)
	if _, err := os.Stat(root); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("corpus table %s missing", root)
		}
		t.Skipf("corpus table %s missing", root)
	}
	s := memory.New()
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		return s.Put(context.Background(), filepath.ToSlash(rel), data)
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func paths(s *snapshot.Snapshot) []string {
	var out []string
	for f, err := range s.Files(context.Background()) {
		if err != nil {
			return []string{"error: " + err.Error()}
		}
		out = append(out, f.Path)
	}
	slices.Sort(out)
	return out
}

const cpTable = "golden/checkpoint/delta" // checkpoint at 10, commits 0..14

func TestCheckpointFallbacks(t *testing.T) {
	ctx := context.Background()
	want, err := snapshot.Load(ctx, corpusTable(t, cpTable), deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	if cp, ok := want.Segment().CheckpointVersion(); !ok || cp != 10 || want.Version() != 14 {
		t.Fatalf("baseline: version %d, checkpoint %d %v", want.Version(), cp, ok)
	}
	tests := []struct {
		name    string
		mutate  func(s *logstore.Portable)
		wantCP  bool // whether the checkpoint is still used
		wantErr error
	}{
		{"corrupt _last_checkpoint", func(s *logstore.Portable) {
			s.Put(ctx, deltalog.LastCheckpointKey, []byte("{not json"))
		}, true, nil},
		{"_last_checkpoint names a missing checkpoint", func(s *logstore.Portable) {
			s.Put(ctx, deltalog.LastCheckpointKey, []byte(`{"version":13,"size":3}`))
		}, true, nil},
		{"truncated checkpoint", func(s *logstore.Portable) {
			data, _ := s.Get(ctx, deltalog.ClassicCheckpointKey(10))
			s.Put(ctx, deltalog.ClassicCheckpointKey(10), data[:len(data)/2])
		}, false, nil},
		{"missing commit after the checkpoint", func(s *logstore.Portable) {
			s.Delete(ctx, deltalog.CommitKey(12))
		}, false, deltaerr.ErrMissingLogFile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := corpusTable(t, cpTable)
			tt.mutate(s)
			got, err := snapshot.Load(ctx, s, deltalog.Latest)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Version() != 14 || !slices.Equal(paths(got), paths(want)) {
				t.Errorf("version %d files %v; want 14, %v", got.Version(), paths(got), paths(want))
			}
			if _, ok := got.Segment().CheckpointVersion(); ok != tt.wantCP {
				t.Errorf("checkpoint used = %v, want %v", ok, tt.wantCP)
			}
		})
	}
}

func commit(t *testing.T, s *logstore.Portable, v int64, lines ...string) {
	t.Helper()
	if err := s.PutIfAbsent(context.Background(), deltalog.CommitKey(v), []byte(strings.Join(lines, "\n")+"\n")); err != nil {
		t.Fatal(err)
	}
}

const (
	meta   = `{"metaData":{"id":"t","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"a\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":[],"configuration":{}}}`
	proto1 = `{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}`
)

func TestUnsupportedReaderFeature(t *testing.T) {
	s := memory.New()
	commit(t, s, 0, `{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["futureFeature"],"writerFeatures":["futureFeature"]}}`, meta)
	_, err := snapshot.Load(context.Background(), s, deltalog.Latest)
	var fe *deltaerr.FeatureError
	if !errors.Is(err, deltaerr.ErrUnsupportedFeature) || !errors.As(err, &fe) || !strings.Contains(fe.Feature, "futureFeature") {
		t.Fatalf("err = %v, want a FeatureError naming futureFeature", err)
	}
	// An unknown writer-only feature does not stop readers.
	s2 := memory.New()
	commit(t, s2, 0, `{"protocol":{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["futureFeature"]}}`, meta)
	if _, err := snapshot.Load(context.Background(), s2, deltalog.Latest); err != nil {
		t.Fatalf("writer-only unknown feature: %v", err)
	}
}

func TestCorruptCommitAndMissingProtocol(t *testing.T) {
	s := memory.New()
	commit(t, s, 0, proto1, meta)
	commit(t, s, 1, `{"add":{"path":"x","partitionValues":{},"size":1,"modificationTime":1,"dataChange":true}}`, `{"add":`)
	if _, err := snapshot.Load(context.Background(), s, deltalog.Latest); !errors.Is(err, deltaerr.ErrCorrupt) {
		t.Fatalf("truncated commit line: %v, want ErrCorrupt", err)
	}
	s2 := memory.New()
	commit(t, s2, 0, meta)
	if _, err := snapshot.Load(context.Background(), s2, deltalog.Latest); !errors.Is(err, deltaerr.ErrCorrupt) {
		t.Fatalf("no protocol: %v, want ErrCorrupt", err)
	}
}

func add(path string) string {
	return `{"add":{"path":"` + path + `","partitionValues":{},"size":10,"modificationTime":1,"dataChange":true}}`
}

func TestReplayUpdateAndTimeTravel(t *testing.T) {
	ctx := context.Background()
	d := memory.NewDriver()
	s := logstore.NewPortable(d)
	clock := time.UnixMilli(1_000_000)
	d.SetClock(func() time.Time { return clock })
	commit(t, s, 0, proto1, meta, add("a"), `{"txn":{"appId":"app","version":1}}`)
	clock = clock.Add(time.Second)
	commit(t, s, 1, add("b"), `{"remove":{"path":"a","deletionTimestamp":5,"dataChange":true}}`,
		`{"domainMetadata":{"domain":"d","configuration":"{}","removed":false}}`)
	clock = clock.Add(time.Second)
	commit(t, s, 2, add("c"), `{"txn":{"appId":"app","version":2}}`)

	snap, err := snapshot.Load(ctx, s, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	nf, err1 := snap.NumFiles(ctx)
	size, err2 := snap.SizeInBytes(ctx)
	if got := paths(snap); !slices.Equal(got, []string{"b", "c"}) || nf != 2 || size != 20 || err1 != nil || err2 != nil {
		t.Errorf("files %v (%d, %d bytes; %v, %v)", got, nf, size, err1, err2)
	}
	if v, ok, err := snap.TxnVersion(ctx, "app"); !ok || v != 2 || err != nil {
		t.Errorf("txn = %d %v %v", v, ok, err)
	}
	if _, ok, err := snap.DomainMetadata(ctx, "d"); !ok || err != nil {
		t.Errorf("domain d missing: %v", err)
	}
	n := 0
	for _, err := range snap.Tombstones(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 1 {
		t.Errorf("%d tombstones, want 1", n)
	}

	// Update reads only the new commit and agrees with a fresh load.
	clock = clock.Add(time.Second)
	commit(t, s, 3, `{"remove":{"path":"b","deletionTimestamp":6,"dataChange":true}}`,
		`{"domainMetadata":{"domain":"d","configuration":"","removed":true}}`)
	up, err := snap.Update(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := snapshot.Load(ctx, s, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	if up.Version() != 3 || !slices.Equal(paths(up), paths(fresh)) || !slices.Equal(paths(up), []string{"c"}) {
		t.Errorf("update: v%d %v, fresh %v", up.Version(), paths(up), paths(fresh))
	}
	if _, ok, _ := up.DomainMetadata(ctx, "d"); ok {
		t.Error("removed domain still present")
	}
	if same, _ := up.Update(ctx); same != up {
		t.Error("Update with nothing new built a new snapshot")
	}

	// Time travel by version and by timestamp.
	v1, err := snapshot.Load(ctx, s, 1)
	if err != nil || !slices.Equal(paths(v1), []string{"b"}) {
		t.Fatalf("v1: %v %v", paths(v1), err)
	}
	for _, tc := range []struct {
		at   time.Time
		want int64
		err  error
	}{
		{time.UnixMilli(1_000_000), 0, nil},
		{time.UnixMilli(1_001_500), 1, nil},
		{time.UnixMilli(1_003_000), 3, nil},
		{time.UnixMilli(999_999), 0, deltaerr.ErrTimestampOutOfRange},
		{time.UnixMilli(1_003_001), 0, deltaerr.ErrTimestampOutOfRange},
	} {
		got, err := snapshot.VersionAtTimestamp(ctx, fresh, tc.at)
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("at %v: err %v, want %v", tc.at, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("at %v: version %d, %v; want %d", tc.at, got, err, tc.want)
		}
	}
	if _, err := snapshot.Load(ctx, s, 9); !errors.Is(err, deltaerr.ErrVersionNotFound) {
		t.Errorf("version 9: %v", err)
	}

	hist, err := snapshot.History(ctx, s, 2)
	if err != nil || len(hist) != 2 || hist[0].Version != 3 || hist[1].Version != 2 {
		t.Errorf("history: %+v %v", hist, err)
	}
}

func TestInCommitTimestamps(t *testing.T) {
	ctx := context.Background()
	d := memory.NewDriver()
	s := logstore.NewPortable(d)
	d.SetClock(func() time.Time { return time.UnixMilli(5) }) // file times say nothing
	ictMeta := strings.Replace(meta, `"configuration":{}`, `"configuration":{"delta.enableInCommitTimestamps":"true"}`, 1)
	commit(t, s, 0, `{"commitInfo":{"inCommitTimestamp":1000}}`, `{"protocol":{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["inCommitTimestamp"]}}`, ictMeta)
	commit(t, s, 1, `{"commitInfo":{"inCommitTimestamp":2000}}`, add("a"))
	commit(t, s, 2, `{"commitInfo":{"inCommitTimestamp":3000}}`, add("b"))
	snap, err := snapshot.Load(ctx, s, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Timestamp().UnixMilli() != 3000 {
		t.Errorf("Timestamp = %d, want 3000", snap.Timestamp().UnixMilli())
	}
	for at, want := range map[int64]int64{1000: 0, 2500: 1, 3000: 2} {
		if got, err := snapshot.VersionAtTimestamp(ctx, snap, time.UnixMilli(at)); err != nil || got != want {
			t.Errorf("at %d: %d, %v; want %d", at, got, err, want)
		}
	}
}

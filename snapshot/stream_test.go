package snapshot_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/checkpoint"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
)

// A snapshot that streams its files (StreamFiles, and the scans with a
// predicate that use it) must give exactly what the replay into a file
// table gives: the same files, in the same order, with the same actions.

// randomTable writes a log of random commits over a few partitions: new
// files, removes, re-adds of removed paths, deletion vectors replaced
// (a remove and an add of one path with another vector), removes of files
// never added, files without stats, and checkpoints at random versions. It
// returns the store and the latest version.
func randomTable(t *testing.T, rng *rand.Rand) (*logstore.Portable, int64) {
	t.Helper()
	ctx := context.Background()
	s := memory.New()
	sch := `{"type":"struct","fields":[{"name":"p","type":"string","nullable":true,"metadata":{}},{"name":"a","type":"long","nullable":true,"metadata":{}},{"name":"b","type":"string","nullable":true,"metadata":{}}]}`
	schJSON, _ := json.Marshal(sch)
	commit(t, s, 0,
		`{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["deletionVectors"],"writerFeatures":["deletionVectors"]}}`,
		`{"metaData":{"id":"r","format":{"provider":"parquet","options":{}},"schemaString":`+string(schJSON)+`,"partitionColumns":["p"],"configuration":{"delta.enableDeletionVectors":"true"}}}`)

	live := map[string]*actions.Add{} // by path: one live add per path here
	var gone []string                 // removed paths, for re-adds
	next := 0
	newAdd := func(path string) actions.Add {
		parts := []string{"0", "1", "2", ""}
		p := parts[rng.IntN(len(parts))]
		pv := map[string]string{"p": p}
		if p == "" && rng.IntN(2) == 0 {
			pv = map[string]string{} // absent: null too
		}
		if path == "" {
			path = fmt.Sprintf("p=%s/f%04d.parquet", p, next)
			next++
		}
		a := actions.Add{Path: path, PartitionValues: pv, Size: int64(rng.IntN(1000) + 1), ModificationTime: int64(next), DataChange: rng.IntN(2) == 0}
		if rng.IntN(6) > 0 {
			lo := rng.IntN(100)
			a.Stats = fmt.Sprintf(`{"numRecords":%d,"minValues":{"a":%d,"b":"%c"},"maxValues":{"a":%d,"b":"%c"},"nullCount":{"a":%d,"b":0}}`,
				rng.IntN(50)+1, lo, 'a'+rng.IntN(5), lo+rng.IntN(20), 'f'+rng.IntN(5), rng.IntN(2))
		}
		if rng.IntN(4) == 0 {
			card := int64(rng.IntN(5) + 1)
			a.DeletionVector = &actions.DeletionVector{StorageType: "u", PathOrInlineDv: fmt.Sprintf("ab^-aqEH.-t@S}K{vb[*k%05d", rng.IntN(100000)), SizeInBytes: 40, Cardinality: card}
		}
		if rng.IntN(8) == 0 {
			a.Tags = map[string]string{"t": "1"}
		}
		return a
	}
	line := func(a any) string {
		data, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	versions := 5 + rng.IntN(20)
	for v := 1; v <= versions; v++ {
		var lines []string
		used := map[string]bool{}
		for range 1 + rng.IntN(6) {
			switch op := rng.IntN(10); {
			case op < 4 || len(live) == 0: // a new file
				a := newAdd("")
				used[a.Path] = true
				live[a.Path] = &a
				lines = append(lines, line(actions.Action{Add: &a}))
			case op < 6: // a remove
				for _, p := range slices.Sorted(mapsKeys(live)) {
					if used[p] {
						continue
					}
					a := live[p]
					used[p] = true
					lines = append(lines, line(actions.Action{Remove: &actions.Remove{Path: a.Path, DataChange: true, DeletionVector: a.DeletionVector, Size: &a.Size}}))
					delete(live, p)
					gone = append(gone, p)
					break
				}
			case op < 7 && len(gone) > 0: // a re-add of a removed path
				p := gone[rng.IntN(len(gone))]
				if _, ok := live[p]; ok || used[p] {
					continue
				}
				a := newAdd(p)
				used[p] = true
				live[p] = &a
				lines = append(lines, line(actions.Action{Add: &a}))
			case op < 9: // a deletion vector replaced
				for _, p := range slices.Sorted(mapsKeys(live)) {
					if used[p] || rng.IntN(3) > 0 {
						continue
					}
					old := live[p]
					a := *old
					a.DeletionVector = &actions.DeletionVector{StorageType: "u", PathOrInlineDv: fmt.Sprintf("ab^-aqEH.-t@S}K{vb[*k%05d", 100000+v*10+len(lines)), SizeInBytes: 40, Cardinality: 7}
					used[p] = true
					lines = append(lines,
						line(actions.Action{Remove: &actions.Remove{Path: old.Path, DataChange: true, DeletionVector: old.DeletionVector}}),
						line(actions.Action{Add: &a}))
					live[p] = &a
					break
				}
			default: // a remove of a file never added
				lines = append(lines, line(actions.Action{Remove: &actions.Remove{Path: fmt.Sprintf("p=0/never%d.parquet", v), DataChange: true}}))
			}
		}
		lines = append(lines, fmt.Sprintf(`{"commitInfo":{"timestamp":%d,"operation":"WRITE"}}`, v))
		commit(t, s, int64(v), lines...)
		if rng.IntN(4) == 0 {
			snap, err := snapshot.Load(ctx, s, int64(v))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := checkpoint.Write(ctx, s, snap, checkpoint.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Half the tables get a log compaction file over some of their
	// commits, which a load after the checkpoint reads in their place.
	if rng.IntN(2) == 0 {
		from := 1 + rng.IntN(versions-1)
		to := from + 1 + rng.IntN(versions-from)
		snap, err := snapshot.Load(ctx, s, int64(versions))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := snap.WriteLogCompaction(ctx, int64(from), int64(to)); err != nil {
			t.Fatal(err)
		}
	}
	return s, int64(versions)
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// listed is the files of a sequence as JSON lines, in order.
func listed(t *testing.T, files func(func(*actions.Add, error) bool)) []string {
	t.Helper()
	var out []string
	for a, err := range files {
		if err != nil {
			t.Fatal(err)
		}
		data, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(data))
	}
	return out
}

// planned is the files a scan plans, as path and deletion vector, in order.
func planned(t *testing.T, snap *snapshot.Snapshot, pred string) []string {
	t.Helper()
	p, err := expr.Parse(pred)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scan.New(snap, scan.Options{Predicate: p})
	if err != nil {
		t.Fatalf("%s: %v", pred, err)
	}
	var out []string
	for f, err := range sc.Files(context.Background()) {
		if err != nil {
			t.Fatalf("%s: %v", pred, err)
		}
		out = append(out, f.Add.Path+" "+f.Add.DeletionVector.UniqueID())
	}
	return out
}

func TestStreamFilesMatchesReplay(t *testing.T) {
	ctx := context.Background()
	preds := []string{"p = '1'", "a > 50", "p = '2' AND a < 30", "a IS NULL", "p IS NULL OR a >= 90", "b = 'c'", "NOT (p = '0')"}
	keep := func(pv map[string]string) bool { return pv["p"] == "1" }
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 26))
		store, latest := randomTable(t, rng)
		for _, v := range []int64{latest, rng.Int64N(latest + 1)} {
			name := fmt.Sprintf("seed %d version %d", seed, v)
			warm, err := snapshot.Load(ctx, store, v)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := warm.NumFiles(ctx); err != nil {
				t.Fatal(err)
			}
			cold, err := snapshot.Load(ctx, store, v)
			if err != nil {
				t.Fatal(err)
			}
			want := listed(t, warm.Files(ctx))
			if got := listed(t, cold.StreamFiles(ctx, nil)); !slices.Equal(got, want) {
				t.Fatalf("%s: streamed\n%s\nreplayed\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if got, want := listed(t, cold.StreamFiles(ctx, keep)), listed(t, warm.FilesMatching(ctx, keep)); !slices.Equal(got, want) {
				t.Fatalf("%s: streamed with keep\n%s\nreplayed\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			// Once the snapshot has read its files, StreamFiles is FilesMatching.
			if got := listed(t, warm.StreamFiles(ctx, nil)); !slices.Equal(got, want) {
				t.Fatalf("%s: StreamFiles of a snapshot that read its files differs", name)
			}
			for _, pred := range preds {
				if got, want := planned(t, cold, pred), planned(t, warm, pred); !slices.Equal(got, want) {
					t.Fatalf("%s: %s: streamed plan %v, replayed plan %v", name, pred, got, want)
				}
			}
		}
	}
}

func TestStreamFilesStopsEarly(t *testing.T) {
	ctx := context.Background()
	store, _ := synthTable(t, 20_000)
	snap, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, err := range snap.StreamFiles(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 5000 {
			break
		}
	}
	// The stream read the checkpoint itself: the snapshot still has to
	// read its files, and gives them all.
	if got, err := snap.NumFiles(ctx); err != nil || got != 20_050 {
		t.Fatalf("NumFiles = %d, %v", got, err)
	}
}

func TestStreamFilesDamagedCheckpoint(t *testing.T) {
	ctx := context.Background()
	intact, err := snapshot.Load(ctx, corpusTable(t, cpTable), deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	want := listed(t, intact.Files(ctx))
	damage := func(t *testing.T, s logstore.Store) {
		key := deltalog.ClassicCheckpointKey(10)
		data, err := s.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range columnChunks(t, data, "add") {
			for i := c.off; i < c.off+c.n; i++ {
				data[i] = 0xff
			}
		}
		if err := s.Put(ctx, key, data); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("rebuilt", func(t *testing.T) {
		s := corpusTable(t, cpTable)
		damage(t, s)
		snap, err := snapshot.Load(ctx, s, deltalog.Latest)
		if err != nil {
			t.Fatal(err)
		}
		got := listed(t, snap.StreamFiles(ctx, nil))
		slices.Sort(got)
		w := slices.Sorted(slices.Values(want))
		if !slices.Equal(got, w) {
			t.Errorf("streamed %v, want %v", got, w)
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
		if err != nil {
			t.Fatal(err)
		}
		seen := 0
		for f, err := range snap.StreamFiles(ctx, nil) {
			seen++
			if f != nil || !errors.Is(err, deltaerr.ErrCorrupt) {
				t.Errorf("yielded %v, %v; want one ErrCorrupt", f, err)
			}
		}
		if seen != 1 {
			t.Errorf("yielded %d times, want once", seen)
		}
	})
}

// TestStreamedPlanCorpus plans scans with predicates on every table of the
// corpus, streamed and from the replayed file table, and compares them.
func TestStreamedPlanCorpus(t *testing.T) {
	ctx := context.Background()
	dir := os.Getenv("GODELTA_TESTDATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "testdata")
	}
	if _, err := os.Stat(dir); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("corpus %s missing", dir)
		}
		t.Skipf("corpus %s missing", dir)
	}
	var roots []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "_delta_log" {
			rel, _ := filepath.Rel(dir, filepath.Dir(p))
			roots = append(roots, rel)
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	tables, plans := 0, 0
	for _, rel := range roots {
		store := corpusTable(t, rel)
		warm, err := snapshot.Load(ctx, store, deltalog.Latest)
		if err != nil {
			continue // tables the corpus expects to fail are checked elsewhere
		}
		if _, err := warm.NumFiles(ctx); err != nil {
			continue
		}
		cold, err := snapshot.Load(ctx, store, deltalog.Latest)
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		var first *actions.Add
		for a, err := range warm.Files(ctx) {
			if err == nil {
				first = a
			}
			break
		}
		var preds []string
		for _, f := range cold.Schema().Fields {
			if _, ok := f.Type.(schema.PrimitiveType); !ok || strings.ContainsAny(f.Name, "`. ") {
				continue
			}
			preds = append(preds, fmt.Sprintf("%s IS NULL", f.Name), fmt.Sprintf("%s IS NOT NULL", f.Name))
			if first != nil && slices.Contains(cold.Metadata().PartitionColumns, f.Name) && f.Type == schema.String {
				if v, ok := first.PartitionValues[f.PhysicalName(cold.Config().ColumnMappingMode())]; ok {
					preds = append(preds, fmt.Sprintf("%s = '%s'", f.Name, strings.ReplaceAll(v, "'", "''")))
				}
			}
		}
		tables++
		for _, pred := range preds {
			p, err := expr.Parse(pred)
			if err != nil {
				continue
			}
			if _, err := scan.New(cold, scan.Options{Predicate: p}); err != nil {
				continue // a reader feature the data path lacks, say
			}
			plans++
			if got, want := planned(t, cold, pred), planned(t, warm, pred); !slices.Equal(got, want) {
				t.Errorf("%s: %s: streamed plan %v, replayed plan %v", rel, pred, got, want)
			}
		}
	}
	t.Logf("%d plans on %d corpus tables", plans, tables)
	if tables == 0 {
		t.Error("no corpus table loaded")
	}
}

// TestStreamAndTombstonesReadTheirColumns checks what each file accessor
// reads of the checkpoint: StreamFiles its add columns at every call,
// without the snapshot keeping them; Tombstones its remove columns only.
func TestStreamAndTombstonesReadTheirColumns(t *testing.T) {
	ctx := context.Background()
	store, data := synthTable(t, 40_000)
	addBytes := total(columnChunks(t, data, "add"))
	snap, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	read := func(f func()) int64 {
		store.Reset()
		f()
		return store.Counts().Bytes
	}
	stream := func() {
		for _, err := range snap.StreamFiles(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range 2 {
		if n := read(stream); n < addBytes/2 {
			t.Errorf("StreamFiles %d read %d bytes of the checkpoint; its add columns are %d", i, n, addBytes)
		}
	}
	if n := read(func() {
		if _, err := snap.NumFiles(ctx); err != nil {
			t.Fatal(err)
		}
	}); n < addBytes/2 {
		t.Errorf("NumFiles after StreamFiles read %d bytes: the stream kept the files", n)
	}
	if n := read(stream); n != 0 {
		t.Errorf("StreamFiles of a snapshot that read its files read %d bytes", n)
	}
	if n := read(func() {
		for _, err := range snap.Tombstones(ctx) {
			if err != nil {
				t.Fatal(err)
			}
		}
	}); n*4 > addBytes {
		t.Errorf("Tombstones read %d bytes; the add columns are %d", n, addBytes)
	}
}

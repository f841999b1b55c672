package checkpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/logstore"
)

// dirStore is a minimal read-mostly logstore.Store over a directory, for
// tests only.
type dirStore struct{ root string }

func (s dirStore) path(key string) (string, error) {
	if err := logstore.CheckKey(key); err != nil {
		return "", err
	}
	return filepath.Join(s.root, filepath.FromSlash(key)), nil
}

func mapErr(key string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w", key, logstore.ErrNotFound)
	}
	return err
}

func (s dirStore) Get(ctx context.Context, key string) ([]byte, error) {
	p, err := s.path(key)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	return b, mapErr(key, err)
}

func (s dirStore) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	p, err := s.path(key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, mapErr(key, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if off >= st.Size() {
		return nil, nil
	}
	n = min(n, st.Size()-off)
	b := make([]byte, n)
	_, err = f.ReadAt(b, off)
	return b, err
}

func (s dirStore) Stat(ctx context.Context, key string) (logstore.ObjectInfo, error) {
	p, err := s.path(key)
	if err != nil {
		return logstore.ObjectInfo{}, err
	}
	st, err := os.Stat(p)
	if err != nil {
		return logstore.ObjectInfo{}, mapErr(key, err)
	}
	return logstore.ObjectInfo{Key: key, Size: st.Size(), ModTime: st.ModTime()}, nil
}

func (s dirStore) List(ctx context.Context, dir, startAfter string) iter.Seq2[logstore.ObjectInfo, error] {
	return func(yield func(logstore.ObjectInfo, error) bool) {
		ents, _ := os.ReadDir(filepath.Join(s.root, filepath.FromSlash(dir)))
		for _, e := range ents {
			if e.IsDir() || dir+e.Name() <= startAfter {
				continue
			}
			info, _ := e.Info()
			if !yield(logstore.ObjectInfo{Key: dir + e.Name(), Size: info.Size(), ModTime: info.ModTime()}, nil) {
				return
			}
		}
	}
}

func (s dirStore) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	p, err := s.path(key)
	if err != nil {
		return err
	}
	if _, err := os.Stat(p); err == nil {
		return logstore.ErrAlreadyExists
	}
	return s.Put(ctx, key, data)
}

func (s dirStore) Put(ctx context.Context, key string, data []byte) error {
	p, err := s.path(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, data, 0o644)
}

func (s dirStore) Delete(ctx context.Context, key string) error {
	p, err := s.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func testdataDir(t testing.TB) string {
	dir := os.Getenv("GODELTA_TESTDATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "testdata")
	}
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("test corpus not found at %s", dir)
	}
	return dir
}

var (
	classicRe = regexp.MustCompile(`^(\d{20})\.checkpoint(?:\.(\d{10})\.(\d{10}))?\.parquet$`)
	v2Re      = regexp.MustCompile(`^(\d{20})\.checkpoint\.[0-9a-fA-F-]{36}\.(json|parquet)$`)
)

// corpusCheckpoint is one checkpoint of a corpus table.
type corpusCheckpoint struct {
	table   string // table root directory
	name    string // table path relative to the corpus, for messages
	version int64
	parts   []string // store keys
}

func findCheckpoints(t *testing.T, corpus string) []corpusCheckpoint {
	var out []corpusCheckpoint
	err := filepath.WalkDir(corpus, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() || d.Name() != "_delta_log" {
			return nil
		}
		table := filepath.Dir(p)
		rel, _ := filepath.Rel(corpus, table)
		ents, err := os.ReadDir(p)
		if err != nil {
			return err
		}
		multi := map[string][]string{}
		for _, e := range ents {
			n := e.Name()
			if e.IsDir() {
				continue
			}
			if m := classicRe.FindStringSubmatch(n); m != nil {
				multi[m[1]] = append(multi[m[1]], "_delta_log/"+n)
			} else if m := v2Re.FindStringSubmatch(n); m != nil {
				var v int64
				fmt.Sscan(m[1], &v)
				out = append(out, corpusCheckpoint{table, rel, v, []string{"_delta_log/" + n}})
			}
		}
		for vs, parts := range multi {
			var v int64
			fmt.Sscan(vs, &v)
			sort.Strings(parts) // part numbers are zero-padded
			out = append(out, corpusCheckpoint{table, rel, v, parts})
		}
		return filepath.SkipDir // do not descend into _sidecars
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].name != out[j].name {
			return out[i].name < out[j].name
		}
		return strings.Join(out[i].parts, ",") < strings.Join(out[j].parts, ",")
	})
	return out
}

type counts struct {
	protocol, metadata, add, remove, txn, domain, sidecar, cpMeta int
	adds                                                          []actions.Add
}

func readAll(t testing.TB, store logstore.Store, parts []string, want ActionSet) (counts, error) {
	var c counts
	err := Read(context.Background(), store, parts, want, func(batch []actions.Action) error {
		for _, a := range batch {
			n := 0
			if a.Protocol != nil {
				c.protocol++
				n++
			}
			if a.Metadata != nil {
				c.metadata++
				n++
			}
			if a.Add != nil {
				c.add++
				c.adds = append(c.adds, *a.Add)
				n++
			}
			if a.Remove != nil {
				c.remove++
				n++
			}
			if a.Txn != nil {
				c.txn++
				n++
			}
			if a.DomainMetadata != nil {
				c.domain++
				n++
			}
			if a.Sidecar != nil {
				c.sidecar++
				n++
			}
			if a.CheckpointMetadata != nil {
				c.cpMeta++
				n++
			}
			if n != 1 {
				t.Errorf("action with %d kinds set: %+v", n, a)
			}
		}
		return nil
	})
	return c, err
}

func TestCorpus(t *testing.T) {
	corpus := testdataDir(t)
	cps := findCheckpoints(t, corpus)
	if len(cps) == 0 {
		t.Fatal("no checkpoints found in corpus")
	}
	t.Logf("%d checkpoints", len(cps))
	for _, cp := range cps {
		t.Run(cp.name+"@"+filepath.Base(cp.parts[0]), func(t *testing.T) {
			store := dirStore{cp.table}
			c, err := readAll(t, store, cp.parts, All)
			if err != nil {
				t.Fatalf("Read(%v): %v", cp.parts, err)
			}
			if c.metadata != 1 {
				t.Errorf("got %d metaData actions, want 1", c.metadata)
			}
			wantProto := 1
			if strings.HasSuffix(cp.name, "deltalog-state-reconstruction-from-checkpoint-missing-protocol/delta") {
				wantProto = 0
			}
			if c.protocol != wantProto {
				t.Errorf("got %d protocol actions, want %d", c.protocol, wantProto)
			}
			for _, a := range c.adds {
				if a.Path == "" {
					t.Errorf("add with empty path")
					break
				}
			}
			if b, err := os.ReadFile(filepath.Join(cp.table, "_delta_log", "_last_checkpoint")); err == nil {
				var lc struct {
					Version       int64  `json:"version"`
					NumOfAddFiles *int64 `json:"numOfAddFiles"`
				}
				if json.Unmarshal(bytes.TrimSpace(b), &lc) == nil && lc.Version == cp.version && lc.NumOfAddFiles != nil {
					if int64(c.add) != *lc.NumOfAddFiles {
						t.Errorf("got %d adds, _last_checkpoint says %d", c.add, *lc.NumOfAddFiles)
					}
				}
			}
			t.Logf("protocol=%d metaData=%d add=%d remove=%d txn=%d domainMetadata=%d sidecar=%d checkpointMetadata=%d",
				c.protocol, c.metadata, c.add, c.remove, c.txn, c.domain, c.sidecar, c.cpMeta)

			// Projection.
			p, err := readAll(t, store, cp.parts, Protocol|Metadata)
			if err != nil {
				t.Fatalf("Read(Protocol|Metadata): %v", err)
			}
			if p.add != 0 || p.remove != 0 || p.txn != 0 || p.sidecar != 0 || p.cpMeta != 0 || p.domain != 0 {
				t.Errorf("Protocol|Metadata read yielded other kinds: %+v", p)
			}
			if p.protocol != c.protocol || p.metadata != c.metadata {
				t.Errorf("Protocol|Metadata read: protocol=%d metaData=%d, full read %d/%d", p.protocol, p.metadata, c.protocol, c.metadata)
			}
			a, err := readAll(t, store, cp.parts, Add)
			if err != nil {
				t.Fatalf("Read(Add): %v", err)
			}
			if a.add != c.add || a.protocol+a.metadata+a.remove+a.sidecar != 0 {
				t.Errorf("Add read: %d adds (full read %d), others %+v", a.add, c.add, a)
			}
		})
	}
}

func TestParsedStats(t *testing.T) {
	corpus := testdataDir(t)
	for _, table := range []string{
		"kernel-rs/v1-single-part-struct-stats-only",
		"kernel-rs/v1-multi-part-struct-stats-only",
		"kernel-rs/v2-classic-parquet-struct-stats-only",
		"kernel-rs/parsed-stats",
		"delta-rs/delta-1.2.1-only-struct-stats",
	} {
		t.Run(table, func(t *testing.T) {
			dir := filepath.Join(corpus, filepath.FromSlash(table))
			if _, err := os.Stat(dir); err != nil {
				t.Skipf("%s not in corpus", table)
			}
			var found bool
			for _, cp := range findCheckpoints(t, dir) {
				if cp.table != dir {
					continue
				}
				found = true
				c, err := readAll(t, dirStore{dir}, cp.parts, All)
				if err != nil {
					t.Fatal(err)
				}
				if c.add == 0 {
					t.Fatalf("%v: no adds", cp.parts)
				}
				for _, a := range c.adds {
					if !strings.Contains(a.Stats, "numRecords") {
						t.Fatalf("%v: add %s has stats %q", cp.parts, a.Path, a.Stats)
					}
					var v map[string]any
					if err := json.Unmarshal([]byte(a.Stats), &v); err != nil {
						t.Fatalf("stats %q is not JSON: %v", a.Stats, err)
					}
				}
				t.Logf("%v: first stats %s", cp.parts, c.adds[0].Stats)
			}
			if !found {
				t.Skip("no checkpoint in table")
			}
		})
	}
}

func someCorpusCheckpoint(t *testing.T) (string, []byte) {
	corpus := testdataDir(t)
	p := filepath.Join(corpus, "golden", "checkpoint", "delta", "_delta_log", "00000000000000000010.checkpoint.parquet")
	b, err := os.ReadFile(p)
	if err != nil {
		cps := findCheckpoints(t, corpus)
		for _, cp := range cps {
			if strings.HasSuffix(cp.parts[0], ".parquet") {
				p = filepath.Join(cp.table, filepath.FromSlash(cp.parts[0]))
				if b, err = os.ReadFile(p); err == nil {
					break
				}
			}
		}
	}
	if err != nil {
		t.Skip("no parquet checkpoint in corpus")
	}
	return p, b
}

func expectCorrupt(t *testing.T, what string, data []byte) {
	t.Helper()
	dir := t.TempDir()
	store := dirStore{dir}
	key := "_delta_log/00000000000000000001.checkpoint.parquet"
	if err := store.Put(context.Background(), key, data); err != nil {
		t.Fatal(err)
	}
	_, err := readAll(t, store, []string{key}, All)
	if err == nil {
		t.Errorf("%s: Read succeeded", what)
		return
	}
	var ce *deltaerr.CorruptError
	if !errors.Is(err, deltaerr.ErrCorrupt) || !errors.As(err, &ce) {
		t.Errorf("%s: got %v (%T), want a *deltaerr.CorruptError", what, err, err)
	}
}

func TestCorrupt(t *testing.T) {
	_, data := someCorpusCheckpoint(t)
	n := len(data)
	for _, l := range []int{0, 1, 3, 4, 8, 12, n / 4, n / 2, 3 * n / 4, n - 9, n - 8, n - 5, n - 4, n - 1} {
		if l < 0 || l >= n {
			continue
		}
		expectCorrupt(t, fmt.Sprintf("truncated to %d of %d bytes", l, n), data[:l])
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 20; i++ {
		b := make([]byte, 1+rng.Intn(4096))
		rng.Read(b)
		expectCorrupt(t, "random bytes", b)
		// Random bytes inside valid magic numbers.
		expectCorrupt(t, "random bytes between magic", slices.Concat([]byte("PAR1"), b, []byte("PAR1")))
		// A valid footer whose data was replaced by noise.
		if n > 8 {
			c := slices.Clone(data)
			rng.Read(c[4 : n/2])
			// This may or may not decode; it must not panic.
			checkNoPanic(t, c)
		}
	}
}

// checkNoPanic reads data and requires success or a CorruptError.
func checkNoPanic(t *testing.T, data []byte) {
	t.Helper()
	dir := t.TempDir()
	store := dirStore{dir}
	key := "_delta_log/00000000000000000001.checkpoint.parquet"
	if err := store.Put(context.Background(), key, data); err != nil {
		t.Fatal(err)
	}
	_, err := readAll(t, store, []string{key}, All)
	if err != nil && !errors.Is(err, deltaerr.ErrCorrupt) {
		t.Errorf("got %v, want nil or a CorruptError", err)
	}
}

func TestBitFlips(t *testing.T) {
	_, data := someCorpusCheckpoint(t)
	rng := rand.New(rand.NewSource(2))
	for i := 0; i < 200; i++ {
		c := slices.Clone(data)
		for j := 0; j < 1+rng.Intn(4); j++ {
			c[rng.Intn(len(c))] ^= byte(1 << rng.Intn(8))
		}
		checkNoPanic(t, c)
	}
}

func TestNotFound(t *testing.T) {
	store := dirStore{t.TempDir()}
	for _, key := range []string{"_delta_log/00000000000000000001.checkpoint.parquet", "_delta_log/00000000000000000001.checkpoint.0e42c15b-17cc-4918-990d-2ff76e918e4d.json"} {
		_, err := readAll(t, store, []string{key}, All)
		if !errors.Is(err, logstore.ErrNotFound) {
			t.Errorf("%s: got %v, want ErrNotFound", key, err)
		}
	}
}

func TestCallbackError(t *testing.T) {
	_, data := someCorpusCheckpoint(t)
	store := dirStore{t.TempDir()}
	key := "_delta_log/00000000000000000010.checkpoint.parquet"
	if err := store.Put(context.Background(), key, data); err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	err := Read(context.Background(), store, []string{key}, All, func([]actions.Action) error { return stop })
	if err != stop {
		t.Fatalf("got %v, want the callback's error", err)
	}
}

func TestCallbackPanic(t *testing.T) {
	store := dirStore{t.TempDir()}
	key := "_delta_log/00000000000000000100.checkpoint.parquet"
	if err := store.Put(context.Background(), key, writeCheckpoint(t, benchRows(5000))); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if r := recover(); r != "boom" {
			t.Fatalf("recovered %v, want the callback's panic", r)
		}
	}()
	Read(context.Background(), store, []string{key}, All, func([]actions.Action) error { panic("boom") })
	t.Fatal("Read returned")
}

func TestJSONAndSidecarPaths(t *testing.T) {
	store := dirStore{t.TempDir()}
	ctx := context.Background()
	key := "_delta_log/00000000000000000003.checkpoint.0e42c15b-17cc-4918-990d-2ff76e918e4d.json"
	lines := `{"checkpointMetadata":{"version":3}}
{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["v2Checkpoint"],"writerFeatures":["v2Checkpoint"]}}
{"metaData":{"id":"x","format":{"provider":"parquet","options":{}},"schemaString":"{}","partitionColumns":[],"configuration":{}}}
{"add":{"path":"a.parquet","partitionValues":{},"size":1,"modificationTime":1,"dataChange":false}}
{"txn":{"appId":"app","version":4}}
`
	if err := store.Put(ctx, key, []byte(lines)); err != nil {
		t.Fatal(err)
	}
	c, err := readAll(t, store, []string{key}, All)
	if err != nil {
		t.Fatal(err)
	}
	if c.protocol != 1 || c.metadata != 1 || c.add != 1 || c.txn != 1 || c.cpMeta != 1 {
		t.Errorf("got %+v", c)
	}
	c, err = readAll(t, store, []string{key}, Txn)
	if err != nil || c.txn != 1 || c.add+c.protocol+c.metadata+c.cpMeta != 0 {
		t.Errorf("Txn read: %+v, %v", c, err)
	}

	for _, bad := range []string{"../x.parquet", "a/b.parquet", "s3://bucket/x.parquet", "%2e%2e", "%2Fetc", "..", ""} {
		b, _ := json.Marshal(map[string]any{"sidecar": map[string]any{"path": bad, "sizeInBytes": 1, "modificationTime": 1}})
		k := "_delta_log/00000000000000000004.checkpoint.0e42c15b-17cc-4918-990d-2ff76e918e4e.json"
		if err := store.Put(ctx, k, append(b, '\n')); err != nil {
			t.Fatal(err)
		}
		_, err := readAll(t, store, []string{k}, All)
		if !errors.Is(err, deltaerr.ErrCorrupt) {
			t.Errorf("sidecar path %q: got %v, want CorruptError", bad, err)
		}
		// Not followed when no file actions are wanted.
		if _, err := readAll(t, store, []string{k}, Protocol|Metadata); err != nil {
			t.Errorf("sidecar path %q with Protocol|Metadata: %v", bad, err)
		}
	}
	if got, err := sidecarKey("x", "a%20b.parquet"); err != nil || got != "_delta_log/_sidecars/a b.parquet" {
		t.Errorf("sidecarKey: %q, %v", got, err)
	}
}

// Types for writing test checkpoints with parquet-go.

type tStats struct {
	NumRecords int64 `parquet:"numRecords,optional"`
	MinValues  *struct {
		ID   *int64     `parquet:"id,optional"`
		Day  *int32     `parquet:"day,optional,date"`
		When *time.Time `parquet:"when,optional,timestamp(millisecond)"`
		Name *string    `parquet:"name,optional"`
	} `parquet:"minValues,optional"`
	NullCount *struct {
		ID *int64 `parquet:"id,optional"`
	} `parquet:"nullCount,optional"`
}

type tAdd struct {
	Path             string            `parquet:"path"`
	PartitionValues  map[string]string `parquet:"partitionValues"`
	Size             int64             `parquet:"size"`
	ModificationTime int64             `parquet:"modificationTime"`
	DataChange       bool              `parquet:"dataChange"`
	Stats            *string           `parquet:"stats,optional"`
	Tags             map[string]string `parquet:"tags,optional"`
	StatsParsed      *tStats           `parquet:"stats_parsed,optional"`
}

type tMeta struct {
	ID     string `parquet:"id"`
	Format struct {
		Provider string            `parquet:"provider"`
		Options  map[string]string `parquet:"options"`
	} `parquet:"format"`
	SchemaString     string            `parquet:"schemaString"`
	PartitionColumns []string          `parquet:"partitionColumns,list"`
	Configuration    map[string]string `parquet:"configuration"`
	CreatedTime      *int64            `parquet:"createdTime,optional"`
}

type tProto struct {
	MinReaderVersion int32    `parquet:"minReaderVersion"`
	MinWriterVersion int32    `parquet:"minWriterVersion"`
	WriterFeatures   []string `parquet:"writerFeatures,list"`
}

type tRow struct {
	Add      *tAdd   `parquet:"add,optional"`
	MetaData *tMeta  `parquet:"metaData,optional"`
	Protocol *tProto `parquet:"protocol,optional"`
	Extra    *string `parquet:"someFutureColumn,optional"`
}

func writeCheckpoint(t testing.TB, rows []tRow, opts ...parquet.WriterOption) []byte {
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[tRow](&buf, opts...)
	for i := 0; i < len(rows); i += 1000 {
		if _, err := w.Write(rows[i:min(i+1000, len(rows))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func headRows() []tRow {
	m := &tMeta{ID: "id-1", SchemaString: `{"type":"struct","fields":[]}`, PartitionColumns: []string{"p"}, Configuration: map[string]string{"k": "v"}}
	m.Format.Provider = "parquet"
	return []tRow{{Protocol: &tProto{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{"appendOnly"}}}, {MetaData: m}}
}

func TestWrittenCheckpoint(t *testing.T) {
	rows := headRows()
	day := int32(18629) // 2021-01-02
	when := time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC)
	id, name := int64(-5), "x"
	sp := &tStats{NumRecords: 7}
	sp.MinValues = &struct {
		ID   *int64     `parquet:"id,optional"`
		Day  *int32     `parquet:"day,optional,date"`
		When *time.Time `parquet:"when,optional,timestamp(millisecond)"`
		Name *string    `parquet:"name,optional"`
	}{&id, &day, &when, &name}
	stats := `{"numRecords":3}`
	rows = append(rows,
		tRow{Add: &tAdd{Path: "p=1/a.parquet", PartitionValues: map[string]string{"p": "1"}, Size: 10, ModificationTime: 20, StatsParsed: sp}},
		tRow{Add: &tAdd{Path: "p=2/b.parquet", PartitionValues: map[string]string{"p": "2"}, Size: 11, Stats: &stats, Tags: map[string]string{"t": "u"}}},
	)
	store := dirStore{t.TempDir()}
	key := "_delta_log/00000000000000000002.checkpoint.parquet"
	if err := store.Put(context.Background(), key, writeCheckpoint(t, rows)); err != nil {
		t.Fatal(err)
	}
	var got []actions.Action
	err := Read(context.Background(), store, []string{key}, All, func(b []actions.Action) error {
		got = append(got, b...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("got %d actions", len(got))
	}
	if p := got[0].Protocol; p == nil || p.MinWriterVersion != 7 || !slices.Equal(p.WriterFeatures, []string{"appendOnly"}) || p.ReaderFeatures != nil {
		t.Errorf("protocol: %+v", got[0].Protocol)
	}
	if m := got[1].Metadata; m == nil || m.ID != "id-1" || m.Format.Provider != "parquet" || !slices.Equal(m.PartitionColumns, []string{"p"}) || m.Configuration["k"] != "v" || m.CreatedTime != nil {
		t.Errorf("metaData: %+v", got[1].Metadata)
	}
	a := got[2].Add
	if a == nil || a.Path != "p=1/a.parquet" || a.PartitionValues["p"] != "1" || a.Size != 10 || a.ModificationTime != 20 {
		t.Fatalf("add: %+v", a)
	}
	var st map[string]any
	if err := json.Unmarshal([]byte(a.Stats), &st); err != nil {
		t.Fatalf("stats %q: %v", a.Stats, err)
	}
	mv, _ := st["minValues"].(map[string]any)
	if st["numRecords"] != float64(7) || mv["id"] != float64(-5) || mv["day"] != "2021-01-02" || mv["when"] != "2021-01-01T00:00:00.000Z" || mv["name"] != "x" {
		t.Errorf("synthesized stats %s", a.Stats)
	}
	if b := got[3].Add; b == nil || b.Stats != stats || b.Tags["t"] != "u" {
		t.Errorf("second add: %+v", b)
	}
}

func benchRows(n int) []tRow {
	rows := headRows()
	for i := 0; i < n; i++ {
		s := fmt.Sprintf(`{"numRecords":%d,"minValues":{"id":%d,"name":"a%d"},"maxValues":{"id":%d,"name":"z%d"},"nullCount":{"id":0,"name":0}}`, 100+i, i, i, i+100, i)
		rows = append(rows, tRow{Add: &tAdd{
			Path:             fmt.Sprintf("part-%05d-%08x-c000.snappy.parquet", i, i*7919),
			PartitionValues:  map[string]string{"p": fmt.Sprint(i % 10)},
			Size:             int64(1000 + i),
			ModificationTime: 1700000000000 + int64(i),
			DataChange:       false,
			Stats:            &s,
		}})
	}
	return rows
}

func BenchmarkRead100k(b *testing.B) {
	data := writeCheckpoint(b, benchRows(100_000), parquet.Compression(&parquet.Snappy))
	store := dirStore{b.TempDir()}
	key := "_delta_log/00000000000000000100.checkpoint.parquet"
	if err := store.Put(context.Background(), key, data); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		n := 0
		err := Read(context.Background(), store, []string{key}, All, func(batch []actions.Action) error {
			for i := range batch {
				if batch[i].Add != nil {
					n++
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		if n != 100_000 {
			b.Fatalf("got %d adds", n)
		}
	}
}

func BenchmarkRead100kProtocolMetadata(b *testing.B) {
	data := writeCheckpoint(b, benchRows(100_000), parquet.Compression(&parquet.Snappy))
	store := dirStore{b.TempDir()}
	key := "_delta_log/00000000000000000100.checkpoint.parquet"
	if err := store.Put(context.Background(), key, data); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if err := Read(context.Background(), store, []string{key}, Protocol|Metadata, func([]actions.Action) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}

type tAddParsedPV struct {
	Path                  string `parquet:"path"`
	Size                  int64  `parquet:"size"`
	PartitionValuesParsed *struct {
		P *int64  `parquet:"p,optional"`
		D *int32  `parquet:"d,optional,date"`
		S *string `parquet:"s,optional"`
	} `parquet:"partitionValues_parsed,optional"`
}

func TestPartitionValuesParsed(t *testing.T) {
	type row struct {
		Add *tAddParsedPV `parquet:"add,optional"`
	}
	p, d := int64(42), int32(0)
	a := &tAddParsedPV{Path: "x.parquet", Size: 1}
	a.PartitionValuesParsed = &struct {
		P *int64  `parquet:"p,optional"`
		D *int32  `parquet:"d,optional,date"`
		S *string `parquet:"s,optional"`
	}{&p, &d, nil}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[row](&buf)
	if _, err := w.Write([]row{{}, {Add: a}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	store := dirStore{t.TempDir()}
	key := "_delta_log/00000000000000000001.checkpoint.parquet"
	if err := store.Put(context.Background(), key, buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	c, err := readAll(t, store, []string{key}, All)
	if err != nil {
		t.Fatal(err)
	}
	if c.add != 1 {
		t.Fatalf("got %d adds", c.add)
	}
	pv := c.adds[0].PartitionValues
	if len(pv) != 3 || pv["p"] != "42" || pv["d"] != "1970-01-01" || pv["s"] != "" {
		t.Errorf("partition values %v", pv)
	}
}

package checkpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/logstore"
)

// The corpus tests read every checkpoint of the shared corpus of real
// tables written by Spark, Databricks, delta-rs and kernel-rs, and check
// what they decode to against the table's own log: the _last_checkpoint
// counts, and the state that replaying the JSON commits up to the
// checkpoint's version gives.

var (
	classicName = regexp.MustCompile(`^(\d{20})\.checkpoint\.parquet$`)
	partName    = regexp.MustCompile(`^(\d{20})\.checkpoint\.(\d{10})\.(\d{10})\.parquet$`)
	v2Name      = regexp.MustCompile(`^(\d{20})\.checkpoint\.[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\.(json|parquet)$`)
)

// corpusCheckpoint is one checkpoint of a corpus table.
type corpusCheckpoint struct {
	table   string   // table root directory
	name    string   // table root relative to the corpus
	version int64    // version the checkpoint is of
	parts   []string // store keys, in part order
}

func (c corpusCheckpoint) String() string { return c.name + "@" + path0(c.parts) }

func path0(parts []string) string {
	s := filepath.Base(parts[0])
	if len(parts) > 1 {
		s += fmt.Sprintf("+%d parts", len(parts)-1)
	}
	return s
}

// findCheckpoints returns every checkpoint of every table under dir, and
// every sidecar file (as store keys of their tables).
func findCheckpoints(t *testing.T, corpus, dir string) (cps []corpusCheckpoint, sidecars []corpusCheckpoint) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() || d.Name() != "_delta_log" {
			return nil
		}
		table := filepath.Dir(p)
		name := rel(corpus, table)
		ents, err := os.ReadDir(p)
		if err != nil {
			return err
		}
		type set struct {
			version int64
			total   int
			parts   []string
		}
		multi := map[string]*set{}
		for _, e := range ents {
			n := e.Name()
			if e.IsDir() {
				if n == "_sidecars" {
					side, err := os.ReadDir(filepath.Join(p, n))
					if err != nil {
						return err
					}
					for _, s := range side {
						if strings.HasSuffix(s.Name(), ".parquet") {
							sidecars = append(sidecars, corpusCheckpoint{table, name, -1, []string{"_delta_log/_sidecars/" + s.Name()}})
						}
					}
				}
				continue
			}
			if m := classicName.FindStringSubmatch(n); m != nil {
				v, _ := strconv.ParseInt(m[1], 10, 64)
				cps = append(cps, corpusCheckpoint{table, name, v, []string{"_delta_log/" + n}})
			} else if m := partName.FindStringSubmatch(n); m != nil {
				v, _ := strconv.ParseInt(m[1], 10, 64)
				total, _ := strconv.Atoi(m[3])
				k := m[1] + "/" + m[3]
				if multi[k] == nil {
					multi[k] = &set{version: v, total: total}
				}
				multi[k].parts = append(multi[k].parts, "_delta_log/"+n)
			} else if m := v2Name.FindStringSubmatch(n); m != nil {
				v, _ := strconv.ParseInt(m[1], 10, 64)
				cps = append(cps, corpusCheckpoint{table, name, v, []string{"_delta_log/" + n}})
			}
		}
		for _, s := range multi {
			if len(s.parts) != s.total {
				t.Logf("%s: incomplete multi-part checkpoint %v", name, s.parts)
				continue
			}
			sort.Strings(s.parts) // part numbers are zero-padded
			cps = append(cps, corpusCheckpoint{table, name, s.version, s.parts})
		}
		return filepath.SkipDir
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(cps, func(i, j int) bool { return cps[i].String() < cps[j].String() })
	return cps, sidecars
}

// decoded is what a read yielded, by kind.
type decoded struct {
	protocols []*actions.Protocol
	metadata  []*actions.Metadata
	adds      []*actions.Add
	removes   []*actions.Remove
	txns      []*actions.Txn
	domains   []*actions.DomainMetadata
	sidecars  []*actions.Sidecar
	cpMeta    []*actions.CheckpointMetadata
	batches   int
}

func (d *decoded) total() int {
	return len(d.protocols) + len(d.metadata) + len(d.adds) + len(d.removes) + len(d.txns) +
		len(d.domains) + len(d.sidecars) + len(d.cpMeta)
}

func (d *decoded) kinds() ActionSet {
	var s ActionSet
	for _, k := range []struct {
		n   int
		set ActionSet
	}{{len(d.protocols), Protocol}, {len(d.metadata), Metadata}, {len(d.adds), Add}, {len(d.removes), Remove},
		{len(d.txns), Txn}, {len(d.domains), DomainMetadata}, {len(d.sidecars), Sidecar}, {len(d.cpMeta), CheckpointMetadata}} {
		if k.n > 0 {
			s |= k.set
		}
	}
	return s
}

// readAll reads a checkpoint and sorts what it yields by kind, checking
// that each action has exactly one kind set.
func readAll(t testing.TB, store logstore.Store, parts []string, want ActionSet) (*decoded, error) {
	t.Helper()
	var d decoded
	err := Read(context.Background(), store, parts, want, func(batch []actions.Action) error {
		d.batches++
		if len(batch) == 0 || len(batch) > batchSize {
			t.Errorf("batch of %d actions", len(batch))
		}
		for _, a := range batch {
			n := 0
			if a.Protocol != nil {
				d.protocols = append(d.protocols, a.Protocol)
				n++
			}
			if a.Metadata != nil {
				d.metadata = append(d.metadata, a.Metadata)
				n++
			}
			if a.Add != nil {
				d.adds = append(d.adds, a.Add)
				n++
			}
			if a.Remove != nil {
				d.removes = append(d.removes, a.Remove)
				n++
			}
			if a.Txn != nil {
				d.txns = append(d.txns, a.Txn)
				n++
			}
			if a.DomainMetadata != nil {
				d.domains = append(d.domains, a.DomainMetadata)
				n++
			}
			if a.Sidecar != nil {
				d.sidecars = append(d.sidecars, a.Sidecar)
				n++
			}
			if a.CheckpointMetadata != nil {
				d.cpMeta = append(d.cpMeta, a.CheckpointMetadata)
				n++
			}
			if n != 1 {
				t.Errorf("action with %d kinds set: %+v", n, a)
			}
		}
		return nil
	})
	return &d, err
}

// lastCheckpoint is the part of _last_checkpoint the tests check.
type lastCheckpoint struct {
	Version       int64  `json:"version"`
	Size          int64  `json:"size"`
	Parts         *int   `json:"parts"`
	NumOfAddFiles *int64 `json:"numOfAddFiles"`
}

func TestCorpus(t *testing.T) {
	corpus := corpusDir(t)
	cps, sidecars := findCheckpoints(t, corpus, corpus)
	if len(cps) < 40 {
		t.Fatalf("found only %d checkpoints in the corpus", len(cps))
	}
	t.Logf("%d checkpoints, %d sidecar files", len(cps), len(sidecars))
	for _, cp := range cps {
		t.Run(cp.String(), func(t *testing.T) {
			store := newRecordingStore(dirStore{cp.table})
			d, err := readAll(t, store, cp.parts, All)
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			t.Logf("protocol=%d metaData=%d add=%d remove=%d txn=%d domainMetadata=%d sidecar=%d checkpointMetadata=%d in %d batches",
				len(d.protocols), len(d.metadata), len(d.adds), len(d.removes), len(d.txns), len(d.domains), len(d.sidecars), len(d.cpMeta), d.batches)

			wantProtocols := 1
			if strings.Contains(cp.name, "checkpoint-missing-protocol") {
				wantProtocols = 0
			}
			if len(d.protocols) != wantProtocols || len(d.metadata) != 1 {
				t.Errorf("got %d protocol and %d metaData actions, want %d and 1", len(d.protocols), len(d.metadata), wantProtocols)
			}
			for _, a := range d.adds {
				if a.Path == "" || a.PartitionValues == nil {
					t.Errorf("add %+v: no path or partition values", a)
				}
			}
			for _, r := range d.removes {
				if r.Path == "" {
					t.Errorf("remove %+v: no path", r)
				}
			}
			if strings.HasSuffix(cp.parts[0], ".json") || len(d.sidecars) > 0 || len(d.cpMeta) > 0 {
				if len(d.cpMeta) != 1 {
					t.Errorf("V2 checkpoint with %d checkpointMetadata actions", len(d.cpMeta))
				} else if d.cpMeta[0].Version != cp.version {
					t.Errorf("checkpointMetadata version %d, want %d", d.cpMeta[0].Version, cp.version)
				}
			}
			checkLastCheckpoint(t, cp, d)
			checkAgainstLog(t, cp, d)
			checkProjection(t, cp, d)
		})
	}
	for _, sc := range sidecars {
		t.Run(sc.String(), func(t *testing.T) {
			d, err := readAll(t, dirStore{sc.table}, sc.parts, All)
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if k := d.kinds(); k&^(Add|Remove) != 0 || len(d.adds) == 0 {
				t.Errorf("sidecar yielded %d adds, and kinds %b", len(d.adds), k)
			}
		})
	}
}

// checkLastCheckpoint compares the counts with _last_checkpoint, when it
// describes this checkpoint. Only Spark writes numOfAddFiles, and some
// other writers' size counts something else, so size is checked only when
// numOfAddFiles is there.
func checkLastCheckpoint(t *testing.T, cp corpusCheckpoint, d *decoded) {
	b, err := os.ReadFile(filepath.Join(cp.table, "_delta_log", "_last_checkpoint"))
	if err != nil {
		return
	}
	var lc lastCheckpoint
	if json.Unmarshal(bytes.TrimSpace(b), &lc) != nil || lc.Version != cp.version {
		return
	}
	if lc.Parts != nil && *lc.Parts != len(cp.parts) {
		return // another checkpoint of the same version
	}
	if lc.NumOfAddFiles == nil {
		if int64(d.total()) != lc.Size {
			t.Logf("%d actions, _last_checkpoint (not written by Spark) says size %d", d.total(), lc.Size)
		}
		return
	}
	if int64(len(d.adds)) != *lc.NumOfAddFiles {
		t.Errorf("%d adds, _last_checkpoint says numOfAddFiles %d", len(d.adds), *lc.NumOfAddFiles)
	}
	if int64(d.total()) != lc.Size {
		t.Errorf("%d actions, _last_checkpoint says size %d", d.total(), lc.Size)
	}
}

// replayed is the state at a version from replaying the JSON commits.
type replayed struct {
	protocol *actions.Protocol
	metadata *actions.Metadata
	adds     map[string]*actions.Add // by path and deletion vector
	txns     map[string]int64
}

// replay replays commits 0 to version, or returns nil when one of them is
// missing.
func replay(t *testing.T, table string, version int64) *replayed {
	r := &replayed{adds: map[string]*actions.Add{}, txns: map[string]int64{}}
	for v := int64(0); v <= version; v++ {
		name := fmt.Sprintf("%020d.json", v)
		data, err := os.ReadFile(filepath.Join(table, "_delta_log", name))
		if err != nil {
			return nil
		}
		acts, err := actions.DecodeCommit(name, data)
		if err != nil {
			t.Fatalf("commit %s: %v", name, err)
		}
		for _, a := range acts {
			switch {
			case a.Protocol != nil:
				r.protocol = a.Protocol
			case a.Metadata != nil:
				r.metadata = a.Metadata
			case a.Add != nil:
				r.adds[fileKey(a.Add.Path, a.Add.DeletionVector)] = a.Add
			case a.Remove != nil:
				delete(r.adds, fileKey(a.Remove.Path, a.Remove.DeletionVector))
			case a.Txn != nil:
				r.txns[a.Txn.AppID] = a.Txn.Version
			}
		}
	}
	return r
}

func fileKey(path string, dv *actions.DeletionVector) string { return path + "\x00" + dv.UniqueID() }

// checkAgainstLog compares the checkpoint with the state the JSON commits
// replay to, when all of them are there.
func checkAgainstLog(t *testing.T, cp corpusCheckpoint, d *decoded) {
	want := replay(t, cp.table, cp.version)
	if want == nil {
		t.Logf("not every commit up to %d is in the log: no replay check", cp.version)
		return
	}
	if len(d.protocols) == 1 && !reflect.DeepEqual(normProtocol(d.protocols[0]), normProtocol(want.protocol)) {
		t.Errorf("protocol %+v, log says %+v", d.protocols[0], want.protocol)
	}
	if len(d.metadata) == 1 && !reflect.DeepEqual(normMetadata(d.metadata[0]), normMetadata(want.metadata)) {
		// A few test tables have a checkpoint made by a script, not from
		// the log next to it.
		t.Logf("metaData differs from the log's: the checkpoint was not written from this log, no replay check\n%+v\nlog says\n%+v", *d.metadata[0], *want.metadata)
		return
	}
	got := map[string]*actions.Add{}
	for _, a := range d.adds {
		got[fileKey(a.Path, a.DeletionVector)] = a
	}
	if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want.adds))) {
		t.Errorf("adds %v\nlog replays to %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want.adds)))
		return
	}
	for k, g := range got {
		w := want.adds[k]
		if g.Size != w.Size || g.ModificationTime != w.ModificationTime || !equalStrings(g.PartitionValues, w.PartitionValues) ||
			!equalStrings(g.Tags, w.Tags) || !reflect.DeepEqual(g.DeletionVector, w.DeletionVector) ||
			!reflect.DeepEqual(g.BaseRowID, w.BaseRowID) || !reflect.DeepEqual(g.DefaultRowCommitVersion, w.DefaultRowCommitVersion) ||
			g.ClusteringProvider != w.ClusteringProvider {
			t.Errorf("add %s:\n%+v\nlog has\n%+v", g.Path, *g, *w)
		}
		if w.Stats != "" && !sameStats(t, g.Stats, w.Stats) {
			t.Errorf("add %s: stats\n%s\nlog has\n%s", g.Path, g.Stats, w.Stats)
		}
	}
	gotTxns := map[string]int64{}
	for _, x := range d.txns {
		gotTxns[x.AppID] = x.Version
	}
	if !maps.Equal(gotTxns, want.txns) {
		t.Errorf("txns %v, log says %v", gotTxns, want.txns)
	}
}

// equalStrings compares string maps, nil and empty alike.
func equalStrings(a, b map[string]string) bool { return maps.Equal(a, b) }

func normProtocol(p *actions.Protocol) actions.Protocol {
	if p == nil {
		return actions.Protocol{}
	}
	q := *p
	if len(q.ReaderFeatures) == 0 {
		q.ReaderFeatures = nil
	}
	if len(q.WriterFeatures) == 0 {
		q.WriterFeatures = nil
	}
	return q
}

func normMetadata(m *actions.Metadata) actions.Metadata {
	if m == nil {
		return actions.Metadata{}
	}
	n := *m
	if len(n.PartitionColumns) == 0 {
		n.PartitionColumns = nil
	}
	if len(n.Configuration) == 0 {
		n.Configuration = nil
	}
	if len(n.Format.Options) == 0 {
		n.Format.Options = nil
	}
	return n
}

// sameStats compares two JSON statistics strings as values: numbers as
// numbers, timestamps as instants, and a field null or missing in one
// alike.
func sameStats(t *testing.T, got, want string) bool {
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Errorf("stats %q: %v", got, err)
		return false
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		return true // the log's own stats are not JSON: nothing to compare
	}
	return sameJSON(g, w)
}

func sameJSON(g, w any) bool {
	switch w := w.(type) {
	case map[string]any:
		gm, ok := g.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			gv, ok := gm[k]
			if !ok {
				if wv == nil {
					continue
				}
				return false
			}
			if !sameJSON(gv, wv) {
				return false
			}
		}
		for k, gv := range gm {
			if _, ok := w[k]; !ok && gv != nil {
				return false
			}
		}
		return true
	case float64:
		gf, ok := g.(float64)
		return ok && (gf == w || (w != 0 && (gf-w)/w < 1e-6 && (w-gf)/w < 1e-6))
	case string:
		gs, ok := g.(string)
		if !ok {
			return false
		}
		if gs == w {
			return true
		}
		gt, err1 := parseTime(gs)
		wt, err2 := parseTime(w)
		return err1 == nil && err2 == nil && gt.Equal(wt)
	}
	return reflect.DeepEqual(g, w)
}

func parseTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("not a timestamp: %q", s)
}

// checkProjection reads the checkpoint again for a few subsets of kinds,
// and checks that each yields just those, and that a Protocol|Metadata
// read fetches no byte of any add or remove column and no sidecar.
func checkProjection(t *testing.T, cp corpusCheckpoint, all *decoded) {
	for _, want := range []ActionSet{Protocol | Metadata, Add, Remove | Txn, Sidecar | CheckpointMetadata | DomainMetadata} {
		store := newRecordingStore(dirStore{cp.table})
		d, err := readAll(t, store, cp.parts, want)
		if err != nil {
			t.Fatalf("Read(%b): %v", want, err)
		}
		if k := d.kinds(); k&^want != 0 || k != all.kinds()&want {
			t.Errorf("Read(%b) yielded kinds %b; a full read has %b", want, k, all.kinds())
		}
		if want&Add != 0 && len(d.adds) != len(all.adds) {
			t.Errorf("Read(Add) yielded %d adds, a full read %d", len(d.adds), len(all.adds))
		}
		if want&(Add|Remove) != 0 {
			continue
		}
		for key := range store.ranges {
			if strings.Contains(key, "_sidecars/") {
				t.Errorf("Read(%b) read sidecar %s", want, key)
			}
		}
		for _, key := range cp.parts {
			if !strings.HasSuffix(key, ".parquet") {
				continue
			}
			file := filepath.Join(cp.table, filepath.FromSlash(key))
			st, err := os.Stat(file)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range fileColumnRanges(t, file, colAdd, colRemove) {
				if store.touched(key, st.Size(), r[0], r[1]) {
					t.Errorf("Read(%b) read bytes [%d, %d) of an add or remove column of %s", want, r[0], r[1], key)
				}
			}
		}
	}
}

// fileColumnRanges returns the byte ranges of the column chunks under the
// given top-level columns of a Parquet file.
func fileColumnRanges(t *testing.T, file string, tops ...string) [][2]int64 {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var out [][2]int64
	for _, rg := range f.Metadata().RowGroups {
		for _, c := range rg.Columns {
			if len(c.MetaData.PathInSchema) == 0 || !slices.Contains(tops, c.MetaData.PathInSchema[0]) {
				continue
			}
			start := c.MetaData.DataPageOffset
			if c.MetaData.DictionaryPageOffset != 0 {
				start = c.MetaData.DictionaryPageOffset
			}
			out = append(out, [2]int64{start, start + c.MetaData.TotalCompressedSize})
		}
	}
	return out
}

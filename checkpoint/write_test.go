package checkpoint_test

import (
	"bytes"

	"github.com/parquet-go/parquet-go"

	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/checkpoint"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/tableconfig"
	"github.com/godelta/delta/testutil"
)

var _ checkpoint.State = (*snapshot.Snapshot)(nil)

func ptr[T any](v T) *T { return &v }

// corpus returns the shared corpus directory, skipping the test when it
// is absent and CI is unset.
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

// ---- comparing states ----

// state is a snapshot's state in comparable form.
type state struct {
	protocol   actions.Protocol
	metadata   actions.Metadata
	files      map[string]actions.Add
	tombstones map[string]actions.Remove
	txns       []actions.Txn
	domains    []actions.DomainMetadata
}

func fkey(p string, dv *actions.DeletionVector) string { return p + "\x00" + dv.UniqueID() }

func emptyNil(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

// stateOf reads s, keeping the tombstones keep accepts.
func stateOf(t *testing.T, s *snapshot.Snapshot, keep func(*actions.Remove) bool) state {
	t.Helper()
	st := state{protocol: s.Protocol(), metadata: s.Metadata(), files: map[string]actions.Add{}, tombstones: map[string]actions.Remove{}}
	st.protocol.ReaderFeatures = slices.Clone(st.protocol.ReaderFeatures)
	st.protocol.WriterFeatures = slices.Clone(st.protocol.WriterFeatures)
	if len(st.protocol.ReaderFeatures) == 0 {
		st.protocol.ReaderFeatures = nil
	}
	if len(st.protocol.WriterFeatures) == 0 {
		st.protocol.WriterFeatures = nil
	}
	m := &st.metadata
	m.Configuration, m.Format.Options = emptyNil(m.Configuration), emptyNil(m.Format.Options)
	if len(m.PartitionColumns) == 0 {
		m.PartitionColumns = nil
	}
	ctx := context.Background()
	for a, err := range s.Files(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		c := *a
		c.PartitionValues, c.Tags = emptyNil(c.PartitionValues), emptyNil(c.Tags)
		st.files[fkey(c.Path, c.DeletionVector)] = c
	}
	for r, err := range s.Tombstones(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if !keep(r) {
			continue
		}
		c := *r
		c.PartitionValues = emptyNil(c.PartitionValues)
		c.Stats, c.Tags = "", nil // not kept by checkpoints
		st.tombstones[fkey(c.Path, c.DeletionVector)] = c
	}
	for txn, err := range s.Txns(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		st.txns = append(st.txns, txn)
	}
	for d, err := range s.Domains(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		st.domains = append(st.domains, d)
	}
	return st
}

// compareStates fails t where got differs from want. With exactStats the
// stats strings must be equal; otherwise got's stats (rebuilt from
// stats_parsed) must agree with want's on every value they hold.
func compareStates(t *testing.T, want, got state, exactStats bool) {
	t.Helper()
	if !reflect.DeepEqual(want.protocol, got.protocol) {
		t.Errorf("protocol %+v, want %+v", got.protocol, want.protocol)
	}
	if !reflect.DeepEqual(want.metadata, got.metadata) {
		t.Errorf("metadata\n%+v\nwant\n%+v", got.metadata, want.metadata)
	}
	if !reflect.DeepEqual(want.txns, got.txns) {
		t.Errorf("txns %v, want %v", got.txns, want.txns)
	}
	if !reflect.DeepEqual(want.domains, got.domains) {
		t.Errorf("domains %v, want %v", got.domains, want.domains)
	}
	if len(got.files) != len(want.files) {
		t.Errorf("%d files, want %d", len(got.files), len(want.files))
	}
	for k, w := range want.files {
		g, ok := got.files[k]
		if !ok {
			t.Errorf("file %q missing", k)
			continue
		}
		if !exactStats {
			if w.Stats != "" && g.Stats == "" {
				t.Errorf("file %q: stats lost", w.Path)
			} else if msg := statsAgree(g.Stats, w.Stats); msg != "" {
				t.Errorf("file %q: stats %s\n%s\nwant\n%s", w.Path, msg, g.Stats, w.Stats)
			}
			g.Stats, w.Stats = "", ""
		}
		if !reflect.DeepEqual(w, g) {
			t.Errorf("file\n%+v\nwant\n%+v", g, w)
		}
	}
	if len(got.tombstones) != len(want.tombstones) {
		t.Errorf("%d tombstones, want %d", len(got.tombstones), len(want.tombstones))
	}
	for k, w := range want.tombstones {
		if g, ok := got.tombstones[k]; !ok || !reflect.DeepEqual(w, g) {
			t.Errorf("tombstone\n%+v\nwant\n%+v", g, w)
		}
	}
}

// statsAgree reports "" when every value of the JSON statistics got is in
// want with the same meaning (numbers compared as numbers, timestamps as
// instants); else what differs.
func statsAgree(got, want string) string {
	if got == "" {
		return ""
	}
	var g, w map[string]any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		return "not JSON: " + err.Error()
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		return ""
	}
	return subset("", g, w)
}

func subset(path string, g, w any) string {
	switch gv := g.(type) {
	case map[string]any:
		wm, ok := w.(map[string]any)
		if !ok {
			return path + ": not an object in want"
		}
		for k, v := range gv {
			if v == nil {
				continue
			}
			if msg := subset(path+"."+k, v, wm[k]); msg != "" {
				return msg
			}
		}
		return ""
	case float64:
		wf, ok := w.(float64)
		if ok && (gv == wf || math.Abs(gv-wf) <= 1e-6*math.Abs(wf)) {
			return ""
		}
		if ws, ok := w.(string); ok && (ws == "NaN" || strings.Contains(ws, "Infinity")) {
			return ""
		}
		return fmt.Sprintf("%s: %v, want %v", path, g, w)
	case string:
		ws, ok := w.(string)
		if !ok {
			return fmt.Sprintf("%s: %q, want %v", path, gv, w)
		}
		if gv == ws {
			return ""
		}
		gt, err1 := parseTime(gv)
		wt, err2 := parseTime(ws)
		if err1 == nil && err2 == nil && gt.Equal(wt) {
			return ""
		}
		return fmt.Sprintf("%s: %q, want %q", path, gv, ws)
	default:
		if reflect.DeepEqual(g, w) {
			return ""
		}
		return fmt.Sprintf("%s: %v, want %v", path, g, w)
	}
}

func parseTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("not a time: %q", s)
}

// ---- a table built in memory ----

const testSchema = `{"type":"struct","fields":[` +
	`{"name":"id","type":"long","nullable":true,"metadata":{}},` +
	`{"name":"name","type":"string","nullable":true,"metadata":{}},` +
	`{"name":"ts","type":"timestamp","nullable":true,"metadata":{}},` +
	`{"name":"ntz","type":"timestamp_ntz","nullable":true,"metadata":{}},` +
	`{"name":"d","type":"date","nullable":true,"metadata":{}},` +
	`{"name":"dec","type":"decimal(10,2)","nullable":true,"metadata":{}},` +
	`{"name":"big","type":"decimal(30,3)","nullable":true,"metadata":{}},` +
	`{"name":"f","type":"float","nullable":true,"metadata":{}},` +
	`{"name":"bin","type":"binary","nullable":true,"metadata":{}},` +
	`{"name":"s","type":{"type":"struct","fields":[{"name":"a","type":"integer","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},` +
	`{"name":"p","type":"string","nullable":true,"metadata":{}},` +
	`{"name":"q","type":"integer","nullable":true,"metadata":{}}]}`

const testStats = `{"numRecords":3,"minValues":{"id":1,"name":"a\"b","ts":"2021-01-01T00:00:00.000-08:00","ntz":"2021-01-01T00:00:00.123","d":"2020-02-29",` +
	`"dec":-1.50,"big":123456789012345678901234.567,"f":0.5,"s":{"a":-3}},"maxValues":{"id":9,"name":"zz","ts":"2021-01-02T00:00:00.000Z","d":"2021-01-01",` +
	`"dec":99.99,"big":1.5,"f":"NaN","s":{"a":7}},"nullCount":{"id":0,"name":1,"ts":0,"ntz":0,"d":0,"dec":0,"big":0,"f":0,"bin":3,"s":{"a":0}}}`

// buildTable commits a small table with every kind of action to store and
// returns the time the test runs at.
func buildTable(t *testing.T, store logstore.Store, protocol actions.Protocol, conf map[string]string) time.Time {
	t.Helper()
	ctx := context.Background()
	now := time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)
	ms := func(d time.Duration) *int64 { return ptr(now.Add(-d).UnixMilli()) }
	created := now.UnixMilli()
	if tableconfig.HasReaderFeature(&protocol, actions.FeatureV2Checkpoint) {
		// As Spark makes such a table: V2 checkpoints are written under
		// the v2 policy.
		conf = maps.Clone(conf)
		if conf == nil {
			conf = map[string]string{}
		}
		conf[tableconfig.KeyCheckpointPolicy] = string(tableconfig.CheckpointV2)
	}
	commits := [][]actions.Action{
		{
			{CommitInfo: &actions.CommitInfo{Operation: "CREATE TABLE"}},
			{Protocol: &protocol},
			{Metadata: &actions.Metadata{ID: "tbl-1", Name: "t", Format: actions.Format{Provider: "parquet", Options: map[string]string{}},
				SchemaString: testSchema, PartitionColumns: []string{"p", "q"}, CreatedTime: &created, Configuration: conf}},
		},
		{
			{Add: &actions.Add{Path: "p=a/q=1/f1.parquet", PartitionValues: map[string]string{"p": "a", "q": "1"}, Size: 100, ModificationTime: 1, DataChange: true, Stats: testStats}},
			{Add: &actions.Add{Path: "p=b/q=__HIVE_DEFAULT_PARTITION__/f%20two.parquet", PartitionValues: map[string]string{"p": "b", "q": ""}, Size: 200, ModificationTime: 2, DataChange: true,
				Tags: map[string]string{"INSERTION_TIME": "1", "empty": ""}, BaseRowID: ptr[int64](10), DefaultRowCommitVersion: ptr[int64](1), ClusteringProvider: "liquid"}},
			{Add: &actions.Add{Path: "gone.parquet", PartitionValues: map[string]string{"p": "", "q": "2"}, Size: 300, ModificationTime: 3, DataChange: true}},
			{Add: &actions.Add{Path: "old.parquet", PartitionValues: map[string]string{"p": "x", "q": "3"}, Size: 300, ModificationTime: 3, DataChange: true}},
			{Txn: &actions.Txn{AppID: "stream-1", Version: 4, LastUpdated: ms(time.Hour)}},
			{Txn: &actions.Txn{AppID: "stream-old", Version: 1, LastUpdated: ms(400 * 24 * time.Hour)}},
			{Txn: &actions.Txn{AppID: "no-time", Version: 7}},
			{DomainMetadata: &actions.DomainMetadata{Domain: "delta.rowTracking", Configuration: `{"rowIdHighWaterMark":12}`}},
			{DomainMetadata: &actions.DomainMetadata{Domain: "user.gone", Configuration: "{}"}},
		},
		{
			{Remove: &actions.Remove{Path: "gone.parquet", DeletionTimestamp: ms(time.Hour), DataChange: true, ExtendedFileMetadata: ptr(true),
				PartitionValues: map[string]string{"p": "", "q": "2"}, Size: ptr[int64](300), Stats: `{"numRecords":1}`, Tags: map[string]string{"a": "b"}}},
			{Remove: &actions.Remove{Path: "old.parquet", DeletionTimestamp: ms(30 * 24 * time.Hour), DataChange: true}},
			{Remove: &actions.Remove{Path: "never-added.parquet", DataChange: false}},
			{Remove: &actions.Remove{Path: "p=a/q=1/f1.parquet", DeletionTimestamp: ms(time.Minute), PartitionValues: map[string]string{"p": "a", "q": "1"}, Size: ptr[int64](100)}},
			{Add: &actions.Add{Path: "p=a/q=1/f1.parquet", PartitionValues: map[string]string{"p": "a", "q": "1"}, Size: 100, ModificationTime: 1, DataChange: false, Stats: testStats,
				DeletionVector: &actions.DeletionVector{StorageType: "u", PathOrInlineDv: "ab^-aqEH.-t@S}K{vb[*k^", Offset: ptr[int32](4), SizeInBytes: 40, Cardinality: 2, MaxRowIndex: ptr[int64](9)}}},
			{Add: &actions.Add{Path: "inline-dv.parquet", PartitionValues: map[string]string{"p": "c", "q": "-5"}, Size: 1, ModificationTime: 5, DataChange: true,
				Stats:          `{"numRecords":2,"tightBounds":false}`,
				DeletionVector: &actions.DeletionVector{StorageType: "i", PathOrInlineDv: "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L", SizeInBytes: 40, Cardinality: 1}}},
			{DomainMetadata: &actions.DomainMetadata{Domain: "user.gone", Configuration: "{}", Removed: true}},
		},
	}
	for v, acts := range commits {
		data, err := actions.EncodeCommit(acts)
		if err != nil {
			t.Fatal(err)
		}
		if err := store.PutIfAbsent(ctx, deltalog.CommitKey(int64(v)), data); err != nil {
			t.Fatal(err)
		}
	}
	return now
}

// keepFresh is the tombstone rule with the default retention at now.
func keepFresh(now time.Time) func(*actions.Remove) bool {
	return func(r *actions.Remove) bool {
		return r.DeletionTimestamp != nil && *r.DeletionTimestamp > now.Add(-7*24*time.Hour).UnixMilli()
	}
}

// dropCommits deletes every commit and checkpoint other than the one at
// version that Write just wrote, so that a load must use it.
func dropOthers(t *testing.T, store logstore.Store, version int64, keep map[string]bool) {
	t.Helper()
	ctx := context.Background()
	files, err := deltalog.List(ctx, store, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Version <= version && !keep[f.Key] {
			if err := store.Delete(ctx, f.Key); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// written returns the keys Write wrote for lc.
func written(t *testing.T, lc deltalog.LastCheckpoint) (cp string, sidecars []string) {
	t.Helper()
	if len(lc.V2Checkpoint) == 0 {
		return deltalog.ClassicCheckpointKey(lc.Version), nil
	}
	var v2 struct {
		Path         string
		SidecarFiles []actions.Sidecar
	}
	if err := json.Unmarshal(lc.V2Checkpoint, &v2); err != nil {
		t.Fatal(err)
	}
	for _, s := range v2.SidecarFiles {
		sidecars = append(sidecars, deltalog.SidecarDir+s.Path)
	}
	return deltalog.LogDir + v2.Path, sidecars
}

func TestWriteRoundTrip(t *testing.T) {
	v1 := actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}
	v2 := actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
		ReaderFeatures: []string{actions.FeatureV2Checkpoint, actions.FeatureDeletionVectors},
		WriterFeatures: []string{actions.FeatureV2Checkpoint, actions.FeatureDeletionVectors, actions.FeatureDomainMetadata}}
	retention := map[string]string{"delta.setTransactionRetentionDuration": "interval 30 days"}
	structOnly := map[string]string{"delta.checkpoint.writeStatsAsJson": "false", "delta.checkpoint.writeStatsAsStruct": "true"}
	both := map[string]string{"delta.checkpoint.writeStatsAsStruct": "true"}
	tests := []struct {
		name     string
		protocol actions.Protocol
		conf     map[string]string
		opts     checkpoint.WriteOptions
		wantKind deltalog.Kind
		sidecars int
	}{
		{"v1 json stats", v1, nil, checkpoint.WriteOptions{}, deltalog.ClassicCheckpoint, 0},
		{"v1 txn retention", v1, retention, checkpoint.WriteOptions{}, deltalog.ClassicCheckpoint, 0},
		{"v1 struct stats only", v1, structOnly, checkpoint.WriteOptions{}, deltalog.ClassicCheckpoint, 0},
		{"v1 both stats", v1, both, checkpoint.WriteOptions{}, deltalog.ClassicCheckpoint, 0},
		{"v1 options override", v1, nil, checkpoint.WriteOptions{WriteStatsAsJSON: ptr(false), WriteStatsAsStruct: ptr(true)}, deltalog.ClassicCheckpoint, 0},
		{"v1 tiny row groups", v1, both, checkpoint.WriteOptions{RowGroupRows: 2}, deltalog.ClassicCheckpoint, 0},
		{"v2 parquet inline", v2, nil, checkpoint.WriteOptions{}, deltalog.UUIDCheckpoint, 0},
		{"v2 parquet struct only", v2, structOnly, checkpoint.WriteOptions{}, deltalog.UUIDCheckpoint, 0},
		{"v2 parquet one sidecar", v2, both, checkpoint.WriteOptions{SidecarMinActions: 1}, deltalog.UUIDCheckpoint, 1},
		{"v2 parquet sidecars of 2", v2, structOnly, checkpoint.WriteOptions{SidecarMinActions: 1, SidecarMaxActions: 2}, deltalog.UUIDCheckpoint, 3},
		{"v2 below sidecar threshold", v2, nil, checkpoint.WriteOptions{SidecarMinActions: 100}, deltalog.UUIDCheckpoint, 0},
		{"v2 json inline", v2, nil, checkpoint.WriteOptions{V2Format: "json"}, deltalog.UUIDCheckpoint, 0},
		{"v2 json sidecars", v2, structOnly, checkpoint.WriteOptions{V2Format: "json", SidecarMinActions: 1, SidecarMaxActions: 4}, deltalog.UUIDCheckpoint, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			store := memory.New()
			now := buildTable(t, store, tc.protocol, tc.conf)
			tc.opts.Now = func() time.Time { return now }
			orig, err := snapshot.Load(ctx, store, deltalog.Latest)
			if err != nil {
				t.Fatal(err)
			}
			lc, err := checkpoint.Write(ctx, store, orig, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			nTxns := int64(3)
			if tc.conf["delta.setTransactionRetentionDuration"] != "" {
				nTxns = 2
			}
			want := stateOf(t, orig, keepFresh(now))
			if nTxns == 2 {
				want.txns = slices.DeleteFunc(want.txns, func(t actions.Txn) bool { return t.AppID == "stream-old" })
			}
			// files, fresh tombstones, protocol, metaData, txns, 1 domain.
			nAdds := int64(len(want.files))
			wantSize := nAdds + int64(len(want.tombstones)) + 2 + nTxns + 1
			if tc.wantKind == deltalog.UUIDCheckpoint {
				wantSize += 1 + int64(tc.sidecars) // checkpointMetadata, sidecars
			}
			if nAdds != 3 || len(want.tombstones) != 2 {
				t.Fatalf("table has %d files and %d fresh tombstones, want 3 and 2", nAdds, len(want.tombstones))
			}
			if lc.Version != 2 || lc.Size != wantSize || lc.NumOfAddFiles == nil || *lc.NumOfAddFiles != nAdds || lc.SizeInBytes == nil {
				t.Errorf("_last_checkpoint %+v, want version 2, size %d, %d adds", lc, wantSize, nAdds)
			}
			hint, err := deltalog.ReadLastCheckpoint(ctx, store)
			if err != nil || hint == nil || hint.Version != 2 || hint.Size != lc.Size || hint.Checksum == "" {
				t.Errorf("ReadLastCheckpoint: %+v, %v", hint, err)
			}
			raw, _ := store.Get(ctx, deltalog.LastCheckpointKey)
			if err := deltalog.VerifyLastCheckpoint(raw); err != nil {
				t.Errorf("checksum: %v", err)
			}
			cpKey, sidecars := written(t, lc)
			f, ok := deltalog.ParseName(cpKey)
			if !ok || f.Kind != tc.wantKind {
				t.Errorf("checkpoint %s is a %v, want %v", cpKey, f.Kind, tc.wantKind)
			}
			if len(sidecars) != tc.sidecars {
				t.Errorf("%d sidecars, want %d", len(sidecars), tc.sidecars)
			}
			var total int64
			for _, k := range append([]string{cpKey}, sidecars...) {
				info, err := store.Stat(ctx, k)
				if err != nil {
					t.Fatal(err)
				}
				total += info.Size
			}
			if *lc.SizeInBytes != total {
				t.Errorf("sizeInBytes %d, files hold %d", *lc.SizeInBytes, total)
			}

			dropOthers(t, store, 2, map[string]bool{cpKey: true})
			got, err := snapshot.Load(ctx, store, deltalog.Latest)
			if err != nil {
				t.Fatal(err)
			}
			if v, ok := got.Segment().CheckpointVersion(); !ok || v != 2 {
				t.Fatalf("loaded without the checkpoint: %+v", got.Segment())
			}
			exact := tc.conf["delta.checkpoint.writeStatsAsJson"] != "false" && (tc.opts.WriteStatsAsJSON == nil || *tc.opts.WriteStatsAsJSON)
			compareStates(t, want, stateOf(t, got, func(*actions.Remove) bool { return true }), exact)
		})
	}
}

// TestWriteKeepsNewerHint checks that writing an older checkpoint leaves a
// _last_checkpoint that names a newer one alone.
func TestWriteKeepsNewerHint(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	now := buildTable(t, store, actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}, nil)
	opts := checkpoint.WriteOptions{Now: func() time.Time { return now }}
	latest, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := checkpoint.Write(ctx, store, latest, opts); err != nil {
		t.Fatal(err)
	}
	older, err := snapshot.Load(ctx, store, 1)
	if err != nil {
		t.Fatal(err)
	}
	lc, err := checkpoint.Write(ctx, store, older, opts)
	if err != nil || lc.Version != 1 {
		t.Fatalf("Write(v1) = %+v, %v", lc, err)
	}
	hint, err := deltalog.ReadLastCheckpoint(ctx, store)
	if err != nil || hint.Version != 2 {
		t.Fatalf("hint %+v, %v; want version 2 kept", hint, err)
	}
	// The older checkpoint serves time travel to version 1.
	dropOthers(t, store, 1, map[string]bool{deltalog.ClassicCheckpointKey(1): true})
	got, err := snapshot.Load(ctx, store, 1)
	if err != nil {
		t.Fatal(err)
	}
	compareStates(t, stateOf(t, older, keepFresh(now)), stateOf(t, got, func(*actions.Remove) bool { return true }), true)
}

func TestWriteRejectsBadOptions(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	buildTable(t, store, actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}, nil)
	s, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []checkpoint.WriteOptions{{V2Format: "avro"}, {SidecarMinActions: -1}, {RowGroupRows: -1}} {
		if _, err := checkpoint.Write(ctx, store, s, o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

// ---- the corpus ----

// copyLog copies the _delta_log directory of table into a new temporary
// table root.
func copyLog(t *testing.T, table string) string {
	t.Helper()
	dst := t.TempDir()
	if err := testutil.CopyTree(filepath.Join(table, "_delta_log"), filepath.Join(dst, "_delta_log")); err != nil {
		t.Fatal(err)
	}
	return dst
}

// corpusTables returns the table roots of the corpus (directories holding
// a _delta_log with at least one commit or checkpoint).
func corpusTables(t *testing.T) []string {
	dir := corpus(t)
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() || d.Name() != "_delta_log" {
			return nil
		}
		out = append(out, filepath.Dir(p))
		return filepath.SkipDir
	})
	slices.Sort(out)
	return out
}

// TestWriteCorpus round-trips every corpus table that loads: its latest
// state is checkpointed into a copy of its log from which every other
// commit and checkpoint up to that version is removed, and the state
// loaded from our checkpoint alone must equal the original.
func TestWriteCorpus(t *testing.T) {
	root := corpus(t)
	variants := []struct {
		name  string
		opts  checkpoint.WriteOptions
		exact bool
	}{
		{"default", checkpoint.WriteOptions{}, true},
		{"struct-only", checkpoint.WriteOptions{WriteStatsAsJSON: ptr(false), WriteStatsAsStruct: ptr(true)}, false},
		{"sidecars", checkpoint.WriteOptions{SidecarMinActions: 1, SidecarMaxActions: 3, WriteStatsAsStruct: ptr(true)}, true},
		{"json", checkpoint.WriteOptions{V2Format: "json", SidecarMinActions: 5}, true},
	}
	loaded := 0
	for _, table := range corpusTables(t) {
		name, _ := filepath.Rel(root, table)
		ctx := context.Background()
		src, err := local.New(table)
		if err != nil {
			t.Fatal(err)
		}
		orig, err := snapshot.Load(ctx, src, deltalog.Latest)
		if err != nil {
			continue // a must-fail or unreadable table
		}
		loaded++
		t.Run(filepath.ToSlash(name), func(t *testing.T) {
			for _, vr := range variants {
				p := orig.Protocol()
				isV2 := tableconfig.HasReaderFeature(&p, actions.FeatureV2Checkpoint)
				if !isV2 && (vr.name == "sidecars" || vr.name == "json") {
					continue
				}
				t.Run(vr.name, func(t *testing.T) {
					dir := copyLog(t, table)
					store, err := local.New(dir, local.WithoutSync())
					if err != nil {
						t.Fatal(err)
					}
					epoch := func() time.Time { return time.UnixMilli(0) } // keeps every tombstone with a time
					vr.opts.Now = epoch
					lc, err := checkpoint.Write(ctx, store, orig, vr.opts)
					if err != nil {
						t.Fatal(err)
					}
					cpKey, _ := written(t, lc)
					dropOthers(t, store, orig.Version(), map[string]bool{cpKey: true})
					got, err := snapshot.Load(ctx, store, deltalog.Latest)
					if err != nil {
						t.Fatal(err)
					}
					if v, ok := got.Segment().CheckpointVersion(); !ok || v != orig.Version() || got.Version() != orig.Version() {
						t.Fatalf("loaded version %d from %+v", got.Version(), got.Segment())
					}
					keep := func(r *actions.Remove) bool {
						return r.DeletionTimestamp != nil && *r.DeletionTimestamp > -7*24*3600*1000
					}
					compareStates(t, stateOf(t, orig, keep), stateOf(t, got, func(*actions.Remove) bool { return true }), vr.exact)
				})
			}
		})
	}
	if loaded < 50 {
		t.Errorf("only %d corpus tables loaded", loaded)
	}
}

// ---- the Parquet schema against Spark's ----

// leafColumns maps each leaf column path of a Parquet file under the given
// top-level columns to its type and levels.
func leafColumns(t *testing.T, store logstore.Store, key string, tops ...string) map[string]string {
	t.Helper()
	data, err := store.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquetOpen(data)
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	out := map[string]string{}
	for _, path := range f.Schema().Columns() {
		if len(tops) > 0 && !slices.Contains(tops, path[0]) {
			continue
		}
		leaf, _ := f.Schema().Lookup(path...)
		typ := leaf.Node.Type()
		desc := typ.Kind().String()
		if lt := typ.LogicalType(); lt != nil {
			desc += " " + lt.String()
		}
		out[strings.Join(path, ".")] = desc + " rep=" + strconv.Itoa(leaf.MaxRepetitionLevel) + " def=" + strconv.Itoa(leaf.MaxDefinitionLevel)
	}
	return out
}

// TestWriteSchemaMatchesSpark writes checkpoints of corpus tables whose
// checkpoints Spark wrote and compares the Parquet leaf columns: every
// column of Spark's that the protocol asks for must be in ours with the
// same type and levels.
func TestWriteSchemaMatchesSpark(t *testing.T) {
	root := corpus(t)
	tests := []struct {
		table, ref string // table root and Spark's checkpoint, relative to it
		opts       checkpoint.WriteOptions
		sidecar    string   // Spark's sidecar, to compare with ours
		optional   []string // columns we may lack or type differently, for the reason given
	}{
		{table: "golden/checkpoint/delta", ref: "_delta_log/00000000000000000010.checkpoint.parquet"},
		{table: "golden/dv-with-columnmapping/delta", ref: "_delta_log/00000000000000000010.checkpoint.parquet",
			opts: checkpoint.WriteOptions{WriteStatsAsStruct: ptr(true)}},
		// Written by arrow, not Spark: lists name their element "item",
		// remove keeps tags, and timestamps are not UTC-adjusted (the
		// protocol maps timestamp to an adjusted one, as we write).
		{table: "kernel-rs/parsed-stats", ref: "_delta_log/00000000000000000003.checkpoint.parquet",
			opts: checkpoint.WriteOptions{WriteStatsAsStruct: ptr(true)},
			optional: []string{"metaData.partitionColumns.list.item", "remove.tags.key_value.key", "remove.tags.key_value.value",
				"add.stats_parsed.maxValues.ts_col", "add.stats_parsed.minValues.ts_col"}},
		{table: "kernel-rs/v2-checkpoints-parquet-with-last-checkpoint",
			ref:      "_delta_log/00000000000000000000.checkpoint.8516aa94-7099-4e71-92a0-d6d7e7bb3b2c.parquet",
			sidecar:  "_delta_log/_sidecars/00000000000000000000.checkpoint.0000000001.0000000001.c561300b-ad5f-49d4-a28d-9b3f4bb0331c.parquet",
			opts:     checkpoint.WriteOptions{SidecarMinActions: 1},
			optional: []string{"remove.stats", "remove.tags.key_value.key", "remove.tags.key_value.value"}},
	}
	for _, tc := range tests {
		t.Run(tc.table, func(t *testing.T) {
			tableDir := filepath.Join(root, filepath.FromSlash(tc.table))
			if _, err := os.Stat(tableDir); err != nil {
				t.Skip("not in the corpus")
			}
			ctx := context.Background()
			src, _ := local.New(tableDir)
			snap, err := snapshot.Load(ctx, src, deltalog.Latest)
			if err != nil {
				t.Fatal(err)
			}
			store, _ := local.New(copyLog(t, tableDir), local.WithoutSync())
			lc, err := checkpoint.Write(ctx, store, snap, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			cpKey, sidecars := written(t, lc)
			compareColumns(t, leafColumns(t, src, tc.ref), leafColumns(t, store, cpKey), tc.optional)
			if tc.sidecar != "" {
				if len(sidecars) == 0 {
					t.Fatal("no sidecar written")
				}
				compareColumns(t, leafColumns(t, src, tc.sidecar), leafColumns(t, store, sidecars[0]), tc.optional)
			}
		})
	}
}

func compareColumns(t *testing.T, spark, ours map[string]string, optional []string) {
	t.Helper()
	for _, path := range slices.Sorted(maps.Keys(spark)) {
		typ, ok := ours[path]
		switch {
		case slices.Contains(optional, path):
		case !ok:
			t.Errorf("column %s (%s) missing", path, spark[path])
		case typ != spark[path]:
			t.Errorf("column %s: %s, Spark wrote %s", path, typ, spark[path])
		}
	}
	for _, path := range slices.Sorted(maps.Keys(ours)) {
		if _, ok := spark[path]; !ok {
			t.Logf("extra column %s (%s)", path, ours[path])
		}
	}
}

func parquetOpen(data []byte) (*parquet.File, error) {
	return parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
}

package alter_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/alter"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/optimize"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/tableconfig"
	"github.com/godelta/delta/txn"
)

// fileRows is a live file's row-id range, read from the log.
type fileRows struct {
	path          string
	base, n       int64
	commitVersion int64
}

// liveRowRanges returns the live files of s with their row-id ranges; a
// file without a baseRowId or defaultRowCommitVersion fails the test.
// numRecords is decoded here, independently of the transaction.
func liveRowRanges(t *testing.T, s *snapshot.Snapshot) []fileRows {
	t.Helper()
	var out []fileRows
	for a, err := range s.Files(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if a.BaseRowID == nil || a.DefaultRowCommitVersion == nil {
			t.Fatalf("file %s has no row ids (baseRowId %v, defaultRowCommitVersion %v)", a.Path, a.BaseRowID, a.DefaultRowCommitVersion)
		}
		var st struct{ NumRecords int64 }
		if err := json.Unmarshal([]byte(a.Stats), &st); err != nil {
			t.Fatalf("stats of %s: %v", a.Path, err)
		}
		out = append(out, fileRows{path: a.Path, base: *a.BaseRowID, n: st.NumRecords, commitVersion: *a.DefaultRowCommitVersion})
	}
	slices.SortFunc(out, func(a, b fileRows) int { return int(a.base - b.base) })
	return out
}

// highWaterMark reads the delta.rowTracking domain of s.
func highWaterMark(t *testing.T, s *snapshot.Snapshot) int64 {
	t.Helper()
	cfg, ok, err := s.DomainMetadata(ctx, "delta.rowTracking")
	if err != nil || !ok {
		t.Fatalf("no delta.rowTracking domain (%v)", err)
	}
	var d struct{ RowIDHighWaterMark int64 }
	if err := json.Unmarshal([]byte(cfg), &d); err != nil {
		t.Fatal(err)
	}
	return d.RowIDHighWaterMark
}

// checkRowRanges checks that the files' row-id ranges do not overlap and
// lie at or below the high-water mark; with exact, that they cover
// [0, mark] with no gap.
func checkRowRanges(t *testing.T, s *snapshot.Snapshot, exact bool) []fileRows {
	t.Helper()
	files := liveRowRanges(t, s)
	mark := highWaterMark(t, s)
	next := int64(0)
	for _, f := range files {
		if f.base < next {
			t.Fatalf("file %s ids [%d, %d) overlap the previous file's (up to %d)", f.path, f.base, f.base+f.n, next)
		}
		if exact && f.base != next {
			t.Fatalf("file %s starts at id %d, want %d (no gap)", f.path, f.base, next)
		}
		next = f.base + f.n
	}
	if next-1 > mark || (exact && next-1 != mark) {
		t.Fatalf("high-water mark %d, last id %d", mark, next-1)
	}
	return files
}

// rowIDsByID scans id and _metadata.row_id: id -> row id.
func rowIDsByID(t *testing.T, s *snapshot.Snapshot) map[int64]int64 {
	t.Helper()
	sc, err := scan.New(s, scan.Options{Columns: []string{"id", scan.MetadataRowID}})
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]int64{}
	seen := map[int64]bool{}
	for b, err := range sc.Batches(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		for i := range b.Len {
			id, rid := b.Columns[0][i], b.Columns[1][i]
			if rid.IsNull() {
				t.Fatalf("row id=%s has a null row id", id)
			}
			if seen[rid.Int64()] {
				t.Fatalf("row id %d twice", rid.Int64())
			}
			seen[rid.Int64()] = true
			out[id.Int64()] = rid.Int64()
		}
	}
	return out
}

// operations returns the commitInfo operations of the table, oldest first,
// with their batchId parameter where they have one.
func operations(t *testing.T, s *snapshot.Snapshot) []string {
	t.Helper()
	hist, err := snapshot.History(ctx, s.Store(), 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := len(hist) - 1; i >= 0; i-- {
		op := hist[i].Info.Operation
		if b, ok := hist[i].Info.OperationParameters["batchId"]; ok {
			op += fmt.Sprintf("(%v)", b)
		}
		out = append(out, op)
	}
	return out
}

// tableWithFiles makes a table of n appends of two rows each (ids 0..2n-1),
// without row tracking.
func tableWithFiles(t *testing.T, n int, parts ...string) *snapshot.Snapshot {
	t.Helper()
	ddl := "id BIGINT, p STRING"
	s := create(t, ddl, nil, parts...)
	for i := range n {
		s = appendRows(t, s, []schema.Value{long(int64(2 * i)), str(fmt.Sprint("p", i%2))}, []schema.Value{long(int64(2*i + 1)), str(fmt.Sprint("p", i%2))})
	}
	return s
}

func TestEnableRowTrackingBackfill(t *testing.T) {
	for _, c := range []struct {
		name    string
		files   int
		batch   int
		parts   []string
		wantOps []string
	}{
		{"one batch", 5, 0, nil, []string{"UPGRADE PROTOCOL", "ROW TRACKING BACKFILL(0)", "SET TBLPROPERTIES"}},
		{"batches of 2", 5, 2, nil, []string{"UPGRADE PROTOCOL", "ROW TRACKING BACKFILL(0)", "ROW TRACKING BACKFILL(1)", "ROW TRACKING BACKFILL(2)", "SET TBLPROPERTIES"}},
		{"partitioned", 4, 3, []string{"p"}, []string{"UPGRADE PROTOCOL", "ROW TRACKING BACKFILL(0)", "ROW TRACKING BACKFILL(1)", "SET TBLPROPERTIES"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := tableWithFiles(t, c.files, c.parts...)
			before := read(t, s)
			v0 := s.Version()
			res, err := alter.SetProperties(ctx, s, map[string]string{tableconfig.KeyEnableRowTracking: "true"}, alter.Options{BackfillBatchFiles: c.batch})
			s = must(t, s, res, err)
			cfg := s.Config()
			if !cfg.RowTracking() {
				t.Fatal("row tracking is not on")
			}
			idCol, ok1 := cfg.MaterializedRowIDColumn()
			verCol, ok2 := cfg.MaterializedRowCommitVersionColumn()
			if !ok1 || !ok2 || !strings.HasPrefix(idCol, "_row-id-col-") || !strings.HasPrefix(verCol, "_row-commit-version-col-") {
				t.Fatalf("materialized columns %q %q", idCol, verCol)
			}
			p := s.Protocol()
			if !tableconfig.HasWriterFeature(&p, actions.FeatureRowTracking) || !tableconfig.HasWriterFeature(&p, actions.FeatureDomainMetadata) {
				t.Fatalf("protocol %+v", p)
			}
			ops := operations(t, s)
			if got := ops[len(ops)-len(c.wantOps):]; !slices.Equal(got, c.wantOps) {
				t.Fatalf("operations %q, want %q at the end", ops, c.wantOps)
			}
			files := checkRowRanges(t, s, true)
			if len(files) != c.files || files[len(files)-1].base+files[len(files)-1].n != int64(2*c.files) {
				t.Fatalf("files %+v", files)
			}
			for _, f := range files {
				// Backfilled in one of the backfill commits.
				if f.commitVersion <= v0+1 || f.commitVersion >= s.Version() {
					t.Fatalf("file %s defaultRowCommitVersion %d, want a backfill commit in (%d, %d)", f.path, f.commitVersion, v0+1, s.Version())
				}
			}
			equal(t, read(t, s), before)

			// _metadata.row_id reads base + row index, and the same after
			// OPTIMIZE rewrote the files.
			ids := rowIDsByID(t, s)
			if len(ids) != 2*c.files {
				t.Fatalf("%d row ids", len(ids))
			}
			or, err := optimize.Run(ctx, s, optimize.Options{})
			if err != nil || !or.Committed {
				t.Fatalf("optimize: %v (committed %v)", err, or.Committed)
			}
			s = load(t, s.Store())
			if n := len(liveRowRanges(t, s)); n >= c.files {
				t.Fatalf("optimize left %d files", n)
			}
			after := rowIDsByID(t, s)
			for id, rid := range ids {
				if after[id] != rid {
					t.Fatalf("row id of id=%d: %d before OPTIMIZE, %d after", id, rid, after[id])
				}
			}
			// New files get ids above the mark.
			mark := highWaterMark(t, s)
			s = appendRows(t, s, []schema.Value{long(100), str("p0")})
			if got := rowIDsByID(t, s)[100]; got != mark+1 {
				t.Fatalf("appended row id %d, want %d", got, mark+1)
			}
		})
	}
}

// TestEnableRowTrackingFileIDsMatchScan: the row ids a scan returns are
// each file's baseRowId plus the row's index in the file.
func TestEnableRowTrackingFileIDsMatchScan(t *testing.T) {
	s := tableWithFiles(t, 3)
	res, err := alter.SetProperties(ctx, s, map[string]string{tableconfig.KeyEnableRowTracking: "true"}, alter.Options{})
	s = must(t, s, res, err)
	want := map[int64]bool{}
	for _, f := range checkRowRanges(t, s, true) {
		for i := range f.n {
			want[f.base+i] = true
		}
	}
	got := rowIDsByID(t, s)
	for id, rid := range got {
		if !want[rid] {
			t.Fatalf("id=%d has row id %d, in no file's range", id, rid)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d rows, %d ids", len(got), len(want))
	}
}

func TestEnableRowTrackingEmptyAndAlreadyTracked(t *testing.T) {
	// An empty table: one commit, as for a new table.
	s := create(t, "id BIGINT", nil)
	res, err := alter.SetProperties(ctx, s, map[string]string{tableconfig.KeyEnableRowTracking: "true"}, alter.Options{})
	s = must(t, s, res, err)
	if ops := operations(t, s); !slices.Equal(ops, []string{"CREATE TABLE", "SET TBLPROPERTIES"}) || !s.Config().RowTracking() {
		t.Fatalf("operations %q, row tracking %v", ops, s.Config().RowTracking())
	}
	// Files that already have ids (the feature was supported before they
	// were written): nothing to backfill.
	s = create(t, "id BIGINT", map[string]string{"delta.feature.rowTracking": "supported"})
	s = appendRows(t, s, []schema.Value{long(1)})
	res, err = alter.SetProperties(ctx, s, map[string]string{tableconfig.KeyEnableRowTracking: "true"}, alter.Options{})
	s = must(t, s, res, err)
	if ops := operations(t, s); !slices.Equal(ops, []string{"CREATE TABLE", "WRITE", "SET TBLPROPERTIES"}) {
		t.Fatalf("operations %q", ops)
	}
	checkRowRanges(t, s, true)
}

// hookStore runs hook once, before the first put of a commit whose text
// contains trigger.
type hookStore struct {
	logstore.Store
	trigger string
	once    sync.Once
	hook    func()
}

func (h *hookStore) PutIfAbsent(c context.Context, key string, data []byte) error {
	if strings.HasPrefix(key, deltalog.LogDir) && strings.Contains(string(data), h.trigger) {
		h.once.Do(h.hook)
	}
	return h.Store.PutIfAbsent(c, key, data)
}

// TestBackfillConcurrentWriters: an append that lands while a backfill
// batch commits gets its own ids and the batch is rebased above them; a
// remove that lands then makes the batch run again without the file.
func TestBackfillConcurrentWriters(t *testing.T) {
	for _, c := range []struct {
		name   string
		writer func(t *testing.T, s *snapshot.Snapshot)
		files  int // live files at the end
		rows   int
	}{
		{"append", func(t *testing.T, s *snapshot.Snapshot) {
			appendRows(t, s, []schema.Value{long(100), str("x")}, []schema.Value{long(101), str("x")}, []schema.Value{long(102), str("x")})
		}, 5, 11},
		{"remove", func(t *testing.T, s *snapshot.Snapshot) {
			var victim *actions.Add
			for a, err := range s.Files(ctx) {
				if err != nil {
					t.Fatal(err)
				}
				victim = a
				break
			}
			tx := txn.Begin(s, txn.Options{Operation: "DELETE"})
			tx.ReadFiles(victim.Path)
			tx.Remove(actions.Remove{Path: victim.Path, DataChange: true, DeletionTimestamp: new(time.Now().UnixMilli()), PartitionValues: victim.PartitionValues, Size: &victim.Size})
			if _, err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
		}, 3, 6},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			inner, err := local.New(dir)
			if err != nil {
				t.Fatal(err)
			}
			tableWithFilesIn(t, inner, 4)
			hs := &hookStore{Store: inner, trigger: alter.OpRowTrackingBackfill}
			hs.hook = func() { c.writer(t, load(t, inner)) }
			s := load(t, hs)
			res, err := alter.SetProperties(ctx, s, map[string]string{tableconfig.KeyEnableRowTracking: "true"}, alter.Options{})
			if err != nil {
				t.Fatal(err)
			}
			s = load(t, inner)
			if s.Version() != res.Version || !s.Config().RowTracking() {
				t.Fatalf("version %d, committed %d, row tracking %v", s.Version(), res.Version, s.Config().RowTracking())
			}
			files := checkRowRanges(t, s, false)
			if len(files) != c.files {
				t.Fatalf("%d live files, want %d: %+v", len(files), c.files, files)
			}
			if ids := rowIDsByID(t, s); len(ids) != c.rows {
				t.Fatalf("%d rows, want %d", len(ids), c.rows)
			}
		})
	}
}

func tableWithFilesIn(t *testing.T, store logstore.Store, n int) {
	t.Helper()
	sch, err := schema.ParseDDL("id BIGINT, p STRING")
	if err != nil {
		t.Fatal(err)
	}
	s := createIn(t, store, sch, nil)
	for i := range n {
		s = appendRows(t, s, []schema.Value{long(int64(2 * i)), str("a")}, []schema.Value{long(int64(2*i + 1)), str("b")})
	}
}

// commitICT reads the inCommitTimestamp of commit v (nil if none).
func commitICT(t *testing.T, store logstore.Store, v int64) *int64 {
	t.Helper()
	data, err := store.Get(ctx, deltalog.CommitKey(v))
	if err != nil {
		t.Fatal(err)
	}
	var first struct {
		CommitInfo *struct {
			InCommitTimestamp *int64 `json:"inCommitTimestamp"`
		} `json:"commitInfo"`
	}
	line, _, _ := strings.Cut(string(data), "\n")
	if err := json.Unmarshal([]byte(line), &first); err != nil || first.CommitInfo == nil {
		t.Fatalf("commit %d: first action is not commitInfo (%v)", v, err)
	}
	return first.CommitInfo.InCommitTimestamp
}

func TestEnableInCommitTimestampsLater(t *testing.T) {
	for _, c := range []struct {
		name string
		// stale: the ALTER starts from a snapshot one commit old, so its
		// first attempt loses the race and it lands one version later.
		stale bool
	}{{"direct", false}, {"after a lost race", true}} {
		t.Run(c.name, func(t *testing.T) {
			s := tableWithFiles(t, 2) // versions 0..2
			start := s
			if c.stale {
				s = appendRows(t, s, []schema.Value{long(50), str("z")}) // version 3
			}
			store := s.Store()
			// In-commit timestamps an hour ahead of the file times, so
			// the two clocks cannot be mistaken for each other.
			future := time.Now().Add(time.Hour)
			clock := func() time.Time { return future }
			res, err := alter.SetProperties(ctx, start, map[string]string{tableconfig.KeyEnableInCommitTimestamps: "true"}, alter.Options{Txn: txn.Options{Clock: clock}})
			if err != nil {
				t.Fatal(err)
			}
			s = load(t, store)
			n := s.Version()
			if res.Version != n || n != start.Version()+1+boolInt(c.stale) {
				t.Fatalf("committed %d, table at %d", res.Version, n)
			}
			ict := commitICT(t, store, n)
			if ict == nil || *ict != future.UnixMilli() || res.Timestamp.UnixMilli() != *ict {
				t.Fatalf("commit %d inCommitTimestamp %v, result %v, want %d", n, ict, res.Timestamp, future.UnixMilli())
			}
			cfg := s.Config()
			ev, ok1 := cfg.InCommitTimestampEnablementVersion()
			et, ok2 := cfg.InCommitTimestampEnablementTimestamp()
			if !cfg.InCommitTimestamps() || !ok1 || !ok2 || ev != n || et != *ict {
				t.Fatalf("enablement version %d (%v) timestamp %d (%v), want %d and %d", ev, ok1, et, ok2, n, *ict)
			}
			for v := range n {
				if commitICT(t, store, v) != nil {
					t.Fatalf("commit %d before the enablement has an inCommitTimestamp", v)
				}
			}
			// Two more commits, ICT-dated.
			s = appendRows(t, s, []schema.Value{long(60), str("z")})
			s = appendRows(t, s, []schema.Value{long(61), str("z")})
			ict1, ict2 := commitICT(t, store, n+1), commitICT(t, store, n+2)
			if ict1 == nil || ict2 == nil || *ict1 <= *ict || *ict2 <= *ict1 {
				t.Fatalf("later in-commit timestamps %v %v after %d", ict1, ict2, *ict)
			}
			if s.Timestamp().UnixMilli() != *ict2 {
				t.Fatalf("snapshot timestamp %v, want ICT %d", s.Timestamp(), *ict2)
			}

			// Time travel: before the enablement by file times, after by
			// in-commit timestamps.
			mtimes := map[int64]int64{}
			files, err := deltalog.List(ctx, store, 0)
			if err != nil {
				t.Fatal(err)
			}
			prev := int64(0)
			for _, f := range files {
				if f.Kind == deltalog.Commit && f.Version < n {
					m := max(f.ModTime, prev+1) // monotonized, as Delta does
					mtimes[f.Version], prev = m, m
				}
			}
			type tc struct {
				at   int64
				want int64
			}
			cases := []tc{
				{*ict, n}, {*ict1, n + 1}, {*ict1 + (*ict2-*ict1)/2, n + 1}, {*ict2, n + 2},
				{*ict - 1, n - 1}, // before the enablement: the last commit dated by its file
			}
			for v := range n {
				cases = append(cases, tc{mtimes[v], v})
			}
			for _, k := range cases {
				got, err := snapshot.VersionAtTimestamp(ctx, s, time.UnixMilli(k.at))
				if err != nil || got != k.want {
					t.Fatalf("version at %d: %d (%v), want %d", k.at, got, err, k.want)
				}
				ts, err := snapshot.LoadAtTimestamp(ctx, s, time.UnixMilli(k.at))
				if err != nil || ts.Version() != k.want {
					t.Fatalf("load at %d: %v, want version %d", k.at, err, k.want)
				}
			}
			if _, err := snapshot.VersionAtTimestamp(ctx, s, time.UnixMilli(*ict2+1)); err == nil {
				t.Fatal("a time after the latest commit resolved")
			}
			// History dates each commit the same way.
			hist, err := snapshot.History(ctx, store, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hist {
				want, ok := mtimes[h.Version]
				switch h.Version {
				case n:
					want, ok = *ict, true
				case n + 1:
					want, ok = *ict1, true
				case n + 2:
					want, ok = *ict2, true
				}
				if !ok || h.Timestamp.UnixMilli() != want {
					t.Fatalf("history version %d at %d, want %d", h.Version, h.Timestamp.UnixMilli(), want)
				}
			}
		})
	}
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// TestSparkTableTakesRowTrackingAndICT: a Spark-written table without row
// tracking takes both, and reads the same rows.
func TestSparkTableTakesRowTrackingAndICT(t *testing.T) {
	s := corpusCopy(t, "golden", "basic-with-inserts-updates", "delta")
	if s.Config().RowTracking() || s.Config().InCommitTimestamps() {
		t.Fatal("the corpus table already tracks rows or has in-commit timestamps")
	}
	before := read(t, s)
	if len(before) != 100 { // MANIFEST.md: 100 rows
		t.Fatalf("%d rows in the corpus table, want 100", len(before))
	}
	v := s.Version()
	res, err := alter.SetProperties(ctx, s, map[string]string{
		tableconfig.KeyEnableRowTracking:        "true",
		tableconfig.KeyEnableInCommitTimestamps: "true",
	}, alter.Options{})
	s = must(t, s, res, err)
	if !s.Config().RowTracking() || !s.Config().InCommitTimestamps() {
		t.Fatal("not on")
	}
	checkRowRanges(t, s, true)
	if ev, ok := s.Config().InCommitTimestampEnablementVersion(); !ok || ev != s.Version() || s.Version() <= v {
		t.Fatalf("enablement version %d (%v), table at %d", ev, ok, s.Version())
	}
	equal(t, read(t, s), before)
	sc, err := scan.New(s, scan.Options{Columns: []string{scan.MetadataRowID}})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for b, err := range sc.Batches(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		for i := range b.Len {
			r := b.Columns[0][i]
			if r.IsNull() || seen[r.Int64()] {
				t.Fatalf("row id %v null or repeated", r)
			}
			seen[r.Int64()] = true
		}
	}
	if len(seen) != len(before) {
		t.Fatalf("%d row ids for %d rows", len(seen), len(before))
	}
}

// TestBackfillNeedsNumRecords: a file without numRecords cannot be given
// row ids; the error says so and row tracking stays off.
func TestBackfillNeedsNumRecords(t *testing.T) {
	s := tableWithFiles(t, 1)
	tx := txn.Begin(s, txn.Options{})
	tx.Add(actions.Add{Path: "nostats.parquet", PartitionValues: map[string]string{}, Size: 10, ModificationTime: 1, DataChange: true})
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	s = load(t, s.Store())
	_, err := alter.SetProperties(ctx, s, map[string]string{tableconfig.KeyEnableRowTracking: "true"}, alter.Options{})
	if !errors.Is(err, deltaerr.ErrInvalidArgument) || !strings.Contains(err.Error(), "numRecords") {
		t.Fatalf("backfill of a file without numRecords: %v", err)
	}
	if s = load(t, s.Store()); s.Config().RowTracking() {
		t.Fatal("row tracking turned on")
	}
}

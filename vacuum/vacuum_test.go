package vacuum_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/internal/dv"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/testutil"
	"github.com/godelta/delta/vacuum"
)

var day = 24 * time.Hour

// rowsOf makes rows (id, p) for ids, in partition p.
func rowsOf(p string, ids ...int64) [][]schema.Value {
	var out [][]schema.Value
	for _, id := range ids {
		out = append(out, []schema.Value{schema.LongValue(id), schema.StringValue(p)})
	}
	return out
}

// readIDs reads the ids of version v.
func readIDs(ctx context.Context, tbl *delta.Table, v int64) ([]int64, error) {
	snap, err := tbl.SnapshotAt(ctx, v)
	if err != nil {
		return nil, err
	}
	sc, err := tbl.Scan(snap, delta.ScanOptions{Columns: []string{"id"}})
	if err != nil {
		return nil, err
	}
	var ids []int64
	for row, err := range sc.Rows(ctx) {
		if err != nil {
			return nil, err
		}
		ids = append(ids, row.Values()[0].Int64())
	}
	slices.Sort(ids)
	return ids, nil
}

// history builds a table whose commits are dated relative to base: it
// returns the table, the ids each version holds, and the data files of
// each version (keys relative to the root).
type fixture struct {
	dir  string
	tbl  *delta.Table
	ids  map[int64][]int64
	base time.Time
}

func build(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	tbl, err := delta.Create(ctx, dir, delta.TableSpec{
		Schema: &schema.StructType{Fields: []schema.StructField{
			{Name: "id", Type: schema.Long, Nullable: true},
			{Name: "p", Type: schema.String, Nullable: true},
		}},
		PartitionColumns: []string{"p"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tbl.Close() })
	f := &fixture{dir: dir, tbl: tbl, ids: map[int64][]int64{0: nil}, base: time.Now()}
	at := func(d time.Duration) delta.WriteOptions {
		ts := f.base.Add(d)
		return delta.WriteOptions{Txn: delta.TxnOptions{Clock: func() time.Time { return ts }}}
	}
	var live []int64
	step := func(v int64, overwrite bool, d time.Duration, p string, ids ...int64) {
		t.Helper()
		var res delta.CommitResult
		var err error
		if overwrite {
			res, err = tbl.OverwriteRows(ctx, rowsOf(p, ids...), delta.OverwriteOptions{WriteOptions: at(d)})
			live = nil
		} else {
			res, err = tbl.AppendRows(ctx, rowsOf(p, ids...), at(d))
		}
		if err != nil {
			t.Fatal(err)
		}
		if res.Version != v {
			t.Fatalf("commit landed at %d, want %d", res.Version, v)
		}
		// The commit is dated by its file's modification time.
		ts := f.base.Add(d)
		if err := os.Chtimes(filepath.Join(dir, deltalog.CommitKey(v)), ts, ts); err != nil {
			t.Fatal(err)
		}
		live = append(slices.Clone(live), ids...)
		slices.Sort(live)
		f.ids[v] = live
	}
	step(1, false, 1*day, "a", 1, 2)    // A
	step(2, true, 2*day, "b", 10, 11)   // removes A at +2d
	step(3, false, 10*day, "c", 20)     // C
	step(4, true, 25*day, "a", 30)      // removes B, C at +25d
	step(5, false, 26*day, "d", 40, 41) // E
	return f
}

// opts runs at base+30d with the default 7-day retention: the cut-off is
// base+23d, so A (removed at +2d) goes and B, C (removed at +25d) stay.
func (f *fixture) opts() vacuum.Options {
	now := f.base.Add(30 * day)
	return vacuum.Options{Now: func() time.Time { return now }}
}

func (f *fixture) snap(t *testing.T) *snapshot.Snapshot {
	t.Helper()
	s, err := f.tbl.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// dataFiles returns the keys of the .parquet files under the root outside
// hidden directories, sorted.
func dataFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() && strings.HasPrefix(d.Name(), "_delta_log") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func write(t *testing.T, p string, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestVacuumKeepsEveryVersionInTheWindow(t *testing.T) {
	ctx := context.Background()
	f := build(t)
	// Files of version 1 only (partition a, first file) must go; the
	// others stay.
	snap1, err := f.tbl.SnapshotAt(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	var onlyV1 []string
	for a, err := range snap1.Files(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		onlyV1 = append(onlyV1, snapshot.CanonicalPath(a.Path))
	}

	// Orphans and things VACUUM must not touch.
	outside := t.TempDir()
	write(t, filepath.Join(outside, "keep.parquet"), "outside")
	write(t, filepath.Join(outside, "sub", "keep2.parquet"), "outside")
	if err := os.Symlink(outside, filepath.Join(f.dir, "linkdir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "keep.parquet"), filepath.Join(f.dir, "p=a", "linkfile.parquet")); err != nil {
		t.Fatal(err)
	}
	orphans := []string{"part-orphan.parquet", "p=zz/part-orphan2.parquet", "deletion_vector_0000.bin", "_change_data/cdc-00000.parquet"}
	for _, o := range orphans {
		write(t, filepath.Join(f.dir, o), "orphan")
	}
	untouchable := []string{"_hidden/x.parquet", ".hidden.parquet", "p=a/.part-0.crc", "_SUCCESS", "_symlink_format_manifest/manifest"}
	for _, o := range untouchable {
		write(t, filepath.Join(f.dir, o), "keep")
	}
	logBefore, _ := os.ReadDir(filepath.Join(f.dir, "_delta_log"))

	want := append(append([]string{}, onlyV1...), orphans...)
	want = append(want, "p=a/linkfile.parquet") // the link itself is an untracked file; its target is outside
	slices.Sort(want)

	// A dry run lists them and deletes nothing.
	beforeDry := dataFiles(t, f.dir)
	o := f.opts()
	o.DryRun = true
	res, err := vacuum.Vacuum(ctx, f.snap(t), o)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, fl := range res.Files {
		got = append(got, fl.Key)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("dry run lists\n%q\nwant\n%q", got, want)
	}
	if res.StartVersion != -1 || res.Deleted != 0 {
		t.Fatalf("dry run committed or deleted: %+v", res)
	}
	if now := dataFiles(t, f.dir); !slices.Equal(now, beforeDry) {
		t.Fatalf("dry run changed files: %q, was %q", now, beforeDry)
	}
	if v := f.snap(t).Version(); v != 5 {
		t.Fatalf("dry run committed: version %d", v)
	}

	// The real run.
	res, err = vacuum.Vacuum(ctx, f.snap(t), f.opts())
	if err != nil {
		t.Fatal(err)
	}
	if res.Deleted != int64(len(want)) || res.StartVersion != 6 || res.EndVersion != 7 {
		t.Fatalf("result %+v, want %d deleted at versions 6, 7", res, len(want))
	}
	for _, k := range want {
		if _, err := os.Lstat(filepath.Join(f.dir, k)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s survived: %v", k, err)
		}
	}
	for _, k := range untouchable {
		if _, err := os.Stat(filepath.Join(f.dir, k)); err != nil {
			t.Errorf("%s was deleted: %v", k, err)
		}
	}
	for _, k := range []string{"keep.parquet", "sub/keep2.parquet"} {
		if _, err := os.Stat(filepath.Join(outside, k)); err != nil {
			t.Errorf("outside file %s was deleted: %v", k, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(f.dir, "linkdir")); err != nil {
		t.Errorf("link to a directory outside was deleted: %v", err)
	}
	logAfter, _ := os.ReadDir(filepath.Join(f.dir, "_delta_log"))
	if len(logAfter) != len(logBefore)+5 {
		t.Errorf("_delta_log had %d entries, now %d (want 2 more commits, their .crc and _last_vacuum_info)", len(logBefore), len(logAfter))
	}
	// Version 3 (+10d) is the newest commit before the cut-off (+23d).
	if b, err := os.ReadFile(filepath.Join(f.dir, "_delta_log", "_last_vacuum_info")); err != nil || string(b) != `{"latestCommitVersionOutsideOfRetentionWindow":3}`+"\n" || res.LastVacuumInfo != 3 {
		t.Errorf("_last_vacuum_info %q %v, result %d", b, err, res.LastVacuumInfo)
	}

	// Every version from the one live at the cut-off (3) on reads the rows
	// it was written with; version 1 has lost its files.
	for v := int64(2); v <= 7; v++ {
		wantIDs := f.ids[min(v, 5)]
		ids, err := readIDs(ctx, f.tbl, v)
		if err != nil {
			t.Fatalf("version %d: %v", v, err)
		}
		if !slices.Equal(ids, wantIDs) {
			t.Fatalf("version %d reads %v, want %v", v, ids, wantIDs)
		}
	}
	if _, err := readIDs(ctx, f.tbl, 1); err == nil {
		t.Fatal("version 1 still reads: its files should be gone")
	}

	// The log records VACUUM START and END as Spark does.
	hist, err := f.tbl.History(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	end, start := hist[0].Info, hist[1].Info
	if start.Operation != "VACUUM START" || end.Operation != "VACUUM END" {
		t.Fatalf("operations %q, %q", start.Operation, end.Operation)
	}
	if sp := start.OperationParameters; len(sp) != 2 || sp["defaultRetentionMillis"] != float64(7*day/time.Millisecond) || sp["retentionCheckEnabled"] != true {
		t.Errorf("START parameters %v", start.OperationParameters)
	}
	if start.OperationMetrics["numFilesToDelete"] != fmt.Sprint(len(want)) || start.OperationMetrics["sizeOfDataToDelete"] != fmt.Sprint(res.Bytes) {
		t.Errorf("START metrics %v", start.OperationMetrics)
	}
	if end.OperationParameters["status"] != "COMPLETED" || end.OperationMetrics["numDeletedFiles"] != fmt.Sprint(len(want)) {
		t.Errorf("END %v %v", end.OperationParameters, end.OperationMetrics)
	}

	// A second run finds nothing more.
	o = f.opts()
	o.DryRun = true
	if res, err = vacuum.Vacuum(ctx, f.snap(t), o); err != nil || len(res.Files) != 0 {
		t.Fatalf("second run: %v, %+v", err, res.Files)
	}
}

func TestVacuumLite(t *testing.T) {
	ctx := context.Background()
	f := build(t)
	write(t, filepath.Join(f.dir, "part-orphan.parquet"), "orphan")
	snap1, err := f.tbl.SnapshotAt(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for a, err := range snap1.Files(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, snapshot.CanonicalPath(a.Path))
	}
	o := f.opts()
	o.Lite = true
	res, err := vacuum.Vacuum(ctx, f.snap(t), o)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, fl := range res.Files {
		got = append(got, fl.Key)
	}
	if !slices.Equal(got, want) || res.Deleted != int64(len(want)) {
		t.Fatalf("lite deleted %q (%d), want %q", got, res.Deleted, want)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "part-orphan.parquet")); err != nil {
		t.Fatalf("lite mode deleted an orphan it cannot know of: %v", err)
	}
	for v := int64(2); v <= 5; v++ {
		if ids, err := readIDs(ctx, f.tbl, v); err != nil || !slices.Equal(ids, f.ids[v]) {
			t.Fatalf("version %d: %v %v", v, ids, err)
		}
	}
}

func TestVacuumRetentionCheck(t *testing.T) {
	ctx := context.Background()
	f := build(t)
	o := f.opts()
	o.Retention, o.RetentionSet = time.Hour, true
	_, err := vacuum.Vacuum(ctx, f.snap(t), o)
	var re *vacuum.RetentionError
	if !errors.As(err, &re) || !errors.Is(err, vacuum.ErrRetentionTooShort) || !errors.Is(err, deltaerr.ErrInvalidArgument) {
		t.Fatalf("err = %v, want a RetentionError", err)
	}
	if re.Table != 7*day || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("error %v", err)
	}
	// Forced, a zero retention deletes B and C too (removed at +25d), and
	// the parameters say so.
	o.Retention, o.Force = 0, true
	res, err := vacuum.Vacuum(ctx, f.snap(t), o)
	if err != nil {
		t.Fatal(err)
	}
	// A, B and C are one file each.
	if res.Deleted != 3 {
		t.Fatalf("deleted %d files, want 3 (%+v)", res.Deleted, res.Files)
	}
	for v := int64(4); v <= 7; v++ {
		if ids, err := readIDs(ctx, f.tbl, v); err != nil || !slices.Equal(ids, f.ids[min(v, 5)]) {
			t.Fatalf("version %d: %v %v", v, ids, err)
		}
	}
	if _, err := readIDs(ctx, f.tbl, 3); err == nil {
		t.Fatal("version 3 still reads after a zero retention")
	}
	hist, err := f.tbl.History(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	p := hist[1].Info.OperationParameters
	if p["retentionCheckEnabled"] != false || p["specifiedRetentionMillis"] != float64(0) {
		t.Fatalf("START parameters %v", p)
	}
}

func TestVacuumRefusesUnsupportedWriter(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	commit := `{"commitInfo":{"timestamp":1}}
{"protocol":{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["vacuumProtocolCheck","someFutureFeature"]}}
{"metaData":{"id":"x","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":[],"configuration":{}}}
`
	if err := store.Put(ctx, "_delta_log/00000000000000000000.json", []byte(commit)); err != nil {
		t.Fatal(err)
	}
	if err := store.Put(ctx, "part-orphan.parquet", []byte("x")); err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		t.Skipf("the table does not load: %v", err)
	}
	now := time.Now().Add(30 * day)
	_, err = vacuum.Vacuum(ctx, snap, vacuum.Options{Now: func() time.Time { return now }})
	if !errors.Is(err, deltaerr.ErrUnsupportedFeature) || !strings.Contains(err.Error(), "someFutureFeature") {
		t.Fatalf("err = %v, want ErrUnsupportedFeature naming someFutureFeature", err)
	}
	if _, err := store.Stat(ctx, "part-orphan.parquet"); err != nil {
		t.Fatalf("a refused vacuum deleted a file: %v", err)
	}
}

// A Spark-written table whose one data file had three deletion vectors in
// turn: VACUUM keeps the data file (live) and the live vector's file, and
// deletes the files of the two vectors only tombstones name, in both
// modes; the latest version reads as before.
func TestVacuumSparkDeletionVectors(t *testing.T) {
	for _, lite := range []bool{false, true} {
		t.Run(fmt.Sprintf("lite=%v", lite), func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			src := filepath.Join(testutil.CorpusDir(t), "golden", "log-replay-dv-key-cases", "delta")
			if err := testutil.CopyTree(src, dir); err != nil {
				t.Fatal(err)
			}
			tbl, err := delta.Open(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer tbl.Close()
			snap, err := tbl.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var live string
			for a, err := range snap.Files(ctx) {
				if err != nil {
					t.Fatal(err)
				}
				if live, err = dv.RelativePath(a.DeletionVector); err != nil {
					t.Fatal(err)
				}
			}
			before, err := readIDs(ctx, tbl, snap.Version())
			if err != nil {
				t.Fatal(err)
			}
			var dvFiles []string
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), "deletion_vector_") && e.Name() != live {
					dvFiles = append(dvFiles, e.Name())
				}
			}
			if len(dvFiles) != 2 {
				t.Fatalf("corpus table has %d unreferenced DV files, want 2", len(dvFiles))
			}
			now := time.Now().Add(30 * day)
			res, err := vacuum.Vacuum(ctx, snap, vacuum.Options{Lite: lite, Now: func() time.Time { return now }})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range res.Files {
				got = append(got, f.Key)
			}
			if !slices.Equal(got, dvFiles) {
				t.Fatalf("deleted %q, want %q", got, dvFiles)
			}
			if _, err := os.Stat(filepath.Join(dir, live)); err != nil {
				t.Fatalf("the live DV file went: %v", err)
			}
			after, err := readIDs(ctx, tbl, snap.Version())
			if err != nil || !slices.Equal(after, before) {
				t.Fatalf("latest reads %v (%v), was %v", after, err, before)
			}
		})
	}
}

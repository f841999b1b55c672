package fileset_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/fileset"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/testutil"
)

// rowsAt returns the rows of version v (latest when v < 0) as sorted
// strings.
func rowsAt(t *testing.T, tbl *delta.Table, v int64) []string {
	t.Helper()
	ctx := context.Background()
	var snap *delta.Snapshot
	var err error
	if v < 0 {
		snap, err = tbl.Snapshot(ctx)
	} else {
		snap, err = tbl.SnapshotAt(ctx, v)
	}
	if err != nil {
		t.Fatal(err)
	}
	sc, err := tbl.Scan(snap, delta.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for row, err := range sc.Rows(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(row.Values()))
	}
	slices.Sort(out)
	return out
}

// minus returns the multiset a - b.
func minus(a, b []string) []string {
	left := map[string]int{}
	for _, s := range b {
		left[s]++
	}
	var out []string
	for _, s := range a {
		if left[s] > 0 {
			left[s]--
			continue
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

func restore(t *testing.T, tbl *delta.Table, v int64) fileset.RestoreResult {
	t.Helper()
	ctx := context.Background()
	latest, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	target, err := tbl.SnapshotAt(ctx, v)
	if err != nil {
		t.Fatal(err)
	}
	res, err := fileset.Restore(ctx, latest, target, fileset.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A Spark-written table with deletion vectors and the change data feed:
// every version of it is restored in turn, and after each restore the
// table reads as that version did, and the change data feed of the restore
// commit is exactly the difference.
func TestRestoreSparkDVTableWithCDF(t *testing.T) {
	ctx := context.Background()
	src := filepath.Join(testutil.CorpusDir(t), "kernel-rs", "cdf-table-with-dv")
	dir := t.TempDir()
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
	last := snap.Version()
	want := map[int64][]string{}
	for v := int64(0); v <= last; v++ {
		want[v] = rowsAt(t, tbl, v)
	}
	if slices.Equal(want[3], want[last]) {
		t.Fatalf("versions 3 and %d read the same: the test would prove nothing", last)
	}
	for _, v := range []int64{0, 3, 1, last} {
		before := rowsAt(t, tbl, -1)
		res := restore(t, tbl, v)
		after := rowsAt(t, tbl, -1)
		if !slices.Equal(after, want[v]) {
			t.Fatalf("after restoring version %d: rows %v, want %v", v, after, want[v])
		}
		// The change data feed of the restore commit.
		ch, err := tbl.Changes(ctx, delta.ChangeOptions{Start: res.Version, End: scan.UpTo(res.Version), Columns: []string{"value"}})
		if err != nil {
			t.Fatal(err)
		}
		var ins, del []string
		for row, err := range ch.Rows(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			vals := row.Values()
			s := fmt.Sprint(vals[:1])
			switch vals[1].String() {
			case "insert":
				ins = append(ins, s)
			case "delete":
				del = append(del, s)
			default:
				t.Fatalf("change type %v", vals[1])
			}
		}
		slices.Sort(ins)
		slices.Sort(del)
		if wantIns, wantDel := minus(after, before), minus(before, after); !slices.Equal(ins, wantIns) || !slices.Equal(del, wantDel) {
			t.Fatalf("restore to %d: CDF inserts %v deletes %v, want %v and %v", v, ins, del, wantIns, wantDel)
		}
	}
}

func newTable(t *testing.T) (*delta.Table, string) {
	t.Helper()
	return createTable(t, delta.TableSpec{
		PartitionColumns: []string{"p"},
		Properties:       map[string]string{"delta.enableChangeDataFeed": "true"},
	})
}

// createTable creates a table of columns id long and p string, with the
// rest of spec, in a new directory.
func createTable(t *testing.T, spec delta.TableSpec) (*delta.Table, string) {
	t.Helper()
	dir := t.TempDir()
	spec.Schema = &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.Long, Nullable: true},
		{Name: "p", Type: schema.String, Nullable: true},
	}}
	tbl, err := delta.Create(context.Background(), dir, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tbl.Close() })
	return tbl, dir
}

func rows(p string, ids ...int64) [][]schema.Value {
	var out [][]schema.Value
	for _, id := range ids {
		out = append(out, []schema.Value{schema.LongValue(id), schema.StringValue(p)})
	}
	return out
}

func TestRestoreCommit(t *testing.T) {
	ctx := context.Background()
	tbl, _ := newTable(t)
	for _, r := range [][][]schema.Value{rows("a", 1, 2), rows("b", 3)} {
		if _, err := tbl.AppendRows(ctx, r, delta.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tbl.OverwriteRows(ctx, rows("c", 9), delta.OverwriteOptions{}); err != nil {
		t.Fatal(err)
	}
	want := rowsAt(t, tbl, 2)
	v1, _ := tbl.SnapshotAt(ctx, 2)
	size, _ := v1.SizeInBytes(ctx)
	res := restore(t, tbl, 2)
	if got := rowsAt(t, tbl, -1); !slices.Equal(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	if res.Version != 4 || res.NumRestoredFiles != 2 || res.NumRemovedFiles != 1 || res.NumOfFilesAfterRestore != 2 || res.TableSizeAfterRestore != size {
		t.Fatalf("result %+v (size at 2: %d)", res, size)
	}
	hist, err := tbl.History(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	ci := hist[0].Info
	if ci.Operation != "RESTORE" || ci.OperationParameters["version"] != float64(2) || ci.OperationParameters["timestamp"] != nil {
		t.Fatalf("commitInfo %+v", ci)
	}
	for _, k := range []string{"numRestoredFiles", "removedFilesSize", "numRemovedFiles", "restoredFilesSize", "numOfFilesAfterRestore", "tableSizeAfterRestore"} {
		if _, ok := ci.OperationMetrics[k].(string); !ok {
			t.Errorf("metric %s missing: %v", k, ci.OperationMetrics)
		}
	}
	// The commit holds metaData and protocol, and the restored adds keep
	// their fields with dataChange true.
	raw, err := tbl.Store().Get(ctx, "_delta_log/00000000000000000004.json")
	if err != nil {
		t.Fatal(err)
	}
	acts, err := actions.DecodeCommitReader("4", bytesReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	var meta, proto bool
	for _, a := range acts {
		meta = meta || a.Metadata != nil
		proto = proto || a.Protocol != nil
		if a.Add != nil && (!a.Add.DataChange || a.Add.Stats == "") {
			t.Errorf("restored add %+v", a.Add)
		}
		if a.Remove != nil && (!a.Remove.DataChange || a.Remove.DeletionTimestamp == nil || a.Remove.Size == nil) {
			t.Errorf("remove %+v", a.Remove)
		}
		if a.CDC != nil {
			t.Errorf("a restore wrote cdc %+v", a.CDC)
		}
	}
	if !meta || !proto {
		t.Errorf("metaData %v, protocol %v in the restore commit", meta, proto)
	}

	// Restoring the latest version, or a later one, is refused.
	latest, _ := tbl.Snapshot(ctx)
	if _, err := fileset.Restore(ctx, latest, latest, fileset.RestoreOptions{}); !errors.Is(err, deltaerr.ErrInvalidArgument) {
		t.Fatalf("restore to latest: %v", err)
	}
}

func TestRestoreRefusesMissingFiles(t *testing.T) {
	ctx := context.Background()
	tbl, dir := newTable(t)
	if _, err := tbl.AppendRows(ctx, rows("a", 1), delta.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.OverwriteRows(ctx, rows("b", 2), delta.OverwriteOptions{}); err != nil {
		t.Fatal(err)
	}
	s1, _ := tbl.SnapshotAt(ctx, 1)
	var gone string
	for a, err := range s1.Files(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		gone = snapshot.CanonicalPath(a.Path)
	}
	if err := os.Remove(filepath.Join(dir, gone)); err != nil {
		t.Fatal(err)
	}
	latest, _ := tbl.Snapshot(ctx)
	_, err := fileset.Restore(ctx, latest, s1, fileset.RestoreOptions{Timestamp: time.Now()})
	var me *fileset.MissingFilesError
	if !errors.As(err, &me) || !errors.Is(err, fileset.ErrMissingFiles) || me.Version != 1 || len(me.Paths) != 1 {
		t.Fatalf("err = %v, want a MissingFilesError naming 1 file", err)
	}
	if now, _ := tbl.Snapshot(ctx); now.Version() != 2 {
		t.Fatalf("a refused restore committed version %d", now.Version())
	}
}

func TestMergeProtocols(t *testing.T) {
	p := func(r, w int32, rf, wf []string) actions.Protocol {
		return actions.Protocol{MinReaderVersion: r, MinWriterVersion: w, ReaderFeatures: rf, WriterFeatures: wf}
	}
	for _, c := range []struct {
		name    string
		a, b, w actions.Protocol
	}{
		{"legacy", p(1, 2, nil, nil), p(1, 4, nil, nil), p(1, 4, nil, nil)},
		{"legacy column mapping", p(2, 5, nil, nil), p(1, 2, nil, nil), p(2, 5, nil, nil)},
		{"legacy and features", p(1, 2, nil, nil), p(1, 7, nil, []string{"domainMetadata"}),
			p(1, 7, nil, []string{"appendOnly", "domainMetadata", "invariants"})},
		{"reader features", p(3, 7, []string{"deletionVectors"}, []string{"deletionVectors"}), p(2, 5, nil, nil),
			p(3, 7, []string{"columnMapping", "deletionVectors"}, []string{"appendOnly", "changeDataFeed", "checkConstraints", "columnMapping", "deletionVectors", "generatedColumns", "invariants"})},
	} {
		got := fileset.MergeProtocols(c.a, c.b)
		if fmt.Sprint(got) != fmt.Sprint(c.w) {
			t.Errorf("%s: %v, want %v", c.name, got, c.w)
		}
	}
}

// RESTORE brings back the clustering columns of the version restored (a
// new delta.clustering domain), as Spark's RestoreTableCommand does, and
// leaves the row-id high-water mark of delta.rowTracking where it is: it
// must never go back, or new rows would reuse the ids of live ones.
func TestRestoreDomainMetadata(t *testing.T) {
	ctx := context.Background()
	tbl, _ := createTable(t, delta.TableSpec{
		ClusterBy:  []string{"id"},
		Properties: map[string]string{"delta.enableRowTracking": "true"},
	})
	domain := func(name string) (string, bool) {
		t.Helper()
		snap, err := tbl.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cfg, ok, err := snap.DomainMetadata(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return cfg, ok
	}
	if _, err := tbl.AppendRows(ctx, rows("a", 1, 2), delta.WriteOptions{}); err != nil { // v1
		t.Fatal(err)
	}
	if _, err := tbl.ClusterBy(ctx, []string{"p"}); err != nil { // v2
		t.Fatal(err)
	}
	if _, err := tbl.AppendRows(ctx, rows("b", 3, 4, 5), delta.WriteOptions{}); err != nil { // v3
		t.Fatal(err)
	}
	if cfg, _ := domain(actions.DomainClustering); cfg != `{"clusteringColumns":[["p"]]}` {
		t.Fatalf("clustering before the restore: %s", cfg)
	}
	markBefore, _ := domain("delta.rowTracking")
	if markBefore != `{"rowIdHighWaterMark":4}` {
		t.Fatalf("high-water mark before the restore: %s", markBefore)
	}

	restore(t, tbl, 1)
	if cfg, ok := domain(actions.DomainClustering); !ok || cfg != `{"clusteringColumns":[["id"]]}` {
		t.Fatalf("clustering after restoring version 1: %q %v, want the columns of version 1", cfg, ok)
	}
	if mark, _ := domain("delta.rowTracking"); mark != markBefore {
		t.Fatalf("high-water mark after the restore: %s, want %s kept", mark, markBefore)
	}
	// New rows get ids above every id ever given, not reused ones.
	if _, err := tbl.AppendRows(ctx, rows("c", 6), delta.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if mark, _ := domain("delta.rowTracking"); mark != `{"rowIdHighWaterMark":5}` {
		t.Fatalf("high-water mark after an append: %s", mark)
	}

	// Restoring version 0 (clustered by id, no rows) after clustering by
	// nothing brings the columns back too.
	if _, err := tbl.ClusterBy(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if cfg, _ := domain(actions.DomainClustering); cfg != `{"clusteringColumns":[]}` {
		t.Fatalf("clustering after CLUSTER BY NONE: %s", cfg)
	}
	restore(t, tbl, 2)
	if cfg, _ := domain(actions.DomainClustering); cfg != `{"clusteringColumns":[["p"]]}` {
		t.Fatalf("clustering after restoring version 2: %s", cfg)
	}
}

// Restoring a version from before the table was clustered leaves a
// clustering domain with no columns, as Spark writes it: the table is no
// longer clustered, as it was not then.
func TestRestoreBeforeClustering(t *testing.T) {
	ctx := context.Background()
	tbl, _ := createTable(t, delta.TableSpec{})
	if _, err := tbl.AppendRows(ctx, rows("a", 1), delta.WriteOptions{}); err != nil { // v1
		t.Fatal(err)
	}
	if _, err := tbl.ClusterBy(ctx, []string{"id"}); err != nil { // v2
		t.Fatal(err)
	}
	restore(t, tbl, 1)
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cfg, ok, err := snap.DomainMetadata(ctx, actions.DomainClustering); err != nil || !ok || cfg != `{"clusteringColumns":[]}` {
		t.Fatalf("clustering after the restore: %q %v %v", cfg, ok, err)
	}
}

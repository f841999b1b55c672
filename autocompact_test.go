package delta_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/optimize"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
	"github.com/godelta/delta/txn"
)

// autoSchema is the schema of the auto compaction tests: an id and a
// partition column p.
var autoSchema = &schema.StructType{Fields: []schema.StructField{
	{Name: "id", Type: schema.Long, Nullable: true},
	{Name: "p", Type: schema.String, Nullable: true},
}}

// autoOn is the table property that turns auto compaction on.
var autoOn = map[string]string{tableconfig.KeyAutoCompact: "true"}

// newAutoTable creates a table for the auto compaction tests.
func newAutoTable(t *testing.T, uri string, props map[string]string, parts ...string) *delta.Table {
	t.Helper()
	tbl, err := delta.Create(context.Background(), uri, delta.TableSpec{Schema: autoSchema, PartitionColumns: parts, Properties: props})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tbl.Close() })
	return tbl
}

// autoRows are rows id from..from+n-1 in partition p.
func autoRows(from, n int64, p string) [][]schema.Value {
	var out [][]schema.Value
	for i := from; i < from+n; i++ {
		out = append(out, []schema.Value{schema.LongValue(i), schema.StringValue(p)})
	}
	return out
}

// tableRows reads the table's rows as sorted "id/p" strings.
func tableRows(t *testing.T, tbl *delta.Table) []string {
	t.Helper()
	ctx := context.Background()
	snap, err := tbl.Snapshot(ctx)
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
		v := row.Values()
		out = append(out, fmt.Sprintf("%d/%s", v[0].Int64(), v[1].String()))
	}
	slices.Sort(out)
	return out
}

// filesPerPartition counts the live files of each partition (by the
// value of p; "" for an unpartitioned table).
func filesPerPartition(t *testing.T, tbl *delta.Table) map[string]int {
	t.Helper()
	ctx := context.Background()
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for a, err := range snap.Files(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		out[a.PartitionValues["p"]]++
	}
	return out
}

// optimizeCommits returns the versions of the table's OPTIMIZE commits,
// oldest first, and checks each records auto=true as Spark's auto
// compaction does.
func optimizeCommits(t *testing.T, tbl *delta.Table) []int64 {
	t.Helper()
	hist, err := tbl.History(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, c := range slices.Backward(hist) {
		if c.Info.Operation != "OPTIMIZE" {
			continue
		}
		out = append(out, c.Version)
		if auto, _ := c.Info.OperationParameters["auto"].(bool); !auto {
			t.Errorf("OPTIMIZE at version %d: operationParameters %v, want auto true", c.Version, c.Info.OperationParameters)
		}
		if c.Info.EngineInfo != delta.EngineInfo {
			t.Errorf("OPTIMIZE at version %d: engineInfo %q, want the triggering commit's %q", c.Version, c.Info.EngineInfo, delta.EngineInfo)
		}
	}
	return out
}

// With delta.autoOptimize.autoCompact on, the append that brings the
// table to AutoCompactMinNumFiles small files is followed by one OPTIMIZE
// commit (auto=true): the rows stay, the files are merged. Without the
// property, nothing ever compacts.
func TestAutoCompactAppends(t *testing.T) {
	ctx := context.Background()
	n := int64(optimize.AutoCompactMinNumFiles)
	on := newAutoTable(t, "memory://autocompact-appends-on", autoOn)
	off := newAutoTable(t, "memory://autocompact-appends-off", nil)
	for i := range n + 5 {
		for _, tbl := range []*delta.Table{on, off} {
			res, err := tbl.AppendRows(ctx, autoRows(i*3, 3, "x"), delta.WriteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if res.PostCommit.Err != nil {
				t.Fatalf("append %d: post-commit: %v", i, res.PostCommit.Err)
			}
			want := int64(0)
			if tbl == on && i == n-1 {
				want = res.Version + 1
			}
			if res.PostCommit.AutoCompacted != want {
				t.Fatalf("append %d (version %d): AutoCompacted %d, want %d", i, res.Version, res.PostCommit.AutoCompacted, want)
			}
		}
	}
	if got := optimizeCommits(t, on); !slices.Equal(got, []int64{n + 1}) {
		t.Errorf("OPTIMIZE commits %v, want one at version %d (after the append at %d)", got, n+1, n)
	}
	if got := optimizeCommits(t, off); len(got) != 0 {
		t.Errorf("a table without the property compacted: %v", got)
	}
	if got := filesPerPartition(t, on)[""]; got != 1+5 {
		t.Errorf("%d files after compaction and 5 more appends, want 6", got)
	}
	if got := filesPerPartition(t, off)[""]; got != int(n)+5 {
		t.Errorf("%d files without auto compaction, want %d", got, n+5)
	}
	if a, b := tableRows(t, on), tableRows(t, off); !slices.Equal(a, b) || len(a) != int(3*(n+5)) {
		t.Errorf("rows differ after compaction: %d vs %d", len(a), len(b))
	}
}

// A streaming sink's commits compact too: the post-commit chain is the
// same for every entry point.
func TestAutoCompactSink(t *testing.T) {
	ctx := context.Background()
	tbl := newAutoTable(t, "memory://autocompact-sink", autoOn)
	sink, err := tbl.Sink("app", delta.SinkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := int64(optimize.AutoCompactMinNumFiles)
	var compacted []int64
	for i := range n {
		res, err := sink.Write(ctx, i, delta.Rows(autoRows(i*2, 2, "s")))
		if err != nil {
			t.Fatal(err)
		}
		if res.Commit.PostCommit.Err != nil {
			t.Fatal(res.Commit.PostCommit.Err)
		}
		if v := res.Commit.PostCommit.AutoCompacted; v != 0 {
			compacted = append(compacted, v)
		}
	}
	if got := optimizeCommits(t, tbl); !slices.Equal(got, compacted) || len(got) != 1 {
		t.Errorf("OPTIMIZE commits %v, reported %v; want one", got, compacted)
	}
	if got := filesPerPartition(t, tbl)[""]; got != 1 {
		t.Errorf("%d files after the sink's compaction, want 1", got)
	}
	if got := tableRows(t, tbl); len(got) != int(2*n) {
		t.Errorf("%d rows, want %d", len(got), 2*n)
	}
	// The sink goes on from the compacted version.
	if _, err := sink.Write(ctx, n, delta.Rows(autoRows(2*n, 2, "s"))); err != nil {
		t.Fatal(err)
	}
}

// On a partitioned table only the partitions the commit wrote, holding
// enough small files, are compacted: a partition with as many small
// files that the commit did not touch keeps them.
func TestAutoCompactTouchedPartitionsOnly(t *testing.T) {
	ctx := context.Background()
	n := int64(optimize.AutoCompactMinNumFiles)
	tbl := newAutoTable(t, "memory://autocompact-partitions", nil, "p")
	// Partition b gets its small files before auto compaction is on.
	for i := range n + 3 {
		if _, err := tbl.AppendRows(ctx, autoRows(1000+i, 1, "b"), delta.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tbl.SetProperties(ctx, autoOn, delta.AlterOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := optimizeCommits(t, tbl); len(got) != 0 {
		t.Fatalf("setting the property compacted (%v): it writes no data", got)
	}
	// Appends to a and c: a reaches the threshold, c does not.
	for i := range n {
		rows := autoRows(i, 1, "a")
		if i < 10 {
			rows = append(rows, autoRows(500+i, 1, "c")...)
		}
		if _, err := tbl.AppendRows(ctx, rows, delta.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if got := optimizeCommits(t, tbl); len(got) != 1 {
		t.Fatalf("OPTIMIZE commits %v, want one", got)
	}
	files := filesPerPartition(t, tbl)
	if files["a"] != 1 || files["b"] != int(n+3) || files["c"] != 10 {
		t.Errorf("files per partition %v, want a:1 (compacted) b:%d (not written) c:10 (too few)", files, n+3)
	}
	hist, err := tbl.History(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	var pred []string
	if err := json.Unmarshal([]byte(hist[0].Info.OperationParameters["predicate"].(string)), &pred); err != nil || len(pred) != 1 || pred[0] != "`p` = 'a'" {
		t.Errorf("predicate %v (%v), want the partition compacted", hist[0].Info.OperationParameters["predicate"], err)
	}
	if got := tableRows(t, tbl); len(got) != int(n+3+n+10) {
		t.Errorf("%d rows, want %d", len(got), n+3+n+10)
	}
}

// concurrentDelete, when set, is run by a test hook just before auto
// compaction: the commit of a concurrent writer in between.
var concurrentDelete atomic.Pointer[func(ctx context.Context, res *txn.CommitResult) error]

func init() {
	txn.RegisterHook(txn.Hook{Name: "test: a writer before auto compaction", Order: txn.OrderCompaction - 1,
		Run: func(ctx context.Context, res *txn.CommitResult) error {
			if f := concurrentDelete.Load(); f != nil {
				return (*f)(ctx, res)
			}
			return nil
		}})
}

// A conflict in the compaction (a concurrent DELETE removed files it
// rewrote) fails the hook, not the append: the append has landed, the
// failure is in PostCommitWork.Failed, nothing of the compaction is
// committed, and the next append compacts.
func TestAutoCompactConflict(t *testing.T) {
	ctx := context.Background()
	n := int64(optimize.AutoCompactMinNumFiles)
	tbl := newAutoTable(t, "memory://autocompact-conflict", autoOn)
	for i := range n - 1 {
		if _, err := tbl.AppendRows(ctx, autoRows(i, 1, "x"), delta.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var deleted int64 = -1
	f := func(ctx context.Context, res *txn.CommitResult) error {
		concurrentDelete.Store(nil)
		r, err := tbl.Delete(ctx, "id = 0", delta.DMLOptions{})
		if err == nil {
			deleted = r.Commit.Version
		}
		return err
	}
	concurrentDelete.Store(&f)
	defer concurrentDelete.Store(nil)
	res, err := tbl.AppendRows(ctx, autoRows(n-1, 1, "x"), delta.WriteOptions{})
	if err != nil {
		t.Fatalf("the append failed: %v", err)
	}
	if deleted != res.Version+1 {
		t.Fatalf("the concurrent delete committed at %d, want %d", deleted, res.Version+1)
	}
	w := res.PostCommit
	if len(w.Failed) != 1 || w.Failed[0].Hook != optimize.HookAutoCompact || !errors.Is(w.Failed[0].Err, txn.ErrConflict) || !errors.Is(w.Err, txn.ErrConflict) {
		t.Fatalf("PostCommit %+v: want the auto compaction failed with a conflict", w)
	}
	if w.AutoCompacted != 0 || len(optimizeCommits(t, tbl)) != 0 {
		t.Fatalf("a compaction committed despite the conflict")
	}
	if got := tableRows(t, tbl); len(got) != int(n-1) || slices.Contains(got, "0/x") {
		t.Fatalf("rows %d, want %d without id 0", len(got), n-1)
	}
	// The next append compacts.
	res, err = tbl.AppendRows(ctx, autoRows(n, 1, "x"), delta.WriteOptions{})
	if err != nil || res.PostCommit.Err != nil || res.PostCommit.AutoCompacted != res.Version+1 {
		t.Fatalf("the next append: %v, post-commit %+v; want a compaction", err, res.PostCommit)
	}
	if got := tableRows(t, tbl); len(got) != int(n) {
		t.Fatalf("rows %d, want %d", len(got), n)
	}
}

// Auto compaction is OPTIMIZE: on a table with deletion vectors and row
// tracking, files whose deletion vectors are applied are rewritten
// without them, and every row keeps its row id and commit version.
func TestAutoCompactDeletionVectorsRowTracking(t *testing.T) {
	ctx := context.Background()
	n := int64(optimize.AutoCompactMinNumFiles)
	tbl, err := delta.Create(ctx, "memory://autocompact-dv-rt", delta.TableSpec{
		Schema: &schema.StructType{Fields: []schema.StructField{
			{Name: "id", Type: schema.Long, Nullable: true},
			{Name: "x", Type: schema.Long, Nullable: true},
		}},
		Properties: map[string]string{tableconfig.KeyAutoCompact: "true",
			tableconfig.KeyEnableRowTracking: "true", tableconfig.KeyEnableDeletionVectors: "true"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	for i := range n - 1 {
		if _, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(2 * i), schema.LongValue(0)},
			{schema.LongValue(2*i + 1), schema.LongValue(1)}}, delta.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Deletion vectors on every file: a DELETE writes no data file, so it
	// does not compact.
	d, err := tbl.Delete(ctx, "x = 1", delta.DMLOptions{})
	if err != nil || d.Commit.PostCommit.AutoCompacted != 0 {
		t.Fatalf("delete: %v, %+v", err, d.Commit.PostCommit)
	}
	before := rowIdentities(t, tbl)
	res, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(1000), schema.LongValue(0)}}, delta.WriteOptions{})
	if err != nil || res.PostCommit.Err != nil || res.PostCommit.AutoCompacted == 0 {
		t.Fatalf("append: %v, post-commit %+v; want a compaction", err, res.PostCommit)
	}
	after := rowIdentities(t, tbl)
	if len(after) != len(before)+1 || len(before) != int(n-1) {
		t.Fatalf("%d rows after, %d before", len(after), len(before))
	}
	for id, b := range before {
		if a := after[id]; a != b {
			t.Errorf("row %d: row id and version %v, had %v", id, a, b)
		}
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	for a, err := range snap.Files(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		files++
		if a.DeletionVector != nil {
			t.Errorf("%s still has a deletion vector", a.Path)
		}
	}
	if files != 1 {
		t.Errorf("%d files after compaction, want 1", files)
	}
}

// A value of delta.autoOptimize.autoCompact that Spark refuses, which
// only another engine can have written, leaves the table readable and
// writable: the hook reports it after each write, as Spark's fails.
func TestAutoCompactInvalidValue(t *testing.T) {
	ctx := context.Background()
	tbl := newAutoTable(t, "memory://autocompact-invalid", nil)
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m := snap.Metadata()
	m.Configuration = map[string]string{tableconfig.KeyAutoCompact: "sometimes"}
	tx, err := tbl.Begin(ctx, delta.TxnOptions{Operation: "SET TBLPROPERTIES"})
	if err != nil {
		t.Fatal(err)
	}
	tx.SetMetadata(m)
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := tbl.AppendRows(ctx, autoRows(0, 1, "x"), delta.WriteOptions{})
	if err != nil {
		t.Fatalf("append to a table with an invalid auto compaction value: %v", err)
	}
	var pe *tableconfig.PropertyError
	if w := res.PostCommit; len(w.Failed) != 1 || w.Failed[0].Hook != optimize.HookAutoCompact || !errors.As(w.Err, &pe) || pe.Key != tableconfig.KeyAutoCompact {
		t.Fatalf("PostCommit %+v: want the auto compaction failed on the property", w)
	}
	if got := tableRows(t, tbl); len(got) != 1 {
		t.Fatalf("%d rows, want 1", len(got))
	}
}

// DML that writes rows compacts too: an UPDATE (copy-on-write) writes a
// file to a partition that holds enough small files.
func TestAutoCompactUpdate(t *testing.T) {
	ctx := context.Background()
	n := int64(optimize.AutoCompactMinNumFiles)
	tbl := newAutoTable(t, "memory://autocompact-update", nil)
	for i := range n {
		if _, err := tbl.AppendRows(ctx, autoRows(i, 1, "x"), delta.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tbl.SetProperties(ctx, autoOn, delta.AlterOptions{}); err != nil {
		t.Fatal(err)
	}
	u, err := tbl.UpdateRows(ctx, "p = 'y'", "id = 3", delta.DMLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !u.Committed || u.Commit.PostCommit.Err != nil || u.Commit.PostCommit.AutoCompacted != u.Commit.Version+1 {
		t.Fatalf("UPDATE post-commit %+v: want a compaction", u.Commit.PostCommit)
	}
	rows := tableRows(t, tbl)
	if len(rows) != int(n) || !slices.Contains(rows, "3/y") {
		t.Fatalf("rows after the update and compaction: %v", rows)
	}
	if got := filesPerPartition(t, tbl)[""]; got != 1 {
		t.Errorf("%d files, want 1", got)
	}
}

package optimize_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/internal/dv"
	"github.com/godelta/delta/optimize"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/txn"
)

var ctx = context.Background()

// eventSchema: id long, x long, y string, p string (partition column in
// the partitioned tables).
func eventSchema() *schema.StructType {
	return &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.Long, Nullable: true},
		{Name: "x", Type: schema.Long, Nullable: true},
		{Name: "y", Type: schema.String, Nullable: true},
		{Name: "p", Type: schema.String, Nullable: true},
	}}
}

// row is one event; x and y are derived from id so that any row can be
// recomputed from its id.
func row(id int64, p string) []schema.Value {
	y := schema.StringValue(fmt.Sprintf("y%03d", (id*7919)%1000))
	if id%13 == 0 {
		y = schema.Value{} // some nulls
	}
	return []schema.Value{schema.LongValue(id), schema.LongValue((id * 104729) % 997), y, schema.StringValue(p)}
}

func rowString(vals []schema.Value) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = v.String()
	}
	return strings.Join(parts, "|")
}

// newTable creates a table in a temp dir; parts may be nil.
func newTable(t *testing.T, parts []string, props map[string]string) *delta.Table {
	t.Helper()
	tbl, err := delta.Create(ctx, filepath.Join(t.TempDir(), "t"), delta.TableSpec{Schema: eventSchema(), PartitionColumns: parts, Properties: props})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tbl.Close() })
	return tbl
}

// appendFiles appends, in one commit each, n files of per rows to each
// partition in parts, ids counting from *next; it returns the rows
// written, as strings.
func appendFiles(t *testing.T, tbl *delta.Table, parts []string, n, per int, next *int64) []string {
	t.Helper()
	var all []string
	for range n {
		for _, p := range parts {
			var rows [][]schema.Value
			for range per {
				r := row(*next, p)
				*next++
				rows = append(rows, r)
				all = append(all, rowString(r))
			}
			if _, err := tbl.AppendRows(ctx, rows, delta.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return all
}

// tableRows reads every row of the latest version, as sorted strings.
func tableRows(t *testing.T, tbl *delta.Table) []string {
	t.Helper()
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return snapRows(t, snap)
}

func snapRows(t *testing.T, snap *snapshot.Snapshot) []string {
	t.Helper()
	sc, err := scan.New(snap, scan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for b, err := range sc.Batches(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		for i := range b.Len {
			vals := make([]schema.Value, len(b.Columns))
			for j := range b.Columns {
				vals[j] = b.Columns[j][i]
			}
			out = append(out, rowString(vals))
		}
	}
	slices.Sort(out)
	return out
}

func liveFiles(t *testing.T, tbl *delta.Table) []*actions.Add {
	t.Helper()
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []*actions.Add
	for a, err := range snap.Files(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

// commitActions reads the actions of one commit.
func commitActions(t *testing.T, tbl *delta.Table, v int64) []actions.Action {
	t.Helper()
	name := fmt.Sprintf("_delta_log/%020d.json", v)
	data, err := tbl.Store().Get(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	acts, err := actions.DecodeCommit(name, data)
	if err != nil {
		t.Fatal(err)
	}
	return acts
}

// dataFiles lists the Parquet files in the table directory (orphans
// included).
func dataFiles(t *testing.T, tbl *delta.Table) []string {
	t.Helper()
	var out []string
	root := strings.TrimPrefix(tbl.URI(), "file://")
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".parquet") && !strings.Contains(path, "_delta_log") {
			rel, _ := filepath.Rel(root, path)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(out)
	return out
}

func sortedCopy(xs []string) []string {
	out := slices.Clone(xs)
	slices.Sort(out)
	return out
}

func TestCompaction(t *testing.T) {
	parts := []string{"a", "b", "c"}
	tbl := newTable(t, []string{"p"}, nil)
	var next int64
	want := sortedCopy(appendFiles(t, tbl, parts, 4, 50, &next))
	// A partition with a single file stays as it is.
	want = append(want, appendFiles(t, tbl, []string{"lonely"}, 1, 10, &next)...)
	slices.Sort(want)
	before := liveFiles(t, tbl)

	res, err := tbl.Optimize(ctx, optimize.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Committed {
		t.Fatal("nothing committed")
	}
	if got := tableRows(t, tbl); !slices.Equal(got, want) {
		t.Fatalf("rows changed: %d rows, want %d", len(got), len(want))
	}
	after := liveFiles(t, tbl)
	perPart := map[string]int{}
	for _, a := range after {
		perPart[a.PartitionValues["p"]]++
	}
	if wantParts := map[string]int{"a": 1, "b": 1, "c": 1, "lonely": 1}; !maps.Equal(perPart, wantParts) {
		t.Errorf("files per partition %v, want %v", perPart, wantParts)
	}
	m := res.Metrics
	if m.NumFilesRemoved != 12 || m.NumFilesAdded != 3 || m.PartitionsOptimized != 3 || m.TotalConsideredFiles != int64(len(before)) || m.TotalFilesSkipped != 1 {
		t.Errorf("metrics %+v", m)
	}
	// The commit: commitInfo as Spark writes it, removes and adds with
	// dataChange false.
	acts := commitActions(t, tbl, res.Commit.Version)
	var removes, adds int
	for _, a := range acts {
		switch {
		case a.CommitInfo != nil:
			ci := a.CommitInfo
			if ci.Operation != "OPTIMIZE" || ci.OperationParameters["predicate"] != "[]" || ci.OperationParameters["zOrderBy"] != "[]" || ci.OperationParameters["auto"] != false {
				t.Errorf("commitInfo %+v", ci)
			}
			if ci.IsolationLevel != "SnapshotIsolation" {
				t.Errorf("isolation level %s", ci.IsolationLevel)
			}
			if ci.OperationMetrics["numRemovedFiles"] != "12" || ci.OperationMetrics["numAddedFiles"] != "3" || ci.OperationMetrics["numDeletionVectorsRemoved"] != "0" {
				t.Errorf("operationMetrics %v", ci.OperationMetrics)
			}
		case a.Remove != nil:
			removes++
			if a.Remove.DataChange {
				t.Errorf("remove %s has dataChange true", a.Remove.Path)
			}
		case a.Add != nil:
			adds++
			if a.Add.DataChange || a.Add.DeletionVector != nil {
				t.Errorf("add %+v: dataChange true or a deletion vector", a.Add)
			}
		}
	}
	if removes != 12 || adds != 3 {
		t.Errorf("%d removes, %d adds", removes, adds)
	}

	// Idempotent: a second run commits nothing.
	v := res.Commit.Version
	res2, err := tbl.Optimize(ctx, optimize.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res2.Committed || res2.Metrics.NumFilesRemoved != 0 {
		t.Fatalf("second OPTIMIZE: %+v", res2)
	}
	snap, _ := tbl.Snapshot(ctx)
	if snap.Version() != v {
		t.Fatalf("version %d after a no-op, want %d", snap.Version(), v)
	}
}

func TestCompactionTargetSizeSplitsBins(t *testing.T) {
	tbl := newTable(t, nil, nil)
	var next int64
	want := sortedCopy(appendFiles(t, tbl, []string{"x"}, 20, 200, &next))
	files := liveFiles(t, tbl)
	var total int64
	for _, f := range files {
		total += f.Size
	}
	// A target of about a quarter of the data: several bins, each
	// written as files of about the target size.
	target := total / 4
	res, err := tbl.Optimize(ctx, optimize.Options{TargetSize: target})
	if err != nil {
		t.Fatal(err)
	}
	if res.Metrics.NumBins < 3 || res.Metrics.NumFilesAdded < 3 || res.Metrics.NumFilesAdded >= 20 {
		t.Errorf("bins %d, files added %d", res.Metrics.NumBins, res.Metrics.NumFilesAdded)
	}
	if got := tableRows(t, tbl); !slices.Equal(got, want) {
		t.Fatal("rows changed")
	}
}

func TestWherePartitionsOnly(t *testing.T) {
	tbl := newTable(t, []string{"p"}, nil)
	var next int64
	want := sortedCopy(appendFiles(t, tbl, []string{"a", "b"}, 3, 10, &next))
	if _, err := tbl.Optimize(ctx, optimize.Options{Where: mustParse(t, "x > 3")}); !errors.Is(err, optimize.ErrPredicate) {
		t.Fatalf("data predicate: %v", err)
	}
	res, err := tbl.Optimize(ctx, optimize.Options{Where: mustParse(t, "p = 'a'")})
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, a := range liveFiles(t, tbl) {
		count[a.PartitionValues["p"]]++
	}
	if count["a"] != 1 || count["b"] != 3 {
		t.Errorf("files per partition %v", count)
	}
	acts := commitActions(t, tbl, res.Commit.Version)
	if p := acts[0].CommitInfo.OperationParameters["predicate"]; p != `["(p = 'a')"]` && !strings.Contains(fmt.Sprint(p), "p") {
		t.Errorf("predicate parameter %v", p)
	}
	if got := tableRows(t, tbl); !slices.Equal(got, want) {
		t.Fatal("rows changed")
	}
}

func mustParse(t *testing.T, s string) expr.Expr {
	t.Helper()
	e, err := expr.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// deleteRows commits a deletion vector (inline) on the file f removing
// the rows at positions pos, as a DELETE with deletion vectors does.
func deleteRows(t *testing.T, tbl *delta.Table, f *actions.Add, pos ...uint64) {
	t.Helper()
	d, err := dv.NewInline(dv.New(pos...))
	if err != nil {
		t.Fatal(err)
	}
	_, err = tbl.Update(ctx, txn.Options{Operation: "DELETE"}, func(tx *txn.Transaction) error {
		now := int64(1)
		size := f.Size
		tx.Remove(actions.Remove{Path: f.Path, DeletionTimestamp: &now, DataChange: true, PartitionValues: f.PartitionValues, Size: &size})
		a := *f
		a.DeletionVector = d
		a.DataChange = true
		tx.Add(a)
		tx.ReadFiles(f.Path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestDeletionVectorsApplied(t *testing.T) {
	tbl := newTable(t, nil, map[string]string{"delta.enableDeletionVectors": "true"})
	var next int64
	written := appendFiles(t, tbl, []string{"x"}, 1, 40, &next)
	f := liveFiles(t, tbl)[0]
	deleteRows(t, tbl, f, 0, 5, 39)
	var want []string
	for i, r := range written {
		if i != 0 && i != 5 && i != 39 {
			want = append(want, r)
		}
	}
	slices.Sort(want)
	// A lone file with a deletion vector removing 3/40 > 5% of its rows
	// is rewritten.
	res, err := tbl.Optimize(ctx, optimize.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Committed || res.Metrics.DeletionVectorStats.NumDeletionVectorsRemoved != 1 || res.Metrics.DeletionVectorStats.NumDeletionVectorRowsRemoved != 3 {
		t.Fatalf("result %+v", res)
	}
	if got := tableRows(t, tbl); !slices.Equal(got, want) {
		t.Fatalf("rows %d, want %d", len(got), len(want))
	}
	for _, a := range commitActions(t, tbl, res.Commit.Version) {
		switch {
		case a.Remove != nil && a.Remove.DeletionVector == nil:
			t.Error("the remove does not carry the deletion vector")
		case a.Add != nil && a.Add.DeletionVector != nil:
			t.Error("an add has a deletion vector")
		case a.CommitInfo != nil && a.CommitInfo.OperationMetrics["numDeletionVectorsRemoved"] != "1":
			t.Errorf("operationMetrics %v", a.CommitInfo.OperationMetrics)
		}
	}
	// A file that is not small (MinFileSize 1 byte) is rewritten for its
	// deletion vector only past MaxDeletedRowsRatio (Spark's rule).
	tbl2 := newTable(t, nil, map[string]string{"delta.enableDeletionVectors": "true"})
	appendFiles(t, tbl2, []string{"x"}, 1, 100, &next)
	deleteRows(t, tbl2, liveFiles(t, tbl2)[0], 7)
	res, err = tbl2.Optimize(ctx, optimize.Options{MinFileSize: 1})
	if err != nil || res.Committed {
		t.Fatalf("1%% deleted: %+v, %v", res, err)
	}
	res, err = tbl2.Optimize(ctx, optimize.Options{MinFileSize: 1, MaxDeletedRowsRatio: 0.005})
	if err != nil || !res.Committed {
		t.Fatalf("1%% deleted, ratio 0.5%%: %+v, %v", res, err)
	}
}

// TestConcurrentAppend: an append that commits while OPTIMIZE runs (after
// its snapshot) does not conflict; both commit and every row is there.
func TestConcurrentAppend(t *testing.T) {
	tbl := newTable(t, []string{"p"}, nil)
	var next int64
	want := appendFiles(t, tbl, []string{"a"}, 5, 20, &next)
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The append wins the race into the partition being compacted.
	want = append(want, appendFiles(t, tbl, []string{"a"}, 1, 20, &next)...)
	slices.Sort(want)
	res, err := optimize.Run(ctx, snap, optimize.Options{})
	if err != nil {
		t.Fatalf("OPTIMIZE after a concurrent append: %v", err)
	}
	if res.Commit.Version != snap.Version()+2 || res.Commit.Attempts < 2 {
		t.Errorf("commit %+v", res.Commit)
	}
	if got := tableRows(t, tbl); !slices.Equal(got, want) {
		t.Fatalf("rows %d, want %d", len(got), len(want))
	}
	if n := len(liveFiles(t, tbl)); n != 2 {
		t.Errorf("%d files, want the compacted one and the appended one", n)
	}
}

// TestConcurrentDeleteConflicts: a commit that removed a file OPTIMIZE read
// makes it fail with the typed conflict, and it leaves no file behind.
func TestConcurrentDeleteConflicts(t *testing.T) {
	tbl := newTable(t, []string{"p"}, map[string]string{"delta.enableDeletionVectors": "true"})
	var next int64
	appendFiles(t, tbl, []string{"a"}, 4, 20, &next)
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	filesBefore := dataFiles(t, tbl)
	deleteRows(t, tbl, liveFiles(t, tbl)[0], 1)
	_, err = optimize.Run(ctx, snap, optimize.Options{})
	var ce *txn.ConflictError
	if !errors.Is(err, txn.ErrConflict) || !errors.As(err, &ce) {
		t.Fatalf("got %v, want a conflict", err)
	}
	if got := dataFiles(t, tbl); !slices.Equal(got, filesBefore) {
		t.Errorf("files left behind: %v, want %v", got, filesBefore)
	}
}

func TestZOrderRefusals(t *testing.T) {
	tbl := newTable(t, []string{"p"}, map[string]string{"delta.dataSkippingNumIndexedCols": "2"})
	var next int64
	appendFiles(t, tbl, []string{"a"}, 2, 10, &next)
	tests := []struct {
		opts optimize.Options
		want error
	}{
		{optimize.Options{ZOrderBy: []string{"p"}}, optimize.ErrPartitionColumn},
		{optimize.Options{ZOrderBy: []string{"id", "y"}}, optimize.ErrNoStats}, // third leaf: no stats
		{optimize.Options{HilbertBy: []string{"nope"}}, nil},
		{optimize.Options{ZOrderBy: []string{"id"}, HilbertBy: []string{"x"}}, optimize.ErrOptions},
	}
	for _, tt := range tests {
		_, err := tbl.Optimize(ctx, tt.opts)
		if err == nil || tt.want != nil && !errors.Is(err, tt.want) {
			t.Errorf("%+v: got %v, want %v", tt.opts, err, tt.want)
		}
	}
}

// curveTable builds a table whose rows spread over two columns; the same
// rows every call.
func curveTable(t *testing.T) (*delta.Table, []string) {
	tbl := newTable(t, []string{"p"}, nil)
	var next int64
	want := appendFiles(t, tbl, []string{"a", "b"}, 6, 400, &next)
	return tbl, sortedCopy(want)
}

// fileRowSeqs are the rows of the files a commit added, file by file in
// commit order, rows in file order: what "the same files" means.
func fileRowSeqs(t *testing.T, tbl *delta.Table, v int64) [][]string {
	t.Helper()
	snap, err := tbl.SnapshotAt(ctx, v)
	if err != nil {
		t.Fatal(err)
	}
	fr, err := scan.NewFileReader(snap, scan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for _, a := range commitActions(t, tbl, v) {
		if a.Add == nil {
			continue
		}
		var rows []string
		err := fr.ReadFile(ctx, a.Add, func(b *scan.FileBatch) error {
			for i := range b.Len {
				rows = append(rows, rowString(b.Row(i)))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rows)
	}
	return out
}

func TestCurvesExternalSortSameFiles(t *testing.T) {
	for _, curve := range []string{"zorder", "hilbert"} {
		t.Run(curve, func(t *testing.T) {
			run := func(mem int64) ([][]string, optimize.Result, []string, *delta.Table) {
				tbl, want := curveTable(t)
				opts := optimize.Options{SortMemory: mem, SortDir: t.TempDir(), TargetSize: 4 << 10}
				if curve == "zorder" {
					opts.ZOrderBy = []string{"x", "y"}
				} else {
					opts.HilbertBy = []string{"x", "y"}
				}
				res, err := tbl.Optimize(ctx, opts)
				if err != nil {
					t.Fatal(err)
				}
				if got := tableRows(t, tbl); !slices.Equal(got, want) {
					t.Fatal("rows changed")
				}
				return fileRowSeqs(t, tbl, res.Commit.Version), res, want, tbl
			}
			inMem, r1, _, _ := run(0)
			spilled, r2, _, tbl := run(2 << 10)
			if r1.Metrics.SortRuns != 0 || r2.Metrics.SortRuns < 2 {
				t.Errorf("sort runs: in memory %d, tiny budget %d", r1.Metrics.SortRuns, r2.Metrics.SortRuns)
			}
			if len(inMem) < 4 {
				t.Errorf("%d files: the target size should split each partition", len(inMem))
			}
			if !slices.EqualFunc(inMem, spilled, slices.Equal) {
				t.Fatalf("external sort wrote other files than the in-memory sort")
			}
			// The curve did its job: files of one partition cover narrower
			// ranges of x than the files in insertion order did.
			if r1.Metrics.ZOrderStats == nil || r1.Metrics.ZOrderStats.StrategyName != curve {
				t.Errorf("zOrderStats %+v", r1.Metrics.ZOrderStats)
			}
			acts := commitActions(t, tbl, r2.Commit.Version)
			// Spark's Optimize has zOrderBy and no key for a Hilbert
			// curve: a Hilbert rewrite records none.
			want := map[string]string{"zorder": `["x","y"]`, "hilbert": "[]"}[curve]
			params := acts[0].CommitInfo.OperationParameters
			if p := params["zOrderBy"]; p != want {
				t.Errorf("zOrderBy parameter %v, want %s", p, want)
			}
			if _, ok := params["hilbertBy"]; ok {
				t.Errorf("parameters %v: Spark has no hilbertBy", params)
			}
		})
	}
}

// TestZOrderNarrowsRanges: after Z-order on x the files' min/max ranges of
// x are narrower than after plain compaction into the same number of
// files.
func TestZOrderNarrowsRanges(t *testing.T) {
	spread := func(opts optimize.Options) float64 {
		tbl, _ := curveTable(t)
		opts.TargetSize = 4 << 10
		if _, err := tbl.Optimize(ctx, opts); err != nil {
			t.Fatal(err)
		}
		snap, _ := tbl.Snapshot(ctx)
		var sum float64
		var n int
		for a, err := range snap.Files(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			st, err := expr.ParseStats(a.Stats, snap.Schema(), snap.Config().ColumnMappingMode())
			if err != nil {
				t.Fatal(err)
			}
			lo, _ := st.Min("x")
			hi, _ := st.Max("x")
			sum += float64(hi.Int64() - lo.Int64())
			n++
		}
		return sum / float64(n)
	}
	plain := spread(optimize.Options{MinFileSize: 1 << 40})
	z := spread(optimize.Options{ZOrderBy: []string{"x"}})
	if z >= plain/2 {
		t.Errorf("mean x range per file: z-order %.1f, compaction %.1f", z, plain)
	}
}

// TestChangeDataFeedSkipsOptimize: the change data feed (what streaming
// readers follow) reads nothing from an OPTIMIZE commit: dataChange false.
func TestChangeDataFeedSkipsOptimize(t *testing.T) {
	tbl := newTable(t, nil, map[string]string{"delta.enableChangeDataFeed": "true"})
	var next int64
	appendFiles(t, tbl, []string{"x"}, 3, 10, &next)
	res, err := tbl.Optimize(ctx, optimize.Options{})
	if err != nil || !res.Committed {
		t.Fatalf("%+v %v", res, err)
	}
	ch, err := tbl.Changes(ctx, scan.ChangeOptions{Start: res.Commit.Version})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, err := range ch.Rows(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 0 {
		t.Errorf("%d change rows from the OPTIMIZE commit, want 0", n)
	}
	for _, a := range commitActions(t, tbl, res.Commit.Version) {
		if a.CDC != nil {
			t.Errorf("cdc action in an OPTIMIZE commit: %+v", a.CDC)
		}
	}
}

func TestProgress(t *testing.T) {
	tbl := newTable(t, []string{"p"}, nil)
	var next int64
	appendFiles(t, tbl, []string{"a", "b"}, 3, 10, &next)
	var total int64
	for _, a := range liveFiles(t, tbl) {
		total += a.Size
	}
	var seen []optimize.Progress
	if _, err := tbl.Optimize(ctx, optimize.Options{Progress: func(p optimize.Progress) { seen = append(seen, p) }}); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 6 {
		t.Fatalf("%d progress calls, want one per file (6)", len(seen))
	}
	last := seen[len(seen)-1]
	if last.FilesDone != 6 || last.FilesTotal != 6 || last.BytesDone != total || last.BytesTotal != total {
		t.Errorf("last progress %+v, total %d bytes", last, total)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i].BytesDone <= seen[i-1].BytesDone {
			t.Errorf("progress went back: %+v", seen)
		}
	}
}

// TestCompactionClock: the commit's clock (Options.Txn.Clock) dates the
// removes and the new files, as it does every other commit's, so that
// VACUUM's retention counts from the time the caller's clock gave.
func TestCompactionClock(t *testing.T) {
	tbl := newTable(t, nil, nil)
	var next int64
	appendFiles(t, tbl, []string{""}, 3, 10, &next)
	at := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	res, err := tbl.Optimize(ctx, optimize.Options{Txn: txn.Options{Clock: func() time.Time { return at }}})
	if err != nil || !res.Committed {
		t.Fatalf("Optimize: %+v, %v", res, err)
	}
	var removes, adds int
	for _, a := range commitActions(t, tbl, res.Commit.Version) {
		switch {
		case a.Remove != nil:
			removes++
			if a.Remove.DeletionTimestamp == nil || *a.Remove.DeletionTimestamp != at.UnixMilli() {
				t.Errorf("remove %s deletionTimestamp %v, want %d", a.Remove.Path, a.Remove.DeletionTimestamp, at.UnixMilli())
			}
		case a.Add != nil:
			adds++
			if a.Add.ModificationTime != at.UnixMilli() {
				t.Errorf("add %s modificationTime %d, want %d", a.Add.Path, a.Add.ModificationTime, at.UnixMilli())
			}
		}
	}
	if removes != 3 || adds != 1 {
		t.Errorf("%d removes, %d adds; want 3, 1", removes, adds)
	}
}

// A purge (REORG ... APPLY (PURGE)) rewrites every file with a deletion
// vector, however few rows it deletes and however large the file, and no
// other; it records Spark's REORG parameters.
func TestPurge(t *testing.T) {
	tbl := newTable(t, nil, map[string]string{"delta.enableDeletionVectors": "true"})
	var next int64
	appendFiles(t, tbl, []string{"x"}, 3, 100, &next)
	files := liveFiles(t, tbl)
	deleteRows(t, tbl, files[0], 7) // 1%: OPTIMIZE would leave it
	want := tableRows(t, tbl)
	if _, err := tbl.Optimize(ctx, optimize.Options{Purge: true, ZOrderBy: []string{"id"}}); !errors.Is(err, optimize.ErrOptions) {
		t.Fatalf("purge with ZORDER BY: %v", err)
	}
	res, err := tbl.Optimize(ctx, optimize.Options{Purge: true, MinFileSize: 1})
	if err != nil || !res.Committed || res.Metrics.NumFilesRemoved != 1 || res.Metrics.NumFilesAdded != 1 {
		t.Fatalf("purge: %+v, %v", res, err)
	}
	if got := tableRows(t, tbl); !slices.Equal(got, want) {
		t.Fatalf("rows %d, want %d", len(got), len(want))
	}
	for _, a := range commitActions(t, tbl, res.Commit.Version) {
		switch {
		case a.Add != nil && a.Add.DeletionVector != nil:
			t.Error("an add has a deletion vector")
		case a.Remove != nil && a.Remove.Path != files[0].Path:
			t.Errorf("a file without a deletion vector was rewritten: %s", a.Remove.Path)
		case a.CommitInfo != nil:
			ci := a.CommitInfo
			if ci.Operation != optimize.OperationReorg || ci.OperationParameters["applyPurge"] != true || ci.OperationParameters["predicate"] != "[]" {
				t.Errorf("commitInfo %s %v", ci.Operation, ci.OperationParameters)
			}
		}
	}
	if res, err := tbl.Optimize(ctx, optimize.Options{Purge: true}); err != nil || res.Committed {
		t.Fatalf("a second purge: %+v, %v", res, err)
	}
}

package beamio

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/godelta/delta"
	"github.com/godelta/delta/dml"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/txn"
)

// mergeResults holds the MergeResults resultMergeFn saw, by key.
var mergeResults = struct {
	sync.Mutex
	m map[string][]MergeResult
}{m: map[string][]MergeResult{}}

type resultMergeFn struct{ Key string }

func (f *resultMergeFn) ProcessElement(r MergeResult) {
	mergeResults.Lock()
	defer mergeResults.Unlock()
	mergeResults.m[f.Key] = append(mergeResults.m[f.Key], r)
}

func init() {
	beam.RegisterDoFn(&resultMergeFn{})
}

// mergeOnPrism runs Merge on table on Prism and returns its one result.
func mergeOnPrism(t *testing.T, table string, opts MergeOptions) (MergeResult, error) {
	t.Helper()
	p, s := beam.NewPipelineWithRoot()
	key := t.Name() + table
	beam.ParDo0(s, &resultMergeFn{Key: key}, Merge(s, table, opts))
	if err := run(t, p); err != nil {
		return MergeResult{}, err
	}
	mergeResults.Lock()
	defer mergeResults.Unlock()
	got := mergeResults.m[key]
	if len(got) != 1 {
		t.Fatalf("%d results, want 1", len(got))
	}
	return got[0], nil
}

// mergeInProcess runs the same merge with the library in process,
// copy-on-write, as the pipeline does.
func mergeInProcess(t *testing.T, table string, opts MergeOptions) delta.MergeResult {
	t.Helper()
	ctx := context.Background()
	st, err := delta.Open(ctx, opts.Source)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ssnap, err := st.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	src, err := delta.MergeTable(ctx, ssnap, delta.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := mergeSourceInProcess(ctx, table, src, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// mergeSourceInProcess runs the merge of opts with the source src, with
// the library in process, copy-on-write.
func mergeSourceInProcess(ctx context.Context, table string, src delta.MergeSource, opts MergeOptions) (delta.MergeResult, error) {
	tb, err := delta.Open(ctx, table)
	if err != nil {
		return delta.MergeResult{}, err
	}
	defer tb.Close()
	do := delta.DMLOptions{Strategy: delta.StrategyCopyOnWrite}
	do.TargetFileSize = opts.TargetFileSize
	b := tb.Merge(src, opts.On).Options(do)
	for _, c := range opts.Matched {
		switch {
		case c.Delete:
			b.WhenMatchedDelete(c.Condition)
		case c.All:
			b.WhenMatchedUpdateAll(c.Condition)
		default:
			b.WhenMatchedUpdate(c.Condition, c.Set)
		}
	}
	for _, c := range opts.NotMatched {
		if c.All {
			b.WhenNotMatchedInsertAll(c.Condition)
		} else {
			b.WhenNotMatchedInsert(c.Condition, c.Set)
		}
	}
	for _, c := range opts.NotMatchedBySource {
		if c.Delete {
			b.WhenNotMatchedBySourceDelete(c.Condition)
		} else {
			b.WhenNotMatchedBySourceUpdate(c.Condition, c.Set)
		}
	}
	if opts.MemoryBudget > 0 {
		b.WithMemoryBudget(opts.MemoryBudget, "")
	}
	return b.Execute(ctx)
}

// srcRow is a row of the merge source: the target's columns, in its
// order, and op (what the clauses do with it: d, u, i).
func srcRow(id int64, op string) []schema.Value {
	return []schema.Value{schema.LongValue(id), schema.StringValue(fmt.Sprint("p", id%4)),
		schema.LongValue(-id), schema.LongValue(id * 3), schema.StringValue(op)}
}

// sourceDDL is the schema of the merge source, as MergeRows takes it.
const sourceDDL = "id BIGINT NOT NULL, part STRING, x BIGINT, y BIGINT, op STRING"

// sourceSchema is the schema of the merge source.
func sourceSchema(t *testing.T) *schema.StructType {
	t.Helper()
	sch, err := schema.ParseDDL(sourceDDL)
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// newSourceTable creates the merge source at dir, of sourceRows.
func newSourceTable(t *testing.T, dir string, extra int64, dup ...int64) {
	t.Helper()
	ctx := context.Background()
	tb, err := delta.Create(ctx, dir, delta.TableSpec{Schema: sourceSchema(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	rows := sourceRows(extra, dup...)
	// Two commits: the source is read across files, in the scan's order.
	for _, part := range [][][]schema.Value{rows[:len(rows)/2], rows[len(rows)/2:]} {
		if _, err := tb.AppendRows(ctx, part, delta.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// sourceRows are the rows of the merge source: every seventh id of the
// target (ids under 4000; op d for even ids, else u), and ids 4000 to
// 4000+extra-1 (op i), with dup's ids a second time.
func sourceRows(extra int64, dup ...int64) [][]schema.Value {
	var rows [][]schema.Value
	for i := int64(0); i < 4000; i += 7 {
		op := "u"
		if i%2 == 0 {
			op = "d"
		}
		rows = append(rows, srcRow(i, op))
	}
	for i := int64(4000); i < 4000+extra; i++ {
		rows = append(rows, srcRow(i, "i"))
	}
	for _, i := range dup {
		rows = append(rows, srcRow(i, "u"))
	}
	return rows
}

// mergeMetricsByFiles are the merge's operationMetrics that depend on how
// rows are cut into files: a pipeline's groups and its inserts write
// files of their own, the in-process merge writes the inserts with the
// updated rows.
var mergeMetricsByFiles = []string{"numTargetFilesAdded", "numTargetBytesAdded", "numTargetChangeFilesAdded"}

// fullMerge is WHEN MATCHED AND s.op = 'd' DELETE, WHEN MATCHED UPDATE,
// WHEN NOT MATCHED AND s.op = 'i' INSERT *.
func fullMerge(source string) MergeOptions {
	return MergeOptions{Source: source, On: "t.id = s.id",
		Matched:    []MergeClause{{Condition: "s.op = 'd'", Delete: true}, {Set: "x = s.x, y = t.y + s.y"}},
		NotMatched: []MergeClause{{Condition: "s.op = 'i'", All: true}}}
}

// bySourceMerge is fullMerge with NOT MATCHED BY SOURCE clauses, in
// small files.
func bySourceMerge(source string) MergeOptions {
	o := fullMerge(source)
	o.NotMatchedBySource = []MergeClause{{Condition: "t.x < 500", Delete: true}, {Condition: "t.x > 9500", Set: "y = 0"}}
	o.TargetFileSize = 8 << 10
	return o
}

// TestMerge runs MERGE as a pipeline on Prism and in process on twin
// tables of many files, and compares: the same multiset of rows, one
// commit each, the same operation, parameters and metrics (but times and
// mergeMetricsByFiles) in commitInfo, and the same change data.
func TestMerge(t *testing.T) {
	cdf := map[string]string{"delta.enableChangeDataFeed": "true"}
	upsert := func(source string) MergeOptions {
		return MergeOptions{Source: source, On: "t.id = s.id",
			Matched: []MergeClause{{All: true}}, NotMatched: []MergeClause{{All: true}}}
	}
	tests := []struct {
		name        string
		partitioned bool
		props       map[string]string
		opts        func(string) MergeOptions
		minTasks    int
	}{
		{"update delete insert, partitioned", true, nil, fullMerge, 4},
		{"update delete insert, unpartitioned", false, nil, fullMerge, 1},
		{"update delete insert, partitioned, change data", true, cdf, fullMerge, 4},
		{"update delete insert, unpartitioned, change data", false, cdf, fullMerge, 1},
		{"upsert, partitioned", true, nil, upsert, 4},
		{"not matched by source, small groups", false, cdf, bySourceMerge, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			beamT, procT, src := filepath.Join(dir, "beam"), filepath.Join(dir, "inproc"), filepath.Join(dir, "source")
			for _, d := range []string{beamT, procT} {
				newDMLTable(t, d, tc.partitioned, 8, 500, tc.props)
			}
			newSourceTable(t, src, 150)
			opts := tc.opts(src)
			before, v0, files0 := tableRows(t, beamT)
			res, err := mergeOnPrism(t, beamT, opts)
			if err != nil {
				t.Fatal(err)
			}
			pres := mergeInProcess(t, procT, opts)

			if res.SourceVersion != 2 {
				t.Fatalf("source version %d, want 2", res.SourceVersion)
			}
			compareMerges(t, beamT, procT, before, v0, files0, res, pres, opts, tc.props != nil, tc.minTasks)
		})
	}
}

// compareMerges compares the merge of opts the pipeline ran on beamT
// (res; before, v0 and files0 are the table's before it) with the one
// run in process on procT (pres): the same multiset of rows, one commit
// each, the same operation, parameters and metrics (but times and
// mergeMetricsByFiles) in commitInfo, and, with cdf, the same change
// data.
func compareMerges(t *testing.T, beamT, procT string, before []string, v0 int64, files0 int, res MergeResult, pres delta.MergeResult, opts MergeOptions, cdf bool, minTasks int) {
	t.Helper()
	after, v1, files1 := tableRows(t, beamT)
	inproc, _, _ := tableRows(t, procT)
	if !slices.Equal(after, inproc) {
		t.Fatalf("rows differ: %d after the pipeline, %d after in-process", len(after), len(inproc))
	}
	if slices.Equal(after, before) {
		t.Fatalf("the merge changed no row: a test of nothing")
	}
	if !res.Committed || v1 != v0+1 || res.Version != v1 || !pres.Committed {
		t.Fatalf("result %+v, versions %d -> %d, in-process committed %v: want one commit", res, v0, v1, pres.Committed)
	}
	if res.Tasks < minTasks || res.Tasks != res.Groups {
		t.Errorf("%d tasks of %d groups, want at least %d", res.Tasks, res.Groups, minTasks)
	}
	bc, pc := lastCommit(t, beamT), lastCommit(t, procT)
	if bc.Info.Operation != dml.OpMerge || pc.Info.Operation != dml.OpMerge || !maps.Equal(bc.Info.OperationParameters, pc.Info.OperationParameters) {
		t.Errorf("commitInfo %s %v, in-process %s %v", bc.Info.Operation, bc.Info.OperationParameters, pc.Info.Operation, pc.Info.OperationParameters)
	}
	bm, pm := maps.Clone(bc.Info.OperationMetrics), maps.Clone(pc.Info.OperationMetrics)
	if !slices.Equal(slices.Sorted(maps.Keys(bm)), slices.Sorted(maps.Keys(pm))) {
		t.Fatalf("operationMetrics %v, in-process %v", bm, pm)
	}
	for _, k := range slices.Concat(timeMetrics, []string{"materializeSourceTimeMs"}, mergeMetricsByFiles) {
		delete(bm, k)
		delete(pm, k)
	}
	if !maps.Equal(bm, pm) {
		t.Errorf("operationMetrics %v, in-process %v", bm, pm)
	}
	m := res.Metrics
	if fmt.Sprint(m.NumTargetRowsInserted) != bc.Info.OperationMetrics["numTargetRowsInserted"] ||
		m.NumSourceRows > 0 && (m.NumTargetRowsInserted == 0 || m.NumTargetRowsUpdated == 0 || (m.NumTargetRowsDeleted == 0) != !opts.Matched[0].Delete) {
		t.Errorf("result metrics %+v, commitInfo %v", m, bc.Info.OperationMetrics)
	}
	t.Logf("%d files -> %d, %d groups in %d tasks, metrics %v", files0, files1, res.Groups, res.Tasks, bm)
	if cdf {
		bch, pch := changeRows(t, beamT, v1), changeRows(t, procT, v1)
		if len(bch) == 0 || !slices.Equal(bch, pch) {
			t.Errorf("%d change rows from the pipeline's commit, %d from the in-process one, or different rows", len(bch), len(pch))
		}
	}
}

// TestMergeConflict: a commit that removes files the pipeline read,
// landed between the plan and the commit, fails the commit with the
// typed conflict error, and the pipeline with it; the table keeps the
// concurrent commit only, and the files the pipeline wrote (rewrites and
// inserts) are deleted.
func TestMergeConflict(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	table, src := filepath.Join(dir, "table"), filepath.Join(dir, "source")
	newDMLTable(t, table, true, 4, 400, nil)
	newSourceTable(t, src, 50)
	var mu sync.Mutex
	var commitErr error
	dmlHooks.Lock()
	dmlHooks.h = dmlTestHooks{
		beforeCommit: func(tbl string) error {
			tb, err := delta.Open(ctx, tbl)
			if err != nil {
				return err
			}
			defer tb.Close()
			_, err = tb.Delete(ctx, "part = 'p1'", delta.DMLOptions{})
			return err
		},
		committed: func(_ string, err error) {
			mu.Lock()
			defer mu.Unlock()
			commitErr = err
		},
	}
	dmlHooks.Unlock()
	t.Cleanup(func() {
		dmlHooks.Lock()
		dmlHooks.h = dmlTestHooks{}
		dmlHooks.Unlock()
	})
	files0 := parquetFiles(t, table)
	_, v0, _ := tableRows(t, table)
	if _, err := mergeOnPrism(t, table, fullMerge(src)); err == nil {
		t.Fatal("the pipeline succeeded despite a conflicting commit")
	}
	mu.Lock()
	defer mu.Unlock()
	var ce *txn.ConflictError
	if !errors.Is(commitErr, txn.ErrConflict) || !errors.As(commitErr, &ce) {
		t.Fatalf("commit error %v, want a *txn.ConflictError", commitErr)
	}
	rows, v1, _ := tableRows(t, table)
	if v1 != v0+1 || lastCommit(t, table).Info.Operation != "DELETE" {
		t.Fatalf("versions %d -> %d, last %s: want the concurrent DELETE only", v0, v1, lastCommit(t, table).Info.Operation)
	}
	if len(rows) != 4*400*3/4 {
		t.Fatalf("%d rows, want %d", len(rows), 4*400*3/4)
	}
	if files1 := parquetFiles(t, table); !slices.Equal(files1, files0) {
		t.Fatalf("data files %d before, %d after: the pipeline's files were left", len(files0), len(files1))
	}
}

// TestMergeRefused: a source that matches a target row twice fails the
// rewrite with dml.ErrMultipleMatch, and a source over the memory budget
// fails the plan with dml.ErrMergeSourceTooLarge, as in process; the
// pipeline fails and commits nothing.
func TestMergeRefused(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		dup    []int64
		budget int64
		want   error
	}{
		{"a target row matched twice", []int64{1001}, 0, dml.ErrMultipleMatch},
		{"a source over the memory budget", nil, 4 << 10, dml.ErrMergeSourceTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			table, src := filepath.Join(dir, "table"), filepath.Join(dir, "source")
			newDMLTable(t, table, true, 2, 600, nil)
			newSourceTable(t, src, 10, tc.dup...)
			opts := fullMerge(src)
			opts.MemoryBudget = tc.budget
			// What the steps meet, with its type (the runner's report of
			// a failed step keeps only the text): the plan, then each
			// group's rewrite.
			var st mergeState
			j, err := st.jobAt(ctx, table, opts, 2, 2, nil, nil)
			if err == nil {
				for g := range j.Groups() {
					if _, err = j.RewriteGroup(ctx, g); err != nil {
						break
					}
				}
			}
			st.close()
			if !errors.Is(err, tc.want) {
				t.Fatalf("steps: %v, want %v", err, tc.want)
			}
			_, err = mergeOnPrism(t, table, opts)
			if err == nil || !strings.Contains(err.Error(), tc.want.Error()) {
				t.Fatalf("the pipeline: %v, want %v", err, tc.want)
			}
			if _, v, _ := tableRows(t, table); v != 2 {
				t.Fatalf("version %d, want 2: nothing committed", v)
			}
			pt := filepath.Join(dir, "inproc")
			newDMLTable(t, pt, true, 2, 600, nil)
			tb, err := delta.Open(ctx, pt)
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			stb, err := delta.Open(ctx, src)
			if err != nil {
				t.Fatal(err)
			}
			defer stb.Close()
			ssnap, err := stb.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			source, err := delta.MergeTable(ctx, ssnap, delta.ScanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			_, err = tb.Merge(source, opts.On).WhenMatchedDelete("s.op = 'd'").WhenMatchedUpdate("", "x = s.x").
				WhenNotMatchedInsertAll("").WithMemoryBudget(tc.budget, t.TempDir()).Execute(ctx)
			if tc.want == dml.ErrMultipleMatch && !errors.Is(err, tc.want) {
				t.Fatalf("in process: %v, want %v", err, tc.want)
			}
			if tc.want == dml.ErrMergeSourceTooLarge && err != nil {
				t.Fatalf("in process (spilled): %v", err)
			}
		})
	}
}

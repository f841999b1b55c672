package beamio

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/godelta/delta"
	"github.com/godelta/delta/dml"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/txn"
	"github.com/godelta/delta/write"
)

// dmlResults holds the DMLResults resultDMLFn saw, by key.
var dmlResults = struct {
	sync.Mutex
	m map[string][]DMLResult
}{m: map[string][]DMLResult{}}

type resultDMLFn struct{ Key string }

func (f *resultDMLFn) ProcessElement(r DMLResult) {
	dmlResults.Lock()
	defer dmlResults.Unlock()
	dmlResults.m[f.Key] = append(dmlResults.m[f.Key], r)
}

func init() {
	beam.RegisterDoFn(&resultDMLFn{})
}

// dmlOnPrism runs Delete (set == "") or Update on table on Prism and
// returns its one result.
func dmlOnPrism(t *testing.T, table, set, where string, opts DMLOptions) (DMLResult, error) {
	t.Helper()
	p, s := beam.NewPipelineWithRoot()
	key := t.Name() + table
	var out beam.PCollection
	if set == "" {
		out = Delete(s, table, where, opts)
	} else {
		out = Update(s, table, set, where, opts)
	}
	beam.ParDo0(s, &resultDMLFn{Key: key}, out)
	if err := run(t, p); err != nil {
		return DMLResult{}, err
	}
	dmlResults.Lock()
	defer dmlResults.Unlock()
	got := dmlResults.m[key]
	if len(got) != 1 {
		t.Fatalf("%d results, want 1", len(got))
	}
	return got[0], nil
}

// dmlInProcess runs the same operation with the library in process,
// copy-on-write, as the pipeline does.
func dmlInProcess(t *testing.T, table, set, where string, opts DMLOptions) delta.DMLResult {
	t.Helper()
	ctx := context.Background()
	tb, err := delta.Open(ctx, table)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	do := delta.DMLOptions{Strategy: delta.StrategyCopyOnWrite}
	do.TargetFileSize = opts.TargetFileSize
	var res delta.DMLResult
	if set == "" {
		res, err = tb.Delete(ctx, where, do)
	} else {
		res, err = tb.UpdateRows(ctx, set, where, do)
	}
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// newDMLTable creates a table at dir like newOptTable's, with properties.
func newDMLTable(t *testing.T, dir string, partitioned bool, appends, per int64, props map[string]string) {
	t.Helper()
	ctx := context.Background()
	sch, err := schema.ParseDDL("id BIGINT NOT NULL, part STRING, x BIGINT, y BIGINT")
	if err != nil {
		t.Fatal(err)
	}
	spec := delta.TableSpec{Schema: sch, Properties: props}
	if partitioned {
		spec.PartitionColumns = []string{"part"}
	}
	tb, err := delta.Create(ctx, dir, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	for a := range appends {
		var rows [][]schema.Value
		for i := a * per; i < (a+1)*per; i++ {
			rows = append(rows, optRow(i))
		}
		if _, err := tb.AppendRows(ctx, rows, delta.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// timeMetrics are the operationMetrics that measure time, which two runs
// of one operation do not share.
var timeMetrics = []string{"executionTimeMs", "scanTimeMs", "rewriteTimeMs"}

// changeRows returns the change data of version v of table, without the
// commit timestamp, encoded and sorted.
func changeRows(t *testing.T, table string, v int64) []string {
	t.Helper()
	ctx := context.Background()
	tb, err := delta.Open(ctx, table)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	c, err := tb.Changes(ctx, scan.ChangeOptions{Start: v, End: scan.UpTo(v)})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for r, err := range c.Rows(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		vals := r.Values()
		b, err := encodeRow(Row{Values: vals[:len(vals)-1]})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	slices.Sort(out)
	return out
}

// TestDML runs DELETE and UPDATE as pipelines on Prism and in process on
// twin tables of many files, and compares: the same multiset of rows, one
// commit each, the same operation, parameters and metrics (but times) in
// commitInfo, and the same change data.
func TestDML(t *testing.T) {
	cdf := map[string]string{"delta.enableChangeDataFeed": "true"}
	tests := []struct {
		name        string
		partitioned bool
		props       map[string]string
		set, where  string
		opts        DMLOptions
		// sameFiles: the groups match the in-process rewrite's files
		// (one group a partition), so the files added match too.
		sameFiles bool
		minTasks  int
	}{
		{"delete in four partitions", true, nil, "", "x < 3000", DMLOptions{}, true, 4},
		{"delete whole partitions", true, nil, "", "part = 'p2' OR part = 'p3'", DMLOptions{}, true, 0},
		{"delete every row", true, nil, "", "", DMLOptions{}, true, 0},
		{"update in four partitions", true, nil, "y = y + 1, x = x * 2", "id % 3 = 0", DMLOptions{}, true, 4},
		{"update with a partition and a data column", true, nil, "y = -y", "part = 'p1' AND x > 5000", DMLOptions{}, true, 1},
		{"update every row", true, nil, "y = 0", "", DMLOptions{}, true, 4},
		{"delete unpartitioned, small groups", false, nil, "", "x >= 2000 AND x < 6000", DMLOptions{TargetFileSize: 8 << 10}, false, 4},
		{"update unpartitioned, small groups", false, nil, "x = x + 1", "y < 4000", DMLOptions{TargetFileSize: 8 << 10}, false, 4},
		{"delete with the change data feed", true, cdf, "", "x < 3000", DMLOptions{}, true, 4},
		{"update with the change data feed", true, cdf, "y = y + 1", "id % 4 = 1", DMLOptions{}, true, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			beamT, procT := filepath.Join(dir, "beam"), filepath.Join(dir, "inproc")
			for _, d := range []string{beamT, procT} {
				newDMLTable(t, d, tc.partitioned, 8, 500, tc.props)
			}
			before, v0, files0 := tableRows(t, beamT)
			res, err := dmlOnPrism(t, beamT, tc.set, tc.where, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			pres := dmlInProcess(t, procT, tc.set, tc.where, tc.opts)

			after, v1, files1 := tableRows(t, beamT)
			inproc, _, filesP := tableRows(t, procT)
			if !slices.Equal(after, inproc) {
				t.Fatalf("rows differ: %d after the pipeline, %d after in-process", len(after), len(inproc))
			}
			if slices.Equal(after, before) {
				t.Fatalf("the operation changed no row: a test of nothing")
			}
			if !res.Committed || v1 != v0+1 || res.Version != v1 || !pres.Committed {
				t.Fatalf("result %+v, versions %d -> %d, in-process committed %v: want one commit", res, v0, v1, pres.Committed)
			}
			op := dml.OpDelete
			if tc.set != "" {
				op = dml.OpUpdate
			}
			if res.Operation != op || res.Tasks < tc.minTasks {
				t.Errorf("operation %s in %d tasks (%d groups), want %s in at least %d", res.Operation, res.Tasks, res.Groups, op, tc.minTasks)
			}
			bc, pc := lastCommit(t, beamT), lastCommit(t, procT)
			if bc.Info.Operation != op || pc.Info.Operation != op || !maps.Equal(bc.Info.OperationParameters, pc.Info.OperationParameters) {
				t.Errorf("commitInfo %s %v, in-process %s %v", bc.Info.Operation, bc.Info.OperationParameters, pc.Info.Operation, pc.Info.OperationParameters)
			}
			bm, pm := maps.Clone(bc.Info.OperationMetrics), maps.Clone(pc.Info.OperationMetrics)
			if !slices.Equal(slices.Sorted(maps.Keys(bm)), slices.Sorted(maps.Keys(pm))) {
				t.Fatalf("operationMetrics %v, in-process %v", bm, pm)
			}
			for _, k := range timeMetrics {
				delete(bm, k)
				delete(pm, k)
			}
			if !tc.sameFiles {
				// Groups of 8 KiB write a file each; the in-process
				// rewrite rolls its one stream of rows at 8 KiB.
				for _, k := range []string{"numAddedFiles", "numAddedBytes"} {
					delete(bm, k)
					delete(pm, k)
				}
			}
			if !maps.Equal(bm, pm) {
				t.Errorf("operationMetrics %v, in-process %v", bm, pm)
			}
			if fmt.Sprint(res.Metrics.NumRemovedFiles) != bc.Info.OperationMetrics["numRemovedFiles"] {
				t.Errorf("result metrics %+v, commitInfo %v", res.Metrics, bc.Info.OperationMetrics)
			}
			if tc.sameFiles && files1 != filesP {
				t.Errorf("%d files after the pipeline, %d after in-process", files1, filesP)
			}
			t.Logf("%d files -> %d, %d groups in %d tasks, metrics %v", files0, files1, res.Groups, res.Tasks, bm)
			if tc.props != nil {
				bch, pch := changeRows(t, beamT, v1), changeRows(t, procT, v1)
				if len(bch) == 0 || !slices.Equal(bch, pch) {
					t.Errorf("%d change rows from the pipeline's commit, %d from the in-process one, or different rows", len(bch), len(pch))
				}
				if res.Metrics.NumAddedChangeFiles == 0 {
					t.Errorf("no change data file: %+v", res.Metrics)
				}
			}
		})
	}
}

// TestDMLUntouchedFiles: a file the predicate's statistics cannot skip but
// in which no row matches is read, not rewritten: it stays in the table
// under its path.
func TestDMLUntouchedFiles(t *testing.T) {
	ctx := context.Background()
	table := filepath.Join(t.TempDir(), "table")
	newDMLTable(t, table, false, 10, 300, nil)
	paths := func() []string {
		tb, err := delta.Open(ctx, table)
		if err != nil {
			t.Fatal(err)
		}
		defer tb.Close()
		snap, err := tb.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for a, err := range snap.Files(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, a.Path)
		}
		slices.Sort(out)
		return out
	}
	before := paths()
	// x of row 1234 (in the fifth file); x is spread over every file's
	// range, so no file is skipped by its statistics.
	x := optRow(1234)[2].Int64()
	res, err := dmlOnPrism(t, table, "y = 0", fmt.Sprintf("x = %d", x), DMLOptions{TargetFileSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	after := paths()
	var kept int
	for _, p := range after {
		if slices.Contains(before, p) {
			kept++
		}
	}
	m := res.Metrics
	if !res.Committed || m.NumFilesRead != int64(len(before)) || m.NumRemovedFiles != 1 || m.NumAddedFiles != 1 ||
		m.NumUpdatedRows != 1 || kept != len(before)-1 || res.Tasks != len(before) {
		t.Fatalf("%d files read, %d removed, %d added, %d rows updated, %d of %d files kept, %d tasks: want all read, one rewritten",
			m.NumFilesRead, m.NumRemovedFiles, m.NumAddedFiles, m.NumUpdatedRows, kept, len(before), res.Tasks)
	}
}

// TestDMLNothing: a DELETE that matches no row commits nothing.
func TestDMLNothing(t *testing.T) {
	table := filepath.Join(t.TempDir(), "table")
	newDMLTable(t, table, true, 2, 100, nil)
	res, err := dmlOnPrism(t, table, "", "x < 0", DMLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, v, _ := tableRows(t, table)
	if res.Committed || v != 2 || res.Metrics.NumDeletedRows != 0 {
		t.Fatalf("result %+v at version %d: want nothing committed", res, v)
	}
}

// TestDMLConflict: a commit that removes files the pipeline read, landed
// between the plan and the commit, fails the commit with the typed
// conflict error, and the pipeline with it; the table keeps the
// concurrent commit only, and the files the pipeline wrote are deleted.
func TestDMLConflict(t *testing.T) {
	for _, set := range []string{"", "y = 0"} {
		t.Run("set "+set, func(t *testing.T) {
			ctx := context.Background()
			table := filepath.Join(t.TempDir(), "table")
			newDMLTable(t, table, true, 4, 400, nil)
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
			_, err := dmlOnPrism(t, table, set, "x < 3000", DMLOptions{})
			if err == nil {
				t.Fatal("the pipeline succeeded despite a conflicting commit")
			}
			mu.Lock()
			defer mu.Unlock()
			var ce *txn.ConflictError
			if !errors.Is(commitErr, txn.ErrConflict) || !errors.As(commitErr, &ce) {
				t.Fatalf("commit error %v, want a *txn.ConflictError", commitErr)
			}
			rows, v1, _ := tableRows(t, table)
			if v1 != v0+1 || lastCommit(t, table).Info.Operation != "DELETE" ||
				lastCommit(t, table).Info.OperationParameters["predicate"] != "[\"`part` = 'p1'\"]" {
				t.Fatalf("versions %d -> %d, last %s %v: want the concurrent DELETE only", v0, v1,
					lastCommit(t, table).Info.Operation, lastCommit(t, table).Info.OperationParameters)
			}
			if len(rows) != 4*400*3/4 {
				t.Fatalf("%d rows, want %d", len(rows), 4*400*3/4)
			}
			if files1 := parquetFiles(t, table); !slices.Equal(files1, files0) {
				t.Fatalf("data files %d before, %d after: the pipeline's files were left", len(files0), len(files1))
			}
		})
	}
}

// parquetFiles lists the Parquet files under dir, sorted.
func parquetFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".parquet") {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// TestDMLCorpus runs DELETE and UPDATE as pipelines on copies of corpus
// tables with deletion vectors and column mapping (copy-on-write, the
// deletion vectors applied on read), and in process on twin copies, and
// compares the rows.
func TestDMLCorpus(t *testing.T) {
	dir := corpus(t)
	tests := []struct {
		name, table, set, where string
		dvRewritten             bool // a file with a deletion vector is rewritten
	}{
		{"delete, deletion vectors and column mapping", "golden/dv-with-columnmapping/delta", "", "col1 >= 5 AND col1 < 40", true},
		{"update, deletion vectors and column mapping", "golden/dv-with-columnmapping/delta", "col2 = concat(col2, '-u'), col1 = col1 + 1000", "part = 3 OR col1 % 7 = 0", false},
		{"delete, a file with a deletion vector", "kernel-rs/table-with-dv-small", "", "value > 5", true},
		{"update, a file with a deletion vector", "kernel-rs/table-with-dv-small", "value = value + 100", "value = 1", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			beamT, procT := filepath.Join(tmp, "beam"), filepath.Join(tmp, "inproc")
			for _, d := range []string{beamT, procT} {
				if err := os.CopyFS(d, os.DirFS(filepath.Join(dir, tc.table))); err != nil {
					t.Fatal(err)
				}
			}
			before := libraryRows(t, beamT, ReadOptions{})
			res, err := dmlOnPrism(t, beamT, tc.set, tc.where, DMLOptions{})
			if err != nil {
				t.Fatal(err)
			}
			pres := dmlInProcess(t, procT, tc.set, tc.where, DMLOptions{})
			got, want := libraryRows(t, beamT, ReadOptions{}), libraryRows(t, procT, ReadOptions{})
			slices.Sort(got)
			slices.Sort(want)
			slices.Sort(before)
			if !slices.Equal(got, want) || slices.Equal(got, before) {
				t.Fatalf("%d rows after the pipeline, %d in process, %d before: want the in-process rows, changed", len(got), len(want), len(before))
			}
			if !res.Committed || res.Metrics.NumRemovedFiles == 0 {
				t.Fatalf("result %+v: want a commit that rewrote files", res)
			}
			if lastCommit(t, beamT).Info.Operation != res.Operation {
				t.Fatalf("last commit %s, result %s", lastCommit(t, beamT).Info.Operation, res.Operation)
			}
			// Copy-on-write: the files with a deletion vector that were
			// rewritten lose it, and no vector is written.
			m := res.Metrics
			if m.NumDeletionVectorsAdded != 0 || m.NumDeletionVectorsUpdated != 0 || (m.NumDeletionVectorsRemoved > 0) != tc.dvRewritten {
				t.Errorf("metrics %+v: want deletion vectors removed (%v), none added", m, tc.dvRewritten)
			}
			bm, pm := maps.Clone(lastCommit(t, beamT).Info.OperationMetrics), maps.Clone(lastCommit(t, procT).Info.OperationMetrics)
			for _, k := range timeMetrics {
				delete(bm, k)
				delete(pm, k)
			}
			if !maps.Equal(bm, pm) || pres.Metrics.NumRemovedFiles != m.NumRemovedFiles {
				t.Errorf("operationMetrics %v, in-process %v", bm, pm)
			}
		})
	}
}

// TestDMLRefused: an operation the library refuses fails the planning
// step, with the library's typed error, and commits nothing.
func TestDMLRefused(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name       string
		props      map[string]string
		set, where string
		want       error
	}{
		{"append-only table", map[string]string{"delta.appendOnly": "true"}, "", "x < 10", write.ErrAppendOnly},
		{"a column the table lacks", nil, "", "nope < 10", dml.ErrInvalid},
		{"an assignment to a column the table lacks", nil, "nope = 1", "x < 10", dml.ErrInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			table := filepath.Join(t.TempDir(), "table")
			newDMLTable(t, table, true, 2, 100, tc.props)
			op := dml.OpDelete
			if tc.set != "" {
				op = dml.OpUpdate
			}
			tb, err := delta.Open(ctx, table)
			if err != nil {
				t.Fatal(err)
			}
			snap, err := tb.Snapshot(ctx)
			tb.Close()
			if err != nil {
				t.Fatal(err)
			}
			// What the planning step meets, with its type (the runner's
			// report of a failed step keeps only the text).
			if _, err := (dmlSpec{Op: op, Predicate: tc.where, Set: tc.set}).plan(ctx, snap); !errors.Is(err, tc.want) {
				t.Fatalf("plan: %v, want %v", err, tc.want)
			}
			if _, err := dmlOnPrism(t, table, tc.set, tc.where, DMLOptions{}); err == nil {
				t.Fatal("the pipeline succeeded")
			}
			if _, v, _ := tableRows(t, table); v != 2 {
				t.Fatalf("version %d, want 2: nothing committed", v)
			}
		})
	}
}

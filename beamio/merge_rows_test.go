package beamio

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"

	"github.com/godelta/delta"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/dml"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/write"
)

// mergeRowsOnPrism runs MergeRows of rows into table on Prism and returns
// its one result.
func mergeRowsOnPrism(t *testing.T, table string, rows [][]schema.Value, opts MergeOptions) (MergeResult, error) {
	t.Helper()
	return mergeRowsWindowed(t, table, rows, opts, nil)
}

// mergeRowsWindowed is mergeRowsOnPrism with the rows in the windows of
// wfn first, when not nil.
func mergeRowsWindowed(t *testing.T, table string, rows [][]schema.Value, opts MergeOptions, wfn *window.Fn) (MergeResult, error) {
	t.Helper()
	p, s := beam.NewPipelineWithRoot()
	in := make([]Row, len(rows))
	for i, r := range rows {
		in[i] = Row{Values: r}
	}
	key := t.Name() + table
	src := beam.CreateList(s, in)
	if wfn != nil {
		src = beam.WindowInto(s, wfn, src)
	}
	beam.ParDo0(s, &resultMergeFn{Key: key}, MergeRows(s, table, src, opts))
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

// encodedRows yields rows encoded as the side input of MergeRows holds
// them.
func encodedRows(t *testing.T, rows [][]schema.Value) func(*[]byte) bool {
	t.Helper()
	var enc [][]byte
	for _, r := range rows {
		b, err := encodeRow(Row{Values: r})
		if err != nil {
			t.Fatal(err)
		}
		enc = append(enc, b)
	}
	return func(b *[]byte) bool {
		if len(enc) == 0 {
			return false
		}
		*b, enc = enc[0], enc[1:]
		return true
	}
}

// rowsSteps runs the steps of MergeRows of rows into table (at version 2)
// in this process, as the workers do, and returns the first error, with
// its type (the runner's report of a failed step keeps only the text).
func rowsSteps(t *testing.T, table string, rows [][]schema.Value, opts MergeOptions) error {
	t.Helper()
	ctx := context.Background()
	var st mergeState
	defer st.close()
	j, err := st.jobAt(ctx, table, opts, 2, -1, encodedRows(t, rows), nil)
	if err != nil {
		return err
	}
	for g := range j.Groups() {
		if _, err := j.RewriteGroup(ctx, g); err != nil {
			return err
		}
	}
	return nil
}

// TestMergeRows runs MERGE of the rows of a PCollection as a pipeline on
// Prism, and in process on a twin table with the same rows
// (delta.MergeRows), and compares as TestMerge does. The pipeline gets
// the rows in the reverse order: a PCollection has none.
func TestMergeRows(t *testing.T) {
	cdf := map[string]string{"delta.enableChangeDataFeed": "true"}
	tests := []struct {
		name        string
		partitioned bool
		props       map[string]string
		opts        func(string) MergeOptions
		minTasks    int
		windows     *window.Fn
	}{
		{"update delete insert, partitioned, change data", true, cdf, fullMerge, 4, nil},
		{"not matched by source, small groups", false, cdf, bySourceMerge, 4, nil},
		{"rows in fixed windows", true, nil, fullMerge, 4, window.NewFixedWindows(time.Minute)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			beamT, procT := filepath.Join(dir, "beam"), filepath.Join(dir, "inproc")
			for _, d := range []string{beamT, procT} {
				newDMLTable(t, d, tc.partitioned, 8, 500, tc.props)
			}
			rows := sourceRows(150)
			opts := tc.opts("")
			opts.SourceSchema = sourceDDL
			before, v0, files0 := tableRows(t, beamT)
			res, err := mergeRowsWindowed(t, beamT, reversed(rows), opts, tc.windows)
			if err != nil {
				t.Fatal(err)
			}
			pres, err := mergeSourceInProcess(ctx, procT, delta.MergeRows(sourceSchema(t), rows), opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.SourceVersion != -1 || res.Metrics.NumSourceRows != int64(len(rows)) {
				t.Fatalf("source version %d, %d source rows: want -1, %d", res.SourceVersion, res.Metrics.NumSourceRows, len(rows))
			}
			compareMerges(t, beamT, procT, before, v0, files0, res, pres, opts, tc.props != nil, tc.minTasks)
		})
	}
}

// TestMergeRowsOrder: the workers number the rows of MergeRows alike
// whatever order they get them in (the digest of the source is the same),
// and a worker that reads other rows than the plan's fails with
// deltaerr.ErrCorrupt.
func TestMergeRowsOrder(t *testing.T) {
	ctx := context.Background()
	table := filepath.Join(t.TempDir(), "table")
	newDMLTable(t, table, true, 2, 100, nil)
	opts := fullMerge("")
	opts.SourceSchema = sourceDDL
	rows := sourceRows(20)
	var st mergeState
	defer st.close()
	j, err := st.jobAt(ctx, table, opts, 2, -1, encodedRows(t, rows), nil)
	if err != nil {
		t.Fatal(err)
	}
	d := j.SourceDigest()
	var other mergeState
	defer other.close()
	if _, err := other.jobAt(ctx, table, opts, 2, -1, encodedRows(t, reversed(rows)), d[:]); err != nil {
		t.Fatalf("the rows in another order: %v", err)
	}
	var bad mergeState
	defer bad.close()
	if _, err := bad.jobAt(ctx, table, opts, 2, -1, encodedRows(t, rows[1:]), d[:]); !errors.Is(err, deltaerr.ErrCorrupt) {
		t.Fatalf("other rows than the plan's: %v, want deltaerr.ErrCorrupt", err)
	}
}

// TestMergeRowsRefused: a source that matches a target row twice fails
// the rewrite with dml.ErrMultipleMatch, a source over the memory budget
// the plan with dml.ErrMergeSourceTooLarge, rows that do not fit the
// source schema the plan with write.ErrBatch or dml.ErrMergeSourceValue;
// the pipeline fails and commits nothing. So do options that name a
// source table or no schema (dml.ErrMergeClause).
func TestMergeRowsRefused(t *testing.T) {
	ctx := context.Background()
	with := func(rows [][]schema.Value, i int, row []schema.Value) [][]schema.Value {
		rows = slices.Clone(rows)
		rows[i] = row
		return rows
	}
	base := sourceRows(10)
	tests := []struct {
		name     string
		rows     [][]schema.Value
		budget   int64
		want     error
		pipeline bool
	}{
		{"a target row matched twice", sourceRows(10, 1001), 0, dml.ErrMultipleMatch, true},
		{"a source over the memory budget", base, 4 << 10, dml.ErrMergeSourceTooLarge, true},
		{"a string in a long column", with(base, 3, []schema.Value{schema.LongValue(21), {}, schema.StringValue("x"), {}, {}}), 0, dml.ErrMergeSourceValue, true},
		{"a null in a NOT NULL column", with(base, 5, []schema.Value{{}, {}, {}, {}, {}}), 0, dml.ErrMergeSourceValue, false},
		{"a row too short", with(base, 7, []schema.Value{schema.LongValue(49)}), 0, write.ErrBatch, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			table := filepath.Join(t.TempDir(), "table")
			newDMLTable(t, table, true, 2, 600, nil)
			opts := fullMerge("")
			opts.SourceSchema = sourceDDL
			opts.MemoryBudget = tc.budget
			if err := rowsSteps(t, table, tc.rows, opts); !errors.Is(err, tc.want) {
				t.Fatalf("steps: %v, want %v", err, tc.want)
			}
			if !tc.pipeline {
				return
			}
			_, err := mergeRowsOnPrism(t, table, tc.rows, opts)
			if err == nil || !strings.Contains(err.Error(), tc.want.Error()) {
				t.Fatalf("the pipeline: %v, want %v", err, tc.want)
			}
			if _, v, _ := tableRows(t, table); v != 2 {
				t.Fatalf("version %d, want 2: nothing committed", v)
			}
			// In process, the same rows: the same multiple match; a
			// source over the budget is spilled there.
			pt := filepath.Join(t.TempDir(), "inproc")
			newDMLTable(t, pt, true, 2, 600, nil)
			_, err = mergeSourceInProcess(ctx, pt, delta.MergeRows(sourceSchema(t), tc.rows), opts)
			switch tc.want {
			case dml.ErrMultipleMatch:
				if !errors.Is(err, tc.want) {
					t.Fatalf("in process: %v, want %v", err, tc.want)
				}
			case dml.ErrMergeSourceTooLarge:
				if err != nil {
					t.Fatalf("in process (spilled): %v", err)
				}
			}
		})
	}
	table := filepath.Join(t.TempDir(), "table")
	newDMLTable(t, table, false, 1, 10, nil)
	for _, tc := range []struct {
		name string
		opts MergeOptions
		rows bool
	}{
		{"MergeRows with a source table", MergeOptions{Source: table, SourceSchema: sourceDDL, On: "t.id = s.id"}, true},
		{"MergeRows without a schema", MergeOptions{On: "t.id = s.id"}, true},
		{"MergeRows with a malformed schema", MergeOptions{SourceSchema: "id BIGIN", On: "t.id = s.id"}, true},
		{"MergeRows with a malformed JSON schema", MergeOptions{SourceSchema: `{"type":"struct"`, On: "t.id = s.id"}, true},
		{"Merge with a schema", MergeOptions{Source: table, SourceSchema: sourceDDL, On: "t.id = s.id"}, false},
	} {
		f := &planMergeFn{Table: table, Opts: tc.opts, FromRows: tc.rows}
		err := f.ProcessElement(ctx, nil, encodedRows(t, nil), func(mergePlan) { t.Errorf("%s: planned", tc.name) })
		if !errors.Is(err, dml.ErrMergeClause) {
			t.Errorf("%s: %v, want dml.ErrMergeClause", tc.name, err)
		}
	}
}

// TestMergeRowsEmpty: an empty PCollection is an empty source: nothing
// matches, nothing is inserted, and the NOT MATCHED BY SOURCE clauses
// apply to every target row, as in process.
func TestMergeRowsEmpty(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	beamT, procT := filepath.Join(dir, "beam"), filepath.Join(dir, "inproc")
	for _, d := range []string{beamT, procT} {
		newDMLTable(t, d, true, 4, 200, nil)
	}
	opts := fullMerge("")
	opts.SourceSchema = sourceDDL
	opts.NotMatchedBySource = []MergeClause{{Condition: "t.x < 500", Delete: true}, {Set: "y = 0"}}
	before, v0, files0 := tableRows(t, beamT)
	res, err := mergeRowsOnPrism(t, beamT, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	pres, err := mergeSourceInProcess(ctx, procT, delta.MergeRows(sourceSchema(t), nil), opts)
	if err != nil {
		t.Fatal(err)
	}
	m := res.Metrics
	if m.NumSourceRows != 0 || m.NumTargetRowsInserted != 0 || m.NumTargetRowsMatchedUpdated+m.NumTargetRowsMatchedDeleted != 0 ||
		m.NumTargetRowsNotMatchedBySourceDeleted == 0 || m.NumTargetRowsNotMatchedBySourceUpdated == 0 {
		t.Fatalf("metrics %+v: want only NOT MATCHED BY SOURCE rows", m)
	}
	compareMerges(t, beamT, procT, before, v0, files0, res, pres, opts, false, 1)
}

// reversed returns rows in the reverse order.
func reversed(rows [][]schema.Value) [][]schema.Value {
	rows = slices.Clone(rows)
	slices.Reverse(rows)
	return rows
}

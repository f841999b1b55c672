package dml_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/dml"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/write"
)

// TestJobSteps runs DELETE and UPDATE as their three steps, a group at a
// time in reverse order (as workers may finish), and compares with
// Delete and Update on a twin table: the same rows, change data,
// operation, parameters and metrics (but times).
func TestJobSteps(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name, set, where string
		o                tableOpts
	}{
		{"delete, partitioned, change data", "", "n < 4", tableOpts{partitioned: true, cdf: true}},
		{"delete whole partitions", "", "p = 'b'", tableOpts{partitioned: true}},
		{"delete every row", "", "", tableOpts{partitioned: true}},
		{"update, column mapping, change data", "v = concat(v, '!'), n = n + 100", "id % 7 = 0", tableOpts{columnMapping: true, cdf: true}},
		{"update, partitioned, by partition and data", "n = 0", "p = 'a' AND n > 5", tableOpts{partitioned: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			jobStore, runStore := memory.New(), memory.New()
			jsnap, rsnap := newTable(t, jobStore, tc.o), newTable(t, runStore, tc.o)
			var pred expr.Expr
			if tc.where != "" {
				pred = mustParse(t, tc.where)
			}
			opts := dml.Options{Strategy: dml.CopyOnWrite}
			var job *dml.Job
			var res dml.Result
			var err error
			if tc.set == "" {
				if job, err = dml.PlanDelete(ctx, jsnap, pred, opts); err != nil {
					t.Fatal(err)
				}
				res, err = dml.Delete(ctx, rsnap, pred, opts)
			} else {
				set, perr := dml.ParseAssignments(tc.set)
				if perr != nil {
					t.Fatal(perr)
				}
				if job, err = dml.PlanUpdate(ctx, jsnap, set, pred, opts); err != nil {
					t.Fatal(err)
				}
				res, err = dml.Update(ctx, rsnap, set, pred, opts)
			}
			if err != nil {
				t.Fatal(err)
			}
			var parts []write.Rewritten
			for g := job.Groups() - 1; g >= 0; g-- {
				r, err := job.RewriteGroup(ctx, g)
				if err != nil {
					t.Fatal(err)
				}
				parts = append(parts, r)
			}
			jres, err := job.Commit(ctx, parts)
			if err != nil {
				t.Fatal(err)
			}
			if !jres.Committed || !res.Committed || jres.Commit.Version != res.Commit.Version {
				t.Fatalf("job %+v, in one call %+v: want one commit each at the same version", jres, res)
			}
			jafter, rafter := load(t, jobStore), load(t, runStore)
			if got, want := tableRows(t, jafter), tableRows(t, rafter); !maps.Equal(got, want) || maps.Equal(got, tableRows(t, jsnap)) {
				t.Fatalf("%d rows after the job, %d after the verb (of 300): want the same, changed", len(got), len(want))
			}
			if tc.o.cdf {
				got, want := changes(t, jafter, jres.Commit.Version), changes(t, rafter, res.Commit.Version)
				if len(got) == 0 || !slices.Equal(got, want) {
					t.Errorf("change data %v, the verb's %v", got, want)
				}
			}
			jm, rm := jres.Metrics, res.Metrics
			jm.ExecutionTimeMs, jm.ScanTimeMs, jm.RewriteTimeMs = 0, 0, 0
			rm.ExecutionTimeMs, rm.ScanTimeMs, rm.RewriteTimeMs = 0, 0, 0
			if jm != rm {
				t.Errorf("metrics %+v, the verb's %+v", jm, rm)
			}
			ji, ok1 := jafter.CommitInfo()
			ri, ok2 := rafter.CommitInfo()
			if !ok1 || !ok2 || ji.Operation != job.Operation() || ji.Operation != ri.Operation || !maps.Equal(ji.OperationParameters, ri.OperationParameters) {
				t.Errorf("commitInfo %s %v, the verb's %s %v", ji.Operation, ji.OperationParameters, ri.Operation, ri.OperationParameters)
			}
		})
	}
}

// TestJobCommitChecksParts: parts that did not read the plan's candidates
// (a group missing) are refused before anything is committed, and the
// files they wrote are deleted; a group index out of range is refused.
func TestJobCommitChecksParts(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	snap := newTable(t, store, tableOpts{partitioned: true})
	job, err := dml.PlanDelete(ctx, snap, mustParse(t, "n < 4"), dml.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if job.Groups() < 2 {
		t.Fatalf("%d groups, want several", job.Groups())
	}
	if _, err := job.RewriteGroup(ctx, job.Groups()); !errors.Is(err, deltaerr.ErrInvalidArgument) {
		t.Fatalf("group out of range: %v", err)
	}
	r, err := job.RewriteGroup(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Adds) == 0 {
		t.Fatal("group 0 wrote nothing: a test of nothing")
	}
	if _, err := job.Commit(ctx, []write.Rewritten{r}); !errors.Is(err, deltaerr.ErrInvalidArgument) {
		t.Fatalf("commit of one group of %d: %v, want ErrInvalidArgument", job.Groups(), err)
	}
	if after := load(t, store); after.Version() != snap.Version() {
		t.Fatalf("version %d after a refused commit, want %d", after.Version(), snap.Version())
	}
	for _, a := range r.Adds {
		if _, err := store.Stat(ctx, a.Path); err == nil {
			t.Errorf("%s left after a refused commit", a.Path)
		}
	}
}

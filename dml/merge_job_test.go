package dml

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/txn"
	"github.com/godelta/delta/write"
)

// runMergeJob runs a merge as an engine runs a MergeJob: planned, each
// group rewritten on its own, the inserts written once from the union of
// the groups' matches, then one commit.
func runMergeJob(ctx context.Context, snap *snapshot.Snapshot, src Source, spec MergeSpec, opts Options) (MergeResult, int, error) {
	j, err := PlanMerge(ctx, snap, src, spec, opts)
	if err != nil {
		return MergeResult{}, 0, err
	}
	defer j.Close()
	var parts []MergePart
	var matched []int64
	// Backwards: Commit must not depend on the order of the parts.
	for i := j.Groups() - 1; i >= 0; i-- {
		p, err := j.RewriteGroup(ctx, i)
		if err != nil {
			return MergeResult{}, 0, err
		}
		parts = append(parts, p)
		matched = append(matched, p.Matched...)
	}
	ins, err := j.Insert(ctx, matched)
	if err != nil {
		return MergeResult{}, 0, err
	}
	res, err := j.Commit(ctx, parts, ins)
	return res, j.Groups(), err
}

// fileMetrics are the operationMetrics that depend on how rows are cut
// into files (a job's inserts and groups write files of their own), and
// the times.
var fileMetrics = []string{"numTargetFilesAdded", "numTargetBytesAdded", "numTargetChangeFilesAdded",
	"executionTimeMs", "materializeSourceTimeMs", "scanTimeMs", "rewriteTimeMs"}

// TestMergeJobScenarios runs every merge scenario through a MergeJob of
// one group per file and through Merge on a twin table, and compares: the
// same rows, change data, commitInfo parameters and metrics (but those
// of fileMetrics), or the same error with nothing committed.
func TestMergeJobScenarios(t *testing.T) {
	ctx := context.Background()
	configs := []table{{}, {partitioned: true, cdf: true}, {dv: true, cdf: true}, {dv: true, partitioned: true, mapping: true, cdf: true}}
	for _, sc := range scenarios() {
		for _, c := range configs {
			t.Run(fmt.Sprintf("%s/%s", sc.name, c), func(t *testing.T) {
				jsnap, psnap := newTable(t, c, sc.target...), newTable(t, c, sc.target...)
				opts := Options{Options: write.Options{TargetFileSize: 1}}
				jres, groups, jerr := runMergeJob(ctx, jsnap, sourceOf(sc.source), sc.spec(), opts)
				pres, perr := Merge(ctx, psnap, sourceOf(sc.source), sc.spec(), opts)
				jafter, err := jsnap.Update(ctx)
				if err != nil {
					t.Fatal(err)
				}
				pafter, err := psnap.Update(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if sc.err != nil {
					if !errors.Is(jerr, sc.err) || !errors.Is(perr, sc.err) {
						t.Fatalf("job: %v, in process: %v, want %v", jerr, perr, sc.err)
					}
					if jafter.Version() != jsnap.Version() {
						t.Fatalf("a failed job committed version %d", jafter.Version())
					}
					return
				}
				if jerr != nil || perr != nil {
					t.Fatalf("job: %v, in process: %v", jerr, perr)
				}
				if got, want := tableRows(t, jafter), tableRows(t, pafter); !slices.Equal(got, want) {
					t.Fatalf("rows after the job %q, in process %q", got, want)
				}
				if jres.Committed != pres.Committed || jafter.Version() != pafter.Version() {
					t.Fatalf("job committed %v (version %d), in process %v (%d)", jres.Committed, jafter.Version(), pres.Committed, pafter.Version())
				}
				if !jres.Committed {
					return
				}
				if c.cdf {
					if got, want := changeRows(t, jafter, jafter.Version()), changeRows(t, pafter, pafter.Version()); !slices.Equal(got, want) {
						t.Errorf("change data of the job %q, in process %q", got, want)
					}
				}
				jci, _ := jafter.CommitInfo()
				pci, _ := pafter.CommitInfo()
				if jci.Operation != OpMerge || !maps.Equal(jci.OperationParameters, pci.OperationParameters) {
					t.Errorf("commitInfo %s %v, in process %s %v", jci.Operation, jci.OperationParameters, pci.Operation, pci.OperationParameters)
				}
				jm, pm := maps.Clone(jci.OperationMetrics), maps.Clone(pci.OperationMetrics)
				for _, k := range fileMetrics {
					delete(jm, k)
					delete(pm, k)
				}
				if len(jm) < 10 || !maps.Equal(jm, pm) {
					t.Errorf("operationMetrics of the job %v, in process %v", jm, pm)
				}
				if jres.Merge.NumTargetFilesAfterSkipping != pres.Merge.NumTargetFilesAfterSkipping ||
					jres.Merge.NumTargetFilesBeforeSkipping != pres.Merge.NumTargetFilesBeforeSkipping {
					t.Errorf("files before/after skipping: job %+v, in process %+v", jres.Merge, pres.Merge)
				}
				if groups < int(jres.Merge.NumTargetFilesAfterSkipping) {
					t.Errorf("%d groups for %d files of at least a byte each", groups, jres.Merge.NumTargetFilesAfterSkipping)
				}
			})
		}
	}
}

// upsertSpec is WHEN MATCHED UPDATE SET * WHEN NOT MATCHED INSERT *.
func upsertSpec(t *testing.T) MergeSpec {
	return MergeSpec{On: must("t.id = s.id"),
		Matched:    []Clause{{Action: ActionUpdate, All: true}},
		NotMatched: []Clause{{Action: ActionInsert, All: true}}}
}

// TestMergeJobSourceTooLarge: a source over the memory budget, which the
// in-process merge spills, is refused by PlanMerge, typed.
func TestMergeJobSourceTooLarge(t *testing.T) {
	ctx := context.Background()
	snap := newTable(t, table{}, []mrow{{id: id(1), v: "a", n: 1, p: "a"}})
	var src []mrow
	for i := range int64(100) {
		src = append(src, mrow{id: id(i), v: "s", n: i, p: "b"})
	}
	spec := upsertSpec(t)
	spec.MemoryBudget = 1024
	if _, err := PlanMerge(ctx, snap, sourceOf(src), spec, Options{}); !errors.Is(err, ErrMergeSourceTooLarge) || !errors.Is(err, ErrInvalid) {
		t.Fatalf("PlanMerge: %v, want ErrMergeSourceTooLarge", err)
	}
	spec.SpillDir = t.TempDir()
	if res, err := Merge(ctx, snap, sourceOf(src), spec, Options{}); err != nil || res.Merge.NumTargetRowsInserted != 99 {
		t.Fatalf("Merge: %+v, %v: want the source spilled, 99 rows inserted", res.Merge, err)
	}
}

// TestMergeJobConflict: a commit that deletes a file the job read,
// between the plan and the commit, fails the commit with a
// *txn.ConflictError; the table keeps that commit only.
func TestMergeJobConflict(t *testing.T) {
	ctx := context.Background()
	snap := newTable(t, table{partitioned: true}, targetRows()...)
	src := []mrow{{id: id(1), v: "new", n: 7, p: "a"}, {id: id(1000), v: "ins", n: 8, p: "b"}}
	j, err := PlanMerge(ctx, snap, sourceOf(src), upsertSpec(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	var parts []MergePart
	var matched []int64
	for i := range j.Groups() {
		p, err := j.RewriteGroup(ctx, i)
		if err != nil {
			t.Fatal(err)
		}
		parts, matched = append(parts, p), append(matched, p.Matched...)
	}
	if !slices.Equal(matched, []int64{0}) {
		t.Fatalf("matched source rows %v, want [0]", matched)
	}
	ins, err := j.Insert(ctx, matched)
	if err != nil || ins.Inserted != 1 {
		t.Fatalf("inserts %d, %v: want 1", ins.Inserted, err)
	}
	if _, err := Delete(ctx, snap, must("id = 1"), Options{}); err != nil {
		t.Fatal(err)
	}
	_, err = j.Commit(ctx, parts, ins)
	var ce *txn.ConflictError
	if !errors.Is(err, txn.ErrConflict) || !errors.As(err, &ce) {
		t.Fatalf("Commit: %v, want a *txn.ConflictError", err)
	}
	after, err := snap.Update(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ci, _ := after.CommitInfo(); after.Version() != snap.Version()+1 || ci.Operation != OpDelete {
		t.Fatalf("version %d (%s) after a conflict on %d: want the DELETE only", after.Version(), ci.Operation, snap.Version())
	}
}

// TestMergeJobBadParts: parts that did not read the job's candidates, or
// that inserted rows, are refused, typed, and nothing is committed.
func TestMergeJobBadParts(t *testing.T) {
	ctx := context.Background()
	snap := newTable(t, table{}, targetRows()...)
	src := []mrow{{id: id(1), v: "new", n: 7, p: "a"}, {id: id(25), v: "new", n: 7, p: "a"}}
	j, err := PlanMerge(ctx, snap, sourceOf(src), upsertSpec(t), Options{Options: write.Options{TargetFileSize: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if j.Groups() < 2 {
		t.Fatalf("%d groups, want several", j.Groups())
	}
	p, err := j.RewriteGroup(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.Commit(ctx, []MergePart{p}, write.Rewritten{}); !errors.Is(err, deltaerr.ErrInvalidArgument) {
		t.Fatalf("Commit of one group of %d: %v, want ErrInvalidArgument", j.Groups(), err)
	}
	if _, err := j.RewriteGroup(ctx, j.Groups()); !errors.Is(err, deltaerr.ErrInvalidArgument) {
		t.Fatalf("RewriteGroup past the last: %v", err)
	}
	if _, err := j.Insert(ctx, []int64{5}); !errors.Is(err, deltaerr.ErrInvalidArgument) {
		t.Fatalf("Insert of source row 5 of 2: %v", err)
	}
	if after, err := snap.Update(ctx); err != nil || after.Version() != snap.Version() {
		t.Fatalf("version %d, %v: want nothing committed", after.Version(), err)
	}
}

package dml

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/tableconfig"
	"github.com/godelta/delta/write"
)

// spillSchema is tableSchema with an identity column: inserted rows get
// its values in the order they are written.
var spillSchema = &schema.StructType{Fields: append(slices.Clone(tableSchema.Fields),
	schema.StructField{Name: "rid", Type: schema.Long, Nullable: true, Metadata: schema.IdentityMetadata(schema.Identity{Start: 1, Step: 1})})}

// newSpillTable creates a table of spillSchema with change data and row
// tracking on (and deletion vectors with dv), files rows each.
func newSpillTable(t *testing.T, dv bool, files, rows int) *snapshot.Snapshot {
	t.Helper()
	ctx := context.Background()
	spec := write.TableSpec{Schema: spillSchema, Properties: map[string]string{
		tableconfig.KeyEnableChangeDataFeed: "true",
		tableconfig.KeyEnableRowTracking:    "true",
	}}
	if dv {
		spec.Properties[tableconfig.KeyEnableDeletionVectors] = "true"
	}
	p, m, err := write.NewTable(spec)
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New()
	data, err := actions.EncodeCommit([]actions.Action{{Protocol: &p}, {Metadata: &m}})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.PutIfAbsent(ctx, deltalog.CommitKey(0), data); err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	for f := range files {
		b := schema.Batch{Len: rows, Columns: make([][]schema.Value, 5)}
		for i := range rows {
			id := int64(f*rows + i)
			b.Columns[0] = append(b.Columns[0], schema.LongValue(id))
			b.Columns[1] = append(b.Columns[1], schema.StringValue(fmt.Sprint("t", id, strings.Repeat("x", int(id%13)))))
			b.Columns[2] = append(b.Columns[2], schema.LongValue(id))
			b.Columns[3] = append(b.Columns[3], schema.StringValue(string(rune('a'+id%3))))
			b.Columns[4] = append(b.Columns[4], schema.Value{})
		}
		if _, err := write.Append(ctx, snap, func(yield func(schema.Batch, error) bool) { yield(b, nil) }, write.CommitOptions{}); err != nil {
			t.Fatal(err)
		}
		if snap, err = snap.Update(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return snap
}

// fileContents reads the data files a version adds, in the commit's
// order, each as its rows in file order with their row ids: the layout,
// not only the rows.
func fileContents(t *testing.T, snap *snapshot.Snapshot, v int64) []string {
	t.Helper()
	ctx := context.Background()
	data, err := snap.Store().Get(ctx, deltalog.CommitKey(v))
	if err != nil {
		t.Fatal(err)
	}
	acts, err := actions.DecodeCommit(deltalog.CommitKey(v), data)
	if err != nil {
		t.Fatal(err)
	}
	cols := []string{"id", "v", "n", "p", "rid", scan.MetadataRowID, scan.MetadataRowCommitVersion}
	fr, err := scan.NewFileReader(snap, scan.Options{Columns: cols})
	if err != nil {
		t.Fatal(err)
	}
	defer fr.Close()
	var out []string
	for _, a := range acts {
		switch {
		case a.Add != nil:
			var rows []string
			err := fr.ReadFile(ctx, a.Add, func(b *scan.FileBatch) error {
				for i := range b.Len {
					var r []string
					for j := range cols {
						r = append(r, b.Columns[j][i].String())
					}
					rows = append(rows, fmt.Sprint(b.Positions[i], ":", strings.Join(r, "|")))
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			dv := ""
			if a.Add.DeletionVector != nil {
				dv = fmt.Sprint(" dv cardinality ", a.Add.DeletionVector.Cardinality)
			}
			out = append(out, fmt.Sprintf("add%s %q", dv, rows))
		case a.Remove != nil:
			out = append(out, "remove")
		case a.CDC != nil:
			out = append(out, "cdc")
		}
	}
	return out
}

// The same merges with the source in memory and spilled into several
// partitions give the same table: the same files holding the same rows in
// the same order (identity values and row ids included), the same change
// data and metrics, and the same errors.
func TestMergeSpillSameResult(t *testing.T) {
	ctx := context.Background()
	// ids 1500..3499 (500 matched in the last file, 1500 new) with
	// duplicated and null keys where a case wants them.
	source := func(dup bool) []mrow {
		var rows []mrow
		for i := int64(1500); i < 3500; i++ {
			k := []string{"u", "d", "u", "x"}[i%4]
			rows = append(rows, mrow{id: id(i), v: fmt.Sprint("s", i, strings.Repeat("y", int(i%17))), n: i * 10, p: string(rune('a' + i%3)), kind: k})
			if i%97 == 0 {
				rows = append(rows, mrow{id: nil, v: fmt.Sprint("snull", i), n: i, p: "b", kind: "u"})
			}
		}
		if dup {
			rows = append(rows, mrow{id: id(1777), v: "dup", n: 1, p: "a", kind: "u"})
		}
		return rows
	}
	cases := []struct {
		name   string
		spec   MergeSpec
		source []mrow
		err    error
	}{
		{name: "upsert", source: source(false), spec: MergeSpec{On: must("t.id = s.id"),
			Matched:    []Clause{{Action: ActionUpdate, All: true}},
			NotMatched: []Clause{{Action: ActionInsert, All: true}}}},
		{name: "every clause kind, in order", source: source(false), spec: MergeSpec{On: must("t.id = s.id AND s.kind != 'x'"),
			Matched: []Clause{
				{Condition: must("s.kind = 'd'"), Action: ActionDelete},
				{Action: ActionUpdate, Set: []Assignment{{Column: "v", Value: must("s.v")}, {Column: "n", Value: must("t.n + s.n")}}},
			},
			NotMatched: []Clause{
				{Condition: must("s.n % 3 = 0"), Action: ActionInsert, Set: []Assignment{{Column: "id", Value: must("s.id")}, {Column: "n", Value: must("-s.n")}}},
				{Action: ActionInsert, All: true},
			},
			NotMatchedBySource: []Clause{
				{Condition: must("t.n % 11 = 0"), Action: ActionDelete},
				{Condition: must("t.n % 5 = 0"), Action: ActionUpdate, Set: []Assignment{{Column: "v", Value: must("'gone'")}}},
			}}},
		{name: "two keys, one a string", source: source(false), spec: MergeSpec{On: must("t.id = s.id AND t.p = s.p"),
			Matched:    []Clause{{Action: ActionUpdate, All: true}},
			NotMatched: []Clause{{Action: ActionInsert, All: true}}}},
		{name: "one column twice", source: source(false), spec: MergeSpec{On: must("t.id = s.id AND t.id = s.id + 0"),
			Matched:    []Clause{{Action: ActionUpdate, All: true}},
			NotMatched: []Clause{{Action: ActionInsert, All: true}}}},
		{name: "not matched by source only", source: source(false), spec: MergeSpec{On: must("t.id = s.id"),
			NotMatchedBySource: []Clause{{Action: ActionUpdate, Set: []Assignment{{Column: "n", Value: must("0")}}}}}},
		{name: "insert only", source: source(true), spec: MergeSpec{On: must("t.id = s.id"),
			NotMatched: []Clause{{Condition: must("kind = 'u'"), Action: ActionInsert, All: true}}}},
		{name: "multiple match", source: source(true), err: ErrMultipleMatch, spec: MergeSpec{On: must("t.id = s.id"),
			Matched: []Clause{{Action: ActionUpdate, All: true}}}},
		{name: "multiple match, only an unconditional delete", source: source(true), spec: MergeSpec{On: must("t.id = s.id"),
			Matched: []Clause{{Action: ActionDelete}}}},
	}
	for _, tc := range cases {
		for _, dv := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/dv=%v", tc.name, dv), func(t *testing.T) {
				type outcome struct {
					files, changes, rows []string
					metrics              MergeMetrics
					committed            bool
				}
				run := func(budget int64) (outcome, int) {
					var o outcome
					snap := newSpillTable(t, dv, 4, 500)
					// A first merge leaves deletion vectors, so that the
					// second reads files with gaps in their positions.
					first := MergeSpec{On: must("t.id = s.id"), Matched: []Clause{{Action: ActionDelete}}, MemoryBudget: budget}
					var gaps []mrow
					for i := int64(0); i < 2000; i += 7 {
						gaps = append(gaps, mrow{id: id(i)})
					}
					if _, err := Merge(ctx, snap, sourceOf(gaps), first, Options{}); err != nil {
						t.Fatal(err)
					}
					snap, err := snap.Update(ctx)
					if err != nil {
						t.Fatal(err)
					}
					spec := tc.spec
					spec.MemoryBudget, spec.SpillDir = budget, t.TempDir()
					leaves := 0
					testSpilled = func(s *spiller) { leaves = len(s.leaves) }
					defer func() { testSpilled = nil }()
					res, err := Merge(ctx, snap, sourceOf(tc.source), spec, Options{})
					if left, _ := os.ReadDir(spec.SpillDir); len(left) > 0 {
						t.Errorf("spill files left: %v", left)
					}
					if tc.err != nil {
						if !errors.Is(err, tc.err) {
							t.Fatalf("budget %d: err = %v, want %v", budget, err, tc.err)
						}
						return o, leaves
					}
					if err != nil {
						t.Fatalf("budget %d: %v", budget, err)
					}
					after, err := snap.Update(ctx)
					if err != nil {
						t.Fatal(err)
					}
					o.committed = res.Committed
					if res.Committed {
						o.files = fileContents(t, after, after.Version())
						o.changes = changeRows(t, after, after.Version())
					}
					o.rows = tableRows(t, after)
					o.metrics = res.Merge
					o.metrics.ExecutionTimeMs, o.metrics.MaterializeSourceTimeMs, o.metrics.ScanTimeMs, o.metrics.RewriteTimeMs = 0, 0, 0, 0
					return o, leaves
				}
				mem, memLeaves := run(0)
				spilled, leaves := run(4 << 10)
				if memLeaves != 0 || leaves < 4 {
					t.Fatalf("partitions: %d with the default budget, %d with 4 KiB; want 0 and several", memLeaves, leaves)
				}
				if tc.err != nil {
					return
				}
				if mem.metrics != spilled.metrics {
					t.Errorf("metrics:\n in memory %+v\n spilled   %+v", mem.metrics, spilled.metrics)
				}
				if mem.metrics.NumSourceRows != int64(len(tc.source)) {
					t.Errorf("numSourceRows %d, want %d", mem.metrics.NumSourceRows, len(tc.source))
				}
				if !mem.committed || mem.committed != spilled.committed {
					t.Fatalf("committed: in memory %v, spilled %v", mem.committed, spilled.committed)
				}
				for _, c := range []struct {
					what       string
					mem, spill []string
				}{{"files", mem.files, spilled.files}, {"change data", mem.changes, spilled.changes}, {"rows", mem.rows, spilled.rows}} {
					if len(c.mem) == 0 {
						t.Errorf("%s: none", c.what)
					}
					if !slices.Equal(c.mem, c.spill) {
						t.Errorf("%s differ:\n in memory %.2000q\n spilled   %.2000q", c.what, c.mem, c.spill)
					}
				}
			})
		}
	}
}

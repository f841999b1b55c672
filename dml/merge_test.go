package dml

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/tableconfig"
	"github.com/godelta/delta/txn"
	"github.com/godelta/delta/write"
)

// The merge tests run each scenario against a model: rows are kept as Go
// values, and the scenario's expected result (rows after, change data) is
// computed by the scenario's own Go code, not by the code under test.

// mrow is a row of the test table: id (nullable), v, n, p.
type mrow struct {
	id   *int64
	v    string
	n    int64
	p    string
	kind string // for source rows: an extra column the clauses test
}

func id(i int64) *int64 { return &i }

func (r mrow) String() string {
	ids := "null"
	if r.id != nil {
		ids = fmt.Sprint(*r.id)
	}
	return fmt.Sprintf("%s|%s|%d|%s", ids, r.v, r.n, r.p)
}

func (r mrow) values() []schema.Value {
	var idv schema.Value
	if r.id != nil {
		idv = schema.LongValue(*r.id)
	}
	return []schema.Value{idv, schema.StringValue(r.v), schema.LongValue(r.n), schema.StringValue(r.p)}
}

var tableSchema = &schema.StructType{Fields: []schema.StructField{
	{Name: "id", Type: schema.Long, Nullable: true},
	{Name: "v", Type: schema.String, Nullable: true},
	{Name: "n", Type: schema.Long, Nullable: true},
	{Name: "p", Type: schema.String, Nullable: true},
}}

// sourceSchema has the table's columns in another order, and kind.
var sourceSchema = &schema.StructType{Fields: []schema.StructField{
	{Name: "kind", Type: schema.String, Nullable: true},
	{Name: "p", Type: schema.String, Nullable: true},
	{Name: "n", Type: schema.Long, Nullable: true},
	{Name: "v", Type: schema.String, Nullable: true},
	{Name: "id", Type: schema.Long, Nullable: true},
}}

func sourceOf(rows []mrow) Source {
	return Source{Schema: sourceSchema, Batches: func(yield func(schema.Batch, error) bool) {
		b := schema.Batch{Len: len(rows), Columns: make([][]schema.Value, 5)}
		for _, r := range rows {
			v := r.values()
			b.Columns[0] = append(b.Columns[0], schema.StringValue(r.kind))
			b.Columns[1] = append(b.Columns[1], v[3])
			b.Columns[2] = append(b.Columns[2], v[2])
			b.Columns[3] = append(b.Columns[3], v[1])
			b.Columns[4] = append(b.Columns[4], v[0])
		}
		yield(b, nil)
	}}
}

func batches(rows []mrow) iter.Seq2[schema.Batch, error] {
	return func(yield func(schema.Batch, error) bool) {
		b := schema.Batch{Len: len(rows), Columns: make([][]schema.Value, 4)}
		for _, r := range rows {
			for j, v := range r.values() {
				b.Columns[j] = append(b.Columns[j], v)
			}
		}
		yield(b, nil)
	}
}

// table is a test table's configuration.
type table struct {
	dv, partitioned, mapping, cdf bool
}

func (c table) String() string {
	return fmt.Sprintf("dv=%v,part=%v,cm=%v,cdf=%v", c.dv, c.partitioned, c.mapping, c.cdf)
}

// newTable creates a table in memory with rows, written as one file per
// group, and returns its snapshot.
func newTable(t *testing.T, c table, groups ...[]mrow) *snapshot.Snapshot {
	t.Helper()
	ctx := context.Background()
	spec := write.TableSpec{Schema: tableSchema, Properties: map[string]string{}}
	if c.partitioned {
		spec.PartitionColumns = []string{"p"}
	}
	if c.dv {
		spec.Properties[tableconfig.KeyEnableDeletionVectors] = "true"
	}
	if c.mapping {
		spec.Properties[tableconfig.KeyColumnMappingMode] = "name"
	}
	if c.cdf {
		spec.Properties[tableconfig.KeyEnableChangeDataFeed] = "true"
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
	for _, g := range groups {
		if _, err := write.Append(ctx, snap, batches(g), write.CommitOptions{}); err != nil {
			t.Fatal(err)
		}
		if snap, err = snap.Update(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return snap
}

// tableRows reads the rows of snap as sorted strings.
func tableRows(t *testing.T, snap *snapshot.Snapshot) []string {
	t.Helper()
	s, err := scan.New(snap, scan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for r, err := range s.Rows(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rowString(r.Values()))
	}
	slices.Sort(out)
	return out
}

func rowString(v []schema.Value) string {
	ids := "null"
	if !v[0].IsNull() {
		ids = v[0].String()
	}
	return fmt.Sprintf("%s|%s|%s|%s", ids, v[1], v[2], v[3])
}

// changeRows reads the change data of version v as sorted "type row".
func changeRows(t *testing.T, snap *snapshot.Snapshot, v int64) []string {
	t.Helper()
	ch, err := scan.NewChanges(context.Background(), snap, scan.ChangeOptions{Start: v, End: scan.UpTo(v)})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for r, err := range ch.Rows(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		typ, _ := r.Get("_change_type")
		out = append(out, typ.String()+" "+rowString(r.Values()[:4]))
	}
	slices.Sort(out)
	return out
}

// scenario is a merge and its model: apply takes the target rows and the
// source rows and returns the expected rows after, and the expected
// change data.
type scenario struct {
	name   string
	spec   func() MergeSpec
	target [][]mrow
	source []mrow
	apply  func(target, source []mrow) (after []mrow, changes []string)
	err    error
}

func must(s string) expr.Expr {
	e, err := expr.Parse(s)
	if err != nil {
		panic(err)
	}
	return e
}

func eqID(a, b *int64) bool { return a != nil && b != nil && *a == *b }

func sortedStrings(rows []mrow) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.String()
	}
	slices.Sort(out)
	return out
}

// targetRows is the standard target: ids 0..29 over partitions a, b, c
// in three files, and a row with a null id.
func targetRows() [][]mrow {
	var g [][]mrow
	for f := range 3 {
		var rows []mrow
		for i := int64(f * 10); i < int64(f*10+10); i++ {
			rows = append(rows, mrow{id: id(i), v: fmt.Sprint("t", i), n: i, p: string(rune('a' + i%3))})
		}
		g = append(g, rows)
	}
	g[2] = append(g[2], mrow{id: nil, v: "tnull", n: 99, p: "a"})
	return g
}

// sourceRows: ids 25..34 step 1 (half matched), plus a null id.
func sourceRows() []mrow {
	var rows []mrow
	for i := int64(25); i < 35; i++ {
		k := "u"
		if i%4 == 0 {
			k = "d"
		}
		rows = append(rows, mrow{id: id(i), v: fmt.Sprint("s", i), n: i * 10, p: string(rune('a' + i%3)), kind: k})
	}
	rows = append(rows, mrow{id: nil, v: "snull", n: 7, p: "b", kind: "u"})
	return rows
}

func flatten(g [][]mrow) []mrow { return slices.Concat(g...) }

// model helpers: find the source rows matching a target row by id.
func matches(tr mrow, source []mrow) []mrow {
	var out []mrow
	for _, s := range source {
		if eqID(tr.id, s.id) {
			out = append(out, s)
		}
	}
	return out
}

func upd(pre, post mrow) []string {
	return []string{"update_preimage " + pre.String(), "update_postimage " + post.String()}
}

func scenarios() []scenario {
	upsert := scenario{
		name: "upsert",
		spec: func() MergeSpec {
			return MergeSpec{On: must("t.id = s.id"),
				Matched:    []Clause{{Action: ActionUpdate, All: true}},
				NotMatched: []Clause{{Action: ActionInsert, All: true}}}
		},
		target: targetRows(), source: sourceRows(),
		apply: func(target, source []mrow) ([]mrow, []string) {
			var out []mrow
			var ch []string
			for _, tr := range target {
				if m := matches(tr, source); len(m) > 0 {
					post := m[0]
					post.kind = ""
					out = append(out, post)
					ch = append(ch, upd(tr, post)...)
					continue
				}
				out = append(out, tr)
			}
			for _, s := range source {
				if !slices.ContainsFunc(target, func(tr mrow) bool { return eqID(tr.id, s.id) }) {
					s.kind = ""
					out = append(out, s)
					ch = append(ch, "insert "+s.String())
				}
			}
			return out, ch
		},
	}
	deleteIf := scenario{
		name: "delete-if then update, insert-if",
		spec: func() MergeSpec {
			return MergeSpec{On: must("t.id = s.id"),
				Matched: []Clause{
					{Condition: must("s.kind = 'd'"), Action: ActionDelete},
					{Action: ActionUpdate, Set: []Assignment{{Column: "v", Value: must("s.v")}, {Column: "t.n", Value: must("t.n + s.n")}}},
				},
				NotMatched: []Clause{{Condition: must("kind != 'd'"), Action: ActionInsert,
					Set: []Assignment{{Column: "id", Value: must("s.id")}, {Column: "n", Value: must("s.n + 1")}, {Column: "p", Value: must("s.p")}}}},
			}
		},
		target: targetRows(), source: sourceRows(),
		apply: func(target, source []mrow) ([]mrow, []string) {
			var out []mrow
			var ch []string
			for _, tr := range target {
				m := matches(tr, source)
				switch {
				case len(m) == 0:
					out = append(out, tr)
				case m[0].kind == "d":
					ch = append(ch, "delete "+tr.String())
				default:
					post := mrow{id: tr.id, v: m[0].v, n: tr.n + m[0].n, p: tr.p}
					out = append(out, post)
					ch = append(ch, upd(tr, post)...)
				}
			}
			for _, s := range source {
				if s.kind != "d" && !slices.ContainsFunc(target, func(tr mrow) bool { return eqID(tr.id, s.id) }) {
					r := mrow{id: s.id, v: "null", n: s.n + 1, p: s.p} // v not set: null
					out = append(out, r)
					ch = append(ch, "insert "+r.String())
				}
			}
			return out, ch
		},
	}
	bySourceDelete := scenario{
		name: "not matched by source delete",
		spec: func() MergeSpec {
			return MergeSpec{On: must("t.id = s.id"),
				Matched:            []Clause{{Action: ActionUpdate, Set: []Assignment{{Column: "v", Value: must("'matched'")}}}},
				NotMatchedBySource: []Clause{{Action: ActionDelete}}}
		},
		target: targetRows(), source: sourceRows(),
		apply: func(target, source []mrow) ([]mrow, []string) {
			var out []mrow
			var ch []string
			for _, tr := range target {
				if m := matches(tr, source); len(m) > 0 {
					post := tr
					post.v = "matched"
					out = append(out, post)
					ch = append(ch, upd(tr, post)...)
				} else {
					ch = append(ch, "delete "+tr.String())
				}
			}
			return out, ch
		},
	}
	bySourceUpdate := scenario{
		name: "not matched by source conditional update and delete",
		spec: func() MergeSpec {
			return MergeSpec{On: must("t.id = s.id AND t.p = s.p"),
				NotMatchedBySource: []Clause{
					{Condition: must("t.n < 3"), Action: ActionDelete},
					{Condition: must("t.n >= 20"), Action: ActionUpdate, Set: []Assignment{{Column: "v", Value: must("'stale'")}, {Column: "n", Value: must("-n")}}},
				}}
		},
		target: targetRows(), source: sourceRows(),
		apply: func(target, source []mrow) ([]mrow, []string) {
			var out []mrow
			var ch []string
			for _, tr := range target {
				m := slices.ContainsFunc(source, func(s mrow) bool { return eqID(tr.id, s.id) && tr.p == s.p })
				switch {
				case m:
					out = append(out, tr)
				case tr.n < 3:
					ch = append(ch, "delete "+tr.String())
				case tr.n >= 20:
					post := tr
					post.v, post.n = "stale", -tr.n
					out = append(out, post)
					ch = append(ch, upd(tr, post)...)
				default:
					out = append(out, tr)
				}
			}
			return out, ch
		},
	}
	ordered := scenario{
		name: "conditional matched clauses in order",
		spec: func() MergeSpec {
			return MergeSpec{On: must("t.id = s.id"),
				Matched: []Clause{
					{Condition: must("s.n > 310"), Action: ActionDelete},
					{Condition: must("s.n > 270"), Action: ActionUpdate, Set: []Assignment{{Column: "v", Value: must("'big'")}}},
					{Condition: must("t.n % 2 = 0"), Action: ActionUpdate, Set: []Assignment{{Column: "v", Value: must("upper(s.v)")}}},
				}}
		},
		target: targetRows(), source: sourceRows(),
		apply: func(target, source []mrow) ([]mrow, []string) {
			var out []mrow
			var ch []string
			for _, tr := range target {
				m := matches(tr, source)
				if len(m) == 0 {
					out = append(out, tr)
					continue
				}
				s := m[0]
				post := tr
				switch {
				case s.n > 310:
					ch = append(ch, "delete "+tr.String())
					continue
				case s.n > 270:
					post.v = "big"
				case tr.n%2 == 0:
					post.v = strings.ToUpper(s.v)
				default:
					out = append(out, tr)
					continue
				}
				out = append(out, post)
				ch = append(ch, upd(tr, post)...)
			}
			return out, ch
		},
	}
	dupSource := append(sourceRows(), mrow{id: id(26), v: "dup", n: 1, p: "c", kind: "u"})
	dupError := scenario{
		name: "two source rows match one target row",
		spec: func() MergeSpec {
			return MergeSpec{On: must("t.id = s.id"), Matched: []Clause{{Action: ActionUpdate, All: true}}}
		},
		target: targetRows(), source: dupSource, err: ErrMultipleMatch,
	}
	dupCondError := scenario{
		name: "two matches with a conditional delete",
		spec: func() MergeSpec {
			return MergeSpec{On: must("t.id = s.id"), Matched: []Clause{{Condition: must("s.n > 0"), Action: ActionDelete}}}
		},
		target: targetRows(), source: dupSource, err: ErrMultipleMatch,
	}
	dupDelete := scenario{
		name: "two matches with only an unconditional delete",
		spec: func() MergeSpec {
			return MergeSpec{On: must("t.id = s.id"), Matched: []Clause{{Action: ActionDelete}}}
		},
		target: targetRows(), source: dupSource,
		apply: func(target, source []mrow) ([]mrow, []string) {
			var out []mrow
			var ch []string
			for _, tr := range target {
				if len(matches(tr, source)) > 0 {
					ch = append(ch, "delete "+tr.String())
				} else {
					out = append(out, tr)
				}
			}
			return out, ch
		},
	}
	insertOnly := scenario{
		name: "insert only, null keys never match",
		spec: func() MergeSpec {
			return MergeSpec{On: must("t.id = s.id"), NotMatched: []Clause{{Action: ActionInsert, All: true}}}
		},
		target: targetRows(), source: sourceRows(),
		apply: func(target, source []mrow) ([]mrow, []string) {
			out := slices.Clone(target)
			var ch []string
			for _, s := range source {
				if !slices.ContainsFunc(target, func(tr mrow) bool { return eqID(tr.id, s.id) }) {
					s.kind = ""
					out = append(out, s)
					ch = append(ch, "insert "+s.String())
				}
			}
			return out, ch
		},
	}
	nested := scenario{
		name: "no equality: nested loop",
		spec: func() MergeSpec {
			return MergeSpec{On: must("t.n > s.n AND s.kind = 'x'"),
				Matched:    []Clause{{Action: ActionDelete}},
				NotMatched: []Clause{{Action: ActionInsert, All: true}}}
		},
		target: targetRows(),
		source: []mrow{{id: id(100), v: "x", n: 25, p: "a", kind: "x"}, {id: id(101), v: "y", n: 1000, p: "b", kind: "x"}},
		apply: func(target, source []mrow) ([]mrow, []string) {
			var out []mrow
			var ch []string
			for _, tr := range target {
				if tr.n > 25 {
					ch = append(ch, "delete "+tr.String())
				} else {
					out = append(out, tr)
				}
			}
			s := source[1]
			s.kind = ""
			out = append(out, s)
			ch = append(ch, "insert "+s.String())
			return out, ch
		},
	}
	return []scenario{upsert, deleteIf, bySourceDelete, bySourceUpdate, ordered, dupError, dupCondError, dupDelete, insertOnly, nested}
}

func TestMergeScenarios(t *testing.T) {
	var configs []table
	for _, dv := range []bool{false, true} {
		for _, part := range []bool{false, true} {
			for _, cm := range []bool{false, true} {
				configs = append(configs, table{dv: dv, partitioned: part, mapping: cm, cdf: true})
			}
		}
	}
	configs = append(configs, table{}, table{dv: true})
	// Each scenario runs with the source in memory and spilled (a budget
	// of a few rows: several partitions, split again).
	for _, sc := range scenarios() {
		for _, c := range configs {
			for _, budget := range []int64{0, 256} {
				t.Run(fmt.Sprintf("%s/%s/budget=%d", sc.name, c, budget), func(t *testing.T) {
					runScenario(t, sc, c, budget)
				})
			}
		}
	}
}

func runScenario(t *testing.T, sc scenario, c table, budget int64) {
	t.Helper()
	ctx := context.Background()
	snap := newTable(t, c, sc.target...)
	before := tableRows(t, snap)
	spec := sc.spec()
	spec.MemoryBudget, spec.SpillDir = budget, t.TempDir()
	leaves := 0
	testSpilled = func(s *spiller) { leaves = len(s.leaves) }
	defer func() { testSpilled = nil }()
	res, err := Merge(ctx, snap, sourceOf(sc.source), spec, Options{})
	if left, _ := os.ReadDir(spec.SpillDir); len(left) > 0 {
		t.Errorf("spill files left: %v", left)
	}
	// Without an equality term (a nested loop) the source stays in
	// memory; otherwise a small budget spills it in partitions.
	if spilled := budget > 0 && !strings.Contains(sc.name, "nested loop"); spilled != (leaves > 1) {
		t.Errorf("spilled into %d partitions with a budget of %d", leaves, budget)
	}
	if sc.err != nil {
		if !errors.Is(err, sc.err) {
			t.Fatalf("err = %v, want %v", err, sc.err)
		}
		after, err := snap.Update(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if after.Version() != snap.Version() {
			t.Fatalf("a failed merge committed version %d", after.Version())
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	wantRows, wantChanges := sc.apply(flatten(sc.target), sc.source)
	after, err := snap.Update(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := tableRows(t, after)
	if want := sortedStrings(wantRows); !slices.Equal(got, want) {
		t.Fatalf("rows after merge:\n got %q\nwant %q\n(before %q)", got, want, before)
	}
	if !res.Committed {
		if len(wantChanges) > 0 {
			t.Fatal("nothing committed")
		}
		return
	}
	if after.Version() != snap.Version()+1 {
		t.Fatalf("version %d after a merge on %d", after.Version(), snap.Version())
	}
	slices.Sort(wantChanges)
	if c.cdf {
		if got := changeRows(t, after, after.Version()); !slices.Equal(got, wantChanges) {
			t.Errorf("change data:\n got %q\nwant %q", got, wantChanges)
		}
	}
	checkMetrics(t, res.Merge, wantChanges, len(sc.source), c)
	checkCommitInfo(t, after)
}

// checkMetrics checks the row metrics against the expected changes.
func checkMetrics(t *testing.T, m MergeMetrics, changes []string, nsrc int, c table) {
	t.Helper()
	var ins, upd, del int64
	for _, ch := range changes {
		switch {
		case strings.HasPrefix(ch, "insert "):
			ins++
		case strings.HasPrefix(ch, "update_postimage "):
			upd++
		case strings.HasPrefix(ch, "delete "):
			del++
		}
	}
	if m.NumSourceRows != int64(nsrc) || m.NumTargetRowsInserted != ins || m.NumTargetRowsUpdated != upd || m.NumTargetRowsDeleted != del {
		t.Errorf("metrics %+v: want source %d inserted %d updated %d deleted %d", m, nsrc, ins, upd, del)
	}
	if m.NumTargetRowsMatchedUpdated+m.NumTargetRowsNotMatchedBySourceUpdated != upd ||
		m.NumTargetRowsMatchedDeleted+m.NumTargetRowsNotMatchedBySourceDeleted != del {
		t.Errorf("metrics %+v: split counts do not add up", m)
	}
	if m.NumOutputRows != m.NumTargetRowsInserted+m.NumTargetRowsUpdated+m.NumTargetRowsCopied {
		t.Errorf("numOutputRows %d", m.NumOutputRows)
	}
	if c.dv && m.NumTargetRowsCopied != 0 {
		t.Errorf("rows copied with deletion vectors: %d", m.NumTargetRowsCopied)
	}
	if !c.dv && m.NumTargetDeletionVectorsAdded+m.NumTargetDeletionVectorsUpdated != 0 {
		t.Errorf("deletion vectors counted without them: %+v", m)
	}
}

// checkCommitInfo checks the commit's operation and its parameters.
func checkCommitInfo(t *testing.T, snap *snapshot.Snapshot) {
	t.Helper()
	ci, ok := snap.CommitInfo()
	if !ok {
		t.Fatal("no commitInfo")
	}
	if ci.Operation != "MERGE" {
		t.Errorf("operation %q", ci.Operation)
	}
	for _, k := range []string{"predicate", "matchedPredicates", "notMatchedPredicates", "notMatchedBySourcePredicates"} {
		if _, ok := ci.OperationParameters[k].(string); !ok {
			t.Errorf("operationParameters.%s = %v", k, ci.OperationParameters[k])
		}
	}
	if ci.OperationMetrics["numSourceRows"] == nil {
		t.Errorf("no operationMetrics: %v", ci.OperationMetrics)
	}
	_ = txn.ErrConflict
}

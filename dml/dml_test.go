package dml_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/dml"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/internal/dv"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/tableconfig"
	"github.com/godelta/delta/txn"
	"github.com/godelta/delta/write"
)

// row is a row of the test table: id BIGINT NOT NULL, v STRING, n INT,
// p STRING (the partition column when partitioned).
type row struct {
	id int64
	v  string
	n  int32
	p  string
}

func (r row) String() string { return fmt.Sprintf("%d|%s|%d|%s", r.id, r.v, r.n, r.p) }

// initial are the rows the test tables start with, in three appends.
func initial() [][]row {
	var out [][]row
	for b := range 3 {
		var rows []row
		for i := range 100 {
			id := int64(b*100 + i)
			rows = append(rows, row{id: id, v: fmt.Sprint("v", id), n: int32(id % 10), p: string(rune('a' + id%3))})
		}
		out = append(out, rows)
	}
	return out
}

type tableOpts struct {
	partitioned, columnMapping, dvs, cdf bool
	props                                map[string]string
	schemaDDL                            string
}

func newTable(t *testing.T, store logstore.Store, o tableOpts) *snapshot.Snapshot {
	t.Helper()
	ctx := context.Background()
	ddl := o.schemaDDL
	if ddl == "" {
		ddl = "id BIGINT NOT NULL, v STRING, n INT, p STRING"
	}
	sch, err := schema.ParseDDL(ddl)
	if err != nil {
		t.Fatal(err)
	}
	spec := write.TableSpec{Schema: sch, Properties: map[string]string{}}
	maps.Copy(spec.Properties, o.props)
	if o.partitioned {
		spec.PartitionColumns = []string{"p"}
	}
	if o.columnMapping {
		spec.Properties[tableconfig.KeyColumnMappingMode] = "name"
	}
	if o.dvs {
		spec.Properties[tableconfig.KeyEnableDeletionVectors] = "true"
	}
	if o.cdf {
		spec.Properties[tableconfig.KeyEnableChangeDataFeed] = "true"
	}
	p, m, err := write.NewTable(spec)
	if err != nil {
		t.Fatal(err)
	}
	create := txn.BeginCreate(store, txn.Options{})
	create.SetProtocol(p)
	create.SetMetadata(m)
	if _, err := create.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	snap := load(t, store)
	for _, rows := range initial() {
		if _, err := write.Append(ctx, snap, batch(rows), write.CommitOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return load(t, store)
}

func load(t *testing.T, store logstore.Store) *snapshot.Snapshot {
	t.Helper()
	snap, err := snapshot.Load(context.Background(), store, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func batch(rows []row) iter.Seq2[write.Batch, error] {
	return func(yield func(write.Batch, error) bool) {
		b := write.Batch{Len: len(rows), Columns: make([][]schema.Value, 4)}
		for _, r := range rows {
			b.Columns[0] = append(b.Columns[0], schema.LongValue(r.id))
			b.Columns[1] = append(b.Columns[1], schema.StringValue(r.v))
			b.Columns[2] = append(b.Columns[2], schema.IntegerValue(r.n))
			b.Columns[3] = append(b.Columns[3], schema.StringValue(r.p))
		}
		yield(b, nil)
	}
}

// tableRows reads the table as "id|v|n|p" by id.
func tableRows(t *testing.T, snap *snapshot.Snapshot) map[int64]string {
	t.Helper()
	s, err := scan.New(snap, scan.Options{Columns: []string{"id", "v", "n", "p"}})
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]string{}
	for r, err := range s.Rows(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		v := r.Values()
		id := v[0].Int64()
		if _, dup := out[id]; dup {
			t.Fatalf("id %d twice", id)
		}
		out[id] = fmt.Sprintf("%d|%s|%s|%s", id, v[1], v[2], v[3])
	}
	return out
}

// changes reads the change data feed of version v as sorted "type row".
func changes(t *testing.T, snap *snapshot.Snapshot, v int64) []string {
	t.Helper()
	c, err := scan.NewChanges(context.Background(), snap, scan.ChangeOptions{Start: v, End: scan.UpTo(v), Columns: []string{"id", "v", "n", "p"}})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for r, err := range c.Rows(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		v := r.Values()
		out = append(out, fmt.Sprintf("%s %d|%s|%s|%s", v[4], v[0].Int64(), v[1], v[2], v[3]))
	}
	slices.Sort(out)
	return out
}

// diff is the change data of going from old to new, by id.
func diff(old, new map[int64]string) []string {
	var out []string
	for id, o := range old {
		n, ok := new[id]
		switch {
		case !ok:
			out = append(out, "delete "+o)
		case n != o:
			out = append(out, "update_preimage "+o, "update_postimage "+n)
		}
	}
	for id, n := range new {
		if _, ok := old[id]; !ok {
			out = append(out, "insert "+n)
		}
	}
	slices.Sort(out)
	return out
}

// expected applies fn to the initial rows: nil drops a row.
func expected(fn func(r row) *row) map[int64]string {
	out := map[int64]string{}
	for _, rows := range initial() {
		for _, r := range rows {
			if nr := fn(r); nr != nil {
				out[nr.id] = nr.String()
			}
		}
	}
	return out
}

func mustParse(t *testing.T, s string) expr.Expr {
	t.Helper()
	e, err := expr.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestMatrix runs DELETE and UPDATE for each strategy, partitioned and
// not, with and without column mapping, with the change data feed on:
// the table after equals rows computed here, and the change data of the
// commit equals the diff.
func TestMatrix(t *testing.T) {
	type op struct {
		name   string
		run    func(ctx context.Context, snap *snapshot.Snapshot, o dml.Options) (dml.Result, error)
		expect func(r row) *row
		rows   func(m dml.Metrics) int64
	}
	ops := []op{
		{
			name: "delete",
			run: func(ctx context.Context, snap *snapshot.Snapshot, o dml.Options) (dml.Result, error) {
				return dml.Delete(ctx, snap, mustParse(t, "n < 3 AND id <> 4"), o)
			},
			expect: func(r row) *row {
				if r.n < 3 && r.id != 4 {
					return nil
				}
				return &r
			},
			rows: func(m dml.Metrics) int64 { return m.NumDeletedRows },
		},
		{
			name: "update",
			run: func(ctx context.Context, snap *snapshot.Snapshot, o dml.Options) (dml.Result, error) {
				set, err := dml.ParseAssignments("v = upper(concat(v, '-x')), n = n * 10 + 1")
				if err != nil {
					return dml.Result{}, err
				}
				return dml.Update(ctx, snap, set, mustParse(t, "n >= 7 OR id = 150"), o)
			},
			expect: func(r row) *row {
				if r.n >= 7 || r.id == 150 {
					r.v = strings.ToUpper(r.v + "-x")
					r.n = r.n*10 + 1
				}
				return &r
			},
			rows: func(m dml.Metrics) int64 { return m.NumUpdatedRows },
		},
		{
			name: "update-partition",
			run: func(ctx context.Context, snap *snapshot.Snapshot, o dml.Options) (dml.Result, error) {
				set, err := dml.ParseAssignments("p = 'z'")
				if err != nil {
					return dml.Result{}, err
				}
				return dml.Update(ctx, snap, set, mustParse(t, "p = 'b' AND n = 1"), o)
			},
			expect: func(r row) *row {
				if r.p == "b" && r.n == 1 {
					r.p = "z"
				}
				return &r
			},
			rows: func(m dml.Metrics) int64 { return m.NumUpdatedRows },
		},
	}
	for _, o := range ops {
		for _, dvs := range []bool{false, true} {
			for _, part := range []bool{false, true} {
				for _, cm := range []bool{false, true} {
					name := fmt.Sprintf("%s/dv=%v/partitioned=%v/columnMapping=%v", o.name, dvs, part, cm)
					t.Run(name, func(t *testing.T) {
						ctx := context.Background()
						store := memory.New()
						snap := newTable(t, store, tableOpts{partitioned: part, columnMapping: cm, dvs: dvs, cdf: true})
						old := tableRows(t, snap)
						res, err := o.run(ctx, snap, dml.Options{})
						if err != nil {
							t.Fatal(err)
						}
						want := map[dml.Strategy]bool{dml.MergeOnRead: dvs, dml.CopyOnWrite: !dvs}
						if !want[res.Strategy] || !res.Committed {
							t.Fatalf("strategy %v, committed %v", res.Strategy, res.Committed)
						}
						after := load(t, store)
						got := tableRows(t, after)
						exp := expected(o.expect)
						if !maps.Equal(got, exp) {
							t.Errorf("rows after:\n%v\nwant\n%v", got, exp)
						}
						if c, d := changes(t, after, res.Commit.Version), diff(old, exp); !slices.Equal(c, d) {
							t.Errorf("change data:\n%v\nwant the diff\n%v", c, d)
						}
						changed := int64(0)
						for id := range old {
							if old[id] != exp[id] {
								changed++
							}
						}
						if n := o.rows(res.Metrics); n != changed {
							t.Errorf("metrics count %d rows, want %d", n, changed)
						}
						checkCommit(t, after, res, dvs)
					})
				}
			}
		}
	}
}

// checkCommit checks the commit's actions against its strategy and
// metrics: deletion vectors decode with dv.Load and are exact, and
// commitInfo carries Spark's names.
func checkCommit(t *testing.T, snap *snapshot.Snapshot, res dml.Result, dvs bool) {
	t.Helper()
	ctx := context.Background()
	data, err := snap.Store().Get(ctx, deltalog.CommitKey(res.Commit.Version))
	if err != nil {
		t.Fatal(err)
	}
	acts, err := actions.DecodeCommit("commit", data)
	if err != nil {
		t.Fatal(err)
	}
	var ci *actions.CommitInfo
	removed := map[string]bool{}
	var withDV int
	for _, a := range acts {
		switch {
		case a.CommitInfo != nil:
			ci = a.CommitInfo
		case a.Remove != nil:
			removed[a.Remove.Path] = true
		case a.Add != nil && a.Add.DeletionVector != nil:
			withDV++
			d := a.Add.DeletionVector
			bm, err := dv.Load(ctx, snap.Store(), d, nil)
			if err != nil {
				t.Fatalf("our deletion vector of %s: %v", a.Add.Path, err)
			}
			if int64(bm.Cardinality()) != d.Cardinality {
				t.Errorf("%s: cardinality %d, bitmap %d", a.Add.Path, d.Cardinality, bm.Cardinality())
			}
			if !strings.Contains(a.Add.Stats, `"tightBounds":false`) {
				t.Errorf("%s: stats %s without tightBounds false", a.Add.Path, a.Add.Stats)
			}
		}
	}
	if ci == nil {
		t.Fatal("no commitInfo")
	}
	if dvs != (withDV > 0) && res.Metrics.NumDeletedRows+res.Metrics.NumUpdatedRows > 0 {
		t.Errorf("deletion vectors %v, but %d adds carry one", dvs, withDV)
	}
	for _, k := range []string{"numRemovedFiles", "numAddedFiles", "numCopiedRows", "numDeletionVectorsAdded", "numDeletionVectorsRemoved", "numDeletionVectorsUpdated", "executionTimeMs", "numAddedChangeFiles"} {
		if _, ok := ci.OperationMetrics[k].(string); !ok {
			t.Errorf("operationMetrics lacks %s as a string: %v", k, ci.OperationMetrics)
		}
	}
	if p, ok := ci.OperationParameters["predicate"].(string); !ok || !strings.HasPrefix(p, `["`) {
		t.Errorf("operationParameters %v, want the predicate as a JSON array string", ci.OperationParameters)
	}
	if want := fmt.Sprint(res.Metrics.NumDeletionVectorsAdded); ci.OperationMetrics["numDeletionVectorsAdded"] != want {
		t.Errorf("numDeletionVectorsAdded %v, want %s", ci.OperationMetrics["numDeletionVectorsAdded"], want)
	}
}

// A DELETE by partition values only removes whole files without reading
// them.
func TestDeleteWholePartitions(t *testing.T) {
	for _, dvs := range []bool{false, true} {
		t.Run(fmt.Sprint("dv=", dvs), func(t *testing.T) {
			ctx := context.Background()
			store := memory.New()
			snap := newTable(t, store, tableOpts{partitioned: true, dvs: dvs})
			res, err := dml.Delete(ctx, snap, mustParse(t, "p = 'c'"), dml.Options{})
			if err != nil {
				t.Fatal(err)
			}
			m := res.Metrics
			if m.NumDeletedRows != 100 || m.NumRemovedFiles != 3 || m.NumAddedFiles != 0 || m.NumDeletionVectorsAdded != 0 || m.NumFilesRead != 3 {
				t.Errorf("metrics %+v", m)
			}
			got := tableRows(t, load(t, store))
			exp := expected(func(r row) *row {
				if r.p == "c" {
					return nil
				}
				return &r
			})
			if !maps.Equal(got, exp) {
				t.Errorf("rows %v, want %v", got, exp)
			}
		})
	}
}

func TestNothingMatched(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	snap := newTable(t, store, tableOpts{})
	res, err := dml.Delete(ctx, snap, mustParse(t, "id > 1000"), dml.Options{})
	if err != nil || res.Committed {
		t.Fatalf("committed %v, %v", res.Committed, err)
	}
	if v := load(t, store).Version(); v != snap.Version() {
		t.Errorf("version %d after a DELETE of nothing, want %d", v, snap.Version())
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	snap := newTable(t, store, tableOpts{props: map[string]string{tableconfig.KeyConstraintPrefix + "small": "n < 50"}})
	cases := []struct {
		name string
		run  func() error
		want error
	}{
		{"unknown column in predicate", func() error {
			_, err := dml.Delete(ctx, snap, mustParse(t, "nope = 1"), dml.Options{})
			return err
		}, dml.ErrInvalid},
		{"predicate that is not boolean", func() error {
			_, err := dml.Delete(ctx, snap, mustParse(t, "n + 1"), dml.Options{})
			return err
		}, expr.ErrNotPredicate},
		{"unknown column assigned", func() error {
			_, err := dml.Update(ctx, snap, []dml.Assignment{{Column: "nope", Value: mustParse(t, "1")}}, nil, dml.Options{})
			return err
		}, dml.ErrInvalid},
		{"value that cannot be cast", func() error {
			set, _ := dml.ParseAssignments("n = 'abc'")
			_, err := dml.Update(ctx, snap, set, nil, dml.Options{})
			return err
		}, dml.ErrInvalid},
		{"NOT NULL", func() error {
			set, _ := dml.ParseAssignments("id = NULL")
			_, err := dml.Update(ctx, snap, set, mustParse(t, "id = 3"), dml.Options{})
			return err
		}, write.ErrConstraint},
		{"CHECK constraint", func() error {
			set, _ := dml.ParseAssignments("n = n + 100")
			_, err := dml.Update(ctx, snap, set, mustParse(t, "id = 3"), dml.Options{})
			return err
		}, write.ErrConstraint},
		{"twice", func() error {
			_, err := dml.ParseAssignments("n = 1, N = 2")
			if err != nil {
				return err
			}
			set, _ := dml.ParseAssignments("n = 1, N = 2")
			_, err = dml.Update(ctx, snap, set, nil, dml.Options{})
			return err
		}, dml.ErrInvalid},
		{"no assignment", func() error {
			_, err := dml.ParseAssignments(" ")
			return err
		}, dml.ErrInvalid},
		// A predicate that overflows on a row fails the operation (Spark
		// with ANSI on), in a DELETE, an UPDATE and a MERGE alike.
		{"overflow in a DELETE predicate", func() error {
			_, err := dml.Delete(ctx, snap, mustParse(t, "id * 9223372036854775807 > 0"), dml.Options{})
			return err
		}, expr.ErrOverflow},
		{"overflow in an UPDATE predicate", func() error {
			set, _ := dml.ParseAssignments("v = 'x'")
			_, err := dml.Update(ctx, snap, set, mustParse(t, "id * 9223372036854775807 > 0"), dml.Options{})
			return err
		}, expr.ErrOverflow},
		{"overflow in a MERGE condition", func() error {
			src := dml.RowsSource(&schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long, Nullable: true}}},
				[][]schema.Value{{schema.LongValue(3)}})
			spec := dml.MergeSpec{On: mustParse(t, "t.id = s.id"),
				Matched: []dml.Clause{{Condition: mustParse(t, "t.id * 9223372036854775807 > 0"), Action: dml.ActionDelete}}}
			_, err := dml.Merge(ctx, snap, src, spec, dml.Options{})
			return err
		}, expr.ErrOverflow},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.run()
			if !errors.Is(err, c.want) || !errors.Is(err, deltaerr.ErrInvalidArgument) {
				t.Errorf("%v, want %v", err, c.want)
			}
		})
	}
	if v := load(t, store).Version(); v != snap.Version() {
		t.Errorf("version %d after failed operations, want %d", v, snap.Version())
	}
	// Cast: a string that is a number is stored as the column's type.
	set, _ := dml.ParseAssignments("n = '42', v = CAST(n AS STRING)")
	if _, err := dml.Update(ctx, snap, set, mustParse(t, "id = 5"), dml.Options{}); err != nil {
		t.Fatal(err)
	}
	if got := tableRows(t, load(t, store))[5]; got != "5|5|42|c" {
		t.Errorf("row 5 is %s, want 5|5|42|c", got)
	}
}

func TestAppendOnly(t *testing.T) {
	ctx := context.Background()
	snap := newTable(t, memory.New(), tableOpts{props: map[string]string{tableconfig.KeyAppendOnly: "true"}})
	if _, err := dml.Delete(ctx, snap, nil, dml.Options{}); !errors.Is(err, write.ErrAppendOnly) {
		t.Errorf("DELETE: %v, want ErrAppendOnly", err)
	}
	set, _ := dml.ParseAssignments("n = 1")
	if _, err := dml.Update(ctx, snap, set, nil, dml.Options{}); !errors.Is(err, write.ErrAppendOnly) {
		t.Errorf("UPDATE: %v, want ErrAppendOnly", err)
	}
}

// Generated columns are computed again for updated rows.
func TestUpdateGenerated(t *testing.T) {
	ctx := context.Background()
	store2 := memory.New()
	g := `{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{}},{"name":"v","type":"string","nullable":true,"metadata":{}},{"name":"n","type":"integer","nullable":true,"metadata":{}},{"name":"p","type":"string","nullable":true,"metadata":{"delta.generationExpression":"concat(v, '!')"}}]}`
	gs, err := schema.Parse(g)
	if err != nil {
		t.Fatal(err)
	}
	p, m, err := write.NewTable(write.TableSpec{Schema: gs})
	if err != nil {
		t.Fatal(err)
	}
	create := txn.BeginCreate(store2, txn.Options{})
	create.SetProtocol(p)
	create.SetMetadata(m)
	if _, err := create.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	s2 := load(t, store2)
	rows := []row{{id: 1, v: "a"}, {id: 2, v: "b"}}
	b := batch(rows)
	wb := func(yield func(write.Batch, error) bool) {
		for x, err := range b {
			x.Columns[3] = []schema.Value{{}, {}} // generated: computed
			yield(x, err)
		}
	}
	if _, err := write.Append(ctx, s2, wb, write.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	set, _ := dml.ParseAssignments("v = 'q'")
	if _, err := dml.Update(ctx, load(t, store2), set, mustParse(t, "id = 2"), dml.Options{}); err != nil {
		t.Fatal(err)
	}
	got := tableRows(t, load(t, store2))
	want := map[int64]string{1: "1|a|0|a!", 2: "2|q|0|q!"}
	if !maps.Equal(got, want) {
		t.Errorf("rows %v, want %v", got, want)
	}
}

// A DELETE by deletion vectors on a table without change data reads only
// its predicate's columns; the result is the same.
func TestDeleteDVWithoutChangeData(t *testing.T) {
	for _, cm := range []bool{false, true} {
		t.Run(fmt.Sprint("columnMapping=", cm), func(t *testing.T) {
			ctx := context.Background()
			store := memory.New()
			snap := newTable(t, store, tableOpts{dvs: true, partitioned: true, columnMapping: cm})
			res, err := dml.Delete(ctx, snap, mustParse(t, "n < 3 AND V <> 'v4'"), dml.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Strategy != dml.MergeOnRead || res.Metrics.NumDeletionVectorsAdded == 0 {
				t.Fatalf("strategy %v, metrics %+v", res.Strategy, res.Metrics)
			}
			got := tableRows(t, load(t, store))
			exp := expected(func(r row) *row {
				if r.n < 3 && r.v != "v4" {
					return nil
				}
				return &r
			})
			if !maps.Equal(got, exp) {
				t.Errorf("rows after:\n%v\nwant\n%v", got, exp)
			}
			checkCommit(t, load(t, store), res, true)
		})
	}
}

package dml_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/dml"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/tableconfig"
	"github.com/godelta/delta/txn"
	"github.com/godelta/delta/write"
)

// The nested tests keep rows as Go records (nrec) and encode each record
// twice: in the table's layout and types, and in a source's. What a merge
// must write is the table encoding of the source's records, computed here
// and not by the code under test.

// nestedDDL is the table: a struct, an array, a map, an array of
// structs, a map of structs and a struct in a struct.
const nestedDDL = "id BIGINT NOT NULL, s STRUCT<a: INT, b: STRING>, arr ARRAY<INT>, m MAP<STRING, INT>, " +
	"sa ARRAY<STRUCT<x: INT, y: STRING>>, ms MAP<STRING, STRUCT<p: BIGINT, q: DOUBLE>>, " +
	"ns STRUCT<inner: STRUCT<c: INT, d: ARRAY<STRING>>, e: BIGINT>"

// reorderedDDL is a source with the same columns in another order, an
// extra column, struct fields in other orders (one in another case) and
// narrower leaves (SHORT, INT and FLOAT where the table has INT, BIGINT
// and DOUBLE): MERGE must match the fields by name and widen the leaves.
const reorderedDDL = "extra STRING, ns STRUCT<e: INT, inner: STRUCT<d: ARRAY<STRING>, c: SHORT>>, " +
	"ms MAP<STRING, STRUCT<q: FLOAT, p: INT>>, sa ARRAY<STRUCT<Y: STRING, x: INT>>, m MAP<STRING, SHORT>, " +
	"arr ARRAY<INT>, s STRUCT<b: STRING, a: INT>, id BIGINT"

type sRec struct {
	a *int32
	b *string
}

type xyRec struct {
	x int32
	y string
}

type pqRec struct {
	p int64
	q float32 // exactly a double too
}

type kvPQ struct {
	k string
	v *pqRec // nil: a null value
}

type kvInt struct {
	k string
	v *int32
}

type nsRec struct {
	inner *struct {
		c *int32
		d []*string // nil: null array
	}
	e int64
}

// nrec is a row; a nil pointer or slice is a null value, an empty
// non-nil slice an empty array or map.
type nrec struct {
	id  int64
	s   *sRec
	arr []*int32
	m   []kvInt
	sa  []*xyRec
	ms  []kvPQ
	ns  *nsRec
}

func p32(i int32) *int32     { return &i }
func pstr(s string) *string  { return &s }
func some[T any](s ...T) []T { return append([]T{}, s...) }

func i32(p *int32, t schema.DataType) schema.Value {
	if p == nil {
		return schema.Value{}
	}
	if t == schema.Short {
		return schema.ShortValue(int16(*p))
	}
	return schema.IntegerValue(*p)
}

func str(p *string) schema.Value {
	if p == nil {
		return schema.Value{}
	}
	return schema.StringValue(*p)
}

// target encodes r in the table's layout and types.
func (r nrec) target() []schema.Value {
	out := make([]schema.Value, 7)
	out[0] = schema.LongValue(r.id)
	if r.s != nil {
		out[1] = schema.StructValue([]schema.Value{i32(r.s.a, schema.Integer), str(r.s.b)})
	}
	if r.arr != nil {
		var e []schema.Value
		for _, x := range r.arr {
			e = append(e, i32(x, schema.Integer))
		}
		out[2] = schema.ArrayValue(e)
	}
	if r.m != nil {
		var kv []schema.Value
		for _, x := range r.m {
			kv = append(kv, schema.StringValue(x.k), i32(x.v, schema.Integer))
		}
		out[3] = schema.MapValue(kv)
	}
	if r.sa != nil {
		var e []schema.Value
		for _, x := range r.sa {
			var v schema.Value
			if x != nil {
				v = schema.StructValue([]schema.Value{schema.IntegerValue(x.x), schema.StringValue(x.y)})
			}
			e = append(e, v)
		}
		out[4] = schema.ArrayValue(e)
	}
	if r.ms != nil {
		var kv []schema.Value
		for _, x := range r.ms {
			var v schema.Value
			if x.v != nil {
				v = schema.StructValue([]schema.Value{schema.LongValue(x.v.p), schema.DoubleValue(float64(x.v.q))})
			}
			kv = append(kv, schema.StringValue(x.k), v)
		}
		out[5] = schema.MapValue(kv)
	}
	if r.ns != nil {
		var inner schema.Value
		if r.ns.inner != nil {
			var d schema.Value
			if r.ns.inner.d != nil {
				var e []schema.Value
				for _, x := range r.ns.inner.d {
					e = append(e, str(x))
				}
				d = schema.ArrayValue(e)
			}
			inner = schema.StructValue([]schema.Value{i32(r.ns.inner.c, schema.Integer), d})
		}
		out[6] = schema.StructValue([]schema.Value{inner, schema.LongValue(r.ns.e)})
	}
	return out
}

// reordered encodes r in the layout and types of reorderedDDL.
func (r nrec) reordered() []schema.Value {
	t := r.target()
	out := make([]schema.Value, 8)
	out[0] = schema.StringValue(fmt.Sprint("extra", r.id))
	if r.ns != nil {
		var inner schema.Value
		if r.ns.inner != nil {
			inner = schema.StructValue([]schema.Value{t[6].Fields()[0].Fields()[1], i32(r.ns.inner.c, schema.Short)})
		}
		out[1] = schema.StructValue([]schema.Value{schema.IntegerValue(int32(r.ns.e)), inner})
	}
	if r.ms != nil {
		var kv []schema.Value
		for _, x := range r.ms {
			var v schema.Value
			if x.v != nil {
				v = schema.StructValue([]schema.Value{schema.FloatValue(x.v.q), schema.IntegerValue(int32(x.v.p))})
			}
			kv = append(kv, schema.StringValue(x.k), v)
		}
		out[2] = schema.MapValue(kv)
	}
	if r.sa != nil {
		var e []schema.Value
		for _, x := range r.sa {
			var v schema.Value
			if x != nil {
				v = schema.StructValue([]schema.Value{schema.StringValue(x.y), schema.IntegerValue(x.x)})
			}
			e = append(e, v)
		}
		out[3] = schema.ArrayValue(e)
	}
	if r.m != nil {
		var kv []schema.Value
		for _, x := range r.m {
			kv = append(kv, schema.StringValue(x.k), i32(x.v, schema.Short))
		}
		out[4] = schema.MapValue(kv)
	}
	out[5] = t[2]
	if r.s != nil {
		out[6] = schema.StructValue([]schema.Value{str(r.s.b), i32(r.s.a, schema.Integer)})
	}
	out[7] = t[0]
	return out
}

func (r nrec) String() string { return valuesString(r.target()) }

func valuesString(vals []schema.Value) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = v.String()
	}
	return strings.Join(parts, "|")
}

// nestedTargetRecs are the table's rows before the merge: ids 1 to 6.
func nestedTargetRecs() []nrec {
	inner := func(c int32, d ...*string) *struct {
		c *int32
		d []*string
	} {
		return &struct {
			c *int32
			d []*string
		}{p32(c), some(d...)}
	}
	var out []nrec
	for i := range int64(6) {
		n := int32(i)
		out = append(out, nrec{
			id:  i + 1,
			s:   &sRec{p32(n), pstr(fmt.Sprint("b", i))},
			arr: some(p32(n), p32(n+1)),
			m:   some(kvInt{"k", p32(n)}),
			sa:  some(&xyRec{n, "y"}),
			ms:  some(kvPQ{"a", &pqRec{int64(i), 0.5}}),
			ns:  &nsRec{inner: inner(n, pstr("d")), e: i * 10},
		})
	}
	return out
}

// nestedSourceRecs are the merge's source: ids 4 to 6 match, 7 to 9 are
// new; with nulls at every level, empty arrays and maps.
func nestedSourceRecs() []nrec {
	type in = struct {
		c *int32
		d []*string
	}
	return []nrec{
		{id: 4, s: &sRec{p32(40), pstr("new4")}, arr: some(p32(4), nil, p32(6)), m: some(kvInt{"x", p32(1)}, kvInt{"y", nil}),
			sa: some(&xyRec{1, "one"}, nil, &xyRec{2, "two"}), ms: some(kvPQ{"a", &pqRec{7, 1.5}}, kvPQ{"n", nil}),
			ns: &nsRec{inner: &in{p32(9), some(pstr("p"), nil)}, e: 99}},
		// Null struct, array, map and nested struct: they stay null.
		{id: 5},
		// Structs of null fields, empty array and maps.
		{id: 6, s: &sRec{}, arr: some[*int32](), m: some[kvInt](), sa: some[*xyRec](), ms: some[kvPQ](),
			ns: &nsRec{inner: &in{}, e: -1}},
		{id: 7, s: &sRec{p32(7), pstr("seven")}, arr: some(p32(7)), m: some(kvInt{"k7", p32(7)}),
			sa: some(&xyRec{7, "s"}), ms: some(kvPQ{"m", &pqRec{-7, -0.25}}), ns: &nsRec{e: 7}},
		{id: 8, s: &sRec{b: pstr("only b")}, ns: &nsRec{inner: &in{c: p32(8)}, e: 8}},
		{id: 9, arr: some[*int32](nil), sa: some[*xyRec](nil), ms: some(kvPQ{"z", &pqRec{0, 0}})},
	}
}

// nestedTable creates a table of nestedDDL in memory holding recs, in
// two files.
func nestedTable(t *testing.T, ddl string, props map[string]string, recs []nrec) *snapshot.Snapshot {
	t.Helper()
	ctx := context.Background()
	sch, err := schema.ParseDDL(ddl)
	if err != nil {
		t.Fatal(err)
	}
	p, m, err := write.NewTable(write.TableSpec{Schema: sch, Properties: props})
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New()
	create := txn.BeginCreate(store, txn.Options{})
	create.SetProtocol(p)
	create.SetMetadata(m)
	if _, err := create.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	snap := load(t, store)
	for _, part := range [][]nrec{recs[:len(recs)/2], recs[len(recs)/2:]} {
		if len(part) == 0 {
			continue
		}
		rows := make([][]schema.Value, len(part))
		for i, r := range part {
			rows[i] = r.target()
		}
		if _, err := write.Append(ctx, snap, dml.RowsSource(sch, rows).Batches, write.CommitOptions{}); err != nil {
			t.Fatal(err)
		}
		snap = load(t, store)
	}
	return snap
}

// allRows reads the table's rows as sorted strings.
func allRows(t *testing.T, snap *snapshot.Snapshot) []string {
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
		out = append(out, valuesString(r.Values()))
	}
	slices.Sort(out)
	return out
}

// allChanges reads the change data of version v as sorted "type row".
func allChanges(t *testing.T, snap *snapshot.Snapshot, v int64) []string {
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
		n := len(snap.Schema().Fields)
		out = append(out, typ.String()+" "+valuesString(r.Values()[:n]))
	}
	slices.Sort(out)
	return out
}

func recStrings(recs []nrec) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.String()
	}
	slices.Sort(out)
	return out
}

// TestMergeNestedColumns is issue 30's MERGE ... UPDATE SET * / INSERT *
// on struct, array, map and nested-struct columns: with and without
// column mapping, copy-on-write and deletion vectors, the change data
// feed on, from a source of the table's own schema and from one with
// reordered fields and narrower leaves. The rows and the change data
// after are exact.
func TestMergeNestedColumns(t *testing.T) {
	ctx := context.Background()
	for _, mapping := range []bool{false, true} {
		for _, strategy := range []dml.Strategy{dml.CopyOnWrite, dml.MergeOnRead} {
			for _, src := range []string{"table schema", "reordered"} {
				t.Run(fmt.Sprintf("mapping=%v/%s/%s", mapping, strategy, src), func(t *testing.T) {
					props := map[string]string{tableconfig.KeyEnableChangeDataFeed: "true"}
					if mapping {
						props[tableconfig.KeyColumnMappingMode] = "name"
					}
					if strategy == dml.MergeOnRead {
						props[tableconfig.KeyEnableDeletionVectors] = "true"
					}
					target := nestedTargetRecs()
					snap := nestedTable(t, nestedDDL, props, target)
					source := nestedSourceRecs()

					// The source: the table's schema as is (with its
					// column mapping metadata, as the CLI builds a
					// JSON source), or reorderedDDL.
					sch := snap.Schema()
					var rows [][]schema.Value
					for _, r := range source {
						rows = append(rows, r.target())
					}
					if src == "reordered" {
						var err error
						if sch, err = schema.ParseDDL(reorderedDDL); err != nil {
							t.Fatal(err)
						}
						rows = rows[:0]
						for _, r := range source {
							rows = append(rows, r.reordered())
						}
					}
					spec := dml.MergeSpec{
						On:         mustParse(t, "t.id = s.id"),
						Matched:    []dml.Clause{{Action: dml.ActionUpdate, All: true}},
						NotMatched: []dml.Clause{{Action: dml.ActionInsert, All: true}},
					}
					res, err := dml.Merge(ctx, snap, dml.RowsSource(sch, rows), spec, dml.Options{Strategy: strategy})
					if err != nil {
						t.Fatal(err)
					}
					if res.Strategy != strategy || res.Merge.NumTargetRowsUpdated != 3 || res.Merge.NumTargetRowsInserted != 3 {
						t.Errorf("strategy %s, %d updated, %d inserted", res.Strategy, res.Merge.NumTargetRowsUpdated, res.Merge.NumTargetRowsInserted)
					}
					after, err := snap.Update(ctx)
					if err != nil {
						t.Fatal(err)
					}

					// The model: ids 1 to 3 kept, 4 to 6 replaced,
					// 7 to 9 inserted.
					want := slices.Concat(target[:3], source)
					if got := allRows(t, after); !slices.Equal(got, recStrings(want)) {
						t.Errorf("rows:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(recStrings(want), "\n"))
					}
					var wantCh []string
					for i, r := range source {
						if r.id <= 6 {
							wantCh = append(wantCh, "update_preimage "+target[r.id-1].String(), "update_postimage "+r.String())
						} else {
							wantCh = append(wantCh, "insert "+source[i].String())
						}
					}
					slices.Sort(wantCh)
					if got := allChanges(t, after, after.Version()); !slices.Equal(got, wantCh) {
						t.Errorf("change data:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantCh, "\n"))
					}
				})
			}
		}
	}
}

// TestMergeNestedExplicitSet assigns nested columns one by one, in SET
// and VALUES, from source columns and from target columns.
func TestMergeNestedExplicitSet(t *testing.T) {
	ctx := context.Background()
	props := map[string]string{tableconfig.KeyColumnMappingMode: "name", tableconfig.KeyEnableChangeDataFeed: "true"}
	target := nestedTargetRecs()
	snap := nestedTable(t, nestedDDL, props, target)
	src, err := schema.ParseDDL(reorderedDDL)
	if err != nil {
		t.Fatal(err)
	}
	source := nestedSourceRecs()
	var rows [][]schema.Value
	for _, r := range source {
		rows = append(rows, r.reordered())
	}
	set, err := dml.ParseAssignments("s = s.s, sa = s.sa, ms = s.ms, ns = if(s.id > 5, NULL, t.ns)")
	if err != nil {
		t.Fatal(err)
	}
	ins, err := dml.ParseAssignments("id = s.id, s = s.s, arr = s.arr, m = s.m")
	if err != nil {
		t.Fatal(err)
	}
	spec := dml.MergeSpec{
		On:         mustParse(t, "t.id = s.id"),
		Matched:    []dml.Clause{{Action: dml.ActionUpdate, Set: set}},
		NotMatched: []dml.Clause{{Action: dml.ActionInsert, Set: ins}},
	}
	if _, err := dml.Merge(ctx, snap, dml.RowsSource(src, rows), spec, dml.Options{}); err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(target[:3])
	for _, r := range source {
		if r.id <= 6 {
			old := target[r.id-1]
			n := old
			n.s, n.sa, n.ms = r.s, r.sa, r.ms
			if r.id > 5 {
				n.ns = nil
			}
			want = append(want, n)
		} else {
			want = append(want, nrec{id: r.id, s: r.s, arr: r.arr, m: r.m})
		}
	}
	after, err := snap.Update(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := allRows(t, after); !slices.Equal(got, recStrings(want)) {
		t.Errorf("rows:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(recStrings(want), "\n"))
	}
}

// TestMergeNestedMismatch: a source struct that lacks a field of the
// table's, or has one more, is refused before anything is read, as Delta
// refuses it without schema evolution; so is a struct for an array.
func TestMergeNestedMismatch(t *testing.T) {
	ctx := context.Background()
	snap := nestedTable(t, "id BIGINT, s STRUCT<a: INT, b: STRING>, arr ARRAY<INT>", nil, nil)
	row := func(n int) [][]schema.Value {
		return [][]schema.Value{make([]schema.Value, n)}
	}
	for _, tc := range []struct {
		name, ddl, want string
	}{
		{"missing field", "id BIGINT, s STRUCT<a: INT>, arr ARRAY<INT>", "s: cannot store struct<a:int> in struct<a:int,b:string>: the value has no field b"},
		{"extra field", "id BIGINT, s STRUCT<a: INT, b: STRING, c: INT>, arr ARRAY<INT>", "the column has no field c"},
		{"struct for an array element", "id BIGINT, s STRUCT<a: INT, b: STRING>, arr ARRAY<STRUCT<a: INT>>", "arr.element: cannot store struct<a:int> in int"},
		{"struct for a leaf", "id BIGINT, s STRING, arr ARRAY<INT>", "s: cannot store string in struct<a:int,b:string>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sch, err := schema.ParseDDL(tc.ddl)
			if err != nil {
				t.Fatal(err)
			}
			for _, spec := range []dml.MergeSpec{
				{On: mustParse(t, "t.id = s.id"), Matched: []dml.Clause{{Action: dml.ActionUpdate, All: true}}},
				{On: mustParse(t, "t.id = s.id"), NotMatched: []dml.Clause{{Action: dml.ActionInsert, All: true}}},
				{On: mustParse(t, "t.id = s.id"), Matched: []dml.Clause{{Action: dml.ActionUpdate,
					Set: []dml.Assignment{{Column: "s", Value: mustParse(t, "s.s")}, {Column: "arr", Value: mustParse(t, "s.arr")}}}}},
			} {
				_, err = dml.Merge(ctx, snap, dml.RowsSource(sch, row(3)), spec, dml.Options{})
				if !errors.Is(err, expr.ErrAssign) || !errors.Is(err, dml.ErrInvalid) || !errors.Is(err, deltaerr.ErrInvalidArgument) ||
					!strings.Contains(err.Error(), tc.want) {
					t.Errorf("err = %v, want ErrAssign with %q", err, tc.want)
				}
			}
		})
	}
}

// TestMergeNestedNotNull: a null in a NOT NULL nested field is refused by
// the row checks, for updated and inserted rows.
func TestMergeNestedNotNull(t *testing.T) {
	ctx := context.Background()
	ddl := "id BIGINT, s STRUCT<a: INT NOT NULL, b: STRING>, sa ARRAY<STRUCT<x: INT NOT NULL>>"
	sch, err := schema.ParseDDL(ddl)
	if err != nil {
		t.Fatal(err)
	}
	snap := nestedTable(t, ddl, map[string]string{tableconfig.KeyColumnMappingMode: "name"}, nil)
	one := func(x schema.Value) schema.Value { return schema.StructValue([]schema.Value{x}) }
	ok := []schema.Value{schema.LongValue(1), schema.StructValue([]schema.Value{schema.IntegerValue(1), schema.StringValue("b")}),
		schema.ArrayValue([]schema.Value{one(schema.IntegerValue(2))})}
	if _, err := write.Append(ctx, snap, dml.RowsSource(sch, [][]schema.Value{ok}).Batches, write.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	snap, err = snap.Update(ctx)
	if err != nil {
		t.Fatal(err)
	}
	upsert := dml.MergeSpec{On: mustParse(t, "t.id = s.id"),
		Matched:    []dml.Clause{{Action: dml.ActionUpdate, All: true}},
		NotMatched: []dml.Clause{{Action: dml.ActionInsert, All: true}}}
	for _, tc := range []struct {
		name string
		row  []schema.Value
	}{
		{"update, struct field", []schema.Value{schema.LongValue(1), schema.StructValue([]schema.Value{{}, schema.StringValue("b")}), schema.Value{}}},
		{"insert, struct field", []schema.Value{schema.LongValue(2), schema.StructValue([]schema.Value{{}, schema.StringValue("b")}), schema.Value{}}},
		{"insert, field of an array element", []schema.Value{schema.LongValue(2), schema.Value{}, schema.ArrayValue([]schema.Value{one(schema.Value{})})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := dml.Merge(ctx, snap, dml.RowsSource(sch, [][]schema.Value{tc.row}), upsert, dml.Options{})
			var ce *write.ConstraintError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a *write.ConstraintError", err)
			}
		})
	}
	// A null struct is allowed: its fields are not there to be null.
	null := []schema.Value{schema.LongValue(1), schema.Value{}, schema.Value{}}
	if _, err := dml.Merge(ctx, snap, dml.RowsSource(sch, [][]schema.Value{null}), upsert, dml.Options{}); err != nil {
		t.Fatal(err)
	}
}

// TestUpdateNestedColumns: UPDATE SET of a nested column from another of
// the same shape (fields in another order: matched by name), and through
// if to NULL; a value of another shape is refused.
func TestUpdateNestedColumns(t *testing.T) {
	ctx := context.Background()
	ddl := "id BIGINT, s STRUCT<a: INT, b: STRING>, s2 STRUCT<B: STRING, a: BIGINT>, arr ARRAY<BIGINT>, arr2 ARRAY<INT>, m MAP<STRING, STRUCT<a: INT, b: STRING>>"
	sch, err := schema.ParseDDL(ddl)
	if err != nil {
		t.Fatal(err)
	}
	for _, mapping := range []bool{false, true} {
		t.Run(fmt.Sprint("mapping=", mapping), func(t *testing.T) {
			props := map[string]string{tableconfig.KeyEnableChangeDataFeed: "true"}
			if mapping {
				props[tableconfig.KeyColumnMappingMode] = "name"
			}
			snap := nestedTable(t, ddl, props, nil)
			ab := func(a int32, b string) schema.Value {
				return schema.StructValue([]schema.Value{schema.IntegerValue(a), schema.StringValue(b)})
			}
			ba := func(b string, a int64) schema.Value {
				return schema.StructValue([]schema.Value{schema.StringValue(b), schema.LongValue(a)})
			}
			rows := [][]schema.Value{
				{schema.LongValue(1), ab(1, "one"), ba("uno", 10), schema.ArrayValue([]schema.Value{schema.LongValue(1)}),
					schema.ArrayValue([]schema.Value{schema.IntegerValue(5), {}}), schema.MapValue([]schema.Value{schema.StringValue("k"), ab(1, "x")})},
				{schema.LongValue(2), ab(2, "two"), {}, {}, {}, {}},
			}
			if _, err := write.Append(ctx, snap, dml.RowsSource(sch, rows).Batches, write.CommitOptions{}); err != nil {
				t.Fatal(err)
			}
			if snap, err = snap.Update(ctx); err != nil {
				t.Fatal(err)
			}
			set, err := dml.ParseAssignments("s = s2, s2 = s, arr = arr2, m = if(id > 1, m, NULL)")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := dml.Update(ctx, snap, set, nil, dml.Options{}); err != nil {
				t.Fatal(err)
			}
			after, err := snap.Update(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want := []string{
				// s from s2 by name: a = 10, b = "uno"; s2 from s:
				// b = "one", a = 1.
				valuesString([]schema.Value{schema.LongValue(1), ab(10, "uno"), ba("one", 1),
					schema.ArrayValue([]schema.Value{schema.LongValue(5), {}}), rows[0][4], {}}),
				valuesString([]schema.Value{schema.LongValue(2), {}, ba("two", 2), {}, {}, {}}),
			}
			if got := allRows(t, after); !slices.Equal(got, want) {
				t.Errorf("rows:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			wantCh := []string{
				"update_postimage " + want[0], "update_postimage " + want[1],
				"update_preimage " + valuesString(rows[0]), "update_preimage " + valuesString(rows[1]),
			}
			slices.Sort(wantCh)
			if got := allChanges(t, after, after.Version()); !slices.Equal(got, wantCh) {
				t.Errorf("change data:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantCh, "\n"))
			}

			for _, bad := range []string{"s = id", "s = arr", "arr = s", "m = s", "id = s", "s = if(id > 1, s, s2)"} {
				set, err := dml.ParseAssignments(bad)
				if err != nil {
					t.Fatal(err)
				}
				_, err = dml.Update(ctx, after, set, nil, dml.Options{})
				if !errors.Is(err, expr.ErrAssign) || !errors.Is(err, dml.ErrInvalid) {
					t.Errorf("%s: err = %v, want ErrAssign", bad, err)
				}
			}
		})
	}
}

package write

import (
	"errors"
	"iter"
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/txn"
)

// identityField is a BIGINT identity column.
func identityField(name string, def schema.Identity) schema.StructField {
	return schema.StructField{Name: name, Type: schema.Long, Nullable: true, Metadata: schema.IdentityMetadata(def)}
}

// TestFirstIdentityValue: the first value allocated follows start and step
// and lies beyond the high-water mark in the step's direction
// (PROTOCOL.md "Identity Columns"; Spark's roundToNext).
func TestFirstIdentityValue(t *testing.T) {
	for _, tt := range []struct {
		name              string
		start, step, hwm  int64
		hasHWM, overflows bool
		want              int64
	}{
		{name: "no mark: start", start: 1, step: 1, want: 1},
		{name: "no mark, negative step", start: -5, step: -2, want: -5},
		{name: "after the mark", start: 1, step: 1, hwm: 4, hasHWM: true, want: 5},
		{name: "step 10", start: 0, step: 10, hwm: 30, hasHWM: true, want: 40},
		{name: "a mark off the grid rounds up", start: 10, step: 3, hwm: 14, hasHWM: true, want: 16},
		{name: "a mark before start", start: 10, step: 3, hwm: 9, hasHWM: true, want: 10},
		{name: "negative step", start: -1, step: -1, hwm: -4, hasHWM: true, want: -5},
		{name: "negative step off the grid", start: 10, step: -3, hwm: 5, hasHWM: true, want: 4},
		{name: "negative step, a mark before start", start: 10, step: -3, hwm: 11, hasHWM: true, want: 10},
		{name: "the last long", start: 0, step: 1, hwm: math.MaxInt64 - 1, hasHWM: true, want: math.MaxInt64},
		{name: "past the last long", start: 0, step: 1, hwm: math.MaxInt64, hasHWM: true, overflows: true},
		{name: "the first long", start: 0, step: -2, hwm: math.MinInt64 + 1, hasHWM: true, want: math.MinInt64},
		{name: "past the first long", start: 0, step: -2, hwm: math.MinInt64, hasHWM: true, overflows: true},
		{name: "huge step", start: math.MinInt64, step: math.MaxInt64, hwm: math.MinInt64, hasHWM: true, want: -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, over := firstIdentityValue(schema.Identity{Start: tt.start, Step: tt.step, HighWaterMark: tt.hwm, HasHighWaterMark: tt.hasHWM})
			if over != tt.overflows || !over && got != tt.want {
				t.Errorf("got %d (overflow %v), want %d (overflow %v)", got, over, tt.want, tt.overflows)
			}
		})
	}
}

// TestIdentityAllocation: row by row, the values the row writer gives,
// what it refuses, and the high-water mark it reports.
func TestIdentityAllocation(t *testing.T) {
	null := schema.Value{}
	long := schema.LongValue
	for _, tt := range []struct {
		name     string
		def      schema.Identity
		given    []schema.Value // the id of each row; null: not given
		want     []int64
		wantErr  error // the Err of the *ConstraintError
		errRow   int64
		wantMark int64
		noMark   bool
	}{
		{name: "always, from start", def: schema.Identity{Start: 1, Step: 1},
			given: []schema.Value{null, null, null}, want: []int64{1, 2, 3}, wantMark: 3},
		{name: "always, after the mark", def: schema.Identity{Start: 1, Step: 1, HighWaterMark: 4, HasHighWaterMark: true},
			given: []schema.Value{null, null}, want: []int64{5, 6}, wantMark: 6},
		{name: "step 5 from 100", def: schema.Identity{Start: 100, Step: 5},
			given: []schema.Value{null, null, null}, want: []int64{100, 105, 110}, wantMark: 110},
		{name: "negative step", def: schema.Identity{Start: -1, Step: -3, HighWaterMark: -7, HasHighWaterMark: true},
			given: []schema.Value{null, null}, want: []int64{-10, -13}, wantMark: -13},
		{name: "always refuses a value", def: schema.Identity{Start: 1, Step: 1},
			given: []schema.Value{null, long(7)}, wantErr: ErrIdentityExplicit, errRow: 1},
		{name: "by default keeps values given, allocates the others", def: schema.Identity{Start: 1, Step: 1, AllowExplicitInsert: true},
			given: []schema.Value{long(50), null, long(-3), null}, want: []int64{50, 1, -3, 2}, wantMark: 2},
		{name: "by default, every value given: no mark", def: schema.Identity{Start: 1, Step: 1, HighWaterMark: 9, HasHighWaterMark: true, AllowExplicitInsert: true},
			given: []schema.Value{long(100), long(200)}, want: []int64{100, 200}, noMark: true},
		{name: "overflow", def: schema.Identity{Start: math.MaxInt64 - 1, Step: 1},
			given: []schema.Value{null, null, null}, wantErr: ErrIdentityOverflow, errRow: 2},
		{name: "overflow, negative step", def: schema.Identity{Start: math.MinInt64 + 5, Step: -5},
			given: []schema.Value{null, null, null}, wantErr: ErrIdentityOverflow, errRow: 2},
		{name: "no value left after the mark", def: schema.Identity{Start: 1, Step: 1, HighWaterMark: math.MaxInt64, HasHighWaterMark: true},
			given: []schema.Value{null}, wantErr: ErrIdentityOverflow, errRow: 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sch := &schema.StructType{Fields: []schema.StructField{identityField("id", tt.def), {Name: "v", Type: schema.String, Nullable: true}}}
			a, err := newIdentityAlloc(sch)
			if err != nil || a == nil {
				t.Fatalf("newIdentityAlloc: %v, %v", a, err)
			}
			var got []int64
			for i, v := range tt.given {
				vals := []schema.Value{v, schema.StringValue("x")}
				err := a.fill(vals, int64(i), func() string { return "" })
				if err != nil {
					var ce *ConstraintError
					if tt.wantErr == nil || !errors.As(err, &ce) || !errors.Is(err, tt.wantErr) || ce.Kind != KindIdentity || ce.Row != tt.errRow {
						t.Fatalf("row %d: %v, want %v at row %d", i, err, tt.wantErr, tt.errRow)
					}
					if !errors.Is(err, ErrConstraint) || !errors.Is(err, deltaerr.ErrInvalidArgument) {
						t.Errorf("%v does not match ErrConstraint and ErrInvalidArgument", err)
					}
					return
				}
				got = append(got, vals[0].Int64())
			}
			if tt.wantErr != nil {
				t.Fatalf("no error, want %v", tt.wantErr)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("values %v, want %v", got, tt.want)
			}
			marks := a.marks()
			if mark, ok := marks["id"]; ok == tt.noMark || ok && mark != tt.wantMark {
				t.Errorf("marks %v, want id %d (none: %v)", marks, tt.wantMark, tt.noMark)
			}
		})
	}
}

// identityIDs scans the table and returns the values of column id.
func identityIDs(t *testing.T, snap *snapshot.Snapshot) []int64 {
	t.Helper()
	sc, err := scan.New(snap, scan.Options{Columns: []string{"id"}})
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for row, err := range sc.Rows(t.Context()) {
		if err != nil {
			t.Fatal(err)
		}
		v := row.Values()[0]
		if v.IsNull() {
			t.Fatal("a null id")
		}
		out = append(out, v.Int64())
	}
	slices.Sort(out)
	return out
}

// highWaterMark returns the column's delta.identity.highWaterMark.
func highWaterMark(t *testing.T, snap *snapshot.Snapshot, col string) (int64, bool) {
	t.Helper()
	f, ok := snap.Schema().Field(col)
	if !ok {
		t.Fatalf("no column %s", col)
	}
	def, ok, err := f.Identity()
	if err != nil || !ok {
		t.Fatalf("column %s: identity %v, %v", col, ok, err)
	}
	return def.HighWaterMark, def.HasHighWaterMark
}

// post is the snapshot a commit made.
func post(t *testing.T, res txn.CommitResult) *snapshot.Snapshot {
	t.Helper()
	s, err := res.Snapshot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func idRows(n int, explicit func(i int) (int64, bool)) [][]schema.Value {
	var rows [][]schema.Value
	for i := range n {
		id := schema.Value{}
		if explicit != nil {
			if v, ok := explicit(i); ok {
				id = schema.LongValue(v)
			}
		}
		rows = append(rows, []schema.Value{id, schema.StringValue("p" + strconv.Itoa(i%2)), schema.StringValue("v" + strconv.Itoa(i))})
	}
	return rows
}

// TestAppendIdentity: an append to a table with an identity column
// commits the rows with their values and, in the same commit, the new
// high-water mark in the column's metadata; the protocol supports the
// identityColumns feature (writer 6); the next append continues after
// the mark.
func TestAppendIdentity(t *testing.T) {
	ctx := t.Context()
	for _, partitioned := range []bool{false, true} {
		spec := TableSpec{Schema: &schema.StructType{Fields: []schema.StructField{
			identityField("id", schema.Identity{Start: 10, Step: -2}),
			{Name: "p", Type: schema.String, Nullable: true},
			{Name: "v", Type: schema.String, Nullable: true},
		}}}
		if partitioned {
			spec.PartitionColumns = []string{"p"}
		}
		snap := newSnapshot(t, spec)
		if p := snap.Protocol(); p.MinWriterVersion != 6 {
			t.Fatalf("protocol %+v, want writer 6 (identityColumns)", p)
		}
		res, err := Append(ctx, snap, batchOf(idRows(5, nil)...), CommitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		snap = post(t, res)
		if got := identityIDs(t, snap); !slices.Equal(got, []int64{2, 4, 6, 8, 10}) {
			t.Errorf("ids %v", got)
		}
		if hwm, ok := highWaterMark(t, snap, "id"); !ok || hwm != 2 {
			t.Errorf("high-water mark %d, %v; want 2", hwm, ok)
		}
		res, err = Append(ctx, snap, batchOf(idRows(2, nil)...), CommitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if hwm, _ := highWaterMark(t, post(t, res), "id"); hwm != -2 {
			t.Errorf("high-water mark %d, want -2", hwm)
		}
		if got := identityIDs(t, post(t, res)); !slices.Equal(got, []int64{-2, 0, 2, 4, 6, 8, 10}) {
			t.Errorf("ids %v", got)
		}
		// GENERATED ALWAYS: a value given is refused, nothing committed.
		_, err = Append(ctx, post(t, res), batchOf(idRows(2, func(i int) (int64, bool) { return 99, i == 1 })...), CommitOptions{})
		if !errors.Is(err, ErrIdentityExplicit) {
			t.Errorf("explicit value: %v, want ErrIdentityExplicit", err)
		}
	}
}

// TestAppendIdentityStale: an append written for an old version, after
// another append allocated values, allocates its values again from the
// new high-water mark when it commits: no value twice, the mark at the
// largest, the files of the first try gone.
func TestAppendIdentityStale(t *testing.T) {
	ctx := t.Context()
	spec := TableSpec{Schema: &schema.StructType{Fields: []schema.StructField{
		identityField("id", schema.Identity{Start: 1, Step: 1, AllowExplicitInsert: true}),
		{Name: "p", Type: schema.String, Nullable: true},
		{Name: "v", Type: schema.String, Nullable: true},
	}}, PartitionColumns: []string{"p"}}
	s0 := newSnapshot(t, spec)
	if _, err := Append(ctx, s0, batchOf(idRows(3, nil)...), CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	// Written for version 0, whose mark is unset: its values are 1.., as
	// the first append's were. One value given (BY DEFAULT) is kept.
	res, err := Append(ctx, s0, batchOf(idRows(4, func(i int) (int64, bool) { return 1000, i == 2 })...), CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != 2 {
		t.Errorf("version %d, want 2", res.Version)
	}
	got := identityIDs(t, post(t, res))
	if want := []int64{1, 2, 3, 4, 5, 6, 1000}; !slices.Equal(got, want) {
		t.Errorf("ids %v, want %v", got, want)
	}
	if hwm, _ := highWaterMark(t, post(t, res), "id"); hwm != 6 {
		t.Errorf("high-water mark %d, want 6 (a value given does not move it, as in Spark)", hwm)
	}
	var live []string
	for f, err := range post(t, res).Files(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		live = append(live, f.Path)
	}
	n := 0
	for _, dir := range []string{"p=p0/", "p=p1/"} {
		for _, err := range s0.Store().List(ctx, dir, "") {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
	if n != len(live) {
		t.Errorf("%d data files in the store, %d live: the first try's files were not deleted", n, len(live))
	}
}

// TestAppendIdentityStaleGenerated: a generated column computed from the
// identity column is computed again when the rows are allocated again.
func TestAppendIdentityStaleGenerated(t *testing.T) {
	ctx := t.Context()
	spec := TableSpec{Schema: &schema.StructType{Fields: []schema.StructField{
		identityField("id", schema.Identity{Start: 1, Step: 1}),
		field("g", schema.Long, MetaGenerationExpression, strconv.Quote("id * 10")),
	}}}
	s0 := newSnapshot(t, spec)
	rows := [][]schema.Value{{{}, {}}, {{}, {}}}
	if _, err := Append(ctx, s0, batchOf(rows...), CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := Append(ctx, s0, batchOf(rows...), CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scan.New(post(t, res), scan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for r, err := range sc.Rows(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if v := r.Values(); v[1].Int64() != v[0].Int64()*10 {
			t.Errorf("row %v: g is not id * 10", v)
		}
		n++
	}
	if n != 4 {
		t.Errorf("%d rows, want 4", n)
	}
	if ids := identityIDs(t, post(t, res)); !slices.Equal(ids, []int64{1, 2, 3, 4}) {
		t.Errorf("ids %v, want [1 2 3 4]", ids)
	}
}

// TestOverwriteIdentity: an overwrite allocates after the mark (values
// of removed rows are never given again) and records the mark.
func TestOverwriteIdentity(t *testing.T) {
	ctx := t.Context()
	spec := TableSpec{Schema: &schema.StructType{Fields: []schema.StructField{
		identityField("id", schema.Identity{Start: 1, Step: 1}),
		{Name: "p", Type: schema.String, Nullable: true},
		{Name: "v", Type: schema.String, Nullable: true},
	}}}
	s0 := newSnapshot(t, spec)
	if _, err := Append(ctx, s0, batchOf(idRows(3, nil)...), CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	// Written for version 0: allocated again on version 1.
	res, err := Overwrite(ctx, s0, batchOf(idRows(2, nil)...), CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := identityIDs(t, post(t, res)); !slices.Equal(got, []int64{4, 5}) {
		t.Errorf("ids %v, want [4 5]", got)
	}
	if hwm, _ := highWaterMark(t, post(t, res), "id"); hwm != 5 {
		t.Errorf("high-water mark %d, want 5", hwm)
	}
}

// TestRewriteKeepsIdentity: rows a rewrite keeps keep their values (a
// GENERATED ALWAYS column is not refused for them); inserted rows get new
// ones, reported for the commit.
func TestRewriteKeepsIdentity(t *testing.T) {
	ctx := t.Context()
	spec := TableSpec{Schema: &schema.StructType{Fields: []schema.StructField{
		identityField("id", schema.Identity{Start: 1, Step: 1}),
		{Name: "p", Type: schema.String, Nullable: true},
		{Name: "v", Type: schema.String, Nullable: true},
	}}}
	res, err := Append(ctx, newSnapshot(t, spec), batchOf(idRows(3, nil)...), CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	snap := post(t, res)
	var files []*actions.Add
	for f, err := range snap.Files(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	r, err := Rewrite(ctx, snap, files, func(_ *actions.Add, _ int64, row []schema.Value) (Verdict, []schema.Value, error) {
		if row[0].Int64() == 2 {
			return Drop, nil, nil
		}
		return Keep, nil, nil
	}, RewriteOptions{Insert: func() (iter.Seq2[Batch, error], error) { return batchOf(idRows(2, nil)...), nil }})
	if err != nil {
		t.Fatal(err)
	}
	if r.HighWaterMarks["id"] != 5 || r.Copied != 2 || r.Inserted != 2 {
		t.Errorf("marks %v, copied %d, inserted %d; want id 5, 2, 2", r.HighWaterMarks, r.Copied, r.Inserted)
	}
}

package dml

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/tableconfig"
	"github.com/godelta/delta/testutil"
	"github.com/godelta/delta/txn"
	"github.com/godelta/delta/write"
)

func TestMergeSpecErrors(t *testing.T) {
	ctx := context.Background()
	snap := newTable(t, table{}, targetRows()...)
	upsertAll := []Clause{{Action: ActionUpdate, All: true}}
	narrow := &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long, Nullable: true}}}
	for _, tc := range []struct {
		name string
		spec MergeSpec
		src  *schema.StructType
		want error
	}{
		{"no condition", MergeSpec{Matched: upsertAll}, nil, ErrMergeClause},
		{"no clause", MergeSpec{On: must("t.id = s.id")}, nil, ErrMergeClause},
		{"ambiguous", MergeSpec{On: must("id = s.id"), Matched: upsertAll}, nil, ErrMergeColumn},
		{"unknown column", MergeSpec{On: must("t.nope = s.id"), Matched: upsertAll}, nil, ErrMergeColumn},
		{"insert in matched", MergeSpec{On: must("t.id = s.id"), Matched: []Clause{{Action: ActionInsert, All: true}}}, nil, ErrMergeClause},
		{"delete in not matched", MergeSpec{On: must("t.id = s.id"), NotMatched: []Clause{{Action: ActionDelete}}}, nil, ErrMergeClause},
		{"unconditional clause not last", MergeSpec{On: must("t.id = s.id"),
			Matched: []Clause{{Action: ActionDelete}, {Condition: must("s.n > 1"), Action: ActionDelete}}}, nil, ErrMergeClause},
		{"source column in by-source clause", MergeSpec{On: must("t.id = s.id"),
			NotMatchedBySource: []Clause{{Condition: must("s.n > 1"), Action: ActionDelete}}}, nil, ErrMergeColumn},
		{"target column in insert", MergeSpec{On: must("t.id = s.id"),
			NotMatched: []Clause{{Action: ActionInsert, Set: []Assignment{{Column: "id", Value: must("t.id")}}}}}, nil, ErrMergeColumn},
		{"assign unknown column", MergeSpec{On: must("t.id = s.id"),
			Matched: []Clause{{Action: ActionUpdate, Set: []Assignment{{Column: "nope", Value: must("1")}}}}}, nil, ErrMergeColumn},
		{"assign twice", MergeSpec{On: must("t.id = s.id"),
			Matched: []Clause{{Action: ActionUpdate, Set: []Assignment{{Column: "v", Value: must("'a'")}, {Column: "t.v", Value: must("'b'")}}}}}, nil, ErrMergeClause},
		{"set star with a narrow source", MergeSpec{On: must("t.id = s.id"), Matched: upsertAll}, narrow, ErrMergeColumn},
		{"insert star with a narrow source", MergeSpec{On: must("t.id = s.id"), NotMatched: []Clause{{Action: ActionInsert, All: true}}}, narrow, ErrMergeColumn},
		{"same aliases", MergeSpec{On: must("a.id = a.id"), Matched: upsertAll, TargetAlias: "a", SourceAlias: "A"}, nil, ErrMergeClause},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := sourceOf(sourceRows())
			if tc.src != nil {
				src = RowsSource(tc.src, [][]schema.Value{{schema.LongValue(1)}})
			}
			_, err := Merge(ctx, snap, src, tc.spec, Options{})
			if !errors.Is(err, tc.want) || !errors.Is(err, deltaerr.ErrInvalidArgument) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestMergeAppendOnly(t *testing.T) {
	ctx := context.Background()
	snap := newTable(t, table{}, targetRows()...)
	// An append-only table takes an insert-only merge, and refuses others.
	p, m := snap.Protocol(), snap.Metadata()
	m.Configuration = map[string]string{tableconfig.KeyAppendOnly: "true"}
	if p.MinWriterVersion < 2 {
		p.MinWriterVersion = 2
	}
	tx := txn.Begin(snap, txn.Options{Operation: "SET TBLPROPERTIES"})
	tx.SetMetadata(m)
	tx.SetProtocol(p)
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	snap, _ = snap.Update(ctx)
	_, err := Merge(ctx, snap, sourceOf(sourceRows()), MergeSpec{On: must("t.id = s.id"), Matched: []Clause{{Action: ActionDelete}}}, Options{})
	if !errors.Is(err, write.ErrAppendOnly) {
		t.Fatalf("delete on an append-only table: %v", err)
	}
	res, err := Merge(ctx, snap, sourceOf(sourceRows()), MergeSpec{On: must("t.id = s.id"), NotMatched: []Clause{{Action: ActionInsert, All: true}}}, Options{})
	if err != nil || res.Merge.NumTargetRowsInserted != 6 {
		t.Fatalf("insert-only merge on an append-only table: %v %+v", err, res.Merge)
	}
}

// TestMergeSkipsFiles checks that only the files that can match are read:
// by partition values and by statistics of the join key.
func TestMergeSkipsFiles(t *testing.T) {
	ctx := context.Background()
	// Ten files of ten ids each, in partitions by file.
	var groups [][]mrow
	for f := range 10 {
		var g []mrow
		for i := int64(f * 10); i < int64(f*10+10); i++ {
			g = append(g, mrow{id: id(i), v: "x", n: i, p: fmt.Sprint("p", f)})
		}
		groups = append(groups, g)
	}
	for _, part := range []bool{false, true} {
		t.Run(fmt.Sprint("partitioned=", part), func(t *testing.T) {
			snap := newTable(t, table{partitioned: part}, groups...)
			// Source ids 42..45 (in file 4) and 47 (file 4) and 51 (file 5).
			var src []mrow
			for _, i := range []int64{42, 45, 47, 51} {
				src = append(src, mrow{id: id(i), v: "new", n: i, p: fmt.Sprint("p", i/10)})
			}
			on := "t.id = s.id"
			if part {
				on = "t.id = s.id AND t.p = s.p"
			}
			res, err := Merge(ctx, snap, sourceOf(src), MergeSpec{On: must(on),
				Matched: []Clause{{Action: ActionUpdate, Set: []Assignment{{Column: "v", Value: must("s.v")}}}}}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			m := res.Merge
			if m.NumTargetFilesBeforeSkipping != 10 || m.NumTargetFilesAfterSkipping != 2 {
				t.Errorf("files read %d of %d, want 2 of 10", m.NumTargetFilesAfterSkipping, m.NumTargetFilesBeforeSkipping)
			}
			if m.NumTargetRowsUpdated != 4 || m.NumTargetFilesRemoved != 2 || m.NumTargetRowsCopied != 16 {
				t.Errorf("metrics %+v", m)
			}
			// A NOT MATCHED BY SOURCE clause reads every file, unless its
			// condition skips some.
			snap, _ = snap.Update(ctx)
			res, err = Merge(ctx, snap, sourceOf(src), MergeSpec{On: must(on),
				NotMatchedBySource: []Clause{{Condition: must("n >= 90"), Action: ActionDelete}}}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			// Partitioned: the files of p4, p5 and p9; else the file
			// the first merge wrote (ids 40..59) and the one of 90..99.
			wantFiles := int64(2)
			if part {
				wantFiles = 3
			}
			if got := res.Merge.NumTargetFilesAfterSkipping; got != wantFiles {
				t.Errorf("by-source merge with a condition read %d files, want %d", got, wantFiles)
			}
			if res.Merge.NumTargetRowsDeleted != 10 {
				t.Errorf("metrics %+v", res.Merge)
			}
			snap, _ = snap.Update(ctx)
			res, err = Merge(ctx, snap, sourceOf(src), MergeSpec{On: must(on),
				NotMatchedBySource: []Clause{{Action: ActionUpdate, Set: []Assignment{{Column: "v", Value: must("'gone'")}}}}}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got, all := res.Merge.NumTargetFilesAfterSkipping, res.Merge.NumTargetFilesBeforeSkipping; got != all {
				t.Errorf("unconditional by-source merge read %d files of %d", got, all)
			}
			// An empty source reads nothing.
			snap, _ = snap.Update(ctx)
			res, err = Merge(ctx, snap, sourceOf(nil), MergeSpec{On: must(on), Matched: []Clause{{Action: ActionDelete}}}, Options{})
			if err != nil || res.Committed || res.Merge.NumTargetFilesAfterSkipping != 0 {
				t.Errorf("empty source: %v %v %+v", err, res.Committed, res.Merge)
			}
		})
	}
}

// TestMergeConflicts: at Serializable, a concurrent append into a
// partition the merge read fails the merge's commit, and one into another
// partition does not; at WriteSerializable (the default) a blind append
// never conflicts, as in Spark.
func TestMergeConflicts(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		other     bool
		isolation txn.IsolationLevel
		conflict  bool
	}{
		{false, txn.Serializable, true},
		{true, txn.Serializable, false},
		{false, "", false},
	} {
		t.Run(fmt.Sprintf("other=%v,%s", tc.other, tc.isolation), func(t *testing.T) {
			snap := newTable(t, table{partitioned: true}, targetRows()...)
			// A source that touches partition b only (ids 25, 28).
			src := []mrow{{id: id(25), v: "u", n: 1, p: "b"}, {id: id(28), v: "u", n: 1, p: "b"}}
			appended := "b"
			if tc.other {
				appended = "z"
			}
			// The concurrent append lands after the merge took its
			// snapshot: run it from the source's iterator.
			s := sourceOf(src)
			inner := s.Batches
			s.Batches = func(yield func(schema.Batch, error) bool) {
				if _, err := write.Append(ctx, snap, batches([]mrow{{id: id(500), v: "c", n: 5, p: appended}}), write.CommitOptions{}); err != nil {
					t.Fatal(err)
				}
				inner(yield)
			}
			res, err := Merge(ctx, snap, s, MergeSpec{On: must("t.id = s.id AND t.p = s.p"),
				Matched: []Clause{{Action: ActionUpdate, All: true}}}, Options{Txn: txn.Options{Isolation: tc.isolation}})
			if !tc.conflict {
				if err != nil {
					t.Fatalf("err = %v, want a commit", err)
				}
				if res.Commit.Version != snap.Version()+2 {
					t.Errorf("merge committed at %d, want %d (after the append)", res.Commit.Version, snap.Version()+2)
				}
				return
			}
			var ce *txn.ConflictError
			if !errors.As(err, &ce) || !errors.Is(err, txn.ErrConflict) {
				t.Fatalf("err = %v, want a conflict", err)
			}
			// Nothing of the merge is left: no orphan file is named, the
			// table holds the append only.
			after, _ := snap.Update(ctx)
			if after.Version() != snap.Version()+1 {
				t.Errorf("version %d", after.Version())
			}
		})
	}
}

// TestMergeGeneratedAndConstraints: updated and inserted rows get their
// generated columns computed, and a CHECK constraint stops a merge that
// breaks it, committing nothing.
func TestMergeGeneratedAndConstraints(t *testing.T) {
	ctx := context.Background()
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.Long},
		{Name: "n", Type: schema.Long, Nullable: true},
		{Name: "g", Type: schema.Long, Nullable: true, Metadata: schema.Metadata{{Key: schema.MetadataGenerationExpression, Value: []byte(strconv.Quote("n * 2"))}}},
	}}
	spec := write.TableSpec{Schema: sch, Properties: map[string]string{tableconfig.KeyConstraintPrefix + "small": "n < 1000"}}
	p, m, err := write.NewTable(spec)
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New()
	data, _ := actions.EncodeCommit([]actions.Action{{Protocol: &p}, {Metadata: &m}})
	if err := store.PutIfAbsent(ctx, deltalog.CommitKey(0), data); err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	l := schema.LongValue
	rows := func(vals ...[]schema.Value) schema.Batch {
		b := schema.Batch{Len: len(vals), Columns: make([][]schema.Value, 3)}
		for _, v := range vals {
			for j := range 3 {
				b.Columns[j] = append(b.Columns[j], v[j])
			}
		}
		return b
	}
	if _, err := write.Append(ctx, snap, func(yield func(schema.Batch, error) bool) {
		yield(rows([]schema.Value{l(1), l(10), {}}, []schema.Value{l(2), l(20), {}}), nil)
	}, write.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	snap, _ = snap.Update(ctx)
	srcSchema := &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long}, {Name: "n", Type: schema.Long}}}
	upsert := MergeSpec{On: must("t.id = s.id"), Matched: []Clause{{Action: ActionUpdate, All: true}}, NotMatched: []Clause{{Action: ActionInsert, All: true}}}
	res, err := Merge(ctx, snap, RowsSource(srcSchema, [][]schema.Value{{l(2), l(21)}, {l(3), l(30)}}), upsert, Options{})
	if err != nil {
		t.Fatal(err)
	}
	snap, _ = snap.Update(ctx)
	got := readAll(t, snap)
	want := []string{"1|10|20", "2|21|42", "3|30|60"}
	if !slices.Equal(got, want) {
		t.Fatalf("rows %q, want %q (metrics %+v)", got, want, res.Merge)
	}
	// n = 5000 breaks the CHECK constraint: nothing is committed.
	_, err = Merge(ctx, snap, RowsSource(srcSchema, [][]schema.Value{{l(1), l(5000)}}), upsert, Options{})
	var ce *write.ConstraintError
	if !errors.As(err, &ce) {
		t.Fatalf("constraint broken: err = %v", err)
	}
	after, _ := snap.Update(ctx)
	if after.Version() != snap.Version() {
		t.Fatal("a merge that broke a constraint committed")
	}
	// An update that passes and an insert that breaks the constraint: the
	// files the rewrite wrote are deleted too.
	files := func() int {
		n := 0
		for _, err := range store.List(ctx, "", "") {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		return n
	}
	before := files()
	_, err = Merge(ctx, snap, RowsSource(srcSchema, [][]schema.Value{{l(1), l(11)}, {l(9), l(5000)}}), upsert, Options{})
	if !errors.As(err, &ce) {
		t.Fatalf("insert breaking a constraint: err = %v", err)
	}
	if after := files(); after != before {
		t.Errorf("%d files in the table directory after a failed merge, %d before", after, before)
	}
	// An explicit value for a generated column must equal the computed one.
	_, err = Merge(ctx, snap, RowsSource(srcSchema, [][]schema.Value{{l(1), l(5)}}), MergeSpec{On: must("t.id = s.id"),
		Matched: []Clause{{Action: ActionUpdate, Set: []Assignment{{Column: "g", Value: must("7")}}}}}, Options{})
	if !errors.As(err, &ce) {
		t.Fatalf("wrong generated value: err = %v", err)
	}
}

func readAll(t *testing.T, snap *snapshot.Snapshot) []string {
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
		var line string
		for i, v := range r.Values() {
			if i > 0 {
				line += "|"
			}
			line += v.String()
		}
		out = append(out, line)
	}
	slices.Sort(out)
	return out
}

// TestMergeFromTable merges another Delta table, at an older version.
func TestMergeFromTable(t *testing.T) {
	ctx := context.Background()
	target := newTable(t, table{dv: true}, targetRows()...)
	// The source table: version 1 holds ids 25..34, version 2 deletes them.
	srcSnap := newTable(t, table{}, sourceRows()[:10])
	if _, err := write.Overwrite(ctx, srcSnap, batches(nil), write.CommitOptions{}); err != nil && !errors.Is(err, write.ErrNoRows) {
		t.Fatal(err)
	}
	v1, err := snapshot.Load(ctx, srcSnap.Store(), 1)
	if err != nil {
		t.Fatal(err)
	}
	src, err := TableSource(ctx, v1, scan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Merge(ctx, target, src, MergeSpec{On: must("t.id = s.id"),
		Matched: []Clause{{Action: ActionDelete}}, NotMatched: []Clause{{Action: ActionInsert, All: true}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m := res.Merge; m.NumSourceRows != 10 || m.NumTargetRowsDeleted != 5 || m.NumTargetRowsInserted != 5 {
		t.Fatalf("metrics %+v", m)
	}
	if m := res.Merge; m.NumTargetDeletionVectorsAdded != 1 || m.NumTargetFilesRemoved != 0 {
		t.Errorf("deletion vector metrics %+v", m)
	}
}

// TestMergeSparkTableWithDVs merges into a copy of a Spark-written table
// with deletion vectors, column mapping and partitions: the DVs Spark
// wrote are honoured and merged with ours, and the result reads back as
// the rows computed here from the rows before.
func TestMergeSparkTableWithDVs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := testutil.CopyTree(filepath.Join(testutil.CorpusDir(t), "golden", "dv-with-columnmapping", "delta"), dir); err != nil {
		t.Fatal(err)
	}
	store, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	type key struct{ part, col1 int64 }
	type trow struct {
		part, col1 schema.Value
		col2       string
	}
	var before []trow
	s, _ := scan.New(snap, scan.Options{})
	for r, err := range s.Rows(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		v := r.Values()
		before = append(before, trow{v[0], v[1], v[2].String()})
	}
	if len(before) != 35 {
		t.Fatalf("%d rows before, the corpus expects 35", len(before))
	}
	// Source: update keys with col1 % 3 == 0, delete col1 % 3 == 1, and
	// five new keys.
	srcSch := &schema.StructType{Fields: []schema.StructField{
		{Name: "part", Type: schema.Integer, Nullable: true}, {Name: "col1", Type: schema.Integer, Nullable: true},
		{Name: "col2", Type: schema.String, Nullable: true}, {Name: "op", Type: schema.String, Nullable: true}}}
	ops := map[key]string{}
	var src [][]schema.Value
	for _, r := range before {
		if r.part.IsNull() || r.col1.IsNull() {
			continue
		}
		k := key{r.part.Int64(), r.col1.Int64()}
		if _, dup := ops[k]; dup {
			continue
		}
		switch k.col1 % 3 {
		case 0:
			ops[k] = "u"
		case 1:
			ops[k] = "d"
		default:
			continue
		}
		src = append(src, []schema.Value{r.part, r.col1, schema.StringValue("merged"), schema.StringValue(ops[k])})
	}
	for i := range int32(5) {
		src = append(src, []schema.Value{schema.IntegerValue(i % 2), schema.IntegerValue(1000 + i), schema.StringValue("new"), schema.StringValue("u")})
	}
	res, err := Merge(ctx, snap, RowsSource(srcSch, src), MergeSpec{On: must("t.part = s.part AND t.col1 = s.col1"),
		Matched: []Clause{
			{Condition: must("s.op = 'd'"), Action: ActionDelete},
			{Action: ActionUpdate, Set: []Assignment{{Column: "col2", Value: must("s.col2")}}},
		},
		NotMatched: []Clause{{Action: ActionInsert, All: true}},
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, r := range before {
		line := fmt.Sprintf("%s|%s|%s", r.part, r.col1, r.col2)
		if !r.part.IsNull() && !r.col1.IsNull() {
			switch ops[key{r.part.Int64(), r.col1.Int64()}] {
			case "d":
				continue
			case "u":
				line = fmt.Sprintf("%s|%s|merged", r.part, r.col1)
			}
		}
		want = append(want, line)
	}
	for i := range 5 {
		want = append(want, fmt.Sprintf("%d|%d|new", i%2, 1000+i))
	}
	slices.Sort(want)
	after, err := snap.Update(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, after); !slices.Equal(got, want) {
		t.Fatalf("rows after merge:\n got %q\nwant %q", got, want)
	}
	if res.Merge.NumTargetRowsCopied != 0 || res.Merge.NumTargetDeletionVectorsAdded+res.Merge.NumTargetDeletionVectorsUpdated == 0 {
		t.Errorf("metrics %+v: want deletion vectors, no rows copied", res.Merge)
	}
}

// TestMergeKeyTypes: join keys of another type than the target column's
// match by value, as SQL compares them (an INT or a DOUBLE source key
// against a BIGINT target key), through the hash join and through the
// nested loop alike.
func TestMergeKeyTypes(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		typ  schema.DataType
		val  func(int64) schema.Value
	}{
		{"int", schema.Integer, func(i int64) schema.Value { return schema.IntegerValue(int32(i)) }},
		{"double", schema.Double, func(i int64) schema.Value { return schema.DoubleValue(float64(i)) }},
		{"short", schema.Short, func(i int64) schema.Value { return schema.ShortValue(int16(i)) }},
	} {
		for _, on := range []string{"t.id = s.k", "t.id <= s.k AND t.id >= s.k"} {
			t.Run(tc.name+"/"+on, func(t *testing.T) {
				snap := newTable(t, table{}, targetRows()...)
				sch := &schema.StructType{Fields: []schema.StructField{{Name: "k", Type: tc.typ, Nullable: true}}}
				src := RowsSource(sch, [][]schema.Value{{tc.val(3)}, {tc.val(17)}, {tc.val(1000)}, {{}}})
				res, err := Merge(ctx, snap, src, MergeSpec{On: must(on),
					Matched:    []Clause{{Action: ActionUpdate, Set: []Assignment{{Column: "v", Value: must("'hit'")}}}},
					NotMatched: []Clause{{Action: ActionInsert, Set: []Assignment{{Column: "id", Value: must("s.k")}, {Column: "v", Value: must("'new'")}}}},
				}, Options{})
				if err != nil {
					t.Fatal(err)
				}
				if m := res.Merge; m.NumTargetRowsUpdated != 2 || m.NumTargetRowsInserted != 2 {
					t.Fatalf("metrics %+v", m)
				}
				after, _ := snap.Update(ctx)
				var hits []string
				for _, r := range tableRows(t, after) {
					if strings.Contains(r, "|hit|") || strings.Contains(r, "|new|") {
						hits = append(hits, r)
					}
				}
				want := []string{"1000|new|null|null", "17|hit|17|c", "3|hit|3|a", "null|new|null|null"}
				if !slices.Equal(hits, want) {
					t.Errorf("rows %q, want %q", hits, want)
				}
			})
		}
	}
}

// TestMergeConcurrentDelete: a DELETE that commits while the merge runs
// and removes a file the merge read makes the merge fail with a conflict,
// whatever the isolation level; with ConflictRetries the merge is planned
// again on the new version and commits.
func TestMergeConcurrentDelete(t *testing.T) {
	ctx := context.Background()
	for _, retries := range []int{0, 1} {
		t.Run(fmt.Sprint("retries=", retries), func(t *testing.T) {
			snap := newTable(t, table{}, targetRows()...)
			s := sourceOf([]mrow{{id: id(25), v: "u", n: 1, p: "b"}})
			inner := s.Batches
			s.Batches = func(yield func(schema.Batch, error) bool) {
				if _, err := Delete(ctx, snap, must("id = 26"), Options{}); err != nil {
					t.Fatal(err)
				}
				inner(yield)
			}
			res, err := Merge(ctx, snap, s, MergeSpec{On: must("t.id = s.id"),
				Matched: []Clause{{Action: ActionUpdate, All: true}}}, Options{ConflictRetries: retries})
			if retries == 0 {
				if !errors.Is(err, txn.ErrConflict) {
					t.Fatalf("err = %v, want a conflict", err)
				}
				return
			}
			if err != nil || !res.Committed || res.Merge.NumTargetRowsUpdated != 1 {
				t.Fatalf("with a retry: %v %+v", err, res.Merge)
			}
			after, _ := snap.Update(ctx)
			got := tableRows(t, after)
			if !slices.Contains(got, "25|u|1|b") || slices.ContainsFunc(got, func(r string) bool { return strings.HasPrefix(r, "26|") }) {
				t.Errorf("rows %q", got)
			}
		})
	}
}

// An upsert writes its updated and inserted rows to the same new file, as
// Spark does: with copy-on-write the kept rows too, with deletion vectors
// only those two kinds (the target file stays, under a vector).
func TestMergeUpsertOneFile(t *testing.T) {
	ctx := context.Background()
	for _, dv := range []bool{false, true} {
		t.Run(fmt.Sprint("dv=", dv), func(t *testing.T) {
			var target, source []mrow
			for i := range int64(10) {
				target = append(target, mrow{id: id(i), v: fmt.Sprint("t", i), n: i, p: "a"})
				source = append(source, mrow{id: id(i + 5), v: fmt.Sprint("s", i+5), n: i, p: "a", kind: "u"})
			}
			snap := newTable(t, table{dv: dv}, target)
			spec := MergeSpec{On: must("t.id = s.id"),
				Matched:    []Clause{{Action: ActionUpdate, All: true}},
				NotMatched: []Clause{{Action: ActionInsert, All: true}}}
			res, err := Merge(ctx, snap, sourceOf(source), spec, Options{})
			if err != nil {
				t.Fatal(err)
			}
			m := res.Merge
			if m.NumTargetRowsUpdated != 5 || m.NumTargetRowsInserted != 5 || m.NumTargetFilesAdded != 1 {
				t.Errorf("updated %d, inserted %d, files added %d; want 5, 5 and one file", m.NumTargetRowsUpdated, m.NumTargetRowsInserted, m.NumTargetFilesAdded)
			}
			after, err := snap.Update(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var newFiles int
			for a, err := range after.Files(ctx) {
				if err != nil {
					t.Fatal(err)
				}
				if a.DeletionVector == nil {
					newFiles++
				}
			}
			if want := 1; newFiles != want {
				t.Errorf("%d files without a deletion vector after the merge, want %d", newFiles, want)
			}
			if got := len(tableRows(t, after)); got != 15 {
				t.Errorf("%d rows after the merge, want 15", got)
			}
		})
	}
}

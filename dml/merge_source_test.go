package dml

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"testing"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/write"
)

// seqOf yields rows, each in a slice of its own reused for the next, as
// a decoder of rows off the wire does.
func seqOf(rows [][]schema.Value) func(yield func([]schema.Value, error) bool) {
	return func(yield func([]schema.Value, error) bool) {
		var buf []schema.Value
		for _, r := range rows {
			buf = append(buf[:0], r...)
			if !yield(buf, nil) {
				return
			}
		}
	}
}

// TestSeqSource: the rows of a SeqSource reach the merge as they come, in
// order, across batches, and merge as the same rows of a RowsSource do;
// rows that do not fit the schema are refused, typed, before the merge
// reads a file.
func TestSeqSource(t *testing.T) {
	ctx := context.Background()
	// Enough rows for several batches: the order survives the cuts.
	var rows [][]schema.Value
	for i := range int64(2*insertBatchRows + 5) {
		kind := "u"
		if i >= 20 {
			kind = "i"
		}
		rows = append(rows, mrow{id: id(i), v: fmt.Sprint("s", i), n: i * 2, p: "b", kind: kind}.sourceValues())
	}
	var n int
	for b, err := range SeqSource(sourceSchema, seqOf(rows)).Batches {
		if err != nil {
			t.Fatal(err)
		}
		for i := range b.Len {
			if got := b.Columns[4][i].Int64(); got != int64(n) {
				t.Fatalf("row %d has id %d", n, got)
			}
			n++
		}
	}
	if n != len(rows) {
		t.Fatalf("%d rows read, want %d", n, len(rows))
	}
	spec := MergeSpec{On: must("t.id = s.id"),
		Matched:    []Clause{{Action: ActionUpdate, All: true}},
		NotMatched: []Clause{{Action: ActionInsert, All: true, Condition: must("s.kind = 'i'")}}}
	var got [][]string
	var metrics []MergeMetrics
	for _, src := range []Source{SeqSource(sourceSchema, seqOf(rows)), RowsSource(sourceSchema, rows)} {
		snap := newTable(t, table{}, targetRows()...)
		res, err := Merge(ctx, snap, src, spec, Options{})
		if err != nil {
			t.Fatal(err)
		}
		snap, err = snap.Update(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, tableRows(t, snap))
		metrics = append(metrics, res.Merge)
	}
	if !slices.Equal(got[0], got[1]) || len(got[0]) != len(rows)+1 {
		t.Fatalf("%d rows after a merge of a SeqSource, %d of a RowsSource, or different rows", len(got[0]), len(got[1]))
	}
	if m0, m1 := metrics[0], metrics[1]; m0.NumTargetRowsUpdated != m1.NumTargetRowsUpdated || m0.NumTargetRowsInserted != m1.NumTargetRowsInserted || m0.NumTargetRowsUpdated != 30 {
		t.Fatalf("metrics %+v, of a RowsSource %+v", m0, m1)
	}

	dec := func(u int64, p, s int) schema.Value {
		v, err := schema.DecimalValue(big.NewInt(u), p, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	nested := &schema.StructType{Fields: []schema.StructField{
		{Name: "i", Type: schema.Integer},
		{Name: "d", Type: schema.DecimalType{Precision: 5, Scale: 2}, Nullable: true},
		{Name: "s", Type: &schema.StructType{Fields: []schema.StructField{{Name: "a", Type: schema.String}}}, Nullable: true},
		{Name: "arr", Type: &schema.ArrayType{ElementType: schema.Long}, Nullable: true},
		{Name: "m", Type: &schema.MapType{KeyType: schema.String, ValueType: schema.Long, ValueContainsNull: true}, Nullable: true},
	}}
	ok := []schema.Value{schema.IntegerValue(1), dec(12345, 5, 2),
		schema.StructValue([]schema.Value{schema.StringValue("x")}),
		schema.ArrayValue([]schema.Value{schema.LongValue(1), schema.IntegerValue(2)}),
		schema.MapValue([]schema.Value{schema.StringValue("k"), {}})}
	with := func(j int, v schema.Value) []schema.Value {
		r := slices.Clone(ok)
		r[j] = v
		return r
	}
	for _, tc := range []struct {
		name string
		row  []schema.Value
		want error
	}{
		{"fits", ok, nil},
		{"a narrower integer, a smaller scale, nulls where allowed", []schema.Value{schema.ByteValue(-3), dec(7, 3, 1), {}, {}, {}}, nil},
		{"a row too short", ok[:4], write.ErrBatch},
		{"a string for an integer", with(0, schema.StringValue("1")), ErrMergeSourceValue},
		{"a long out of an integer's range", with(0, schema.LongValue(1<<40)), ErrMergeSourceValue},
		{"a null in a NOT NULL column", with(0, schema.Value{}), ErrMergeSourceValue},
		{"a decimal with too many digits", with(1, dec(123456, 6, 2)), ErrMergeSourceValue},
		{"a decimal with a larger scale", with(1, dec(1234, 4, 3)), ErrMergeSourceValue},
		{"a double for a decimal", with(1, schema.DoubleValue(1.5)), ErrMergeSourceValue},
		{"a null in a NOT NULL struct field", with(2, schema.StructValue([]schema.Value{{}})), ErrMergeSourceValue},
		{"a struct of another arity", with(2, schema.StructValue([]schema.Value{schema.StringValue("x"), schema.StringValue("y")})), ErrMergeSourceValue},
		{"a null element of an array without nulls", with(3, schema.ArrayValue([]schema.Value{{}})), ErrMergeSourceValue},
		{"a string element of an array of longs", with(3, schema.ArrayValue([]schema.Value{schema.StringValue("1")})), ErrMergeSourceValue},
		{"a map key of another type", with(4, schema.MapValue([]schema.Value{schema.LongValue(1), schema.LongValue(1)})), ErrMergeSourceValue},
		{"an array for a map", with(4, schema.ArrayValue(nil)), ErrMergeSourceValue},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			for _, e := range SeqSource(nested, seqOf([][]schema.Value{ok, tc.row})).Batches {
				if e != nil {
					err = e
				}
			}
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if tc.want != nil && !errors.Is(err, deltaerr.ErrInvalidArgument) {
				t.Fatalf("err = %v does not match deltaerr.ErrInvalidArgument", err)
			}
		})
	}
	// A merge of a row that does not fit fails typed, committing nothing.
	snap := newTable(t, table{}, targetRows()...)
	bad := append(slices.Clone(rows[:3]), []schema.Value{schema.StringValue("u"), {}, schema.StringValue("7"), {}, schema.LongValue(1)})
	if _, err := Merge(ctx, snap, SeqSource(sourceSchema, seqOf(bad)), spec, Options{}); !errors.Is(err, ErrMergeSourceValue) {
		t.Fatalf("a merge of a string in a long column: %v", err)
	}
	if after, _ := snap.Update(ctx); after.Version() != snap.Version() {
		t.Fatal("a refused merge committed")
	}
}

// sourceValues are r's values in sourceSchema's order.
func (r mrow) sourceValues() []schema.Value {
	v := r.values()
	return []schema.Value{schema.StringValue(r.kind), v[3], v[2], v[1], v[0]}
}

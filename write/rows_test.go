package write

import (
	"context"
	"errors"
	"iter"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/tableconfig"
)

// newSnapshot creates a table from spec in a memory store, with adds in
// version 1 when given, and loads its latest snapshot.
func newSnapshot(t *testing.T, spec TableSpec, adds ...actions.Add) *snapshot.Snapshot {
	t.Helper()
	ctx := context.Background()
	p, m, err := NewTable(spec)
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
	return snap
}

func batchOf(rows ...[]schema.Value) iter.Seq2[Batch, error] {
	return func(yield func(Batch, error) bool) {
		if len(rows) == 0 {
			return
		}
		b := Batch{Len: len(rows), Columns: make([][]schema.Value, len(rows[0]))}
		for _, r := range rows {
			for j, v := range r {
				b.Columns[j] = append(b.Columns[j], v)
			}
		}
		yield(b, nil)
	}
}

// dataFiles lists the objects at the root, outside the log.
func dataFiles(t *testing.T, store logstore.Store) []string {
	t.Helper()
	var out []string
	for obj, err := range store.List(context.Background(), "", "") {
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(obj.Key, "_delta_log") {
			out = append(out, obj.Key)
		}
	}
	return out
}

var (
	l  = schema.LongValue
	s  = schema.StringValue
	in = schema.IntegerValue
)

func constrainedSpec() TableSpec {
	nonNull := schema.StructField{Name: "id", Type: schema.Long}
	inner := &schema.StructType{Fields: []schema.StructField{{Name: "x", Type: schema.Integer}, {Name: "y", Type: schema.String, Nullable: true}}}
	return TableSpec{
		Schema: st(nonNull,
			field("v", schema.Integer),
			field("w", schema.Integer, MetaInvariants, strconv.Quote(`{"expression":{"expression":"w < 100"}}`)),
			field("g", schema.Long, MetaGenerationExpression, strconv.Quote("id * 2")),
			field("s", inner),
		),
		Properties: map[string]string{"delta.constraints.positive": "v > 0"},
	}
}

func TestRowsConstraints(t *testing.T) {
	ctx := context.Background()
	sv := func(x schema.Value) schema.Value { return schema.StructValue([]schema.Value{x, s("a")}) }
	good := []schema.Value{l(1), in(1), in(1), {}, sv(in(1))}
	tests := []struct {
		name     string
		row      []schema.Value
		kind     string
		constr   string
		wantNone bool
	}{
		{"not null", []schema.Value{{}, in(1), in(1), {}, sv(in(1))}, KindNotNull, "id", false},
		{"nested not null", []schema.Value{l(1), in(1), in(1), {}, sv(schema.Value{})}, KindNotNull, "s.x", false},
		{"check", []schema.Value{l(1), in(0), in(1), {}, sv(in(1))}, KindCheck, "positive", false},
		{"check null violates", []schema.Value{l(1), {}, in(1), {}, sv(in(1))}, KindCheck, "positive", false},
		{"invariant", []schema.Value{l(1), in(1), in(100), {}, sv(in(1))}, KindInvariant, "w", false},
		{"generated mismatch", []schema.Value{l(1), in(1), in(1), l(3), sv(in(1))}, KindGenerated, "g", false},
		{"generated given right", []schema.Value{l(1), in(1), in(1), l(2), sv(in(1))}, "", "", true},
		{"null struct ok", []schema.Value{l(1), in(1), in(1), {}, {}}, "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := newSnapshot(t, constrainedSpec())
			// A good row first, so that a file may be under way when the
			// bad one comes.
			adds, err := Rows(ctx, snap, batchOf(good, tt.row), Options{})
			if tt.wantNone {
				if err != nil {
					t.Fatal(err)
				}
				if len(adds) != 1 {
					t.Fatalf("%d adds", len(adds))
				}
				return
			}
			var ce *ConstraintError
			if !errors.As(err, &ce) || !errors.Is(err, ErrConstraint) {
				t.Fatalf("err = %v, want a *ConstraintError", err)
			}
			if ce.Kind != tt.kind || ce.Name != tt.constr || ce.Row != 1 {
				t.Errorf("got %s %s row %d, want %s %s row 1", ce.Kind, ce.Name, ce.Row, tt.kind, tt.constr)
			}
			if adds != nil {
				t.Errorf("adds returned with an error")
			}
			if files := dataFiles(t, snap.Store()); len(files) != 0 {
				t.Errorf("files left behind: %v", files)
			}
		})
	}
}

func TestRowsGeneratedFilled(t *testing.T) {
	ctx := context.Background()
	snap := newSnapshot(t, constrainedSpec())
	adds, err := Rows(ctx, snap, batchOf([]schema.Value{l(21), in(1), in(1), {}, {}}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []schema.Value
	for _, row := range fileRows(t, snap, &adds[0]) {
		got = append(got, row[3])
	}
	if len(got) != 1 || got[0].Kind() != schema.KindLong || got[0].Int64() != 42 {
		t.Errorf("generated g = %v, want 42", got)
	}
}

func TestRowsRequire(t *testing.T) {
	ctx := context.Background()
	snap := newSnapshot(t, TableSpec{Schema: st(field("a", schema.Long), field("b", schema.String))})
	pred, err := expr.Parse("a >= 10")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Rows(ctx, snap, batchOf([]schema.Value{l(10), s("x")}, []schema.Value{{}, s("y")}), Options{Require: pred}); !errors.Is(err, ErrConstraint) {
		t.Errorf("null under replaceWhere: err = %v, want ErrConstraint", err)
	}
	if _, err := Rows(ctx, snap, batchOf([]schema.Value{l(10), s("x")}, []schema.Value{l(11), s("y")}), Options{Require: pred}); err != nil {
		t.Error(err)
	}
}

func TestRowsBatchShape(t *testing.T) {
	ctx := context.Background()
	snap := newSnapshot(t, TableSpec{Schema: st(field("a", schema.Long), field("p", schema.Integer)), PartitionColumns: []string{"p"}})
	bad := []iter.Seq2[Batch, error]{
		batchOf([]schema.Value{l(1)}),
		func(yield func(Batch, error) bool) {
			yield(Batch{Len: 2, Columns: [][]schema.Value{{l(1)}, {in(1)}}}, nil)
		},
		batchOf([]schema.Value{l(1), s("1")}), // a string in an integer partition
	}
	for i, b := range bad {
		if _, err := Rows(ctx, snap, b, Options{}); !errors.Is(err, ErrBatch) {
			t.Errorf("case %d: err = %v, want ErrBatch", i, err)
		}
	}
}

func TestRowsRollsFiles(t *testing.T) {
	ctx := context.Background()
	snap := newSnapshot(t, TableSpec{Schema: st(field("a", schema.Long), field("b", schema.String))})
	rows := func(yield func(Batch, error) bool) {
		for i := range 20 {
			b := Batch{Len: 100, Columns: make([][]schema.Value, 2)}
			for j := range 100 {
				b.Columns[0] = append(b.Columns[0], l(int64(i*100+j)))
				b.Columns[1] = append(b.Columns[1], s(strings.Repeat("x", 200)+strconv.Itoa(j)))
			}
			if !yield(b, nil) {
				return
			}
		}
	}
	adds, err := Rows(ctx, snap, rows, Options{TargetFileSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(adds) != 20 {
		t.Errorf("%d files with a 1-byte target over 20 batches, want 20", len(adds))
	}
	paths := map[string]bool{}
	for _, a := range adds {
		if paths[a.Path] || !strings.HasPrefix(a.Path, "part-") || !strings.HasSuffix(a.Path, ".c000.snappy.parquet") {
			t.Errorf("bad or repeated path %s", a.Path)
		}
		paths[a.Path] = true
		if !strings.Contains(a.Stats, `"numRecords":100`) || !a.DataChange || a.Size <= 0 {
			t.Errorf("add %+v", a)
		}
	}
}

func TestStatsOptionsFromProperties(t *testing.T) {
	data := st(field("a", schema.Long), field("s", st(field("x", schema.Integer))))
	cfg := func(props map[string]string) *tableconfig.Config {
		c, err := tableconfig.New(actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}, actions.Metadata{Configuration: props})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	so := statsOptions(data, schema.ColumnMappingNone, cfg(map[string]string{tableconfig.KeyDataSkippingStatsColumns: "a, s.x ,nope"}))
	if !slices.Equal(so.StatsColumns, []string{"a", "s.x"}) {
		t.Errorf("StatsColumns = %q", so.StatsColumns)
	}
	so = statsOptions(data, schema.ColumnMappingNone, cfg(map[string]string{tableconfig.KeyDataSkippingNumIndexedCols: "0"}))
	if so.StatsColumns == nil || len(so.StatsColumns) != 0 {
		t.Errorf("0 indexed columns: %+v", so)
	}
	so = statsOptions(data, schema.ColumnMappingNone, cfg(map[string]string{tableconfig.KeyDataSkippingNumIndexedCols: "-1"}))
	if so.NumIndexedCols != -1 {
		t.Errorf("-1 indexed columns: %+v", so)
	}
	so = statsOptions(data, schema.ColumnMappingNone, cfg(nil))
	if so.NumIndexedCols != tableconfig.DefaultNumIndexedCols || so.StatsColumns != nil {
		t.Errorf("defaults: %+v", so)
	}
}

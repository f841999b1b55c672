package alter_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/alter"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/tableconfig"
	"github.com/godelta/delta/testutil"
	"github.com/godelta/delta/txn"
	"github.com/godelta/delta/write"
)

var ctx = context.Background()

// create makes a table from ddl and props in a temporary directory.
func create(t *testing.T, ddl string, props map[string]string, parts ...string) *snapshot.Snapshot {
	t.Helper()
	sch, err := schema.ParseDDL(ddl)
	if err != nil {
		t.Fatal(err)
	}
	store, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return createIn(t, store, sch, props, parts...)
}

// createIn makes a table of schema sch and props in store.
func createIn(t *testing.T, store logstore.Store, sch *schema.StructType, props map[string]string, parts ...string) *snapshot.Snapshot {
	t.Helper()
	p, m, err := write.NewTable(write.TableSpec{Schema: sch, Properties: props, PartitionColumns: parts})
	if err != nil {
		t.Fatal(err)
	}
	tx := txn.BeginCreate(store, txn.Options{})
	tx.SetProtocol(p)
	tx.SetMetadata(m)
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	return load(t, store)
}

func load(t *testing.T, store logstore.Store) *snapshot.Snapshot {
	t.Helper()
	s, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func rows(rs ...[]schema.Value) iter.Seq2[write.Batch, error] {
	return func(yield func(write.Batch, error) bool) {
		b := write.Batch{Len: len(rs), Columns: make([][]schema.Value, len(rs[0]))}
		for _, r := range rs {
			for j, v := range r {
				b.Columns[j] = append(b.Columns[j], v)
			}
		}
		yield(b, nil)
	}
}

func appendRows(t *testing.T, s *snapshot.Snapshot, rs ...[]schema.Value) *snapshot.Snapshot {
	t.Helper()
	if _, err := write.Append(ctx, s, rows(rs...), write.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	return load(t, s.Store())
}

// read returns the table's rows as "name=value" lists, sorted.
func read(t *testing.T, s *snapshot.Snapshot) []string {
	t.Helper()
	sc, err := scan.New(s, scan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	sch := sc.Schema()
	for b, err := range sc.Batches(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		for i := range b.Len {
			var parts []string
			for j, v := range b.Row(i) {
				parts = append(parts, sch.Fields[j].Name+"="+v.String())
			}
			out = append(out, strings.Join(parts, " "))
		}
	}
	slices.Sort(out)
	return out
}

func equal(t *testing.T, got, want []string) {
	t.Helper()
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("rows:\n got %q\nwant %q", got, want)
	}
}

func path(s string) []string { return strings.Split(s, ".") }

func must(t *testing.T, s *snapshot.Snapshot, res txn.CommitResult, err error) *snapshot.Snapshot {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	n := load(t, s.Store())
	if n.Version() != res.Version {
		t.Fatalf("loaded version %d, committed %d", n.Version(), res.Version)
	}
	return n
}

// lastOperation returns the commitInfo operation of the table's latest
// commit and its parameters.
func lastOperation(t *testing.T, s *snapshot.Snapshot) (string, map[string]any) {
	t.Helper()
	hist, err := snapshot.History(ctx, s.Store(), 1)
	if err != nil || len(hist) == 0 {
		t.Fatal(err)
	}
	ci := hist[0].Info
	return ci.Operation, ci.OperationParameters
}

func long(i int64) schema.Value            { return schema.LongValue(i) }
func str(s string) schema.Value            { return schema.StringValue(s) }
func integer(i int32) schema.Value         { return schema.IntegerValue(i) }
func strct(v ...schema.Value) schema.Value { return schema.StructValue(v) }

func TestAddColumns(t *testing.T) {
	for _, mode := range []string{"none", "name", "id"} {
		t.Run(mode, func(t *testing.T) {
			props := map[string]string{}
			if mode != "none" {
				props[tableconfig.KeyColumnMappingMode] = mode
			}
			s := create(t, "id BIGINT, s STRUCT<a: INT>", props)
			s = appendRows(t, s, []schema.Value{long(1), strct(integer(10))})
			res, err := alter.AddColumn(ctx, s, nil, schema.StructField{Name: "c", Type: schema.String, Nullable: true}, alter.Options{})
			s = must(t, s, res, err)
			if op, params := lastOperation(t, s); op != alter.OpAddColumns || !strings.Contains(fmt.Sprint(params["columns"]), `"name":"c"`) {
				t.Fatalf("commitInfo %s %v", op, params)
			}
			res, err = alter.AddColumn(ctx, s, path("s"), schema.StructField{Name: "b", Type: schema.Long, Nullable: true}, alter.Options{})
			s = must(t, s, res, err)
			equal(t, read(t, s), []string{"id=1 s={10, null} c=null"})
			s = appendRows(t, s, []schema.Value{long(2), strct(integer(20), long(200)), str("x")})
			equal(t, read(t, s), []string{"id=1 s={10, null} c=null", "id=2 s={20, 200} c=x"})
			if mode != "none" {
				maxID, _ := s.Config().MaxColumnID()
				if maxID != 5 {
					t.Fatalf("maxColumnId %d, want 5 (id, s, s.a, then c and s.b)", maxID)
				}
				f, _ := s.Schema().Field("c")
				if id, _ := f.ColumnMappingID(); id != 4 || !strings.HasPrefix(f.PhysicalName(schema.ColumnMappingByName), "col-") {
					t.Fatalf("c: id %d, physical %s", id, f.PhysicalName(schema.ColumnMappingByName))
				}
			}
			// Refused: an existing name (any case), NOT NULL, a non-struct parent.
			for _, c := range []struct {
				parent []string
				f      schema.StructField
			}{
				{nil, schema.StructField{Name: "ID", Type: schema.Long, Nullable: true}},
				{nil, schema.StructField{Name: "d", Type: schema.Long}},
				{path("id"), schema.StructField{Name: "d", Type: schema.Long, Nullable: true}},
			} {
				if _, err := alter.AddColumn(ctx, s, c.parent, c.f, alter.Options{}); !errors.Is(err, alter.ErrInvalidChange) {
					t.Errorf("add %v %s: %v, want ErrInvalidChange", c.parent, c.f.Name, err)
				}
			}
		})
	}
}

func TestAddColumnNeedsFeature(t *testing.T) {
	s := create(t, "id BIGINT", nil)
	res, err := alter.AddColumn(ctx, s, nil, schema.StructField{Name: "ts", Type: schema.TimestampNTZ, Nullable: true}, alter.Options{})
	s = must(t, s, res, err)
	p := s.Protocol()
	if p.MinReaderVersion != 3 || p.MinWriterVersion != 7 || !slices.Contains(p.ReaderFeatures, actions.FeatureTimestampNtz) {
		t.Fatalf("protocol %+v, want timestampNtz on 3/7", p)
	}
}

func TestRenameDropNeedColumnMapping(t *testing.T) {
	s := create(t, "id BIGINT, v STRING", nil)
	_, err := alter.RenameColumn(ctx, s, path("v"), "w", alter.Options{})
	if !errors.Is(err, alter.ErrColumnMappingRequired) || !strings.Contains(err.Error(), tableconfig.KeyColumnMappingMode) {
		t.Fatalf("rename: %v", err)
	}
	if _, err := alter.DropColumns(ctx, s, [][]string{path("v")}, alter.Options{}); !errors.Is(err, alter.ErrColumnMappingRequired) {
		t.Fatalf("drop: %v", err)
	}
	if s2 := load(t, s.Store()); s2.Version() != s.Version() {
		t.Fatal("a refused change committed")
	}
}

func TestRenameDropColumnMapping(t *testing.T) {
	s := create(t, "id BIGINT, p STRING, v STRING, s STRUCT<a: INT, b: INT>", map[string]string{tableconfig.KeyColumnMappingMode: "name"}, "p")
	s = appendRows(t, s, []schema.Value{long(1), str("x"), str("one"), strct(integer(1), integer(2))})
	res, err := alter.RenameColumn(ctx, s, path("v"), "value", alter.Options{})
	s = must(t, s, res, err)
	if op, params := lastOperation(t, s); op != alter.OpRenameColumn || params["oldColumnPath"] != "v" || params["newColumnPath"] != "value" {
		t.Fatalf("commitInfo %s %v", op, params)
	}
	res, err = alter.RenameColumn(ctx, s, path("s.a"), "s.x", alter.Options{})
	s = must(t, s, res, err)
	res, err = alter.RenameColumn(ctx, s, path("p"), "part", alter.Options{})
	s = must(t, s, res, err)
	if got := s.Metadata().PartitionColumns; !slices.Equal(got, []string{"part"}) {
		t.Fatalf("partition columns %v", got)
	}
	equal(t, read(t, s), []string{"id=1 part=x value=one s={1, 2}"})
	if f, _ := s.Schema().Field("s"); f.Type.(*schema.StructType).Fields[0].Name != "x" {
		t.Fatalf("nested rename: %s", f.Type)
	}
	res, err = alter.DropColumns(ctx, s, [][]string{path("s.b"), path("value")}, alter.Options{})
	s = must(t, s, res, err)
	equal(t, read(t, s), []string{"id=1 part=x s={1}"})
	s = appendRows(t, s, []schema.Value{long(2), str("y"), strct(integer(5))})
	equal(t, read(t, s), []string{"id=1 part=x s={1}", "id=2 part=y s={5}"})
	// Refused: a partition column, a missing column, the only field of a struct.
	if _, err := alter.DropColumns(ctx, s, [][]string{path("part")}, alter.Options{}); !errors.Is(err, alter.ErrInvalidChange) {
		t.Errorf("drop partition column: %v", err)
	}
	if _, err := alter.DropColumns(ctx, s, [][]string{path("nope")}, alter.Options{}); !errors.Is(err, alter.ErrColumnNotFound) {
		t.Errorf("drop missing: %v", err)
	}
	if _, err := alter.DropColumns(ctx, s, [][]string{path("s.x")}, alter.Options{}); !errors.Is(err, alter.ErrInvalidChange) {
		t.Errorf("drop only field: %v", err)
	}
	if _, err := alter.RenameColumn(ctx, s, path("id"), "PART", alter.Options{}); !errors.Is(err, alter.ErrInvalidChange) {
		t.Errorf("rename onto existing: %v", err)
	}
}

func TestDropColumnUsedByConstraint(t *testing.T) {
	s := create(t, "id BIGINT, v INT", map[string]string{tableconfig.KeyColumnMappingMode: "name", "delta.constraints.pos": "v > 0"})
	if _, err := alter.DropColumns(ctx, s, [][]string{path("v")}, alter.Options{}); !errors.Is(err, alter.ErrInvalidChange) || !strings.Contains(err.Error(), "pos") {
		t.Fatalf("drop: %v", err)
	}
}

func TestEnableColumnMappingExisting(t *testing.T) {
	s := create(t, "id BIGINT, v STRING, s STRUCT<a: INT>", nil)
	s = appendRows(t, s, []schema.Value{long(1), str("one"), strct(integer(7))})
	res, err := alter.EnableFeature(ctx, s, "columnMapping", alter.Options{})
	s = must(t, s, res, err)
	p := s.Protocol()
	if p.MinReaderVersion != 2 || p.MinWriterVersion != 5 {
		t.Fatalf("protocol %+v, want 2/5", p)
	}
	if s.Config().ColumnMappingMode() != schema.ColumnMappingByName {
		t.Fatal("mode not name")
	}
	if maxID, _ := s.Config().MaxColumnID(); maxID != 4 {
		t.Fatalf("maxColumnId %d, want 4", maxID)
	}
	_ = s.Schema().Walk(func(path []string, f *schema.StructField) error {
		if f.PhysicalName(schema.ColumnMappingByName) != f.Name {
			t.Errorf("%v: physical name %s", path, f.PhysicalName(schema.ColumnMappingByName))
		}
		return nil
	})
	if op, _ := lastOperation(t, s); op != alter.OpSetProperties {
		t.Fatalf("operation %s", op)
	}
	res, err = alter.RenameColumn(ctx, s, path("v"), "w", alter.Options{})
	s = must(t, s, res, err)
	res, err = alter.AddColumn(ctx, s, nil, schema.StructField{Name: "v", Type: schema.Long, Nullable: true}, alter.Options{})
	s = must(t, s, res, err)
	// The old file's column v is w now; the new v (another physical name) is null.
	equal(t, read(t, s), []string{"id=1 w=one s={7} v=null"})
	s = appendRows(t, s, []schema.Value{long(2), str("two"), strct(integer(8)), long(22)})
	equal(t, read(t, s), []string{"id=1 w=one s={7} v=null", "id=2 w=two s={8} v=22"})
}

// TestSparkColumnMappingTable changes a Spark-written name-mode table.
func TestSparkColumnMappingTable(t *testing.T) {
	s := corpusCopy(t, "golden", "table-with-columnmapping-mode-name", "delta")
	before := read(t, s)
	if len(before) == 0 {
		t.Fatal("no rows")
	}
	res, err := alter.AddColumn(ctx, s, nil, schema.StructField{Name: "added", Type: schema.String, Nullable: true}, alter.Options{})
	s = must(t, s, res, err)
	res, err = alter.RenameColumn(ctx, s, path("StringType"), "renamed", alter.Options{})
	s = must(t, s, res, err)
	res, err = alter.DropColumns(ctx, s, [][]string{path("BinaryType")}, alter.Options{})
	s = must(t, s, res, err)
	var want []string
	for _, r := range before {
		var parts []string
		for _, kv := range splitRow(r) {
			switch {
			case strings.HasPrefix(kv, "BinaryType="):
				continue
			case strings.HasPrefix(kv, "StringType="):
				kv = "renamed=" + strings.TrimPrefix(kv, "StringType=")
			}
			parts = append(parts, kv)
		}
		want = append(want, strings.Join(append(parts, "added=null"), " "))
	}
	equal(t, read(t, s), want)
}

// corpusCopy copies the corpus table at the path elems into a temporary
// directory and loads it.
func corpusCopy(t *testing.T, elems ...string) *snapshot.Snapshot {
	t.Helper()
	src := filepath.Join(append([]string{testutil.CorpusDir(t)}, elems...)...)
	dir := t.TempDir()
	if err := testutil.CopyTree(src, dir); err != nil {
		t.Fatal(err)
	}
	store, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	return load(t, store)
}

// splitRow splits a row of read at its top-level "name=" boundaries.
func splitRow(r string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(r); i++ {
		switch r[i] {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case ' ':
			if depth == 0 && i+1 < len(r) && strings.IndexByte(r[i+1:], '=') > 0 && isName(r[i+1:]) {
				out = append(out, r[start:i])
				start = i + 1
			}
		}
	}
	return append(out, r[start:])
}

func isName(s string) bool {
	eq := strings.IndexByte(s, '=')
	sp := strings.IndexByte(s, ' ')
	return eq > 0 && (sp < 0 || eq < sp)
}

func TestRenameDropKeepStatsColumns(t *testing.T) {
	s := create(t, "id BIGINT, v STRING, s STRUCT<a: INT>", map[string]string{tableconfig.KeyColumnMappingMode: "name",
		tableconfig.KeyDataSkippingStatsColumns: "id,v,s.a"})
	res, err := alter.RenameColumn(ctx, s, path("v"), "odd name", alter.Options{})
	s = must(t, s, res, err)
	res, err = alter.RenameColumn(ctx, s, path("s"), "t", alter.Options{})
	s = must(t, s, res, err)
	if got := s.Metadata().Configuration[tableconfig.KeyDataSkippingStatsColumns]; got != "id,`odd name`,t.a" {
		t.Fatalf("stats columns after renames: %q", got)
	}
	res, err = alter.DropColumns(ctx, s, [][]string{path("odd name")}, alter.Options{})
	s = must(t, s, res, err)
	if got := s.Metadata().Configuration[tableconfig.KeyDataSkippingStatsColumns]; got != "id,t.a" {
		t.Fatalf("stats columns after drop: %q", got)
	}
}

// TestConcurrentChanges: a change computed on an old snapshot is computed
// again on the new one, so no concurrent change is lost.
func TestConcurrentChanges(t *testing.T) {
	s0 := create(t, "id BIGINT", nil)
	if _, err := alter.AddColumn(ctx, s0, nil, schema.StructField{Name: "a", Type: schema.Long, Nullable: true}, alter.Options{}); err != nil {
		t.Fatal(err)
	}
	res, err := alter.AddColumn(ctx, s0, nil, schema.StructField{Name: "b", Type: schema.Long, Nullable: true}, alter.Options{})
	s := must(t, s0, res, err)
	if got := s.Schema().String(); !strings.Contains(got, `"name":"a"`) || !strings.Contains(got, `"name":"b"`) {
		t.Fatalf("schema %s lost a column", got)
	}
	if _, err := alter.AddColumn(ctx, s0, nil, schema.StructField{Name: "A", Type: schema.Long, Nullable: true}, alter.Options{}); !errors.Is(err, alter.ErrInvalidChange) {
		t.Fatalf("a column added concurrently under the same name: %v", err)
	}
}

package delta

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/checkpoint"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
	"github.com/godelta/delta/testutil"
	"github.com/godelta/delta/write"
)

// validateLog checks every commit of the table against the protocol's
// rules for writers: at most one commitInfo, protocol and metaData per
// commit; commitInfo first, with an inCommitTimestamp, when in-commit
// timestamps are on; adds unique by path within a commit and among live
// files; the protocol supporting every feature the metadata uses; and
// partitionValues keyed by exactly the (physical) partition columns.
func validateLog(t *testing.T, tbl *Table) {
	t.Helper()
	ctx := context.Background()
	store := tbl.Store()
	var p actions.Protocol
	var m actions.Metadata
	live := map[string]bool{}
	for v := int64(0); ; v++ {
		data, err := store.Get(ctx, deltalog.CommitKey(v))
		if err != nil {
			if v == 0 {
				t.Fatalf("no commit 0: %v", err)
			}
			break
		}
		acts, err := actions.DecodeCommit(deltalog.CommitKey(v), data)
		if err != nil {
			t.Fatalf("commit %d: %v", v, err)
		}
		var nCI, nP, nM int
		seen := map[string]bool{}
		for _, a := range acts {
			switch {
			case a.CommitInfo != nil:
				nCI++
			case a.Protocol != nil:
				nP++
				p = *a.Protocol
			case a.Metadata != nil:
				nM++
				m = *a.Metadata
			}
		}
		if nCI > 1 || nP > 1 || nM > 1 {
			t.Errorf("commit %d: %d commitInfo, %d protocol, %d metaData", v, nCI, nP, nM)
		}
		ict := tableconfig.HasWriterFeature(&p, actions.FeatureInCommitTimestamp) && m.Configuration["delta.enableInCommitTimestamps"] == "true"
		if ict && (acts[0].CommitInfo == nil || acts[0].CommitInfo.InCommitTimestamp == nil) {
			t.Errorf("commit %d: in-commit timestamps on, but the first action is not a commitInfo with one", v)
		}
		checkFeatures(t, v, p, m)
		sch, err := schema.Parse(m.SchemaString)
		if err != nil {
			t.Fatalf("commit %d: schema: %v", v, err)
		}
		mode, _ := schema.ParseColumnMappingMode(m.Configuration["delta.columnMapping.mode"])
		var wantKeys []string
		for _, c := range m.PartitionColumns {
			f, _ := sch.Field(c)
			wantKeys = append(wantKeys, f.PhysicalName(mode))
		}
		slices.Sort(wantKeys)
		for _, a := range acts {
			if a.Remove != nil {
				delete(live, CanonicalPath(a.Remove.Path)+a.Remove.DeletionVector.UniqueID())
			}
		}
		for _, a := range acts {
			if a.Add == nil {
				continue
			}
			key := CanonicalPath(a.Add.Path) + a.Add.DeletionVector.UniqueID()
			if seen[key] {
				t.Errorf("commit %d: %s added twice", v, a.Add.Path)
			}
			if live[key] {
				t.Errorf("commit %d: %s added while live", v, a.Add.Path)
			}
			seen[key], live[key] = true, true
			keys := slices.Sorted(func(yield func(string) bool) {
				for k := range a.Add.PartitionValues {
					if !yield(k) {
						return
					}
				}
			})
			if !slices.Equal(keys, wantKeys) {
				t.Errorf("commit %d: %s: partitionValues keys %v, want %v", v, a.Add.Path, keys, wantKeys)
			}
			if tableconfig.HasWriterFeature(&p, actions.FeatureRowTracking) && (a.Add.BaseRowID == nil || a.Add.DefaultRowCommitVersion == nil) {
				t.Errorf("commit %d: %s: row tracking supported but no baseRowId/defaultRowCommitVersion", v, a.Add.Path)
			}
		}
	}
}

// checkFeatures checks that protocol p supports every feature metadata m
// uses, and that reader features are also writer features.
func checkFeatures(t *testing.T, v int64, p actions.Protocol, m actions.Metadata) {
	t.Helper()
	if p.MinReaderVersion == 3 {
		if p.MinWriterVersion != 7 {
			t.Errorf("commit %d: reader 3 with writer %d", v, p.MinWriterVersion)
		}
		for _, f := range p.ReaderFeatures {
			if !slices.Contains(p.WriterFeatures, f) {
				t.Errorf("commit %d: reader feature %s is not a writer feature", v, f)
			}
		}
	}
	need := func(feature string, rw bool) {
		if !tableconfig.HasWriterFeature(&p, feature) || (rw && !tableconfig.HasReaderFeature(&p, feature)) {
			t.Errorf("commit %d: table uses %s, protocol %+v does not support it", v, feature, p)
		}
	}
	c := m.Configuration
	for k, f := range map[string]string{"delta.appendOnly": "appendOnly", "delta.enableChangeDataFeed": "changeDataFeed",
		"delta.enableInCommitTimestamps": "inCommitTimestamp", "delta.enableRowTracking": "rowTracking"} {
		if c[k] == "true" {
			need(f, false)
		}
	}
	if c["delta.enableRowTracking"] == "true" {
		need("domainMetadata", false)
	}
	if c["delta.enableDeletionVectors"] == "true" {
		need("deletionVectors", true)
	}
	if c["delta.checkpointPolicy"] == "v2" {
		need("v2Checkpoint", true)
	}
	if mode := c["delta.columnMapping.mode"]; mode == "name" || mode == "id" {
		need("columnMapping", true)
	}
	for k := range c {
		if strings.HasPrefix(k, "delta.constraints.") {
			need("checkConstraints", false)
		}
	}
	sch, err := schema.Parse(m.SchemaString)
	if err != nil {
		return
	}
	var walk func(dt schema.DataType)
	walk = func(dt schema.DataType) {
		switch dt := dt.(type) {
		case *schema.StructType:
			for i := range dt.Fields {
				f := &dt.Fields[i]
				if _, ok := f.Metadata.Get("delta.invariants"); ok {
					need("invariants", false)
				}
				if _, ok := f.Metadata.Get("delta.generationExpression"); ok {
					need("generatedColumns", false)
				}
				walk(f.Type)
			}
		case *schema.ArrayType:
			walk(dt.ElementType)
		case *schema.MapType:
			walk(dt.KeyType)
			walk(dt.ValueType)
		case schema.PrimitiveType:
			if dt == schema.TimestampNTZ {
				need("timestampNtz", true)
			}
		}
	}
	walk(sch)
}

// scanRows reads every row of the table's latest version, each formatted
// as kind:value per column, sorted.
func scanRows(t *testing.T, tbl *Table) []string {
	t.Helper()
	ctx := context.Background()
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s, err := tbl.Scan(snap, ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for row, err := range s.Rows(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, formatRow(row.Values()))
	}
	sort.Strings(out)
	return out
}

func formatRow(vals []schema.Value) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = v.Kind().String() + ":" + v.String()
	}
	return strings.Join(parts, " | ")
}

func formatRows(rows [][]schema.Value) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = formatRow(r)
	}
	sort.Strings(out)
	return out
}

func diffRows(t *testing.T, got, want []string) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	t.Errorf("got %d rows, want %d", len(got), len(want))
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Errorf("row %d:\n got  %s\n want %s", i, g, w)
		}
	}
}

func nf(name string, t schema.DataType) schema.StructField {
	return schema.StructField{Name: name, Type: t, Nullable: true}
}

func dec(t *testing.T, s string, p, sc int) schema.Value {
	t.Helper()
	u, ok := new(big.Int).SetString(s, 10)
	if !ok {
		t.Fatalf("bad decimal %s", s)
	}
	v, err := schema.DecimalValue(u, p, sc)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func allTypesSchema() *schema.StructType {
	point := &schema.StructType{Fields: []schema.StructField{nf("x", schema.Integer), nf("y", schema.String)}}
	return &schema.StructType{Fields: []schema.StructField{
		nf("b", schema.Byte), nf("sh", schema.Short), nf("i", schema.Integer), nf("l", schema.Long),
		nf("f", schema.Float), nf("d", schema.Double), nf("bo", schema.Boolean), nf("s", schema.String),
		nf("bin", schema.Binary), nf("dt", schema.Date), nf("ts", schema.Timestamp), nf("ntz", schema.TimestampNTZ),
		nf("d1", schema.DecimalType{Precision: 5, Scale: 0}), nf("d2", schema.DecimalType{Precision: 10, Scale: 2}),
		nf("d3", schema.DecimalType{Precision: 38, Scale: 18}),
		nf("st", point),
		nf("arr", &schema.ArrayType{ElementType: schema.Integer, ContainsNull: true}),
		nf("m", &schema.MapType{KeyType: schema.String, ValueType: schema.Long, ValueContainsNull: true}),
		nf("nested", &schema.StructType{Fields: []schema.StructField{
			nf("inner", point),
			nf("pts", &schema.ArrayType{ElementType: point, ContainsNull: true}),
			nf("mm", &schema.MapType{KeyType: schema.String, ValueType: &schema.ArrayType{ElementType: schema.Long, ContainsNull: true}, ValueContainsNull: true}),
		}}),
	}}
}

func allTypesRows(t *testing.T) [][]schema.Value {
	pt := func(x int32, y string) schema.Value {
		return schema.StructValue([]schema.Value{schema.IntegerValue(x), schema.StringValue(y)})
	}
	row := func(k int64) []schema.Value {
		return []schema.Value{
			schema.ByteValue(int8(-k)), schema.ShortValue(int16(300 * k)), schema.IntegerValue(int32(70000 * k)), schema.LongValue(1<<40 + k),
			schema.FloatValue(1.5 * float32(k)), schema.DoubleValue(-2.25 * float64(k)), schema.BooleanValue(k%2 == 0), schema.StringValue(fmt.Sprintf("s%d é", k)),
			schema.BinaryValue([]byte{0, byte(k), 255}), schema.DateValue(int32(19000 + k)), schema.TimestampValue(1_700_000_000_123_456 + k), schema.TimestampNTZValue(1_600_000_000_000_001 + k),
			dec(t, fmt.Sprint(-k*7), 5, 0), dec(t, fmt.Sprint(123456+k), 10, 2),
			dec(t, "12345678901234567890"+fmt.Sprintf("%018d", k), 38, 18),
			pt(int32(k), "p"),
			schema.ArrayValue([]schema.Value{schema.IntegerValue(1), {}, schema.IntegerValue(int32(k))}),
			schema.MapValue([]schema.Value{schema.StringValue("a"), schema.LongValue(k), schema.StringValue("b"), {}}),
			schema.StructValue([]schema.Value{pt(2, "q"), schema.ArrayValue([]schema.Value{pt(3, "r"), {}}),
				schema.MapValue([]schema.Value{schema.StringValue("k"), schema.ArrayValue([]schema.Value{schema.LongValue(k)})})}),
		}
	}
	nulls := make([]schema.Value, 19)
	return [][]schema.Value{row(1), row(2), row(3), nulls}
}

func TestAppendRoundTripAllTypes(t *testing.T) {
	for _, mode := range []string{"none", "name"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			tbl, err := Create(ctx, filepath.Join(t.TempDir(), "t"), TableSpec{Schema: allTypesSchema(), Properties: map[string]string{"delta.columnMapping.mode": mode}})
			if err != nil {
				t.Fatal(err)
			}
			rows := allTypesRows(t)
			res, err := tbl.AppendRows(ctx, rows, WriteOptions{})
			v := res.Version
			if err != nil {
				t.Fatal(err)
			}
			if v != 1 {
				t.Errorf("version %d, want 1", v)
			}
			diffRows(t, scanRows(t, tbl), formatRows(rows))
			validateLog(t, tbl)
			hist, err := tbl.History(ctx, 1)
			if err != nil || len(hist) != 1 || hist[0].Info.Operation != "WRITE" {
				t.Errorf("history %+v, %v", hist, err)
			}
		})
	}
}

func TestAppendPartitioned(t *testing.T) {
	specials := []string{"plain", "a b", "a/b", "x=y", "100%", "ünï©ødé 日本", "#?:*\\{[]^\"'", "tab\there", "%2F"}
	for _, mode := range []string{"none", "name"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			dir := filepath.Join(t.TempDir(), "t")
			sch := &schema.StructType{Fields: []schema.StructField{
				nf("id", schema.Long), nf("p", schema.String), nf("dt", schema.Date), nf("ts", schema.Timestamp), nf("n", schema.Integer),
			}}
			tbl, err := Create(ctx, dir, TableSpec{Schema: sch, PartitionColumns: []string{"p", "dt", "ts", "n"},
				Properties: map[string]string{"delta.columnMapping.mode": mode}})
			if err != nil {
				t.Fatal(err)
			}
			var rows, want [][]schema.Value
			for i, sp := range specials {
				r := []schema.Value{schema.LongValue(int64(i)), schema.StringValue(sp), schema.DateValue(int32(i * 1000)),
					schema.TimestampValue(int64(i) * 86_400_000_123_457), schema.IntegerValue(int32(i % 3))}
				rows = append(rows, r)
				want = append(want, r)
			}
			// null everywhere, and the empty string, which the protocol
			// cannot tell from null: it reads back as null.
			rows = append(rows, []schema.Value{schema.LongValue(100), {}, {}, {}, {}},
				[]schema.Value{schema.LongValue(101), schema.StringValue(""), schema.DateValue(-1), schema.TimestampValue(-1), {}})
			want = append(want, []schema.Value{schema.LongValue(100), {}, {}, {}, {}},
				[]schema.Value{schema.LongValue(101), {}, schema.DateValue(-1), schema.TimestampValue(-1), {}})
			if _, err := tbl.AppendRows(ctx, rows, WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			diffRows(t, scanRows(t, tbl), formatRows(want))
			validateLog(t, tbl)

			// Every file sits in its partition's directory, and the null
			// partition in __HIVE_DEFAULT_PARTITION__.
			snap, err := tbl.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			hive := 0
			for a, err := range snap.Files(ctx) {
				if err != nil {
					t.Fatal(err)
				}
				if strings.Count(CanonicalPath(a.Path), "/") != 4 {
					t.Errorf("file %s is not four partition directories deep", a.Path)
				}
				if strings.Contains(a.Path, "__HIVE_DEFAULT_PARTITION__") {
					hive++
				}
				if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(CanonicalPath(a.Path)))); err != nil {
					t.Errorf("file %s: %v", a.Path, err)
				}
			}
			if hive != 2 {
				t.Errorf("%d files in a default partition, want 2", hive)
			}
			// Partition pruning finds a special value.
			pred, err := ParsePredicate("p = 'a/b'")
			if err != nil {
				t.Fatal(err)
			}
			s, err := tbl.Scan(snap, ScanOptions{Predicate: pred})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, err := range s.Rows(ctx) {
				if err != nil {
					t.Fatal(err)
				}
				n++
			}
			// Files of the null partitions are skipped too: p = 'a/b' is
			// Unknown on them, never TRUE.
			if n != 1 || s.Metrics().FilesSkippedPart != int64(len(rows)-1) {
				t.Errorf("p = 'a/b': %d rows, metrics %+v", n, s.Metrics())
			}
		})
	}
}

// countDataFiles counts the Parquet files under dir outside the log.
func countDataFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".parquet") && !strings.Contains(p, "_delta_log") {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestAppendConstraintViolations(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "t")
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.Long},
		nf("v", schema.Integer),
		{Name: "g", Type: schema.Long, Nullable: true, Metadata: schema.Metadata{{Key: "delta.generationExpression", Value: json.RawMessage(`"id + 1"`)}}},
	}}
	tbl, err := Create(ctx, dir, TableSpec{Schema: sch, Properties: map[string]string{"delta.constraints.pos": "v > 0"}})
	if err != nil {
		t.Fatal(err)
	}
	bad := [][][]schema.Value{
		{{{}, schema.IntegerValue(1), {}}},
		{{schema.LongValue(1), schema.IntegerValue(1), {}}, {schema.LongValue(2), schema.IntegerValue(-1), {}}},
		{{schema.LongValue(1), schema.IntegerValue(1), schema.LongValue(5)}},
	}
	for i, rows := range bad {
		_, err := tbl.AppendRows(ctx, rows, WriteOptions{})
		if err == nil {
			t.Fatalf("case %d: append of a bad row succeeded", i)
		}
		if !errors.Is(err, ErrConstraint) && !errors.Is(err, ErrUnsupportedFeature) {
			t.Errorf("case %d: err = %v", i, err)
		}
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Version() != 0 || countDataFiles(t, dir) != 0 {
		t.Errorf("after refused appends: version %d, %d data files", snap.Version(), countDataFiles(t, dir))
	}
	// A good row is written, its generated column filled in.
	_, err = tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(1), schema.IntegerValue(1), {}}}, WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	diffRows(t, scanRows(t, tbl), formatRows([][]schema.Value{{schema.LongValue(1), schema.IntegerValue(1), schema.LongValue(2)}}))
	validateLog(t, tbl)
}

// mustExpr parses a predicate of a test.
func mustExpr(t *testing.T, s string) expr.Expr {
	t.Helper()
	e, err := expr.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestOverwrite(t *testing.T) {
	ctx := context.Background()
	sch := &schema.StructType{Fields: []schema.StructField{nf("id", schema.Long), nf("p", schema.String)}}
	r := func(id int64, p string) []schema.Value {
		return []schema.Value{schema.LongValue(id), schema.StringValue(p)}
	}
	setup := func(t *testing.T, parts []string) *Table {
		tbl, err := Create(ctx, filepath.Join(t.TempDir(), "t"), TableSpec{Schema: sch, PartitionColumns: parts})
		if err != nil {
			t.Fatal(err)
		}
		for _, rows := range [][][]schema.Value{{r(1, "a"), r(2, "a"), r(3, "b")}, {r(4, "b"), r(5, "c")}} {
			if _, err := tbl.AppendRows(ctx, rows, WriteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		return tbl
	}
	tests := []struct {
		name  string
		parts []string
		where string
		rows  [][]schema.Value
		want  [][]schema.Value
	}{
		{"whole table", nil, "", [][]schema.Value{r(9, "z")}, [][]schema.Value{r(9, "z")}},
		{"partition predicate", []string{"p"}, "p = 'b'", [][]schema.Value{r(10, "b")}, [][]schema.Value{r(1, "a"), r(2, "a"), r(5, "c"), r(10, "b")}},
		{"data predicate", nil, "id >= 2 AND id <= 4", [][]schema.Value{r(3, "x"), r(4, "y")}, [][]schema.Value{r(1, "a"), r(5, "c"), r(3, "x"), r(4, "y")}},
		{"data predicate partitioned", []string{"p"}, "id = 2 OR id = 5", [][]schema.Value{r(5, "q")}, [][]schema.Value{r(1, "a"), r(3, "b"), r(4, "b"), r(5, "q")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tbl := setup(t, tt.parts)
			opts := OverwriteOptions{}
			if tt.where != "" {
				opts.ReplaceWhere = mustExpr(t, tt.where)
			}
			if _, err := tbl.OverwriteRows(ctx, tt.rows, opts); err != nil {
				t.Fatal(err)
			}
			diffRows(t, scanRows(t, tbl), formatRows(tt.want))
			validateLog(t, tbl)
		})
	}
	t.Run("rows outside the predicate", func(t *testing.T) {
		tbl := setup(t, []string{"p"})
		_, err := tbl.OverwriteRows(ctx, [][]schema.Value{r(1, "b"), r(2, "c")}, OverwriteOptions{ReplaceWhere: mustExpr(t, "p = 'b'")})
		var ce *ConstraintError
		if !errors.As(err, &ce) || ce.Kind != write.KindPredicate || ce.Row != 1 {
			t.Fatalf("err = %v, want a replaceWhere violation at row 1", err)
		}
		snap, _ := tbl.Snapshot(ctx)
		if snap.Version() != 2 {
			t.Errorf("version %d after a refused overwrite", snap.Version())
		}
	})
	t.Run("append-only", func(t *testing.T) {
		tbl, err := Create(ctx, filepath.Join(t.TempDir(), "t"), TableSpec{Schema: sch, Properties: map[string]string{"delta.appendOnly": "true"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tbl.AppendRows(ctx, [][]schema.Value{r(1, "a")}, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := tbl.OverwriteRows(ctx, [][]schema.Value{r(2, "a")}, OverwriteOptions{}); !errors.Is(err, ErrAppendOnly) {
			t.Errorf("err = %v, want ErrAppendOnly", err)
		}
	})
}

// TestOverwriteChangeData: on a table with the change data feed on, each
// kind of overwrite reads back, through Changes, as exactly the rows it
// deleted and inserted; rows a data-column replaceWhere rewrote unchanged
// are neither. Generated columns reach the insert change data filled in.
func TestOverwriteChangeData(t *testing.T) {
	ctx := context.Background()
	gen := schema.Metadata{{Key: write.MetaGenerationExpression, Value: json.RawMessage(`"id * 10"`)}}
	sch := &schema.StructType{Fields: []schema.StructField{nf("id", schema.Long), nf("p", schema.String),
		{Name: "g", Type: schema.Long, Nullable: true, Metadata: gen}}}
	r := func(id int64, p string) []schema.Value {
		return []schema.Value{schema.LongValue(id), schema.StringValue(p), {}}
	}
	tests := []struct {
		name    string
		parts   []string
		where   string
		rows    [][]schema.Value
		changes []string // id p g _change_type
	}{
		{"whole table", nil, "", [][]schema.Value{r(9, "z")},
			[]string{"1 a 10 delete", "2 a 20 delete", "3 b 30 delete", "4 b 40 delete", "5 c 50 delete", "9 z 90 insert"}},
		{"partition predicate", []string{"p"}, "p = 'b'", [][]schema.Value{r(10, "b")},
			[]string{"10 b 100 insert", "3 b 30 delete", "4 b 40 delete"}},
		{"data predicate", nil, "id >= 2 AND id <= 4", [][]schema.Value{r(3, "x")},
			[]string{"2 a 20 delete", "3 b 30 delete", "3 x 30 insert", "4 b 40 delete"}},
		{"data predicate partitioned", []string{"p"}, "id = 2 OR id = 5", [][]schema.Value{r(5, "q")},
			[]string{"2 a 20 delete", "5 c 50 delete", "5 q 50 insert"}},
		{"data predicate matching nothing", nil, "id = 7", [][]schema.Value{r(7, "n")},
			[]string{"7 n 70 insert"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tbl, err := Create(ctx, filepath.Join(t.TempDir(), "t"), TableSpec{Schema: sch, PartitionColumns: tt.parts,
				Properties: map[string]string{"delta.enableChangeDataFeed": "true"}})
			if err != nil {
				t.Fatal(err)
			}
			for _, rows := range [][][]schema.Value{{r(1, "a"), r(2, "a"), r(3, "b")}, {r(4, "b"), r(5, "c")}} {
				if _, err := tbl.AppendRows(ctx, rows, WriteOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			opts := OverwriteOptions{}
			if tt.where != "" {
				opts.ReplaceWhere = mustExpr(t, tt.where)
			}
			res, err := tbl.OverwriteRows(ctx, tt.rows, opts)
			v := res.Version
			if err != nil {
				t.Fatal(err)
			}
			c, err := tbl.Changes(ctx, ChangeOptions{Start: v, End: UpTo(v)})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for row, err := range c.Rows(ctx) {
				if err != nil {
					t.Fatal(err)
				}
				vals := row.Values()
				got = append(got, fmt.Sprintf("%v %v %v %v", vals[0], vals[1], vals[2], vals[3]))
			}
			sort.Strings(got)
			if !slices.Equal(got, tt.changes) {
				t.Errorf("changes of version %d:\n got %q\nwant %q", v, got, tt.changes)
			}
			validateLog(t, tbl)
		})
	}
}

// A table with the newer features, appended to 25 times, with checkpoints
// along the way, reads back exactly.
func TestAppendFeatureRichTable(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "t")
	sch := &schema.StructType{Fields: []schema.StructField{nf("id", schema.Long), nf("p", schema.Integer), nf("s", schema.String)}}
	tbl, err := Create(ctx, dir, TableSpec{Schema: sch, PartitionColumns: []string{"p"}, Properties: map[string]string{
		"delta.enableRowTracking":        "true",
		"delta.enableInCommitTimestamps": "true",
		"delta.enableDeletionVectors":    "true",
		"delta.checkpointPolicy":         "v2",
		"delta.columnMapping.mode":       "name",
	}})
	if err != nil {
		t.Fatal(err)
	}
	var all [][]schema.Value
	for i := range 25 {
		var rows [][]schema.Value
		for j := range 4 {
			id := int64(i*4 + j)
			rows = append(rows, []schema.Value{schema.LongValue(id), schema.IntegerValue(int32(id % 3)), schema.StringValue(fmt.Sprint("row ", id))})
		}
		res, err := tbl.AppendRows(ctx, rows, WriteOptions{})
		v := res.Version
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, rows...)
		if v%10 == 0 {
			snap, err := tbl.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := checkpoint.Write(ctx, tbl.Store(), snap, checkpoint.WriteOptions{}); err != nil {
				t.Fatalf("checkpoint at %d: %v", v, err)
			}
		}
	}
	diffRows(t, scanRows(t, tbl), formatRows(all))
	validateLog(t, tbl)
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Version() != 25 || len(snap.Segment().Checkpoint) == 0 {
		t.Errorf("version %d, segment %+v", snap.Version(), snap.Segment())
	}
	hw, ok, err := snap.DomainMetadata(ctx, "delta.rowTracking")
	if err != nil || !ok || !strings.Contains(hw, `"rowIdHighWaterMark":99`) {
		t.Errorf("row tracking high-water mark %q (%v), want 99", hw, ok)
	}
	for _, f := range []string{"rowTracking", "domainMetadata", "inCommitTimestamp", "deletionVectors", "v2Checkpoint", "columnMapping"} {
		if p := snap.Protocol(); !tableconfig.HasWriterFeature(&p, f) {
			t.Errorf("protocol %+v lacks %s", p, f)
		}
	}

	// Clean the log: commits 0..19 made 40 days ago expire. As in Spark,
	// the newest checkpoint made before the cut-off (10) and everything
	// after it stay; the table reads the same.
	old := time.Now().Add(-40 * 24 * time.Hour)
	for v := range int64(20) {
		if err := os.Chtimes(filepath.Join(dir, "_delta_log", fmt.Sprintf("%020d.json", v)), old, old); err != nil {
			t.Fatal(err)
		}
	}
	res, err := tbl.CleanupLog(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if res.CheckpointVersion != 10 || len(res.Deleted) < 10 {
		t.Errorf("cleanup kept from checkpoint %d, deleted %d files: %v", res.CheckpointVersion, len(res.Deleted), res.Deleted)
	}
	diffRows(t, scanRows(t, tbl), formatRows(all))
	if _, err := tbl.SnapshotAt(ctx, 10); err != nil {
		t.Errorf("time travel to the checkpoint after cleanup: %v", err)
	}
	if _, err := tbl.SnapshotAt(ctx, 5); !errors.Is(err, ErrVersionNotFound) {
		t.Errorf("time travel to a cleaned version: %v, want ErrVersionNotFound", err)
	}
}

func corpusDir(t *testing.T) string { return testutil.CorpusDir(t) }

// sampleValue returns a non-null value of type dt, varying with k.
func sampleValue(t *testing.T, dt schema.DataType, k int64) schema.Value {
	switch dt := dt.(type) {
	case schema.DecimalType:
		v, err := schema.DecimalValueInt64(k%1000, dt.Precision, dt.Scale)
		if err != nil {
			t.Fatal(err)
		}
		return v
	case *schema.StructType:
		vals := make([]schema.Value, len(dt.Fields))
		for i := range dt.Fields {
			vals[i] = sampleValue(t, dt.Fields[i].Type, k+int64(i))
		}
		return schema.StructValue(vals)
	case *schema.ArrayType:
		return schema.ArrayValue([]schema.Value{sampleValue(t, dt.ElementType, k), sampleValue(t, dt.ElementType, k+1)})
	case *schema.MapType:
		return schema.MapValue([]schema.Value{sampleValue(t, dt.KeyType, k), sampleValue(t, dt.ValueType, k)})
	}
	switch dt {
	case schema.Byte:
		return schema.ByteValue(int8(k))
	case schema.Short:
		return schema.ShortValue(int16(k))
	case schema.Integer:
		return schema.IntegerValue(int32(k))
	case schema.Long:
		return schema.LongValue(k)
	case schema.Float:
		return schema.FloatValue(float32(k) + 0.5)
	case schema.Double:
		return schema.DoubleValue(float64(k) + 0.25)
	case schema.Boolean:
		return schema.BooleanValue(k%2 == 0)
	case schema.String:
		return schema.StringValue(fmt.Sprint("godelta ", k))
	case schema.Binary:
		return schema.BinaryValue([]byte{byte(k), 1})
	case schema.Date:
		return schema.DateValue(int32(18000 + k))
	case schema.Timestamp:
		return schema.TimestampValue(1_600_000_000_000_000 + k)
	case schema.TimestampNTZ:
		return schema.TimestampNTZValue(1_600_000_000_000_000 + k)
	}
	t.Fatalf("no sample value for %s", dt)
	return schema.Value{}
}

// Tables written by Spark accept our appends: the old rows read back
// unchanged next to the new ones, and new files of an existing partition
// land in the directory Spark made for it.
func TestAppendToCorpusTables(t *testing.T) {
	corpus := corpusDir(t)
	for _, rel := range []string{
		"golden/basic-decimal-table/delta",
		"golden/table-with-columnmapping-mode-name/delta",
		"golden/data-reader-escaped-chars/delta",
		"kernel-rs/table-with-dv-small",
		"dat/reference_table_1/delta",
	} {
		t.Run(rel, func(t *testing.T) {
			ctx := context.Background()
			src := filepath.Join(corpus, filepath.FromSlash(rel))
			if _, err := os.Stat(src); err != nil {
				t.Skipf("table missing: %v", err)
			}
			dir := filepath.Join(t.TempDir(), "t")
			if err := testutil.CopyTree(src, dir); err != nil {
				t.Fatal(err)
			}
			tbl, err := Open(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			old := scanRows(t, tbl)
			snap, err := tbl.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// New rows; partition values copied from an existing row, so
			// that they join its partition.
			var oldRow []schema.Value
			s, err := tbl.Scan(snap, ScanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for row, err := range s.Rows(ctx) {
				if err != nil {
					t.Fatal(err)
				}
				oldRow = slices.Clone(row.Values())
				break
			}
			sch := snap.Schema()
			parts := snap.Metadata().PartitionColumns
			var rows [][]schema.Value
			for k := range 3 {
				r := make([]schema.Value, len(sch.Fields))
				for i := range sch.Fields {
					if slices.Contains(parts, sch.Fields[i].Name) && oldRow != nil {
						r[i] = oldRow[i]
						continue
					}
					r[i] = sampleValue(t, sch.Fields[i].Type, int64(k+i))
				}
				rows = append(rows, r)
			}
			if _, err := tbl.AppendRows(ctx, rows, WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			want := append(slices.Clone(old), formatRows(rows)...)
			sort.Strings(want)
			diffRows(t, scanRows(t, tbl), want)
			after, err := tbl.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(parts) > 0 && oldRow != nil {
				dirs := map[string]bool{}
				for a, err := range snap.Files(ctx) {
					if err != nil {
						t.Fatal(err)
					}
					dirs[filepath.Dir(CanonicalPath(a.Path))] = true
				}
				for a, err := range after.Files(ctx) {
					if err != nil {
						t.Fatal(err)
					}
					if !dirs[filepath.Dir(CanonicalPath(a.Path))] {
						t.Errorf("new file %s is outside the partition directories Spark made", a.Path)
					}
				}
			}
		})
	}
}

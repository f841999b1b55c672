package delta_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/dml"
	"github.com/godelta/delta/schema"
)

// tableRows returns the table's rows as text, one "v1|v2|..." per row in
// schema order, sorted, and its schema's DDL.
func evolvedRows(t *testing.T, tbl *delta.Table) ([]string, string) {
	t.Helper()
	ctx := context.Background()
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s, err := tbl.Scan(snap, delta.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for r, err := range s.Rows(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		var parts []string
		for _, v := range r.Values() {
			parts = append(parts, v.String())
		}
		out = append(out, strings.Join(parts, "|"))
	}
	slices.Sort(out)
	return out, structDDL(snap.Schema())
}

func ddl(t *testing.T, text string) *schema.StructType {
	t.Helper()
	sch, err := schema.ParseDDL(text)
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// MERGE WITH SCHEMA EVOLUTION, rule by rule, as Spark's
// MergeIntoSchemaEvolution suites state them: UPDATE SET * and INSERT *
// add the source's new columns (top level at the end, nested fields at the
// end of their struct), rows the merge does not write read them as null,
// and it is one commit that stages the new metaData; without a * clause,
// or without evolution, the schema stays.
func TestMergeSchemaEvolution(t *testing.T) {
	ctx := context.Background()
	l := schema.LongValue
	str := schema.StringValue
	tests := []struct {
		name      string
		target    string
		props     map[string]string
		part      []string
		rows      [][]schema.Value
		source    string
		src       [][]schema.Value
		build     func(b *delta.MergeBuilder)
		evolve    bool
		wantDDL   string
		wantRows  []string
		wantMeta  bool // the commit stages a metaData action
		wantError error
	}{
		{
			name:   "new top-level column, update and insert all",
			target: "id BIGINT, v STRING", rows: [][]schema.Value{{l(1), str("a")}, {l(2), str("b")}},
			source: "id BIGINT, v STRING, extra STRING", src: [][]schema.Value{{l(2), str("B"), str("x2")}, {l(3), str("c"), str("x3")}},
			build:  func(b *delta.MergeBuilder) { b.WhenMatchedUpdateAll("").WhenNotMatchedInsertAll("") },
			evolve: true, wantMeta: true,
			wantDDL:  "id BIGINT, v STRING, extra STRING",
			wantRows: []string{"1|a|null", "2|B|x2", "3|c|x3"},
		},
		{
			name:   "source columns in another order, new one in the middle",
			target: "id BIGINT, v STRING", rows: [][]schema.Value{{l(1), str("a")}},
			source: "extra BIGINT, v STRING, id BIGINT", src: [][]schema.Value{{l(7), str("z"), l(9)}},
			build:  func(b *delta.MergeBuilder) { b.WhenNotMatchedInsertAll("") },
			evolve: true, wantMeta: true,
			wantDDL:  "id BIGINT, v STRING, extra BIGINT",
			wantRows: []string{"1|a|null", "9|z|7"},
		},
		{
			name:   "nested struct field added",
			target: "id BIGINT, s STRUCT<a: INT>", rows: [][]schema.Value{
				{l(1), schema.StructValue([]schema.Value{schema.IntegerValue(10)})},
				{l(3), schema.StructValue([]schema.Value{schema.IntegerValue(30)})},
			},
			source: "id BIGINT, s STRUCT<a: INT, b: STRING>",
			src: [][]schema.Value{
				{l(1), schema.StructValue([]schema.Value{schema.IntegerValue(11), str("b1")})},
				{l(2), schema.StructValue([]schema.Value{schema.IntegerValue(20), str("b2")})},
			},
			build:  func(b *delta.MergeBuilder) { b.WhenMatchedUpdateAll("").WhenNotMatchedInsertAll("") },
			evolve: true, wantMeta: true,
			wantDDL:  "id BIGINT, s STRUCT<a: INT, b: STRING>",
			wantRows: []string{"1|{11, b1}", "2|{20, b2}", "3|{30, null}"},
		},
		{
			name:   "explicit assignments only: no evolution",
			target: "id BIGINT, v STRING", rows: [][]schema.Value{{l(1), str("a")}},
			source: "id BIGINT, v STRING, extra STRING", src: [][]schema.Value{{l(1), str("A"), str("x")}},
			build:    func(b *delta.MergeBuilder) { b.WhenMatchedUpdate("", "v = s.v") },
			evolve:   true,
			wantDDL:  "id BIGINT, v STRING",
			wantRows: []string{"1|A"},
		},
		{
			name:   "without evolution the new column is ignored",
			target: "id BIGINT, v STRING", rows: [][]schema.Value{{l(1), str("a")}},
			source: "id BIGINT, v STRING, extra STRING", src: [][]schema.Value{{l(1), str("A"), str("x")}, {l(2), str("b"), str("y")}},
			build:    func(b *delta.MergeBuilder) { b.WhenMatchedUpdateAll("").WhenNotMatchedInsertAll("") },
			wantDDL:  "id BIGINT, v STRING",
			wantRows: []string{"1|A", "2|b"},
		},
		{
			name:   "column mapping: the new column gets an id and a physical name",
			target: "id BIGINT, v STRING", props: map[string]string{"delta.columnMapping.mode": "name"},
			rows:   [][]schema.Value{{l(1), str("a")}},
			source: "id BIGINT, v STRING, extra STRING", src: [][]schema.Value{{l(1), str("A"), str("x")}},
			build:  func(b *delta.MergeBuilder) { b.WhenMatchedUpdateAll("") },
			evolve: true, wantMeta: true,
			wantDDL:  "id BIGINT, v STRING, extra STRING",
			wantRows: []string{"1|A|x"},
		},
		{
			name:   "deletion vectors: rows kept in place read the new column as null",
			target: "id BIGINT, v STRING", props: map[string]string{"delta.enableDeletionVectors": "true"},
			rows:   [][]schema.Value{{l(1), str("a")}, {l(2), str("b")}},
			source: "id BIGINT, v STRING, extra STRING", src: [][]schema.Value{{l(2), str("B"), str("x")}},
			build:  func(b *delta.MergeBuilder) { b.WhenMatchedUpdateAll("") },
			evolve: true, wantMeta: true,
			wantDDL:  "id BIGINT, v STRING, extra STRING",
			wantRows: []string{"1|a|null", "2|B|x"},
		},
		{
			name:   "partitioned table",
			target: "id BIGINT, p STRING", part: []string{"p"},
			rows:   [][]schema.Value{{l(1), str("x")}},
			source: "id BIGINT, p STRING, extra BIGINT", src: [][]schema.Value{{l(1), str("x"), l(5)}, {l(2), str("y"), l(6)}},
			build:  func(b *delta.MergeBuilder) { b.WhenMatchedUpdateAll("").WhenNotMatchedInsertAll("") },
			evolve: true, wantMeta: true,
			wantDDL:  "id BIGINT, p STRING, extra BIGINT",
			wantRows: []string{"1|x|5", "2|y|6"},
		},
		{
			name:   "a type that does not merge is refused, nothing committed",
			target: "id BIGINT, v STRING", rows: [][]schema.Value{{l(1), str("a")}},
			source: "id BIGINT, v BIGINT", src: [][]schema.Value{{l(1), l(5)}},
			build:     func(b *delta.MergeBuilder) { b.WhenMatchedUpdateAll("") },
			evolve:    true,
			wantError: delta.ErrInvalidArgument,
			wantDDL:   "id BIGINT, v STRING",
			wantRows:  []string{"1|a"},
		},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tbl, err := delta.Create(ctx, fmt.Sprintf("memory://merge-evolution-%d", i), delta.TableSpec{
				Schema: ddl(t, tc.target), Properties: tc.props, PartitionColumns: tc.part,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer tbl.Close()
			if _, err := tbl.AppendRows(ctx, tc.rows, delta.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			before, err := tbl.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			b := tbl.Merge(delta.MergeRows(ddl(t, tc.source), tc.src), "t.id = s.id")
			if tc.evolve {
				b.WithSchemaEvolution()
			}
			tc.build(b)
			_, err = b.Execute(ctx)
			if tc.wantError != nil {
				if !errors.Is(err, tc.wantError) {
					t.Fatalf("err %v, want %v", err, tc.wantError)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			rows, gotDDL := evolvedRows(t, tbl)
			if gotDDL != tc.wantDDL {
				t.Errorf("schema %s, want %s", gotDDL, tc.wantDDL)
			}
			if !slices.Equal(rows, tc.wantRows) {
				t.Errorf("rows %q, want %q", rows, tc.wantRows)
			}
			after, err := tbl.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantError != nil {
				if after.Version() != before.Version() {
					t.Fatalf("a failed merge committed version %d", after.Version())
				}
				return
			}
			if after.Version() != before.Version()+1 {
				t.Fatalf("version %d after %d: want one commit", after.Version(), before.Version())
			}
			data, err := tbl.Store().Get(ctx, fmt.Sprintf("_delta_log/%020d.json", after.Version()))
			if err != nil {
				t.Fatal(err)
			}
			acts, err := actions.DecodeCommit("commit", data)
			if err != nil {
				t.Fatal(err)
			}
			hasMeta := slices.ContainsFunc(acts, func(a actions.Action) bool { return a.Metadata != nil })
			if hasMeta != tc.wantMeta {
				t.Errorf("commit stages metaData %v, want %v", hasMeta, tc.wantMeta)
			}
			if ci, ok := after.CommitInfo(); !ok || ci.Operation != dml.OpMerge {
				t.Errorf("operation %q, want MERGE", ci.Operation)
			}
			if tc.props["delta.columnMapping.mode"] == "name" {
				for _, f := range after.Schema().Fields {
					if _, ok := f.Metadata.Get("delta.columnMapping.physicalName"); !ok {
						t.Errorf("column %s has no physical name", f.Name)
					}
				}
			}
		})
	}
}

// structDDL writes a schema as the DDL the cases give it in.
func structDDL(st *schema.StructType) string {
	var parts []string
	for _, f := range st.Fields {
		parts = append(parts, f.Name+" "+typeDDL(f.Type))
	}
	return strings.Join(parts, ", ")
}

func typeDDL(t schema.DataType) string {
	if st, ok := t.(*schema.StructType); ok {
		var parts []string
		for _, f := range st.Fields {
			parts = append(parts, f.Name+": "+typeDDL(f.Type))
		}
		return "STRUCT<" + strings.Join(parts, ", ") + ">"
	}
	switch t.String() {
	case "long":
		return "BIGINT"
	case "integer":
		return "INT"
	}
	return strings.ToUpper(t.String())
}

// MERGE WITH SCHEMA EVOLUTION into a table with an identity column: the
// inserted rows get identity values, and the commit stages one metaData
// with both the new column and the moved high-water mark.
func TestMergeSchemaEvolutionIdentity(t *testing.T) {
	ctx := context.Background()
	tbl, err := delta.Create(ctx, "memory://merge-evolution-identity", delta.TableSpec{
		Schema: ddl(t, "id BIGINT GENERATED ALWAYS AS IDENTITY, k STRING"),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	if _, err := tbl.AppendRows(ctx, [][]schema.Value{{{}, schema.StringValue("a")}}, delta.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	src := delta.MergeRows(ddl(t, "k STRING, extra STRING"), [][]schema.Value{
		{schema.StringValue("a"), schema.StringValue("xa")},
		{schema.StringValue("b"), schema.StringValue("xb")},
	})
	if _, err := tbl.Merge(src, "t.k = s.k").WithSchemaEvolution().WhenNotMatchedInsertAll("").Execute(ctx); err != nil {
		t.Fatal(err)
	}
	rows, gotDDL := evolvedRows(t, tbl)
	if gotDDL != "id BIGINT, k STRING, extra STRING" || !slices.Equal(rows, []string{"1|a|null", "2|b|xb"}) {
		t.Fatalf("schema %s rows %q", gotDDL, rows)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := snap.Schema().Field("id")
	if hwm, ok := f.Metadata.Get("delta.identity.highWaterMark"); !ok || string(hwm) != "2" {
		t.Fatalf("high-water mark %s %v, want 2", hwm, ok)
	}
	if ci, _ := snap.CommitInfo(); ci.Tags["delta.identity.schemaUpdate"] == "true" {
		t.Errorf("a schema-evolving MERGE is tagged as a marks-only update")
	}
}

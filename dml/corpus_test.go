package dml_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/dml"
	"github.com/godelta/delta/internal/dv"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
)

// corpusRow is a row of a corpus table, by logical column name.
type corpusRow map[string]schema.Value

func (r corpusRow) key(cols []string) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = r[c].String()
	}
	return strings.Join(parts, "|")
}

// corpusCase is a DELETE (set empty) or UPDATE of a copy of a corpus
// table, with the same operation written in Go to compute the expected
// rows: match says which rows the predicate takes, apply what an update
// makes of one.
type corpusCase struct {
	table string // under ../../shared/testdata
	where string
	set   string
	match func(r corpusRow) bool
	apply func(r corpusRow) corpusRow
}

func intOf(v schema.Value) int64 {
	if v.IsNull() {
		return -1 << 62
	}
	return v.Int64()
}

func TestCorpusTables(t *testing.T) {
	const dir = "../../shared/testdata"
	if _, err := os.Stat(dir); err != nil {
		t.Skip("no corpus at", dir)
	}
	cases := []corpusCase{
		{ // Spark: deletion vectors, column mapping (name), partitioned, checkpoint.
			table: "golden/dv-with-columnmapping/delta", where: "col1 >= 5 AND col1 < 40",
			match: func(r corpusRow) bool { c := intOf(r["col1"]); return c >= 5 && c < 40 },
		},
		{
			table: "golden/dv-with-columnmapping/delta", where: "part = 3 OR col1 % 7 = 0", set: "col2 = concat(col2, '-u'), col1 = col1 + 1000",
			match: func(r corpusRow) bool {
				return intOf(r["part"]) == 3 || (!r["col1"].IsNull() && intOf(r["col1"])%7 == 0)
			},
			apply: func(r corpusRow) corpusRow {
				r["col1"] = schema.IntegerValue(int32(intOf(r["col1"]) + 1000))
				if !r["col2"].IsNull() {
					r["col2"] = schema.StringValue(r["col2"].String() + "-u")
				}
				return r
			},
		},
		{ // Databricks: a file with a deletion vector already.
			table: "kernel-rs/table-with-dv-small", where: "value > 5",
			match: func(r corpusRow) bool { return intOf(r["value"]) > 5 },
		},
		{
			table: "kernel-rs/table-with-dv-small", where: "value = 1", set: "value = value + 100",
			match: func(r corpusRow) bool { return intOf(r["value"]) == 1 },
			apply: func(r corpusRow) corpusRow {
				r["value"] = schema.IntegerValue(int32(intOf(r["value"]) + 100))
				return r
			},
		},
		{ // Databricks: deletion vectors, a checkpoint.
			table: "delta-rs/table_with_deletion_logs", where: "nbr % 3 = 1",
			match: func(r corpusRow) bool { return intOf(r["nbr"])%3 == 1 },
		},
		{
			table: "delta-rs/table_with_deletion_logs", where: "id < 40", set: "name = upper(name)",
			match: func(r corpusRow) bool { return intOf(r["id"]) < 40 },
			apply: func(r corpusRow) corpusRow {
				if !r["name"].IsNull() {
					r["name"] = schema.StringValue(strings.ToUpper(r["name"].String()))
				}
				return r
			},
		},
		{ // Spark: column mapping (name), change data feed.
			table: "kernel-rs/cdf-column-mapping-name-mode-3-7", where: "id < 3",
			match: func(r corpusRow) bool { return intOf(r["id"]) < 3 },
		},
		{
			table: "kernel-rs/cdf-column-mapping-name-mode-3-7", where: "id >= 3", set: "value = value * 2",
			match: func(r corpusRow) bool { return intOf(r["id"]) >= 3 },
			apply: func(r corpusRow) corpusRow {
				if !r["value"].IsNull() {
					r["value"] = schema.DoubleValue(r["value"].Float64() * 2)
				}
				return r
			},
		},
	}
	for _, c := range cases {
		for _, strategy := range []dml.Strategy{dml.Auto, dml.CopyOnWrite} {
			op := "delete"
			if c.set != "" {
				op = "update"
			}
			t.Run(fmt.Sprintf("%s/%s/%s", c.table, op, strategy), func(t *testing.T) {
				runCorpusCase(t, filepath.Join(dir, c.table), c, strategy)
			})
		}
	}
}

func runCorpusCase(t *testing.T, src string, c corpusCase, strategy dml.Strategy) {
	ctx := context.Background()
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	store, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	cols, before := corpusRows(t, snap)
	if len(before) == 0 {
		t.Fatal("empty table")
	}
	// Expected, computed here from the rows before.
	var want, deleted, pre, post []string
	matched := 0
	for _, r := range before {
		if !c.match(r) {
			want = append(want, r.key(cols))
			continue
		}
		matched++
		if c.set == "" {
			deleted = append(deleted, r.key(cols))
			continue
		}
		pre = append(pre, r.key(cols))
		n := c.apply(corpusRow(cloneRow(r)))
		want = append(want, n.key(cols))
		post = append(post, n.key(cols))
	}
	if matched == 0 || matched == len(before) {
		t.Fatalf("the case matches %d of %d rows: choose another", matched, len(before))
	}
	pred := mustParse(t, c.where)
	var res dml.Result
	opts := dml.Options{Strategy: strategy}
	if c.set == "" {
		res, err = dml.Delete(ctx, snap, pred, opts)
	} else {
		set, perr := dml.ParseAssignments(c.set)
		if perr != nil {
			t.Fatal(perr)
		}
		res, err = dml.Update(ctx, snap, set, pred, opts)
	}
	if err != nil {
		t.Fatal(err)
	}
	after, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	_, got := corpusRows(t, after)
	if g, w := keys(got, cols), sorted(want); !slices.Equal(g, w) {
		t.Errorf("rows after (%d):\n%s\nwant (%d):\n%s", len(g), strings.Join(g, "\n"), len(w), strings.Join(w, "\n"))
	}
	if n := res.Metrics.NumDeletedRows + res.Metrics.NumUpdatedRows; n != int64(matched) {
		t.Errorf("metrics count %d rows, want %d", n, matched)
	}
	// The change data feed of the commit, on tables that have it on.
	if after.Config().ChangeDataFeed() {
		cdc := corpusChanges(t, after, res.Commit.Version, cols)
		if g, w := cdc["delete"], sorted(deleted); !slices.Equal(g, w) {
			t.Errorf("delete change data %v, want %v", g, w)
		}
		if c.set != "" {
			if g, w := cdc["update_preimage"], sorted(pre); !slices.Equal(g, w) {
				t.Errorf("update_preimage %v, want %v", g, w)
			}
			if g, w := cdc["update_postimage"], sorted(post); !slices.Equal(g, w) {
				t.Errorf("update_postimage %v, want %v", g, w)
			}
		}
	}
	// Our deletion vectors decode with the reader of Spark's.
	data, err := store.Get(ctx, deltalog.CommitKey(res.Commit.Version))
	if err != nil {
		t.Fatal(err)
	}
	acts, err := actions.DecodeCommit("commit", data)
	if err != nil {
		t.Fatal(err)
	}
	dvs := 0
	for _, a := range acts {
		if a.Add == nil || a.Add.DeletionVector == nil {
			continue
		}
		dvs++
		bm, err := dv.Load(ctx, store, a.Add.DeletionVector, nil)
		if err != nil {
			t.Fatalf("deletion vector of %s: %v", a.Add.Path, err)
		}
		if int64(bm.Cardinality()) != a.Add.DeletionVector.Cardinality {
			t.Errorf("%s: cardinality %d, bitmap holds %d", a.Add.Path, a.Add.DeletionVector.Cardinality, bm.Cardinality())
		}
	}
	if mor := res.Strategy == dml.MergeOnRead; mor != (dvs > 0) {
		t.Errorf("strategy %v, %d adds with deletion vectors", res.Strategy, dvs)
	}
}

func cloneRow(r corpusRow) map[string]schema.Value {
	out := make(map[string]schema.Value, len(r))
	for k, v := range r {
		out[k] = v
	}
	return out
}

// corpusRows reads every row of snap, with the column names.
func corpusRows(t *testing.T, snap *snapshot.Snapshot) ([]string, []corpusRow) {
	t.Helper()
	s, err := scan.New(snap, scan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, f := range s.Schema().Fields {
		cols = append(cols, f.Name)
	}
	var out []corpusRow
	for r, err := range s.Rows(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		row := corpusRow{}
		for i, v := range r.Values() {
			row[cols[i]] = v
		}
		out = append(out, row)
	}
	return cols, out
}

// corpusChanges reads the change data of version v by change type.
func corpusChanges(t *testing.T, snap *snapshot.Snapshot, v int64, cols []string) map[string][]string {
	t.Helper()
	c, err := scan.NewChanges(context.Background(), snap, scan.ChangeOptions{Start: v, End: scan.UpTo(v), Columns: cols})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for r, err := range c.Rows(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		vals := r.Values()
		row := corpusRow{}
		for i, name := range cols {
			row[name] = vals[i]
		}
		typ := vals[len(cols)].String()
		out[typ] = append(out[typ], row.key(cols))
	}
	for k := range out {
		slices.Sort(out[k])
	}
	return out
}

func keys(rows []corpusRow, cols []string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.key(cols)
	}
	slices.Sort(out)
	return out
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	if s == nil {
		s = []string{}
	}
	return s
}

package optimize_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/optimize"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/zorder"
)

// TestCurveColumnKinds: ZORDER BY and HILBERT BY over strings,
// timestamps, dates, a column of nulls only, a constant column and doubles
// with NaN and -0 keep the table's rows, write them in curve order (the
// keys computed here independently, from ranges cut from every value, are
// non-decreasing across the files in commit order), and write the same
// files when the sort spills; a struct's field among the columns too.
func TestCurveColumnKinds(t *testing.T) {
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "s", Type: schema.String, Nullable: true},
		{Name: "ts", Type: schema.Timestamp, Nullable: true},
		{Name: "d", Type: schema.Date, Nullable: true},
		{Name: "n", Type: schema.Long, Nullable: true},
		{Name: "c", Type: schema.Integer, Nullable: true},
		{Name: "f", Type: schema.Double, Nullable: true},
		{Name: "st", Type: &schema.StructType{Fields: []schema.StructField{{Name: "a", Type: schema.Long, Nullable: true}}}, Nullable: true},
	}}
	// Column 6 of a case is the field st.a.
	get := func(r []schema.Value, j int) schema.Value {
		if j == 6 {
			return r[6].Fields()[0]
		}
		return r[j]
	}
	rng := rand.New(rand.NewPCG(7, 8))
	var rows [][]schema.Value
	for i := range 1200 {
		var s schema.Value
		if i%7 != 0 {
			s = schema.StringValue(fmt.Sprintf("k%d", rng.IntN(300)))
		}
		f := schema.DoubleValue(rng.NormFloat64() * 100)
		switch i % 50 {
		case 1:
			f = schema.DoubleValue(math.NaN())
		case 2:
			f = schema.DoubleValue(math.Copysign(0, -1))
		case 3:
			f = schema.DoubleValue(0)
		}
		rows = append(rows, []schema.Value{s, schema.TimestampValue(1_700_000_000_000_000 + rng.Int64N(1e12)),
			schema.DateValue(int32(rng.IntN(20000))), {}, schema.IntegerValue(42), f,
			schema.StructValue([]schema.Value{schema.LongValue(rng.Int64N(5000))})})
	}
	key := func(t *testing.T, curve zorder.Curve, cols []int) func([]schema.Value) []byte {
		ranges := make([]*zorder.Ranges, len(cols))
		for i, j := range cols {
			var all []schema.Value
			for _, r := range rows {
				all = append(all, get(r, j))
			}
			var err error
			if ranges[i], err = zorder.NewRanges(all, 0); err != nil {
				t.Fatal(err)
			}
		}
		k, err := zorder.NewKeyer(curve, ranges)
		if err != nil {
			t.Fatal(err)
		}
		return func(r []schema.Value) []byte {
			vals := make([]schema.Value, len(cols))
			for i, j := range cols {
				vals[i] = get(r, j)
			}
			b, err := k.Key(nil, vals)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	for _, curve := range []zorder.Curve{zorder.Morton, zorder.Hilbert} {
		for _, cols := range [][]int{{0, 1}, {2, 3}, {4, 5}, {5, 0, 2}, {6, 1}} {
			names := make([]string, len(cols))
			for i, j := range cols {
				names[i] = sch.Fields[j].Name
				if j == 6 {
					names[i] = "st.a"
				}
			}
			t.Run(fmt.Sprint(curve, names), func(t *testing.T) {
				run := func(mem int64) ([][][]schema.Value, optimize.Result) {
					tbl, err := delta.Create(ctx, filepath.Join(t.TempDir(), "t"), delta.TableSpec{Schema: sch})
					if err != nil {
						t.Fatal(err)
					}
					defer tbl.Close()
					for lo := 0; lo < len(rows); lo += 200 {
						if _, err := tbl.AppendRows(ctx, rows[lo:lo+200], delta.WriteOptions{}); err != nil {
							t.Fatal(err)
						}
					}
					opts := optimize.Options{SortMemory: mem, SortDir: t.TempDir(), TargetSize: 8 << 10}
					if curve == zorder.Morton {
						opts.ZOrderBy = names
					} else {
						opts.HilbertBy = names
					}
					res, err := tbl.Optimize(ctx, opts)
					if err != nil {
						t.Fatal(err)
					}
					snap, err := tbl.SnapshotAt(ctx, res.Commit.Version)
					if err != nil {
						t.Fatal(err)
					}
					fr, err := scan.NewFileReader(snap, scan.Options{})
					if err != nil {
						t.Fatal(err)
					}
					defer fr.Close()
					var files [][][]schema.Value
					for _, a := range commitActions(t, tbl, res.Commit.Version) {
						if a.Add == nil {
							continue
						}
						var fileRows [][]schema.Value
						if err := fr.ReadFile(ctx, a.Add, func(b *scan.FileBatch) error {
							for i := range b.Len {
								fileRows = append(fileRows, b.Row(i))
							}
							return nil
						}); err != nil {
							t.Fatal(err)
						}
						files = append(files, fileRows)
					}
					return files, res
				}
				mem, r1 := run(0)
				ext, r2 := run(4 << 10)
				if r1.Metrics.SortRuns != 0 || r2.Metrics.SortRuns < 2 {
					t.Errorf("sort runs: in memory %d, tiny budget %d", r1.Metrics.SortRuns, r2.Metrics.SortRuns)
				}
				if len(mem) < 2 {
					t.Errorf("%d files", len(mem))
				}
				var got, want []string
				var prev []byte
				k := key(t, curve, cols)
				for _, f := range mem {
					for _, r := range f {
						got = append(got, rowString(r))
						kk := k(r)
						if prev != nil && bytes.Compare(prev, kk) > 0 {
							t.Fatalf("row %v is out of curve order", r)
						}
						prev = kk
					}
				}
				for _, r := range rows {
					want = append(want, rowString(r))
				}
				slices.Sort(got)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Fatal("the rows changed")
				}
				str := func(files [][][]schema.Value) []string {
					var out []string
					for _, f := range files {
						for _, r := range f {
							out = append(out, rowString(r))
						}
						out = append(out, "--")
					}
					return out
				}
				if !slices.Equal(str(mem), str(ext)) {
					t.Fatal("the sort that spilled wrote other files")
				}
			})
		}
	}
}

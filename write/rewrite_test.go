package write

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/internal/datafile"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/tableconfig"
	"github.com/godelta/delta/testutil"
)

// fileRows reads the live rows of one data file of snap, in table schema
// order.
func fileRows(t *testing.T, snap *snapshot.Snapshot, add *actions.Add) [][]schema.Value {
	t.Helper()
	fr, err := scan.NewFileReader(snap, scan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]schema.Value
	err = fr.ReadFile(context.Background(), add, func(b *scan.FileBatch) error {
		for i := range b.Len {
			rows = append(rows, b.Row(i))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// rewriteSpec is a table partitioned by p, with a NOT NULL id.
func rewriteSpec(cdf bool) TableSpec {
	props := map[string]string{}
	if cdf {
		props[tableconfig.KeyEnableChangeDataFeed] = "true"
	}
	return TableSpec{
		Schema:           st(schema.StructField{Name: "id", Type: schema.Long}, field("v", schema.String), field("p", schema.String)),
		PartitionColumns: []string{"p"},
		Properties:       props,
	}
}

// writeFile writes ids from..to-1 (v "v<id>") in partition p as one file.
func writeFile(t *testing.T, snap *snapshot.Snapshot, p string, from, to int64) *actions.Add {
	t.Helper()
	var rows [][]schema.Value
	for id := from; id < to; id++ {
		rows = append(rows, []schema.Value{l(id), s(fmt.Sprint("v", id)), s(p)})
	}
	adds, err := Rows(context.Background(), snap, batchOf(rows...), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(adds) != 1 {
		t.Fatalf("%d files written, want 1", len(adds))
	}
	return &adds[0]
}

// rowKey is a row of the table as "id|v|p", keyed by id.
func rowKeys(t *testing.T, snap *snapshot.Snapshot, adds ...*actions.Add) map[int64]string {
	t.Helper()
	out := map[int64]string{}
	for _, a := range adds {
		for _, r := range fileRows(t, snap, a) {
			if _, dup := out[r[0].Int64()]; dup {
				t.Fatalf("id %d twice", r[0].Int64())
			}
			out[r[0].Int64()] = fmt.Sprintf("%s|%s|%s", r[0], r[1], r[2])
		}
	}
	return out
}

// changeRows reads change-data files as "type id|v|p" lines, sorted.
func changeRows(t *testing.T, snap *snapshot.Snapshot, cdcs []actions.CDC) []string {
	t.Helper()
	ctx := context.Background()
	want := st(field("id", schema.Long), field("v", schema.String), field("_change_type", schema.String))
	var out []string
	for _, c := range cdcs {
		if !strings.HasPrefix(c.Path, "_change_data/") {
			t.Errorf("change data at %s, not under _change_data/", c.Path)
		}
		data, err := snap.Store().Get(ctx, snapshot.CanonicalPath(c.Path))
		if err != nil {
			t.Fatal(err)
		}
		f, err := datafile.Open(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		err = f.Read(ctx, want, datafile.ReadOptions{}, func(b *datafile.Batch) error {
			for i := range b.Len {
				out = append(out, fmt.Sprintf("%s %s|%s|%s", b.Columns[2][i].String(), b.Columns[0][i], b.Columns[1][i], c.PartitionValues["p"]))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(out)
	return out
}

// diff is the change data of going from rows old to rows new, by id.
func diff(old, new map[int64]string) []string {
	var out []string
	for id, o := range old {
		n, ok := new[id]
		switch {
		case !ok:
			out = append(out, ChangeDelete+" "+o)
		case n != o:
			out = append(out, ChangeUpdatePre+" "+o, ChangeUpdatePost+" "+n)
		}
	}
	for id, n := range new {
		if _, ok := old[id]; !ok {
			out = append(out, ChangeInsert+" "+n)
		}
	}
	slices.Sort(out)
	return out
}

// tableFiles lists the data and change-data files of a rewriteSpec table
// (List does not descend into directories).
func tableFiles(t *testing.T, store logstore.Store) []string {
	t.Helper()
	var out []string
	for _, dir := range []string{"", "p=a/", "p=b/", "_change_data/p=a/", "_change_data/p=b/"} {
		for obj, err := range store.List(context.Background(), dir, "") {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, obj.Key)
		}
	}
	return out
}

func ptrs(adds []actions.Add) []*actions.Add {
	out := make([]*actions.Add, len(adds))
	for i := range adds {
		out[i] = &adds[i]
	}
	return out
}

func paths[T any](xs []T, path func(T) string) []string {
	var out []string
	for _, x := range xs {
		out = append(out, path(x))
	}
	slices.Sort(out)
	return out
}

func TestRewrite(t *testing.T) {
	for _, cdf := range []bool{false, true} {
		t.Run(fmt.Sprint("cdf=", cdf), func(t *testing.T) {
			ctx := context.Background()
			snap := newSnapshot(t, rewriteSpec(cdf))
			a := writeFile(t, snap, "a", 0, 10)  // some rows dropped
			b := writeFile(t, snap, "b", 10, 20) // some rows updated
			c := writeFile(t, snap, "a", 20, 30) // untouched
			before := tableFiles(t, snap.Store())
			old := rowKeys(t, snap, a, b, c)
			// By position: a's positions are its ids, b's are id-10.
			fn := func(f *actions.Add, pos int64, row []schema.Value) (Verdict, []schema.Value, error) {
				switch {
				case f == a && pos%3 == 0:
					return Drop, nil, nil
				case f == b && pos%5 == 0:
					return Update, []schema.Value{row[0], s("u" + row[1].String()), row[2]}, nil
				}
				return Keep, nil, nil
			}
			r, err := Rewrite(ctx, snap, []*actions.Add{a, b, c}, fn, RewriteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := paths(r.Removes, func(x actions.Remove) string { return x.Path }), paths([]*actions.Add{a, b}, func(x *actions.Add) string { return x.Path }); !slices.Equal(got, want) {
				t.Errorf("removes %v, want %v (the untouched file is kept)", got, want)
			}
			for _, rm := range r.Removes {
				src := a
				if rm.Path == b.Path {
					src = b
				}
				if !rm.DataChange || rm.ExtendedFileMetadata == nil || !*rm.ExtendedFileMetadata || rm.Size == nil || *rm.Size != src.Size ||
					rm.Stats != src.Stats || rm.PartitionValues["p"] != src.PartitionValues["p"] || rm.DeletionTimestamp == nil {
					t.Errorf("remove %+v does not carry its add's metadata %+v", rm, src)
				}
			}
			if want := []string{a.Path, b.Path, c.Path}; !slices.Equal(r.Read, want) {
				t.Errorf("read %v, want %v", r.Read, want)
			}
			for _, ad := range r.Adds {
				if !ad.DataChange || ad.Stats == "" {
					t.Errorf("add %s: dataChange %v, stats %q", ad.Path, ad.DataChange, ad.Stats)
				}
			}
			now := rowKeys(t, snap, append(ptrs(r.Adds), c)...)
			want := map[int64]string{}
			for id, row := range old {
				switch {
				case id < 10 && id%3 == 0:
				case id >= 10 && id < 20 && (id-10)%5 == 0:
					want[id] = fmt.Sprintf("%d|uv%d|b", id, id)
				default:
					want[id] = row
				}
			}
			if !maps.Equal(now, want) {
				t.Errorf("rows after the rewrite:\n%v\nwant\n%v", now, want)
			}
			got := changeRows(t, snap, r.CDC)
			if !cdf {
				if len(r.CDC) != 0 {
					t.Errorf("change data %v on a table without the change data feed", got)
				}
			} else if wantCDC := diff(old, now); !slices.Equal(got, wantCDC) {
				t.Errorf("change data:\n%v\nwant the diff\n%v", got, wantCDC)
			}
			if n := len(tableFiles(t, snap.Store())); n != len(before)+len(r.Adds)+len(r.CDC) {
				t.Errorf("%d files in the store, want %d + %d adds + %d cdc", n, len(before), len(r.Adds), len(r.CDC))
			}
		})
	}
}

// Compaction: every file rewritten, rows unchanged, dataChange false and no
// change data even with the change data feed on.
func TestRewriteCopyNoDataChange(t *testing.T) {
	ctx := context.Background()
	snap := newSnapshot(t, rewriteSpec(true))
	files := []*actions.Add{writeFile(t, snap, "a", 0, 5), writeFile(t, snap, "a", 5, 9), writeFile(t, snap, "b", 9, 12)}
	old := rowKeys(t, snap, files...)
	keep := func(*actions.Add, int64, []schema.Value) (Verdict, []schema.Value, error) { return Keep, nil, nil }
	r, err := Rewrite(ctx, snap, files, keep, RewriteOptions{Copy: true, NoDataChange: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Removes) != 3 || len(r.CDC) != 0 {
		t.Fatalf("%d removes, %d cdc; want 3 and none", len(r.Removes), len(r.CDC))
	}
	for _, rm := range r.Removes {
		if rm.DataChange {
			t.Errorf("remove %s has dataChange true", rm.Path)
		}
	}
	// One file a partition: the two files of a are compacted.
	if len(r.Adds) != 2 {
		t.Errorf("%d adds, want one per partition", len(r.Adds))
	}
	for _, ad := range r.Adds {
		if ad.DataChange {
			t.Errorf("add %s has dataChange true", ad.Path)
		}
	}
	if now := rowKeys(t, snap, ptrs(r.Adds)...); !maps.Equal(now, old) {
		t.Errorf("rows %v, want them unchanged %v", now, old)
	}
	// Without Copy, a function that keeps every row rewrites nothing.
	r, err = Rewrite(ctx, snap, files, keep, RewriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Removes)+len(r.Adds)+len(r.CDC) != 0 || len(r.Read) != 3 {
		t.Errorf("keeping every row: %d removes, %d adds, %d cdc, %d read; want only 3 read", len(r.Removes), len(r.Adds), len(r.CDC), len(r.Read))
	}
}

// An error part way through deletes every file the rewrite wrote.
func TestRewriteErrorCleansUp(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name string
		// fail is the verdict for the first row of the second file.
		fail func(row []schema.Value) (Verdict, []schema.Value, error)
		want error
	}{
		{"the function fails", func([]schema.Value) (Verdict, []schema.Value, error) { return Keep, nil, boom }, boom},
		{"an update breaks NOT NULL", func(row []schema.Value) (Verdict, []schema.Value, error) {
			return Update, []schema.Value{{}, row[1], row[2]}, nil
		}, ErrConstraint},
		{"an update of the wrong width", func(row []schema.Value) (Verdict, []schema.Value, error) {
			return Update, row[:1], nil
		}, ErrBatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			snap := newSnapshot(t, rewriteSpec(true))
			a, b := writeFile(t, snap, "a", 0, 10), writeFile(t, snap, "b", 10, 20)
			before := tableFiles(t, snap.Store())
			wroteData, wroteCDC := false, false
			fn := func(f *actions.Add, pos int64, row []schema.Value) (Verdict, []schema.Value, error) {
				if f == a && pos%2 == 0 {
					return Drop, nil, nil // a is rewritten: change data and data files
				}
				if f == b && pos == 0 {
					for _, k := range tableFiles(t, snap.Store()) {
						wroteData = wroteData || strings.HasPrefix(k, "p=a/part-") && !slices.Contains(before, k)
						wroteCDC = wroteCDC || strings.HasPrefix(k, "_change_data/")
					}
					return tt.fail(row)
				}
				return Keep, nil, nil
			}
			// A tiny target size: every flush puts its files in the store.
			r, err := Rewrite(ctx, snap, []*actions.Add{a, b}, fn, RewriteOptions{Options: Options{TargetFileSize: 1}})
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if len(r.Removes)+len(r.Adds)+len(r.CDC) != 0 {
				t.Errorf("actions returned with an error: %+v", r)
			}
			if !wroteData || !wroteCDC {
				t.Errorf("data files written before the failure: %v, change data: %v; want both, else the test shows nothing", wroteData, wroteCDC)
			}
			if after := tableFiles(t, snap.Store()); !slices.Equal(after, before) {
				t.Errorf("files after the failure %v, want only %v", after, before)
			}
		})
	}
}

// An overwrite's rewrite reads files the log names by absolute paths under
// the table root, as a scan does, and refuses those outside it.
func TestReplaceAbsolutePath(t *testing.T) {
	ctx := context.Background()
	snap := newSnapshot(t, rewriteSpec(false))
	a := writeFile(t, snap, "a", 0, 6)
	abs := *a
	abs.Path = "s3://bucket/t/" + a.Path
	data, err := actions.EncodeCommit([]actions.Action{{Add: &abs}})
	if err != nil {
		t.Fatal(err)
	}
	if err := snap.Store().PutIfAbsent(ctx, deltalog.CommitKey(1), data); err != nil {
		t.Fatal(err)
	}
	elsewhere, err := snapshot.Load(ctx, testutil.AtURI(snap.Store(), "s3://bucket/other"), deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	snap, err = snapshot.Load(ctx, testutil.AtURI(snap.Store(), "s3://bucket/t"), deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	pred, err := expr.Parse("id < 2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := replace(ctx, elsewhere, pred, Options{}); !errors.Is(err, deltaerr.ErrPathEscapesRoot) {
		t.Errorf("root elsewhere: err = %v, want ErrPathEscapesRoot", err)
	}
	r, err := replace(ctx, snap, pred, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Removes) != 1 || r.Removes[0].Path != abs.Path || !slices.Equal(r.Read, []string{abs.Path}) {
		t.Errorf("removes %+v, read %v; want the file at %s", r.Removes, r.Read, abs.Path)
	}
	got := rowKeys(t, snap, ptrs(r.Adds)...)
	want := map[int64]string{2: "2|v2|a", 3: "3|v3|a", 4: "4|v4|a", 5: "5|v5|a"}
	if !maps.Equal(got, want) {
		t.Errorf("rows kept %v, want %v", got, want)
	}
}

// Insert: the rows it gives are written after every file is read, into
// the same files as the rows kept and updated, with insert change data.
func TestRewriteInsert(t *testing.T) {
	for _, cdf := range []bool{false, true} {
		t.Run(fmt.Sprint("cdf=", cdf), func(t *testing.T) {
			ctx := context.Background()
			snap := newSnapshot(t, rewriteSpec(cdf))
			a := writeFile(t, snap, "a", 0, 10)
			old := rowKeys(t, snap, a)
			seen := 0
			fn := func(f *actions.Add, pos int64, row []schema.Value) (Verdict, []schema.Value, error) {
				seen++
				if pos%5 == 0 {
					return Update, []schema.Value{row[0], s("u" + row[1].String()), row[2]}, nil
				}
				return Keep, nil, nil
			}
			calls := 0
			insert := func() (iter.Seq2[Batch, error], error) {
				calls++
				if seen < 10 {
					t.Errorf("Insert called after %d rows, before the file was read", seen)
				}
				return batchOf(
					[]schema.Value{l(100), s("new100"), s("a")},
					[]schema.Value{l(101), s("new101"), s("b")},
				), nil
			}
			r, err := Rewrite(ctx, snap, []*actions.Add{a}, fn, RewriteOptions{Insert: insert})
			if err != nil {
				t.Fatal(err)
			}
			if calls != 1 || r.Inserted != 2 || r.Updated != 2 || r.Copied != 8 {
				t.Errorf("Insert called %d times; inserted %d, updated %d, copied %d; want 1, 2, 2, 8", calls, r.Inserted, r.Updated, r.Copied)
			}
			// One file per partition: partition a's holds the copied,
			// updated and inserted rows together.
			if len(r.Adds) != 2 {
				t.Fatalf("%d files written, want 2 (one per partition)", len(r.Adds))
			}
			want := map[int64]string{100: "100|new100|a", 101: "101|new101|b"}
			for id, row := range old {
				want[id] = row
				if id%5 == 0 {
					want[id] = fmt.Sprintf("%d|uv%d|a", id, id)
				}
			}
			now := rowKeys(t, snap, ptrs(r.Adds)...)
			if !maps.Equal(now, want) {
				t.Errorf("rows after the rewrite:\n%v\nwant\n%v", now, want)
			}
			if cdf {
				if got, wantCDC := changeRows(t, snap, r.CDC), diff(old, now); !slices.Equal(got, wantCDC) {
					t.Errorf("change data:\n%v\nwant the diff\n%v", got, wantCDC)
				}
			} else if len(r.CDC) != 0 {
				t.Errorf("%d change data files on a table without the change data feed", len(r.CDC))
			}
			if _, err := Rewrite(ctx, snap, []*actions.Add{a}, fn, RewriteOptions{Insert: insert, NoDataChange: true}); !errors.Is(err, deltaerr.ErrInvalidArgument) {
				t.Errorf("Insert with NoDataChange: %v, want ErrInvalidArgument", err)
			}
		})
	}
}

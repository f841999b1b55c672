package write

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/internal/dv"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
)

// dvSpec is rewriteSpec with deletion vectors on.
func dvSpec(cdf bool) TableSpec {
	spec := rewriteSpec(cdf)
	spec.Properties[tableconfig.KeyEnableDeletionVectors] = "true"
	return spec
}

func TestRewriteDeletionVectors(t *testing.T) {
	for _, cdf := range []bool{false, true} {
		t.Run(fmt.Sprint("cdf=", cdf), func(t *testing.T) {
			ctx := context.Background()
			snap := newSnapshot(t, dvSpec(cdf))
			a := writeFile(t, snap, "a", 0, 200)     // every third row dropped: a DV file
			b := writeFile(t, snap, "b", 1000, 1010) // one row dropped, one updated: inline
			c := writeFile(t, snap, "a", 2000, 2005) // every row dropped: removed outright
			d := writeFile(t, snap, "b", 3000, 3010) // untouched
			old := rowKeys(t, snap, a, b, c, d)
			fn := func(f *actions.Add, pos int64, row []schema.Value) (Verdict, []schema.Value, error) {
				switch {
				case f == a && pos%3 == 0, f == b && pos == 5, f == c:
					return Drop, nil, nil
				case f == b && pos == 7:
					return Update, []schema.Value{row[0], s("u" + row[1].String()), row[2]}, nil
				}
				return Keep, nil, nil
			}
			r, err := Rewrite(ctx, snap, []*actions.Add{a, b, c, d}, fn, RewriteOptions{DeletionVectors: true})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := paths(r.Removes, func(x actions.Remove) string { return x.Path }), paths([]*actions.Add{a, b, c}, func(x *actions.Add) string { return x.Path }); !slices.Equal(got, want) {
				t.Errorf("removes %v, want %v", got, want)
			}
			if got, want := paths(r.DVAdds, func(x actions.Add) string { return x.Path }), paths([]*actions.Add{a, b}, func(x *actions.Add) string { return x.Path }); !slices.Equal(got, want) {
				t.Errorf("files kept under a deletion vector %v, want %v", got, want)
			}
			// Expected deleted positions, computed here.
			wantA, wantB := &dv.Bitmap{}, dv.New(5, 7)
			for p := uint64(0); p < 200; p += 3 {
				wantA.Add(p)
			}
			for i := range r.DVAdds {
				ad := &r.DVAdds[i]
				want, src, kind := wantA, a, dv.StorageRelative
				if ad.Path == b.Path {
					want, src, kind = wantB, b, dv.StorageInline
				}
				d := ad.DeletionVector
				if d == nil {
					t.Fatalf("%s re-added without a deletion vector", ad.Path)
				}
				if d.StorageType != kind {
					t.Errorf("%s: storage type %q, want %q", ad.Path, d.StorageType, kind)
				}
				got, err := dv.Load(ctx, snap.Store(), d, nil)
				if err != nil {
					t.Fatal(err)
				}
				if !got.Equal(want) || d.Cardinality != int64(want.Cardinality()) {
					t.Errorf("%s: deletion vector of %d rows (cardinality %d), want %d", ad.Path, got.Cardinality(), d.Cardinality, want.Cardinality())
				}
				var st struct {
					NumRecords  int64 `json:"numRecords"`
					TightBounds *bool `json:"tightBounds"`
				}
				if err := json.Unmarshal([]byte(ad.Stats), &st); err != nil {
					t.Fatal(err)
				}
				if n, _ := numRecords(src.Stats); st.NumRecords != n || st.TightBounds == nil || *st.TightBounds {
					t.Errorf("%s: stats %s, want numRecords %d and tightBounds false", ad.Path, ad.Stats, n)
				}
				if !ad.DataChange || ad.Size != src.Size || ad.ModificationTime != src.ModificationTime {
					t.Errorf("%s: re-added as %+v, want the file's add with dataChange", ad.Path, ad)
				}
			}
			if len(r.Adds) != 1 {
				t.Fatalf("%d new data files, want 1 (the updated row)", len(r.Adds))
			}
			now := rowKeys(t, snap, append(ptrs(append(slices.Clone(r.DVAdds), r.Adds...)), d)...)
			want := map[int64]string{}
			for id, row := range old {
				switch {
				case id < 200 && id%3 == 0, id == 1005, id >= 2000 && id < 3000:
				case id == 1007:
					want[id] = "1007|uv1007|b"
				default:
					want[id] = row
				}
			}
			if !maps.Equal(now, want) {
				t.Errorf("rows after the rewrite:\n%v\nwant\n%v", now, want)
			}
			if got, w := changeRows(t, snap, r.CDC), diff(old, now); cdf && !slices.Equal(got, w) {
				t.Errorf("change data:\n%v\nwant the diff\n%v", got, w)
			} else if !cdf && len(r.CDC) != 0 {
				t.Errorf("change data %v without the change data feed", got)
			}
			if r.Dropped != 67+1+5 || r.Updated != 1 || r.Copied != 0 || r.DVsAdded != 2 || r.DVsUpdated != 0 || r.DVsRemoved != 0 || r.DVBytes == 0 {
				t.Errorf("counts: dropped %d updated %d copied %d, DVs added %d updated %d removed %d, %d DV bytes",
					r.Dropped, r.Updated, r.Copied, r.DVsAdded, r.DVsUpdated, r.DVsRemoved, r.DVBytes)
			}

			// Again on a, now with its vector: the new one is the union.
			a2 := &r.DVAdds[slices.IndexFunc(r.DVAdds, func(x actions.Add) bool { return x.Path == a.Path })]
			fn2 := func(f *actions.Add, pos int64, row []schema.Value) (Verdict, []schema.Value, error) {
				if pos < 10 || pos == 199 {
					return Drop, nil, nil
				}
				return Keep, nil, nil
			}
			r2, err := Rewrite(ctx, snap, []*actions.Add{a2}, fn2, RewriteOptions{DeletionVectors: true, InlineDVMax: -1})
			if err != nil {
				t.Fatal(err)
			}
			for p := uint64(0); p < 10; p++ {
				wantA.Add(p)
			}
			wantA.Add(199)
			if len(r2.DVAdds) != 1 || len(r2.Removes) != 1 || r2.Removes[0].DeletionVector.UniqueID() != a2.DeletionVector.UniqueID() {
				t.Fatalf("second rewrite: %d adds, removes %+v", len(r2.DVAdds), r2.Removes)
			}
			got, err := dv.Load(ctx, snap.Store(), r2.DVAdds[0].DeletionVector, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(wantA) {
				t.Errorf("union: %d rows, want %d", got.Cardinality(), wantA.Cardinality())
			}
			if r2.DVsUpdated != 1 || r2.DVsAdded != 0 || r2.Dropped != 7 {
				t.Errorf("second rewrite counts: updated %d added %d dropped %d", r2.DVsUpdated, r2.DVsAdded, r2.Dropped)
			}
		})
	}
}

func TestRewriteDeletionVectorsRefused(t *testing.T) {
	ctx := context.Background()
	keep := func(*actions.Add, int64, []schema.Value) (Verdict, []schema.Value, error) { return Keep, nil, nil }
	plain := newSnapshot(t, rewriteSpec(false))
	if _, err := Rewrite(ctx, plain, nil, keep, RewriteOptions{DeletionVectors: true}); !errors.Is(err, ErrDVMode) {
		t.Errorf("a table without the feature: %v, want ErrDVMode", err)
	}
	snap := newSnapshot(t, dvSpec(false))
	if _, err := Rewrite(ctx, snap, nil, keep, RewriteOptions{DeletionVectors: true, Copy: true}); !errors.Is(err, ErrDVMode) {
		t.Errorf("with Copy: %v, want ErrDVMode", err)
	}
	// Reading only some columns, a row function may not update.
	a := writeFile(t, snap, "a", 0, 5)
	upd := func(_ *actions.Add, _ int64, row []schema.Value) (Verdict, []schema.Value, error) {
		if !row[1].IsNull() {
			t.Errorf("column v read though only id was asked for: %v", row)
		}
		return Update, row, nil
	}
	if _, err := Rewrite(ctx, snap, []*actions.Add{a}, upd, RewriteOptions{DeletionVectors: true, ReadColumns: []string{"id"}}); !errors.Is(err, ErrDVMode) {
		t.Errorf("an update with ReadColumns: %v, want ErrDVMode", err)
	}
	if n := len(tableFiles(t, snap.Store())); n != 1 {
		t.Errorf("%d files in the store after the failed rewrite, want the 1 written before", n)
	}
}

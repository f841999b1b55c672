package scan_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/internal/datafile"
	"github.com/godelta/delta/internal/dv"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
)

// TestReadFileRowGroups reads a file of three row groups range by range:
// together the ranges give ReadFile's rows and positions, with the
// deletion vector and the predicate applied by file position.
func TestReadFileRowGroups(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	p := actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
		ReaderFeatures: []string{actions.FeatureDeletionVectors}, WriterFeatures: []string{actions.FeatureDeletionVectors}}
	snap := newTable(t, store, p, idOnly, nil, map[string]string{})

	// Row groups of ids 0-3, 4-7 and 8-9: id equals position.
	phys, err := schema.Parse(idOnly)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := datafile.NewWriter(&buf, phys, datafile.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range [][2]int64{{0, 4}, {4, 8}, {8, 10}} {
		if err := w.Write([][]schema.Value{longs(r[0], r[1])}, int(r[1]-r[0])); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := store.Put(ctx, "f.parquet", buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	inline, err := dv.NewInline(dv.New(2, 5, 9))
	if err != nil {
		t.Fatal(err)
	}
	pred, err := expr.Parse("id <> 6")
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name   string
		dv     *actions.DeletionVector
		pred   expr.Expr
		ranges [][2]int
		want   []int64
	}{
		{"one by one", nil, nil, [][2]int{{0, 1}, {1, 2}, {2, 3}}, []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{"a deletion vector", inline, nil, [][2]int{{0, 1}, {1, 2}, {2, 3}}, []int64{0, 1, 3, 4, 6, 7, 8}},
		{"a deletion vector and a predicate", inline, pred, [][2]int{{0, 2}, {2, 3}}, []int64{0, 1, 3, 4, 7, 8}},
		{"the middle only", inline, nil, [][2]int{{1, 2}}, []int64{4, 6, 7}},
		{"past the end and empty", nil, nil, [][2]int{{2, 9}, {3, 3}}, []int64{8, 9}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, cols := range [][]string{nil, {}} { // {}: no column read
				fr, err := scan.NewFileReader(snap, scan.Options{BatchSize: 3, Predicate: tt.pred, Columns: cols})
				if err != nil {
					t.Fatal(err)
				}
				add := &actions.Add{Path: "f.parquet", Size: int64(buf.Len()), DeletionVector: tt.dv}
				n, err := fr.RowGroups(ctx, add)
				if err != nil || n != 3 {
					t.Fatalf("RowGroups: %d, %v; want 3", n, err)
				}
				var pos []int64
				var rows []string
				for _, r := range tt.ranges {
					err := fr.ReadFileRowGroups(ctx, add, r[0], r[1], func(b *scan.FileBatch) error {
						for i := range b.Len {
							pos = append(pos, b.Positions[i])
							rows = append(rows, showValues(b.Row(i)))
						}
						return nil
					})
					if err != nil {
						t.Fatal(err)
					}
				}
				if !slices.Equal(pos, tt.want) {
					t.Errorf("columns %v: positions %v, want %v", cols, pos, tt.want)
				}
				if cols == nil {
					var want []string
					for _, p := range tt.want {
						want = append(want, fmt.Sprintf("5:%d", p))
					}
					if !slices.Equal(rows, want) {
						t.Errorf("rows %v, want %v", rows, want)
					}
				}
			}
		})
	}

	fr, err := scan.NewFileReader(snap, scan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	add := &actions.Add{Path: "f.parquet", Size: int64(buf.Len())}
	for _, r := range [][2]int{{-1, 2}, {2, 1}} {
		err := fr.ReadFileRowGroups(ctx, add, r[0], r[1], func(*scan.FileBatch) error { return nil })
		if !errors.Is(err, deltaerr.ErrInvalidArgument) {
			t.Errorf("range %v: %v, want ErrInvalidArgument", r, err)
		}
	}
}

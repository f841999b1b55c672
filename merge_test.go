package delta_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"testing"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/schema"
)

type mergePerson struct {
	ID   int64  `parquet:"id"`
	Name string `parquet:"name"`
}

func TestMergeFacade(t *testing.T) {
	ctx := context.Background()
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.Long},
		{Name: "name", Type: schema.String, Nullable: true},
	}}
	tbl, err := delta.Create(ctx, "memory://merge-facade", delta.TableSpec{Schema: sch})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	people := []mergePerson{{1, "ann"}, {2, "bob"}, {3, "cy"}}
	if _, err := delta.AppendStructs(ctx, tbl, slices.Values(people), delta.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Structs as the source, other aliases, explicit SET and VALUES, and
	// a NOT MATCHED BY SOURCE clause.
	src := delta.MergeStructs(sch, slices.Values([]mergePerson{{2, "b"}, {5, "e"}}))
	res, err := tbl.Merge(src, "tgt.id = src.id").As("tgt", "src").
		WhenMatchedUpdate("", "name = concat(tgt.name, '+', src.name)").
		WhenNotMatchedInsert("src.id > 4", "id = src.id, name = upper(src.name)").
		WhenNotMatchedBySourceDelete("tgt.id = 3").
		Execute(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m := res.Merge; m.NumTargetRowsUpdated != 1 || m.NumTargetRowsInserted != 1 || m.NumTargetRowsNotMatchedBySourceDeleted != 1 {
		t.Errorf("metrics %+v", m)
	}
	names := func() []string {
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
			out = append(out, r.Values()[0].String()+":"+r.Values()[1].String())
		}
		slices.Sort(out)
		return out
	}
	if got, want := names(), []string{"1:ann", "2:bob+b", "5:E"}; !slices.Equal(got, want) {
		t.Fatalf("rows %q, want %q", got, want)
	}
	// The same table at version 1, as a source: every row matches again,
	// and the one deleted since comes back. A budget of a byte spills the
	// source to spill, and nothing stays there.
	spill := t.TempDir()
	v1, err := tbl.SnapshotAt(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	src, err = delta.MergeTable(ctx, v1, delta.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Merge(src, "t.id = s.id").WhenMatchedUpdateAll("").WhenNotMatchedInsertAll("").WithMemoryBudget(1, spill).Execute(ctx); err != nil {
		t.Fatal(err)
	}
	if left, err := os.ReadDir(spill); err != nil || len(left) > 0 {
		t.Errorf("spill directory: %v, %v", left, err)
	}
	if got, want := names(), []string{"1:ann", "2:bob", "3:cy", "5:E"}; !slices.Equal(got, want) {
		t.Fatalf("rows %q, want %q", got, want)
	}
	// Bad arguments come back from Execute, typed.
	for _, b := range []*delta.MergeBuilder{
		tbl.Merge(src, "t.id = = s.id").WhenMatchedDelete(""),
		tbl.Merge(src, "").WhenMatchedDelete(""),
		tbl.Merge(src, "t.id = s.id").WhenMatchedUpdate("", "name"),
		tbl.Merge(src, "t.id = s.id").WhenMatchedDelete("s.id >"),
	} {
		if _, err := b.Execute(ctx); !errors.Is(err, delta.ErrInvalidArgument) {
			t.Errorf("err = %v, want ErrInvalidArgument", err)
		}
	}
}

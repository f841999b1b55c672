package delta

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/godelta/delta/schema"
)

func TestCreate(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "t")
	spec := TableSpec{
		Schema: &schema.StructType{Fields: []schema.StructField{
			{Name: "id", Type: schema.Long},
			{Name: "p", Type: schema.String, Nullable: true},
		}},
		PartitionColumns: []string{"p"},
		Name:             "events",
		Description:      "a table",
		Properties:       map[string]string{"delta.enableInCommitTimestamps": "true"},
	}
	tbl, err := Create(ctx, dir, spec)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m := snap.Metadata()
	if snap.Version() != 0 || m.Name != "events" || m.Description != "a table" || len(m.PartitionColumns) != 1 {
		t.Errorf("version %d, metadata %+v", snap.Version(), m)
	}
	ci, ok := snap.CommitInfo()
	if !ok || ci.Operation != "CREATE TABLE" || ci.InCommitTimestamp == nil {
		t.Errorf("commitInfo %+v", ci)
	}
	validateLog(t, tbl)

	if _, err := Create(ctx, dir, spec); !errors.Is(err, ErrTableExists) {
		t.Errorf("second Create: err = %v, want ErrTableExists", err)
	}
}

// Of concurrent creators of one table, exactly one wins.
func TestCreateRace(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "t")
	spec := TableSpec{Schema: &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long, Nullable: true}}}}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { _, errs[i] = Create(ctx, dir, spec) })
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, ErrTableExists):
			t.Errorf("unexpected error %v", err)
		}
	}
	if won != 1 {
		t.Errorf("%d creators won", won)
	}
}

func TestCreateInvalid(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "t")
	_, err := Create(ctx, dir, TableSpec{Schema: &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long}}}, PartitionColumns: []string{"nope"}})
	if !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("err = %v, want ErrInvalidArgument", err)
	}
	if _, err := Open(ctx, dir); !errors.Is(err, ErrTableNotFound) {
		t.Errorf("a failed Create left a table: %v", err)
	}
}

package iceberggo_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/iceberg"
	"github.com/godelta/delta/tableconfig"
)

// enablePartitioned creates a table partitioned by region and year with
// column mapping but without Iceberg, whose data files therefore do not
// hold the partition columns, with two appends.
func enablePartitioned(t *testing.T, ctx context.Context) *delta.Table {
	t.Helper()
	tbl, err := delta.Create(ctx, "file://"+t.TempDir(), delta.TableSpec{
		Schema:           allTypes(),
		PartitionColumns: []string{"region", "year"},
		Properties:       map[string]string{tableconfig.KeyColumnMappingMode: "name"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tbl.Close() })
	for _, r := range [][2]int64{{0, 12}, {12, 20}} {
		if _, err := tbl.AppendRows(ctx, rows(r[0], r[1]), delta.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return tbl
}

// sameRows checks that iceberg-go reads, at the Iceberg snapshot of the
// table's latest version, the rows the Delta reader reads.
func sameRows(t *testing.T, ctx context.Context, tbl *delta.Table) {
	t.Helper()
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st, err := tbl.IcebergStatus(ctx)
	if err != nil || st.ConvertedVersion != snap.Version() {
		t.Fatalf("status %+v, %v; Delta version %d", st, err, snap.Version())
	}
	want := deltaRows(t, ctx, tbl, snap.Version())
	got := icebergRows(t, ctx, st.MetadataLocation, snap.Version(), columnNames(snap.Schema()))
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Fatalf("Delta version %d: iceberg-go read %d rows, Delta %d\niceberg: %q\ndelta:   %q", snap.Version(), len(got), len(want), head(got), head(want))
	}
}

// TestIcebergGoEnablePartitioned: turning Iceberg on for a partitioned
// table whose files lack the partition columns must not publish them to
// Iceberg readers, which would read the columns as null: either it is
// refused (ErrNeedsRewrite), or iceberg-go reads the rows Delta reads.
func TestIcebergGoEnablePartitioned(t *testing.T) {
	ctx := context.Background()
	tbl := enablePartitioned(t, ctx)
	_, err := tbl.EnableIceberg(ctx, delta.TxnOptions{})
	if errors.Is(err, iceberg.ErrNeedsRewrite) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	sameRows(t, ctx, tbl)
}

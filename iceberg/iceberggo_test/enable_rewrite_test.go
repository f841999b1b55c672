package iceberggo_test

import (
	"context"
	"testing"

	delta "github.com/godelta/delta"
)

// TestIcebergGoEnableRewrite: enabling Iceberg with Rewrite on a
// partitioned table whose files lack the partition columns rewrites them
// in the enabling commit: iceberg-go then reads every column, the
// partition columns included, as Delta does, and still does after an
// append.
func TestIcebergGoEnableRewrite(t *testing.T) {
	ctx := context.Background()
	tbl := enablePartitioned(t, ctx)
	if _, err := tbl.EnableIcebergWith(ctx, delta.IcebergEnableOptions{Rewrite: true}); err != nil {
		t.Fatal(err)
	}
	sameRows(t, ctx, tbl)
	if _, err := tbl.AppendRows(ctx, rows(20, 27), delta.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	sameRows(t, ctx, tbl)
}

package stream_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/godelta/delta"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/stream"
)

// recreate deletes the table directory of tbl and creates a new table
// there (a new table id), with one commit per batch in bs after its
// version 0. It returns the new table.
func recreate(t *testing.T, tbl *delta.Table, bs ...int64) *delta.Table {
	t.Helper()
	ctx := context.Background()
	dir := strings.TrimPrefix(tbl.URI(), "file://")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	sch, err := schema.ParseDDL("batch BIGINT NOT NULL, seq BIGINT NOT NULL")
	if err != nil {
		t.Fatal(err)
	}
	nt, err := delta.Create(ctx, dir, delta.TableSpec{Schema: sch})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nt.Close() })
	for _, b := range bs {
		appendBatch(t, nt, b, 1)
	}
	return nt
}

// TestSourceTableReplaced: a stream that meets another table at its
// location (the directory deleted and a table created there again) stops
// with ErrTableReplaced instead of reading the new table's commits as if
// they followed the old one's: whether the new table has more commits than
// the stream has read, fewer, or none yet.
func TestSourceTableReplaced(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		again []int64 // batches of the new table, one commit each
	}{
		{"more commits", []int64{10, 11, 12, 13}},
		{"fewer commits", []int64{10}},
		{"as many commits", []int64{10, 11}},
		{"no commit but the creation", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tbl := newTable(t, "", nil)
			appendBatch(t, tbl, 1, 2) // v1
			appendBatch(t, tbl, 2, 2) // v2
			src, err := stream.NewSource(ctx, tbl.Store(), stream.Options{})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := drain(t, src)
			equalKeys(t, got, want(2, "", 1, 2))
			recreate(t, tbl, tc.again...)
			for range 2 { // and it stays stopped
				b, ok, err := src.TryNext(ctx)
				if !errors.Is(err, deltaerr.ErrTableReplaced) {
					var rows []key
					if ok {
						rows, _ = readKeys(ctx, b)
					}
					t.Fatalf("after the table was replaced: ok %v, rows %v, err %v; want ErrTableReplaced", ok, rows, err)
				}
				if !strings.Contains(err.Error(), "replaced") {
					t.Errorf("message %q", err)
				}
			}
		})
	}
}

// TestSourceTableDeleted: a stream whose table is deleted waits, as it
// waits for commits, and stops with ErrTableReplaced once a new table is
// created there.
func TestSourceTableDeleted(t *testing.T) {
	ctx := context.Background()
	tbl := newTable(t, "", nil)
	appendBatch(t, tbl, 1, 1)
	src, err := stream.NewSource(ctx, tbl.Store(), stream.Options{Start: stream.FromVersion(1)})
	if err != nil {
		t.Fatal(err)
	}
	drain(t, src)
	dir := strings.TrimPrefix(tbl.URI(), "file://")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := src.TryNext(ctx); ok || err != nil {
		t.Fatalf("table deleted: ok %v, err %v; want nothing to read yet", ok, err)
	}
	recreate(t, tbl, 5, 6, 7)
	if _, _, err := src.TryNext(ctx); !errors.Is(err, deltaerr.ErrTableReplaced) {
		t.Fatalf("table created again: %v, want ErrTableReplaced", err)
	}
}

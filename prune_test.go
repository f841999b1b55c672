package delta

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/godelta/delta/schema"
)

// A file whose partition value is NULL holds no row of k = 'A' (NULL = 'A'
// is never TRUE), so partition pruning skips it: FilesWhere and the scan's
// files-read metric count only the 'A' file. Before, both kept the NULL
// file and only the row filter dropped its rows. (Issue 19, item 5.)
func TestPrunesNullPartitions(t *testing.T) {
	ctx := context.Background()
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.Long, Nullable: true},
		{Name: "k", Type: schema.String, Nullable: true},
	}}
	tbl, err := Create(ctx, filepath.Join(t.TempDir(), "t"), TableSpec{Schema: sch, PartitionColumns: []string{"k"}})
	if err != nil {
		t.Fatal(err)
	}
	rows := [][]schema.Value{
		{schema.LongValue(1), schema.StringValue("A")},
		{schema.LongValue(2), {}},
		{schema.LongValue(3), schema.StringValue("B")},
	}
	if _, err := tbl.AppendRows(ctx, rows, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		pred  string
		files int
	}{
		{"k = 'A'", 1},
		{"k != 'A'", 1}, // B; NULL != 'A' is not TRUE either
		{"k IS NULL", 1},
		{"k IN ('A', 'B')", 2},
		{"k = 'A' OR id = 2", 3},
	} {
		pred, err := ParsePredicate(tc.pred)
		if err != nil {
			t.Fatal(err)
		}
		files, err := snap.FilesWhere(ctx, pred)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, err := range files {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n != tc.files {
			t.Errorf("FilesWhere(%s): %d files, want %d", tc.pred, n, tc.files)
		}
		s, err := tbl.Scan(snap, ScanOptions{Predicate: pred})
		if err != nil {
			t.Fatal(err)
		}
		for _, err := range s.Rows(ctx) {
			if err != nil {
				t.Fatal(err)
			}
		}
		if m := s.Metrics(); m.FilesRead != int64(tc.files) {
			t.Errorf("scan %s: read %d files, want %d", tc.pred, m.FilesRead, tc.files)
		}
	}
}

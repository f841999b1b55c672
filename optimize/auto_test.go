package optimize_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/optimize"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
)

// The compaction's own commit runs the post-commit chain too, and the
// hook does nothing there: with a threshold of one small file, which the
// file a compaction writes meets again, each append is followed by at
// most one OPTIMIZE, never by two in a row.
func TestAutoCompactNoRecursion(t *testing.T) {
	defer optimize.SetAutoCompactMinNumFiles(1)()
	tbl := newTable(t, []string{"p"}, map[string]string{tableconfig.KeyAutoCompact: "true"})
	var next int64
	appendFiles(t, tbl, []string{"a"}, 4, 3, &next)
	hist, err := tbl.History(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, c := range slices.Backward(hist) {
		ops = append(ops, c.Info.Operation)
	}
	// The first append leaves one file: nothing to merge, no commit.
	want := []string{"CREATE TABLE", "WRITE", "WRITE", "OPTIMIZE", "WRITE", "OPTIMIZE", "WRITE", "OPTIMIZE"}
	if !slices.Equal(ops, want) {
		t.Errorf("operations %v, want %v", ops, want)
	}
}

// Commits that write no new rows never compact: a DELETE that only
// removes files, RESTORE, which registers again files written before,
// and OPTIMIZE itself.
func TestAutoCompactSkipsRewrites(t *testing.T) {
	tbl := newTable(t, nil, map[string]string{tableconfig.KeyAutoCompact: "true"})
	var next int64
	appendFiles(t, tbl, []string{"a"}, 3, 1, &next) // versions 1 to 3: below the threshold
	defer optimize.SetAutoCompactMinNumFiles(2)()
	d, err := tbl.Delete(ctx, "id = 0", delta.DMLOptions{})
	if err != nil || !d.Committed || d.Commit.PostCommit.AutoCompacted != 0 {
		t.Fatalf("DELETE: %v, %+v", err, d.Commit.PostCommit)
	}
	res, err := tbl.RestoreVersion(ctx, 3, delta.TxnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Commit.PostCommit.AutoCompacted != 0 || res.Commit.PartitionsWritten() == nil {
		t.Errorf("RESTORE (adding %v) compacted at version %d", res.Commit.PartitionsWritten(), res.Commit.PostCommit.AutoCompacted)
	}
	o, err := tbl.Optimize(ctx, delta.OptimizeOptions{})
	if err != nil || !o.Committed {
		t.Fatalf("OPTIMIZE: %v, committed %v", err, o.Committed)
	}
	if o.Commit.PostCommit.AutoCompacted != 0 || o.Commit.PostCommit.Err != nil {
		t.Errorf("OPTIMIZE post-commit %+v: want no compaction", o.Commit.PostCommit)
	}
}

// The partitions chosen are selected by their values read as the
// partition column's type, a null value by IS NULL.
func TestAutoCompactTypedAndNullPartitions(t *testing.T) {
	defer optimize.SetAutoCompactMinNumFiles(3)()
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.Long, Nullable: true},
		{Name: "d", Type: schema.Date, Nullable: true},
	}}
	tbl, err := delta.Create(ctx, filepath.Join(t.TempDir(), "t"), delta.TableSpec{Schema: sch, PartitionColumns: []string{"d"},
		Properties: map[string]string{tableconfig.KeyAutoCompact: "true"}})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	day, err := schema.ParsePartitionValue(schema.Date, "2024-01-31")
	if err != nil {
		t.Fatal(err)
	}
	var last delta.CommitResult
	for i := range int64(3) {
		last, err = tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(2 * i), day}, {schema.LongValue(2*i + 1), {}}}, delta.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	if last.PostCommit.Err != nil || last.PostCommit.AutoCompacted == 0 {
		t.Fatalf("post-commit %+v: want a compaction", last.PostCommit)
	}
	hist, err := tbl.History(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	pred, _ := hist[0].Info.OperationParameters["predicate"].(string)
	if !strings.Contains(pred, "`d` IS NULL") || !strings.Contains(pred, "`d` = '2024-01-31'") {
		t.Errorf("predicate %s, want both partitions", pred)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, err := range snap.Files(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 2 {
		t.Errorf("%d files, want one per partition", n)
	}
}

package delta

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/godelta/delta/schema"
)

// The change data feed from a time before the earliest commit of a log
// whose first commits were cleaned up starts at the earliest version that
// can still be read, as Spark's does, instead of failing on version 0.
// (Issue 19, item 6.)
func TestChangesSinceAfterLogCleanup(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "t")
	sch := &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long, Nullable: true}}}
	tbl, err := Create(ctx, dir, TableSpec{Schema: sch, Properties: map[string]string{
		"delta.enableChangeDataFeed": "true", "delta.checkpointInterval": "5"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range int64(12) {
		if _, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(i)}}, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Commits 0..6 expire; the checkpoint at 5 is kept, with the commits
	// after it.
	old := time.Now().Add(-40 * 24 * time.Hour)
	for v := range 7 {
		if err := os.Chtimes(filepath.Join(dir, "_delta_log", fmt.Sprintf("%020d.json", v)), old, old); err != nil {
			t.Fatal(err)
		}
	}
	if res, err := tbl.CleanupLog(ctx, false); err != nil || res.CheckpointVersion != 5 {
		t.Fatalf("cleanup: %+v, %v", res, err)
	}
	ch, err := tbl.ChangesSince(ctx, time.UnixMilli(0), ChangeOptions{})
	if err != nil {
		t.Fatalf("changes since the epoch: %v", err)
	}
	if start, end := ch.Range(); start != 5 || end != 12 {
		t.Errorf("range %d..%d, want 5..12", start, end)
	}
	n := 0
	for _, err := range ch.Rows(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 8 { // the rows appended at versions 5..12
		t.Errorf("%d change rows, want 8", n)
	}
}

package delta

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/checkpoint"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
)

// Issue 19 item 4: on a table with checkpointPolicy=v2, the log cleanup
// that follows a commit's checkpoint first writes a classic-named copy of
// that UUID-named checkpoint (as Spark's metadata cleanup does), so that
// a client without V2 checkpoints finds it by listing and fails on the
// protocol it holds. The table reads the same from the copy.
func TestV2ClassicCopyAfterCommit(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "t")
	sch := &schema.StructType{Fields: []schema.StructField{nf("id", schema.Long)}}
	tbl, err := Create(ctx, dir, TableSpec{Schema: sch, Properties: map[string]string{
		"delta.checkpointPolicy":     "v2",
		"delta.checkpointInterval":   "2",
		"delta.logRetentionDuration": "interval 1 days",
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	var rows [][]schema.Value
	for i := range int64(4) { // versions 1-4; a UUID-named checkpoint at 2
		if _, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(i)}}, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, []schema.Value{schema.LongValue(i)})
	}
	// Versions 0-4 are now three days old; the next commit's checkpoint
	// (6) is followed by a cleanup that deletes what precedes it.
	old := time.Now().Add(-3 * 24 * time.Hour)
	files, err := deltalog.List(ctx, tbl.Store(), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := os.Chtimes(filepath.Join(dir, filepath.FromSlash(f.Key)), old, old); err != nil {
			t.Fatal(err)
		}
	}
	for i := int64(4); i < 6; i++ {
		res, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(i)}}, WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if w := res.PostCommit; res.Version == 6 && (!w.Checkpointed || w.Err != nil || w.LogFilesDeleted == 0) {
			t.Fatalf("post-commit work of version 6: %+v", w)
		}
		rows = append(rows, []schema.Value{schema.LongValue(i)})
	}
	if _, err := tbl.Store().Stat(ctx, deltalog.ClassicCheckpointKey(6)); err != nil {
		t.Fatalf("no classic-named checkpoint at version 6: %v", err)
	}
	// An old client reads the protocol there, and must refuse it.
	found := false
	err = checkpoint.Read(ctx, tbl.Store(), []string{deltalog.ClassicCheckpointKey(6)}, checkpoint.Protocol, func(batch []actions.Action) error {
		for _, a := range batch {
			if a.Protocol != nil && tableconfig.HasReaderFeature(a.Protocol, actions.FeatureV2Checkpoint) {
				found = true
			}
		}
		return nil
	})
	if err != nil || !found {
		t.Fatalf("classic copy: protocol with v2Checkpoint %v, %v", found, err)
	}
	// Without the UUID-named original, the table reads the same.
	files, err = deltalog.List(ctx, tbl.Store(), 6)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Kind == deltalog.UUIDCheckpoint && f.Version == 6 {
			if err := tbl.Store().Delete(ctx, f.Key); err != nil {
				t.Fatal(err)
			}
		}
	}
	diffRows(t, scanRows(t, tbl), formatRows(rows))
}

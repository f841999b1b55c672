package delta_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/schema"
)

// A checkpoint holds the state of a version, so that readers of later
// versions start from it instead of replaying every commit.
func ExampleTable_Checkpoint() {
	ctx := context.Background()
	tbl, err := exampleEvents(ctx, "example-checkpoint", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tbl.Close()
	v, err := tbl.Checkpoint(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("checkpointed version", v)

	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	cp, ok := snap.Segment().CheckpointVersion()
	fmt.Println("a snapshot starts at checkpoint", cp, ok, "and replays", len(snap.Segment().Commits), "commits")
	// Output:
	// checkpointed version 3
	// a snapshot starts at checkpoint 3 true and replays 0 commits
}

// CleanupLog with dryRun lists the log files older than the table's
// delta.logRetentionDuration (30 days by default) that it would delete.
// Here versions 0 to 2 and the checkpoint of version 2 are made to look
// 60 days old.
func ExampleTable_CleanupLog() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "example-cleanup-log")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	tbl, err := delta.Create(ctx, dir, delta.TableSpec{
		Schema: &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long}}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tbl.Close()
	for i := range int64(3) {
		if _, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(i)}}, delta.WriteOptions{}); err != nil {
			fmt.Println(err)
			return
		}
		if i == 1 {
			if _, err := tbl.Checkpoint(ctx); err != nil { // of version 2
				fmt.Println(err)
				return
			}
		}
	}
	old := time.Now().AddDate(0, 0, -60)
	for _, key := range []string{deltalog.CommitKey(0), deltalog.CommitKey(1), deltalog.CommitKey(2), deltalog.ClassicCheckpointKey(2)} {
		if err := os.Chtimes(filepath.Join(dir, key), old, old); err != nil {
			fmt.Println(err)
			return
		}
	}

	res, err := tbl.CleanupLog(ctx, true)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("versions from checkpoint", res.CheckpointVersion, "on stay readable; would delete:")
	for _, key := range res.Deleted {
		fmt.Println(key)
	}
	snap, err := tbl.SnapshotAt(ctx, 0) // a dry run deletes nothing
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("version", snap.Version(), "still there")
	// Output:
	// versions from checkpoint 2 on stay readable; would delete:
	// _delta_log/00000000000000000000.crc
	// _delta_log/00000000000000000000.json
	// _delta_log/00000000000000000001.crc
	// _delta_log/00000000000000000001.json
	// version 0 still there
}

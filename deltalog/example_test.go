package deltalog_test

import (
	"context"
	"fmt"

	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore/memory"
)

// Keys are built by the Key functions and parsed back by ParseName; a name
// that is not a log file is refused.
func ExampleParseName() {
	fmt.Println(deltalog.CommitKey(10))
	for _, key := range []string{
		deltalog.CommitKey(10),
		deltalog.ClassicCheckpointKey(10),
		deltalog.MultiPartCheckpointKey(20, 1, 2),
		"_delta_log/_last_checkpoint",
		"_delta_log/.00000000000000000010.json.crc",
	} {
		f, ok := deltalog.ParseName(key)
		if !ok {
			fmt.Println("not a log file:", key)
			continue
		}
		fmt.Println(f.Kind, f.Version, f.Part, f.NumParts)
	}
	// Output:
	// _delta_log/00000000000000000010.json
	// commit 10 0 0
	// checkpoint 10 0 0
	// multi-part checkpoint 20 1 2
	// not a log file: _delta_log/_last_checkpoint
	// not a log file: _delta_log/.00000000000000000010.json.crc
}

// List reads the log through a store; NewSegment picks, with no I/O, the
// files that rebuild a version: the newest checkpoint at or below it and the
// commits after it.
func ExampleNewSegment() {
	ctx := context.Background()
	store := memory.New()
	defer store.Close()
	for _, key := range []string{
		deltalog.CommitKey(0), deltalog.CommitKey(1), deltalog.CommitKey(2),
		deltalog.ClassicCheckpointKey(2), deltalog.CommitKey(3), deltalog.CommitKey(4),
	} {
		store.Put(ctx, key, []byte("{}"))
	}
	files, err := deltalog.List(ctx, store, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, version := range []int64{deltalog.Latest, 1} {
		seg, err := deltalog.NewSegment(files, version, nil)
		if err != nil {
			fmt.Println(err)
			return
		}
		cp, ok := seg.CheckpointVersion()
		fmt.Println("version", seg.Version, "checkpoint", cp, ok, "commits", len(seg.Commits))
	}
	// Output:
	// version 4 checkpoint 2 true commits 2
	// version 1 checkpoint 0 false commits 2
}

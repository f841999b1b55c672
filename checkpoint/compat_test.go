package checkpoint_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/checkpoint"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/tableconfig"
)

// Issue 19 item 4: on a v2 table, log cleanup first writes a classic-named
// copy of the newest (UUID-named) checkpoint, as Spark does, so that an
// old client listing the log finds a checkpoint it can name and reads the
// protocol it does not support there. The copy reads as the original.
func TestClassicCopy(t *testing.T) {
	v2 := actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
		ReaderFeatures: []string{actions.FeatureV2Checkpoint, actions.FeatureDeletionVectors},
		WriterFeatures: []string{actions.FeatureV2Checkpoint, actions.FeatureDeletionVectors, actions.FeatureDomainMetadata}}
	conf := map[string]string{"delta.checkpointPolicy": "v2"}
	tests := []struct {
		name string
		opts checkpoint.WriteOptions
	}{
		{"parquet inline", checkpoint.WriteOptions{}},
		{"parquet sidecars", checkpoint.WriteOptions{SidecarMinActions: 1, SidecarMaxActions: 2}},
		{"json inline", checkpoint.WriteOptions{V2Format: "json"}},
		{"json sidecars", checkpoint.WriteOptions{V2Format: "json", SidecarMinActions: 1, SidecarMaxActions: 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			store, err := local.New(dir, local.WithoutSync())
			if err != nil {
				t.Fatal(err)
			}
			now := buildTable(t, store, v2, conf)
			tc.opts.Now = func() time.Time { return now }
			for v := int64(1); v <= 2; v++ {
				snap, err := snapshot.Load(ctx, store, v)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := checkpoint.Write(ctx, store, snap, tc.opts); err != nil {
					t.Fatal(err)
				}
			}
			want := stateOf(t, mustLoad(t, store), keepFresh(now))
			// Every log file is 60 days old: past the 30-day retention.
			old := time.Now().Add(-60 * 24 * time.Hour)
			files, err := deltalog.List(ctx, store, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range files {
				os.Chtimes(filepath.Join(dir, filepath.FromSlash(f.Key)), old, old)
			}
			opts := deltalog.CleanupOptions{Verify: checkpoint.Verify(store), SidecarRefs: checkpoint.SidecarRefs(store),
				ClassicCopy: checkpoint.ClassicCopy(store), DryRun: true}
			if _, err := deltalog.Cleanup(ctx, store, opts); err != nil {
				t.Fatal(err)
			}
			if _, err := store.Stat(ctx, deltalog.ClassicCheckpointKey(2)); err == nil {
				t.Fatal("a dry run wrote the classic copy")
			}
			opts.DryRun = false
			res, err := deltalog.Cleanup(ctx, store, opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Deleted) == 0 {
				t.Fatal("cleanup deleted nothing: the test table is not old enough")
			}

			// An old client lists the log and knows only classic names.
			files, err = deltalog.List(ctx, store, 0)
			if err != nil {
				t.Fatal(err)
			}
			var classic, uuid []string
			for _, f := range files {
				switch f.Kind {
				case deltalog.ClassicCheckpoint:
					classic = append(classic, f.Key)
				case deltalog.UUIDCheckpoint:
					uuid = append(uuid, f.Key)
				}
			}
			if !slices.Equal(classic, []string{deltalog.ClassicCheckpointKey(2)}) || len(uuid) != 1 {
				t.Fatalf("classic checkpoints %v and UUID-named %v; want a classic copy at version 2 beside the original", classic, uuid)
			}
			// There it finds the protocol it must refuse, and the copy
			// follows the V2 spec.
			var protocol *actions.Protocol
			var cm *actions.CheckpointMetadata
			err = checkpoint.Read(ctx, store, classic, checkpoint.Protocol|checkpoint.CheckpointMetadata, func(batch []actions.Action) error {
				for _, a := range batch {
					if a.Protocol != nil {
						protocol = a.Protocol
					}
					if a.CheckpointMetadata != nil {
						cm = a.CheckpointMetadata
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if protocol == nil || !tableconfig.HasReaderFeature(protocol, actions.FeatureV2Checkpoint) {
				t.Errorf("the classic copy's protocol %+v lacks the v2Checkpoint reader feature", protocol)
			}
			if cm == nil || cm.Version != 2 {
				t.Errorf("the classic copy's checkpointMetadata is %+v, want version 2", cm)
			}

			// Our reader, with only the copy left, reads the same state.
			if err := store.Delete(ctx, uuid[0]); err != nil {
				t.Fatal(err)
			}
			compareStates(t, want, stateOf(t, mustLoad(t, store), keepFresh(now)), true)

			// A second cleanup finds the classic checkpoint and copies
			// nothing again.
			calls := 0
			opts.ClassicCopy = func(context.Context, []deltalog.LogFile) error { calls++; return nil }
			if _, err := deltalog.Cleanup(ctx, store, opts); err != nil {
				t.Fatal(err)
			}
			if calls != 0 {
				t.Errorf("ClassicCopy called %d times with a classic checkpoint in place", calls)
			}
		})
	}
}

func mustLoad(t *testing.T, store logstore.Store) *snapshot.Snapshot {
	t.Helper()
	s, err := snapshot.Load(context.Background(), store, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

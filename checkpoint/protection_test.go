package checkpoint_test

import (
	"context"
	"errors"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/checkpoint"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/snapshot"
)

// checkpointProtection: after a Spark DROP FEATURE, the versions below
// delta.requireCheckpointProtectionBeforeVersion carry a protocol with the
// dropped feature, which this library may not support. No checkpoint may
// be created for them; from the protected version on, checkpoints are
// written as usual.
func TestCheckpointProtection(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	meta := func(conf map[string]string) *actions.Metadata {
		return &actions.Metadata{ID: "t", Format: actions.Format{Provider: "parquet"},
			SchemaString: `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}`, Configuration: conf}
	}
	commits := [][]actions.Action{
		// Version 0: a writer feature this library does not know.
		{{Protocol: &actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{"appendOnly", "someDroppedFeature"}}},
			{Metadata: meta(map[string]string{})},
			{Add: &actions.Add{Path: "a.parquet", Size: 1, DataChange: true, PartitionValues: map[string]string{}}}},
		// Version 1: the feature dropped, history protected below 2.
		{{Protocol: &actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{"appendOnly", actions.FeatureCheckpointProtection}}},
			{Metadata: meta(map[string]string{"delta.requireCheckpointProtectionBeforeVersion": "2"})}},
		{{Add: &actions.Add{Path: "b.parquet", Size: 1, DataChange: true, PartitionValues: map[string]string{}}}},
	}
	for v, acts := range commits {
		data, err := actions.EncodeCommit(acts)
		if err != nil {
			t.Fatal(err)
		}
		if err := store.PutIfAbsent(ctx, deltalog.CommitKey(int64(v)), data); err != nil {
			t.Fatal(err)
		}
	}
	at := func(v int64) *snapshot.Snapshot {
		s, err := snapshot.Load(ctx, store, v)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	_, err := checkpoint.Write(ctx, store, at(1), checkpoint.WriteOptions{})
	if !errors.Is(err, checkpoint.ErrProtected) || !errors.Is(err, deltaerr.ErrInvalidArgument) {
		t.Errorf("checkpoint of version 1: %v, want ErrProtected", err)
	}
	if _, err := store.Stat(ctx, "_delta_log/00000000000000000001.checkpoint.parquet"); err == nil {
		t.Error("a checkpoint of the protected version 1 was written")
	}
	if _, err := checkpoint.Write(ctx, store, at(2), checkpoint.WriteOptions{}); err != nil {
		t.Errorf("checkpoint of version 2: %v", err)
	}
}

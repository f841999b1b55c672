package delta_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/godelta/delta"
	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/checkpoint"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/schema"
)

// TestCheckpointProtectionEndToEnd: a table as Spark's DROP FEATURE leaves
// it with checkpointProtection. Versions 0 and 1 carry a writer feature
// this library does not support; version 2 drops it and protects the
// history below 3; version 3 is the protected checkpoint's version. Then
// appends through the facade, with a checkpoint due every other commit and
// a clock that expires the whole log at every cleanup.
//
// The rules of the RFC (protocol_rfcs/checkpoint-protection.md) as this
// library keeps them, by its exception (a):
//   - no checkpoint is created for a version below the protected one, by
//     the post-commit chain, by log cleanup (no classic copy of a V2
//     checkpoint there) or by an explicit Checkpoint;
//   - cleanup never erases a checkpoint after its truncation version: the
//     table reads at every version that is left, with every row;
//   - checkpoints from the protected version on are written as usual.
func TestCheckpointProtectionEndToEnd(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	logDir := filepath.Join(dir, "_delta_log")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	created := int64(1)
	schemaString := `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}`
	meta := func(conf map[string]string) actions.Action {
		return actions.Action{Metadata: &actions.Metadata{ID: "protected", Format: actions.Format{Provider: "parquet"},
			SchemaString: schemaString, Configuration: conf, CreatedTime: &created}}
	}
	old := time.Now().Add(-400 * 24 * time.Hour)
	conf := map[string]string{"delta.checkpointInterval": "2", "delta.logRetentionDuration": "interval 1 days"}
	protected := map[string]string{"delta.requireCheckpointProtectionBeforeVersion": "3"}
	for k, v := range conf {
		protected[k] = v
	}
	commits := [][]actions.Action{
		{{Protocol: &actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{"appendOnly", "someDroppedFeature"}}}, meta(conf)},
		{{CommitInfo: &actions.CommitInfo{Operation: "SET TBLPROPERTIES"}}},
		{{Protocol: &actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{"appendOnly", actions.FeatureCheckpointProtection}}}, meta(protected)},
	}
	for v, acts := range commits {
		data, err := actions.EncodeCommit(acts)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(logDir, filepath.Base(deltalog.CommitKey(int64(v))))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, old, old); err != nil {
			t.Fatal(err)
		}
	}

	tbl, err := delta.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	// A checkpoint of version 1 is refused.
	at1, err := tbl.SnapshotAt(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := checkpoint.Write(ctx, at1.Store(), at1, checkpoint.WriteOptions{}); !errors.Is(err, checkpoint.ErrProtected) {
		t.Errorf("checkpoint of version 1, below the protected version 3: %v, want ErrProtected", err)
	}
	// Appends land at versions 3..12, each dated a day after the last so
	// that everything before the newest checkpoint has expired at every
	// cleanup.
	day := 0
	clock := func() time.Time { return old.Add(time.Duration(day) * 24 * time.Hour) }
	var want []string
	for i := range 10 {
		day += 3
		if _, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(int64(i))}}, delta.WriteOptions{Txn: delta.TxnOptions{Clock: clock}}); err != nil {
			t.Fatal(err)
		}
		want = append(want, fmt.Sprint([]schema.Value{schema.LongValue(int64(i))}))
		// The commits are dated by the clock as the cleanup sees them.
		snap, err := tbl.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(logDir, filepath.Base(deltalog.CommitKey(snap.Version())))
		if err := os.Chtimes(p, clock(), clock()); err != nil {
			t.Fatal(err)
		}
	}

	entries, err := os.ReadDir(logDir)
	if err != nil {
		t.Fatal(err)
	}
	var checkpoints []string
	oldest := int64(-1)
	for _, e := range entries {
		f, ok := deltalog.ParseName(deltalog.LogDir + e.Name())
		if !ok {
			continue
		}
		if f.Kind.IsCheckpoint() {
			checkpoints = append(checkpoints, e.Name())
			if f.Version < 3 {
				t.Errorf("checkpoint %s below the protected version 3", e.Name())
			}
		}
		if f.Kind == deltalog.Commit && (oldest < 0 || f.Version < oldest) {
			oldest = f.Version
		}
	}
	if len(checkpoints) == 0 {
		t.Fatal("no checkpoint at all: the test does not exercise the chain")
	}
	if oldest <= 0 {
		t.Fatalf("log cleanup deleted nothing (oldest commit %d): the test does not exercise it", oldest)
	}
	// Every version left reads, with its rows.
	latest, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for v := oldest; v <= latest.Version(); v++ {
		snap, err := tbl.SnapshotAt(ctx, v)
		if err != nil {
			t.Errorf("version %d: %v", v, err)
			continue
		}
		if n, err := snap.NumFiles(ctx); err != nil || n != v-2 {
			t.Errorf("version %d: %d files (%v), want %d", v, n, err, v-2)
		}
	}
	slices.Sort(want)
	if got := sortedRows(t, tbl, -1); !slices.Equal(got, want) {
		t.Errorf("rows %v, want %v", got, want)
	}
	t.Logf("checkpoints %v; oldest commit left %d", checkpoints, oldest)
}

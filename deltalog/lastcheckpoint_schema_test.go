package deltalog_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore/memory"
)

// TestLastCheckpointSchemaField: checkpointSchema (Spark's
// LastCheckpointInfo field, a Delta struct type) is written after
// numOfAddFiles, counted in the checksum, and read back; a hint without it
// (older writers, JSON V2 checkpoints) still reads.
func TestLastCheckpointSchemaField(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	sch := json.RawMessage(`{"type":"struct","fields":[{"name":"add","type":{"type":"struct","fields":[{"name":"path","type":"string","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}}]}`)
	adds := int64(2)
	if err := deltalog.WriteLastCheckpoint(ctx, store, deltalog.LastCheckpoint{Version: 3, Size: 4, NumOfAddFiles: &adds, CheckpointSchema: sch}); err != nil {
		t.Fatal(err)
	}
	data, _ := store.Get(ctx, deltalog.LastCheckpointKey)
	if !strings.HasPrefix(string(data), `{"version":3,"size":4,"numOfAddFiles":2,"checkpointSchema":{"type":"struct",`) {
		t.Errorf("written %s", data)
	}
	if err := deltalog.VerifyLastCheckpoint(data); err != nil {
		t.Error(err)
	}
	changed := strings.Replace(string(data), `"path"`, `"paths"`, 1)
	if err := deltalog.VerifyLastCheckpoint([]byte(changed)); err == nil {
		t.Error("a changed checkpointSchema passes the checksum")
	}
	got, err := deltalog.ReadLastCheckpoint(ctx, store)
	if err != nil || got == nil || string(got.CheckpointSchema) != string(sch) {
		t.Fatalf("read back %+v, %v", got, err)
	}

	if err := store.Put(ctx, deltalog.LastCheckpointKey, []byte(`{"version":5,"size":9}`)); err != nil {
		t.Fatal(err)
	}
	got, err = deltalog.ReadLastCheckpoint(ctx, store)
	if err != nil || got == nil || got.Version != 5 || got.CheckpointSchema != nil {
		t.Fatalf("hint without checkpointSchema: %+v, %v", got, err)
	}
}

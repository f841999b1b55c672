package checkpoint

import (
	"context"
	"fmt"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
)

// ClassicCopy returns a function for deltalog.CleanupOptions.ClassicCopy:
// it writes the classic-named copy, _delta_log/<v>.checkpoint.parquet, of
// the UUID-named V2 checkpoint parts (PROTOCOL.md "Handling Backward
// compatibility while moving to UUID-named v2 Checkpoints"). A client
// that predates V2 checkpoints does not know UUID-named files; it finds
// the classic name, reads the protocol there, and fails cleanly on the
// v2Checkpoint reader feature instead of replaying a log whose early
// commits are gone. The copy follows the V2 spec, with the same actions:
// checkpointMetadata, the non-file actions, and the sidecar actions or
// the inline adds and removes; sidecar files are shared, not copied.
//
// A Parquet checkpoint is copied byte for byte. A JSON one is written
// again as Parquet, as Spark writes its compatibility checkpoints:
// file actions with their stats as JSON, removes without stats and tags.
// Parts that are not one UUID-named checkpoint are
// deltaerr.ErrInvalidArgument; a checkpoint that cannot be read gives
// Read's errors, and nothing is written.
//
// Spark writes the copy when metadata cleanup is about to delete log
// files, for the newest checkpoint, unless a classic or multi-part
// checkpoint of that version exists; deltalog.Cleanup does the same.
func ClassicCopy(store logstore.Store) func(ctx context.Context, parts []deltalog.LogFile) error {
	return func(ctx context.Context, parts []deltalog.LogFile) error {
		if len(parts) != 1 || parts[0].Kind != deltalog.UUIDCheckpoint {
			return fmt.Errorf("checkpoint: a classic copy is made of one UUID-named checkpoint, not %v: %w", parts, deltaerr.ErrInvalidArgument)
		}
		cp := parts[0]
		key := deltalog.ClassicCheckpointKey(cp.Version)
		var data []byte
		var err error
		if cp.Ext == "json" {
			data, err = parquetCopy(ctx, store, cp)
		} else {
			data, err = store.Get(ctx, cp.Key)
		}
		if err != nil {
			return fmt.Errorf("checkpoint: classic copy of %s: %w", cp.Key, err)
		}
		if err := store.Put(ctx, key, data); err != nil {
			return fmt.Errorf("checkpoint: writing %s: %w", key, err)
		}
		return nil
	}
}

// parquetCopy encodes the actions of the JSON V2 checkpoint cp as a
// Parquet V2 checkpoint.
func parquetCopy(ctx context.Context, store logstore.Store, cp deltalog.LogFile) ([]byte, error) {
	keys := []string{cp.Key}
	// Sidecar actions first: with them, the file actions are in the
	// sidecars (the copy names them, as the original does); without, they
	// are inline and copied.
	hasSidecars := false
	err := Read(ctx, store, keys, Sidecar, func(batch []actions.Action) error {
		hasSidecars = hasSidecars || len(batch) > 0
		return nil
	})
	if err != nil {
		return nil, err
	}
	want := Protocol | Metadata | Txn | DomainMetadata | CheckpointMetadata | Sidecar
	if !hasSidecars {
		want |= Add | Remove
	}
	var acts []actions.Action
	err = Read(ctx, store, keys, want, func(batch []actions.Action) error {
		acts = append(acts, batch...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	w := &writer{v2: true, statsJSON: true, opts: WriteOptions{RowGroupRows: defaultRowGroupRows}}
	w.addNode = addNode(w.statsJSON, nil, nil)
	pw, err := w.newParquet(false, true)
	if err != nil {
		return nil, err
	}
	for i := range acts {
		if err := pw.action(&acts[i]); err != nil {
			return nil, pw.failed(err)
		}
	}
	return pw.close()
}

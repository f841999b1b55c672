package deltalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/logstore"
)

// LastCheckpoint is the content of _delta_log/_last_checkpoint: a hint that
// names the newest checkpoint, so readers need not list the whole log. It is
// only a hint: it may be stale, name a checkpoint that is gone, or be
// corrupt, and readers must check it against a listing.
type LastCheckpoint struct {
	Version int64 `json:"version"`
	// Size is the number of actions in the checkpoint.
	Size int64 `json:"size"`
	// Parts is the number of parts of a multi-part checkpoint.
	Parts         *int   `json:"parts,omitempty"`
	SizeInBytes   *int64 `json:"sizeInBytes,omitempty"`
	NumOfAddFiles *int64 `json:"numOfAddFiles,omitempty"`
	// CheckpointSchema is the schema of the checkpoint's Parquet file, as a
	// Delta schema (a JSON struct type), as Spark's LastCheckpointInfo
	// records it; absent for a JSON checkpoint, a large schema, and in the
	// files of older writers.
	CheckpointSchema json.RawMessage `json:"checkpointSchema,omitempty"`
	Checksum         string          `json:"checksum,omitempty"`
	V2Checkpoint     json.RawMessage `json:"v2Checkpoint,omitempty"`
}

// MaxLastCheckpointBytes caps the _last_checkpoint hint: a real one is a
// few hundred bytes (a V2 checkpoint's inlined action adds a few KiB), and a
// larger file is corrupt, not read whole.
const MaxLastCheckpointBytes = 1 << 20

// ReadLastCheckpoint reads and decodes the _last_checkpoint hint. It returns
// (nil, nil) when the file is absent, and a *deltaerr.CorruptError when it
// cannot be decoded, is larger than MaxLastCheckpointBytes or its
// checksum does not match; callers fall back to a
// full listing in both cases.
func ReadLastCheckpoint(ctx context.Context, store logstore.Store) (*LastCheckpoint, error) {
	// One byte past the cap tells a file that is too big from one that is
	// just at it, without reading more of a huge (or sparse) file.
	data, err := store.GetRange(ctx, LastCheckpointKey, 0, MaxLastCheckpointBytes+1)
	if errors.Is(err, logstore.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", LastCheckpointKey, err)
	}
	if len(data) > MaxLastCheckpointBytes {
		return nil, deltaerr.Corruptf(LastCheckpointKey, "larger than %d bytes", MaxLastCheckpointBytes)
	}
	var lc LastCheckpoint
	if err := json.Unmarshal(data, &lc); err != nil {
		return nil, &deltaerr.CorruptError{Path: LastCheckpointKey, Reason: "not a valid JSON object", Err: err}
	}
	if lc.Version < 0 || (lc.Parts != nil && *lc.Parts < 1) {
		return nil, deltaerr.Corruptf(LastCheckpointKey, "version %d, parts %v are not valid", lc.Version, lc.Parts)
	}
	// A checksum that does not match means a torn or edited hint.
	if err := VerifyLastCheckpoint(data); err != nil {
		return nil, err
	}
	return &lc, nil
}

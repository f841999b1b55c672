package alter

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/checkpoint"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/internal/dv"
	"github.com/godelta/delta/optimize"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/tableconfig"
	"github.com/godelta/delta/txn"
	"github.com/godelta/delta/write"
)

// Operations of the reader-writer drop, as Spark names them
// (DeltaOperations.EmptyCommit, AddDeletionVectorsTombstones).
const (
	OpEmptyCommit  = "Empty Commit"
	OpDVTombstones = "Deletion Vector Tombstones"
)

// barrierCheckpoints is how many checkpoints the drop of a reader-writer
// feature writes before the protocol downgrade: Spark's
// NUMBER_OF_BARRIER_CHECKPOINTS, one more than the earlier checkpoints a
// Spark reader falls back to when one is unreadable, so that an old reader
// gives up before it reaches a commit that needs the dropped feature.
const barrierCheckpoints = 3

// protectedDrop is how a reader-writer feature is dropped with checkpoint
// protection: prepare removes its traces from the latest version (Spark's
// pre-downgrade command), clean says whether a snapshot is free of them
// (validateDropInvariants), checked again on the snapshot the drop commits
// on, and props are the properties the drop commit removes.
type protectedDrop struct {
	prepare func(ctx context.Context, s *snapshot.Snapshot, opts Options) (*snapshot.Snapshot, error)
	clean   func(ctx context.Context, s *snapshot.Snapshot) error
}

var protectedDroppable = map[string]protectedDrop{
	actions.FeatureDeletionVectors: {prepare: prepareDropDVs, clean: noDeletionVectors},
	// vacuumProtocolCheck leaves no trace but the protocol (Spark's
	// VacuumProtocolCheckPreDowngradeCommand does nothing); as a
	// reader-writer feature it still gets the barrier checkpoints.
	actions.FeatureV2Checkpoint: {prepare: prepareDropV2Checkpoints, clean: noV2Checkpoint},
	actions.FeatureVacuumProtocolCheck: {
		prepare: func(_ context.Context, s *snapshot.Snapshot, _ Options) (*snapshot.Snapshot, error) { return s, nil },
		clean:   func(context.Context, *snapshot.Snapshot) error { return nil },
	},
}

// dropProtected drops the reader-writer feature name as Spark's fast DROP
// FEATURE does (AlterTableDropFeatureDeltaCommand
// .executeDropFeatureWithCheckpointProtection), without truncating
// history:
//
//  1. the feature's traces are removed from the latest version (for
//     V2 checkpoints: delta.checkpointPolicy set to classic, so that the
//     checkpoints that follow are of the V1 spec; for
//     deletion vectors: delta.enableDeletionVectors unset, every vector
//     purged into rewritten files by REORG ... APPLY (PURGE), and a
//     tombstone (a remove of the vector file, dataChange false) for each
//     vector file the retained tombstones still reference, so that a
//     VACUUM that knows no deletion vectors keeps them for time travel);
//  2. three barrier checkpoints, each of an empty commit: an old reader
//     never replays a commit behind them;
//  3. one commit drops the feature from the protocol, adds the
//     checkpointProtection writer feature and sets
//     delta.requireCheckpointProtectionBeforeVersion to its own version,
//     so that no writer removes the barriers without truncating all the
//     history before them in one go, nor checkpoints a version before it
//     that it cannot read (see package deltalog's cleanup and package
//     checkpoint);
//  4. a checkpoint of that commit.
//
// It returns the drop commit's result.
func dropProtected(ctx context.Context, snap *snapshot.Snapshot, name string, d protectedDrop, opts Options) (txn.CommitResult, error) {
	s, err := d.prepare(ctx, snap, opts)
	if err != nil {
		return txn.CommitResult{}, err
	}
	for range barrierCheckpoints {
		if s, err = commitAside(ctx, s, opts, OpEmptyCommit, nil, nil); err != nil {
			return txn.CommitResult{}, err
		}
		if _, err := checkpoint.Write(ctx, s.Store(), s, checkpoint.WriteOptions{}); err != nil {
			return txn.CommitResult{}, fmt.Errorf("alter: barrier checkpoint of version %d: %w", s.Version(), err)
		}
	}
	// The drop commits on the table as read from the last barrier, as
	// Spark's does: the invariants ask what checkpoint it rests on.
	if s, err = snapshot.Load(ctx, s.Store(), s.Version()); err != nil {
		return txn.CommitResult{}, err
	}
	params := map[string]any{"featureName": name, "truncateHistory": false}
	res, err := run(ctx, s, opts, OpDropFeature, params, func(ctx context.Context, s *snapshot.Snapshot) (change, error) {
		p := s.Protocol()
		if !tableconfig.HasReaderFeature(&p, name) {
			return change{}, invalid("feature %q was dropped meanwhile", name)
		}
		if err := d.clean(ctx, s); err != nil {
			return change{}, err
		}
		np, _ := write.UpgradeProtocol(withoutFeature(p, name), actions.FeatureCheckpointProtection)
		m := s.Metadata()
		m.Configuration = maps.Clone(m.Configuration)
		if m.Configuration == nil {
			m.Configuration = map[string]string{}
		}
		m.Configuration[tableconfig.KeyRequireCheckpointProtectionBeforeVersion] = strconv.FormatInt(s.Version()+1, 10)
		return change{protocol: np, metadata: m}, nil
	})
	if err != nil {
		return txn.CommitResult{}, err
	}
	after, err := res.Snapshot(ctx)
	if err != nil {
		return res, err
	}
	if _, err := checkpoint.Write(ctx, after.Store(), after, checkpoint.WriteOptions{}); err != nil {
		return res, fmt.Errorf("alter: checkpoint after dropping %s (the feature is dropped; run a checkpoint again): %w", name, err)
	}
	return res, nil
}

// commitAside commits a preparatory change of a drop (an empty commit, DV
// tombstones, an UNSET TBLPROPERTIES), runs its post-commit work here, as
// the ICT drop does, and returns the table after it.
func commitAside(ctx context.Context, s *snapshot.Snapshot, opts Options, op string, params map[string]any, removes []actions.Remove) (*snapshot.Snapshot, error) {
	to := opts.Txn
	to.Operation = op
	to.OperationParameters = params
	res, err := txn.Update(ctx, s, to, func(tx *txn.Transaction) error {
		tx.Remove(removes...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	txn.PostCommit(ctx, &res)
	return res.Snapshot(ctx)
}

// prepareDropDVs is Spark's DeletionVectorsPreDowngradeCommand.
func prepareDropDVs(ctx context.Context, s *snapshot.Snapshot, opts Options) (*snapshot.Snapshot, error) {
	if _, set := s.Metadata().Configuration[tableconfig.KeyEnableDeletionVectors]; set {
		params := map[string]any{"properties": jsonString([]string{tableconfig.KeyEnableDeletionVectors}), "ifExists": true}
		res, err := run(ctx, s, opts, OpUnsetProperties, params, func(_ context.Context, s *snapshot.Snapshot) (change, error) {
			m := s.Metadata()
			m.Configuration = cloneProps(s)
			delete(m.Configuration, tableconfig.KeyEnableDeletionVectors)
			return change{protocol: s.Protocol(), metadata: m}, nil
		})
		if err != nil {
			return nil, err
		}
		txn.PostCommit(ctx, &res)
		if s, err = res.Snapshot(ctx); err != nil {
			return nil, err
		}
	}
	// REORG ... APPLY (PURGE): every file with a vector rewritten without
	// the rows it deletes.
	r, err := optimize.Run(ctx, s, optimize.Options{Purge: true, Txn: opts.Txn})
	if err != nil {
		return nil, fmt.Errorf("alter: purging deletion vectors: %w", err)
	}
	if r.Committed {
		txn.PostCommit(ctx, &r.Commit)
		if s, err = r.Commit.Snapshot(ctx); err != nil {
			return nil, err
		}
	}
	// Tombstones for the vector files the retained removes reference and
	// no remove names yet.
	named := map[string]bool{}
	var vectors []string
	for r, err := range s.Tombstones(ctx) {
		if err != nil {
			return nil, err
		}
		if r.DeletionVector == nil {
			named[r.Path] = true
			continue
		}
		if r.DeletionVector.StorageType != dv.StorageRelative {
			continue // inline, or an absolute path this table does not own
		}
		key, err := dv.RelativePath(r.DeletionVector)
		if err != nil {
			return nil, err
		}
		vectors = append(vectors, key)
	}
	var removes []actions.Remove
	now := time.Now().UnixMilli()
	for _, key := range vectors {
		if named[key] {
			continue
		}
		named[key] = true
		removes = append(removes, actions.Remove{Path: key, DeletionTimestamp: &now, DataChange: false})
	}
	if len(removes) == 0 {
		return s, nil
	}
	return commitAside(ctx, s, opts, OpDVTombstones, nil, removes)
}

// noDeletionVectors is the drop invariant of deletion vectors: none may
// be written (delta.enableDeletionVectors not true) and no live file has
// one.
func noDeletionVectors(ctx context.Context, s *snapshot.Snapshot) error {
	if s.Config().DeletionVectors() {
		return invalid("%s was set to true again meanwhile", tableconfig.KeyEnableDeletionVectors)
	}
	for a, err := range s.Files(ctx) {
		if err != nil {
			return err
		}
		if a.DeletionVector != nil {
			return invalid("file %s has a deletion vector again (a concurrent DELETE, UPDATE or MERGE)", a.Path)
		}
	}
	return nil
}

// prepareDropV2Checkpoints is Spark's V2CheckpointPreDowngradeCommand: a
// SET TBLPROPERTIES delta.checkpointPolicy = classic, so that the barrier
// checkpoints that follow, and every later one, are classic checkpoints of
// the V1 spec (package checkpoint writes the V2 spec only under the v2
// policy).
func prepareDropV2Checkpoints(ctx context.Context, s *snapshot.Snapshot, opts Options) (*snapshot.Snapshot, error) {
	if s.Config().CheckpointPolicy() != tableconfig.CheckpointV2 {
		return s, nil
	}
	classic := string(tableconfig.CheckpointClassic)
	params := map[string]any{"properties": jsonString(map[string]string{tableconfig.KeyCheckpointPolicy: classic})}
	res, err := run(ctx, s, opts, OpSetProperties, params, func(_ context.Context, s *snapshot.Snapshot) (change, error) {
		m := s.Metadata()
		m.Configuration = cloneProps(s)
		m.Configuration[tableconfig.KeyCheckpointPolicy] = classic
		return change{protocol: s.Protocol(), metadata: m}, nil
	})
	if err != nil {
		return nil, err
	}
	txn.PostCommit(ctx, &res)
	return res.Snapshot(ctx)
}

// noV2Checkpoint is the drop invariant of V2 checkpoints (Spark's
// V2CheckpointTableFeature.validateDropInvariants): the policy is not v2,
// and the snapshot does not rest on a checkpoint of the V2 spec (a
// UUID-named one, or a classic-named one with a checkpointMetadata
// action).
func noV2Checkpoint(ctx context.Context, s *snapshot.Snapshot) error {
	if s.Config().CheckpointPolicy() == tableconfig.CheckpointV2 {
		return invalid("%s was set to v2 again meanwhile", tableconfig.KeyCheckpointPolicy)
	}
	parts := s.Segment().Checkpoint
	if len(parts) == 0 {
		return nil
	}
	if parts[0].Kind == deltalog.UUIDCheckpoint {
		return invalid("version %d rests on the V2 checkpoint %s", s.Version(), parts[0].Key)
	}
	keys := make([]string, len(parts))
	for i, p := range parts {
		keys[i] = p.Key
	}
	v2 := false
	err := checkpoint.Read(ctx, s.Store(), keys, checkpoint.CheckpointMetadata, func(batch []actions.Action) error {
		v2 = v2 || len(batch) > 0
		return nil
	})
	if err != nil {
		return err
	}
	if v2 {
		return invalid("version %d rests on checkpoint %s of the V2 spec", s.Version(), parts[0].Key)
	}
	return nil
}

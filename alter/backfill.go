package alter

import (
	"context"
	"errors"
	"slices"
	"strconv"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/internal/rowcheck"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/tableconfig"
	"github.com/godelta/delta/txn"
)

// OpRowTrackingBackfill names the commits that give row ids to the files
// of a table that did not track them (Spark's operation name). They are
// read by DESCRIBE HISTORY: never change it.
const OpRowTrackingBackfill = "ROW TRACKING BACKFILL"

// DefaultBackfillBatchFiles is the most files one backfill commit
// re-adds when Options.BackfillBatchFiles is 0: Spark's default
// (spark.databricks.delta.backfill.maxNumFiles), which keeps a commit
// under about 100 MB.
const DefaultBackfillBatchFiles = 22000

// errBackfillDone ends a backfill batch that found no file to re-add.
var errBackfillDone = errors.New("alter: nothing left to backfill")

// errNeedsBackfill is returned by the computation of the commit that turns
// row tracking on when a live file still has no row ids: the backfill runs
// again.
var errNeedsBackfill = errors.New("alter: a file has no row ids yet")

// backfillRounds bounds the rounds of backfill-then-enable that
// SetProperties runs: a round fails only when a writer that does not
// assign row ids added files in between.
const backfillRounds = 3

// needsBackfill reports whether the table of s has a live file without a
// baseRowId.
func needsBackfill(ctx context.Context, s *snapshot.Snapshot) (bool, error) {
	for a, err := range s.Files(ctx) {
		if err != nil {
			return false, err
		}
		if a.BaseRowID == nil {
			return true, nil
		}
	}
	return false, nil
}

// backfillRowIDs gives row ids to every live file of the table that has
// none, as Spark's RowTrackingBackfillCommand does before it turns row
// tracking on; it does not turn it on (SetProperties does, after it). It
// returns the number of backfill commits made.
//
// First, when the protocol does not support rowTracking, an UPGRADE
// PROTOCOL commit adds it (and domainMetadata, which it requires), without
// setting delta.enableRowTracking: from then on every writer assigns row
// ids to the files it adds (txn). Then ROW TRACKING BACKFILL commits, of at
// most Options.BackfillBatchFiles files each (operation parameter batchId,
// from 0), re-add the live files that have no baseRowId: same path,
// deletion vector and statistics, dataChange false. The transaction gives
// them fresh baseRowIds above the high-water mark, their
// defaultRowCommitVersion, and a new high-water mark. Each batch records
// the files it re-adds as read: a concurrent commit that removes one of
// them (DELETE, OPTIMIZE) makes the batch run again on the newer table, so
// a removed file is never brought back; a concurrent append does not
// conflict, and gets its own ids above the mark. Every file needs
// numRecords in its statistics, as row tracking requires.
func backfillRowIDs(ctx context.Context, snap *snapshot.Snapshot, opts Options) (int, error) {
	if p := snap.Protocol(); !tableconfig.HasWriterFeature(&p, actions.FeatureRowTracking) {
		if _, err := EnableFeature(ctx, snap, actions.FeatureRowTracking, opts); err != nil {
			return 0, err
		}
	}
	limit := opts.BackfillBatchFiles
	if limit <= 0 {
		limit = DefaultBackfillBatchFiles
	}
	commits := 0
	for batch := 0; ; batch++ {
		s, err := snap.Update(ctx)
		if err != nil {
			return commits, err
		}
		snap = s
		to := opts.Txn
		to.Operation = OpRowTrackingBackfill
		to.OperationParameters = map[string]any{"batchId": strconv.Itoa(batch)}
		_, err = txn.Update(ctx, snap, to, func(tx *txn.Transaction) error {
			return backfillBatch(ctx, tx, limit)
		})
		if errors.Is(err, errBackfillDone) {
			return commits, nil
		}
		if err != nil {
			return commits, err
		}
		commits++
	}
}

// backfillBatch stages the re-add of up to limit live files of the
// transaction's snapshot that have no baseRowId, or returns
// errBackfillDone when there is none.
func backfillBatch(ctx context.Context, tx *txn.Transaction, limit int) error {
	s := tx.Snapshot()
	if p := s.Protocol(); !tableconfig.HasWriterFeature(&p, actions.FeatureRowTracking) {
		// The upgrade was undone by another writer: re-adds would get
		// no ids.
		return invalid("row tracking backfill: the protocol no longer supports %s", actions.FeatureRowTracking)
	}
	var paths []string
	for a, err := range s.Files(ctx) {
		if err != nil {
			return err
		}
		if a.BaseRowID != nil {
			continue
		}
		add := *a
		add.DataChange = false
		add.DefaultRowCommitVersion = nil // the backfill commit's version
		tx.Add(add)
		paths = append(paths, a.Path)
		if len(paths) == limit {
			break
		}
	}
	if len(paths) == 0 {
		return errBackfillDone
	}
	tx.ReadFiles(paths...)
	// No row is written: the files re-added hold rows checked when they
	// were first written.
	rowcheck.Mark(tx)
	return nil
}

// turnsOnRowTracking reports whether setting props on the table of s
// turns row tracking on.
func turnsOnRowTracking(s *snapshot.Snapshot, props map[string]string) (bool, error) {
	if s.Config().RowTracking() {
		return false, nil
	}
	merged := cloneProps(s)
	for k, v := range props {
		merged[k] = v
	}
	feats, err := tableconfig.FeaturesFor(merged)
	if err != nil {
		return false, err
	}
	return slices.Contains(feats, actions.FeatureRowTracking), nil
}

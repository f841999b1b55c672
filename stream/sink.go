package stream

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"sync"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/txn"
	"github.com/godelta/delta/write"
)

// SinkOptions configure a Sink. The zero value is usable.
type SinkOptions struct {
	// Write tunes the data files (size, compression).
	Write write.Options
	// Txn configures the commits. Operation defaults to Spark's
	// "STREAMING UPDATE", with its parameters (outputMode Append,
	// queryId the application id, epochId the batch version).
	Txn txn.Options
	// NoPostCommit leaves the checkpoints and log cleanup due after a
	// commit to the caller (txn.PostCommit); by default Write runs them.
	NoPostCommit bool
}

// Sink commits the batches of one application exactly once: see the
// package doc. It holds no resource and is safe for concurrent use.
type Sink struct {
	store logstore.Store
	appID string
	opts  SinkOptions

	mu   sync.Mutex
	snap *snapshot.Snapshot // the newest snapshot loaded, brought up to date by Update
}

// SinkResult is what Write did with a batch.
type SinkResult struct {
	// Skipped is true when the table already held the application at the
	// batch's version or later: nothing was written or committed.
	Skipped bool
	// Commit is the commit's result, when not Skipped.
	Commit txn.CommitResult
}

// NewSink returns the sink of application appID (the txn appId, which
// must not be empty: deltaerr.ErrInvalidArgument) into the table in store.
func NewSink(store logstore.Store, appID string, opts SinkOptions) (*Sink, error) {
	if appID == "" {
		return nil, fmt.Errorf("stream: sink needs an application id: %w", deltaerr.ErrInvalidArgument)
	}
	return &Sink{store: store, appID: appID, opts: opts}, nil
}

// AppID returns the application id.
func (s *Sink) AppID() string { return s.appID }

// LastVersion returns the last batch version the application committed
// to the table, and false when it committed none (or its txn expired: see
// delta.setTransactionRetentionDuration). A producer restarts after it.
func (s *Sink) LastVersion(ctx context.Context) (int64, bool, error) {
	snap, err := s.latest(ctx)
	if err != nil {
		return 0, false, err
	}
	return snap.TxnVersion(ctx, s.appID)
}

// Write writes the rows of batches, in table schema order, and commits
// them with txn(appID, version) in one commit, unless the table already
// holds the application at version or later (Skipped). A batch without
// rows (nil batches too) commits the txn alone, so that its version is recorded too.
// batches is consumed at most once. Errors are those of write.Append: a
// *write.ConstraintError for a bad row (nothing committed), txn's for the
// commit (txn.ErrCommitUnknown: the batch may have landed; LastVersion
// tells), storage errors.
func (s *Sink) Write(ctx context.Context, version int64, batches iter.Seq2[schema.Batch, error]) (SinkResult, error) {
	snap, err := s.latest(ctx)
	if err != nil {
		return SinkResult{}, err
	}
	p, m := snap.Protocol(), snap.Metadata()
	if err := txn.WriteSupportedChecked(&p, &m); err != nil {
		return SinkResult{}, err
	}
	if batches == nil {
		batches = func(func(schema.Batch, error) bool) {}
	}
	topts := s.txnOptions(version)
	app := write.AppTransaction{ID: s.appID, Version: version}
	res, err := write.Append(ctx, snap, batches, write.CommitOptions{Options: s.opts.Write, Txn: topts, App: app})
	if errors.Is(err, write.ErrNoRows) {
		res, err = s.commitEmpty(ctx, snap, topts, app)
	}
	if errors.Is(err, write.ErrAppVersionCommitted) {
		return SinkResult{Skipped: true}, nil
	}
	if err != nil {
		return SinkResult{}, err
	}
	if !s.opts.NoPostCommit {
		txn.PostCommit(ctx, &res)
	}
	return SinkResult{Commit: res}, nil
}

// latest returns the table's latest snapshot: loaded once, then brought
// up to date by reading only the commits since (snapshot.Update), so that
// a producer's commit does not replay the log each time.
func (s *Sink) latest(ctx context.Context) (*snapshot.Snapshot, error) {
	s.mu.Lock()
	prev := s.snap
	s.mu.Unlock()
	var snap *snapshot.Snapshot
	var err error
	if prev == nil || stale(prev) {
		snap, err = snapshot.Load(ctx, s.store, deltalog.Latest)
	} else {
		snap, err = prev.Update(ctx)
	}
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.snap == nil || s.snap.Version() < snap.Version() {
		s.snap = snap
	}
	s.mu.Unlock()
	return snap, nil
}

// stale reports whether snap is far enough past its checkpoint that a
// fresh Load (from a newer checkpoint) is worth it: Update keeps the
// checkpoint of the first Load, and its commits since in memory.
func stale(snap *snapshot.Snapshot) bool {
	cp, ok := snap.Segment().CheckpointVersion()
	if !ok {
		cp = 0
	}
	return snap.Version()-cp > 200
}

// commitEmpty commits the txn of an empty batch.
func (s *Sink) commitEmpty(ctx context.Context, snap *snapshot.Snapshot, topts txn.Options, app write.AppTransaction) (txn.CommitResult, error) {
	return txn.Update(ctx, snap, topts, func(tx *txn.Transaction) error {
		v, ok, err := tx.TxnVersion(ctx, app.ID)
		if err != nil {
			return err
		}
		if ok && v >= app.Version {
			return write.ErrAppVersionCommitted
		}
		tx.SetTransaction(app.ID, app.Version)
		return nil
	})
}

// txnOptions are Spark's for a streaming append.
func (s *Sink) txnOptions(version int64) txn.Options {
	o := s.opts.Txn
	if o.Operation == "" {
		o.Operation = "STREAMING UPDATE"
		if o.OperationParameters == nil {
			o.OperationParameters = map[string]any{"outputMode": "Append", "queryId": s.appID, "epochId": strconv.FormatInt(version, 10)}
		}
	}
	return o
}

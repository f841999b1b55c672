package txn

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/checkpoint"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/snapshot"
)

// Backoff between attempts: full jitter over an exponential bound, capped.
const (
	backoffBase = time.Millisecond
	backoffCap  = 64 * time.Millisecond
	// readBackTries bounds the reads of a version after an ambiguous put.
	readBackTries = 3
)

// attemptState is what changes from one attempt to the next: the state the
// transaction is rebased on.
type attemptState struct {
	level     IsolationLevel
	blind     bool
	ict       bool  // write in-commit timestamps
	lastTS    int64 // timestamp of the newest commit seen, ms
	rowTrack  bool  // assign row ids
	mark      int64 // row-id high-water mark of the newest commit seen
	fresh     []bool
	ambiguous bool // a put of this Commit may have landed unseen
}

// Commit writes the staged actions as the next version of the table and
// returns that version. See the package doc for the checks, retries and
// errors: a *ConflictError (errors.Is ErrConflict), ErrRetriesExhausted,
// ErrCommitUnknown, a *deltaerr.FeatureError for a table this package
// cannot write, deltaerr.ErrInvalidArgument for staged actions that break
// the protocol's rules, or a storage error. A Transaction commits at most
// once: a second call returns ErrDone.
//
// After a commit whose version is a multiple of the table property
// delta.checkpointInterval (default 10), Commit writes a checkpoint of that
// version, unless Options.NoCheckpoint is set, and then deletes the log
// files older than delta.logRetentionDuration (default 30 days) that no
// retained version needs, unless delta.enableExpiredLogCleanup is false. A
// checkpoint or cleanup that fails is logged as a warning: the commit
// stands, and readers use the commits.
func (t *Transaction) Commit(ctx context.Context) (int64, error) {
	v, err := t.commit(ctx)
	if err == nil {
		t.checkpointAfter(ctx, v)
	}
	return v, err
}

// checkpointAfter writes the checkpoint a commit at version v is due.
func (t *Transaction) checkpointAfter(ctx context.Context, v int64) {
	if t.opts.NoCheckpoint {
		return
	}
	conf := t.snap.Properties()
	if t.metadata != nil {
		conf = t.metadata.Configuration
	}
	interval := int64(DefaultCheckpointInterval)
	if s, ok := conf["delta.checkpointInterval"]; ok {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			t.log.WarnContext(ctx, "txn: ignoring an invalid delta.checkpointInterval", "value", s)
		} else {
			interval = n
		}
	}
	if v%interval != 0 {
		return
	}
	store := t.snap.Store()
	snap, err := snapshot.Load(ctx, store, v)
	if err == nil {
		_, err = checkpoint.Write(ctx, store, snap, checkpoint.WriteOptions{})
	}
	if err != nil {
		t.log.WarnContext(ctx, "txn: the checkpoint after the commit failed; the commit stands", "version", v, "err", err)
		return
	}
	// Then, as Spark does, the expired log goes, unless the table says no.
	if conf["delta.enableExpiredLogCleanup"] == "false" {
		return
	}
	retention := deltalog.DefaultLogRetention
	if s, ok := conf["delta.logRetentionDuration"]; ok {
		if retention, err = snapshot.ParseInterval(s); err != nil {
			t.log.WarnContext(ctx, "txn: ignoring an invalid delta.logRetentionDuration; no log cleanup", "value", s)
			return
		}
	}
	opts := deltalog.CleanupOptions{Retention: retention, SidecarRefs: checkpoint.SidecarRefs(store)}
	if t.opts.Clock != nil {
		opts.Now = t.opts.Clock
	}
	if _, err := deltalog.Cleanup(ctx, store, opts); err != nil {
		t.log.WarnContext(ctx, "txn: log cleanup after the checkpoint failed", "version", v, "err", err)
	}
}

// DefaultCheckpointInterval is how many commits apart checkpoints are
// written when the table does not set delta.checkpointInterval.
const DefaultCheckpointInterval = 10

func (t *Transaction) commit(ctx context.Context) (int64, error) {
	if t.done {
		return 0, ErrDone
	}
	t.done = true
	if err := t.validate(); err != nil {
		return 0, err
	}
	st, err := t.initialState(ctx)
	if err != nil {
		return 0, err
	}
	store := t.snap.Store()
	maxRetries := t.opts.MaxRetries
	if maxRetries == 0 {
		maxRetries = DefaultMaxRetries
	}
	version := t.snap.Version() + 1
	// backoff is set after a failed put: storage trouble, worth waiting
	// out. A race lost to other writers is retried at once, with the
	// winners checked and rebased on: waiting would only let more writers
	// pass (Spark and delta-rs retry at once too). After many lost races in
	// a row, a little jitter breaks lockstep with the other writers.
	backoff := false
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			if attempt > maxRetries {
				if st.ambiguous {
					return 0, fmt.Errorf("txn: %w after %d attempts: %w", ErrCommitUnknown, attempt, ErrRetriesExhausted)
				}
				return 0, fmt.Errorf("%w: %d attempts, last at version %d", ErrRetriesExhausted, attempt, version)
			}
			var err error
			switch {
			case backoff:
				err = sleep(ctx, attempt)
			case attempt >= lostRacesBeforeJitter:
				err = jitter(ctx)
			}
			if err != nil {
				return 0, t.unknownIf(st, version, err)
			}
			backoff = false
		}
		data, err := t.encode(st, version)
		if err != nil {
			return 0, err
		}
		key := deltalog.CommitKey(version)
		err = store.PutIfAbsent(ctx, key, data)
		if err == nil {
			t.log.DebugContext(ctx, "txn: committed", "version", version, "txnId", t.id, "attempts", attempt+1)
			return version, nil
		}
		var first *winner
		if !errors.Is(err, logstore.ErrAlreadyExists) {
			// The put may have landed: read the version back.
			st.ambiguous = true
			backoff = true
			t.log.DebugContext(ctx, "txn: ambiguous put, reading it back", "version", version, "err", err)
			w, rerr := t.readBack(ctx, store, version)
			if rerr != nil {
				return 0, fmt.Errorf("txn: %w: put of %s failed (%v) and reading it back failed: %w", ErrCommitUnknown, key, err, rerr)
			}
			if w == nil {
				continue // it did not land: put again
			}
			first = w
		}
		next, done, err := t.resolve(ctx, store, st, version, first)
		if err != nil || done {
			return next, err
		}
		t.log.DebugContext(ctx, "txn: lost the race, rebased", "version", version, "next", next, "txnId", t.id)
		version = next
	}
}

// unknownIf wraps err in ErrCommitUnknown when a put of this Commit may
// have landed unseen.
func (t *Transaction) unknownIf(st *attemptState, version int64, err error) error {
	if st.ambiguous {
		return fmt.Errorf("txn: %w (version %d or earlier): %w", ErrCommitUnknown, version, err)
	}
	return err
}

// resolve reads the winners from version on (first, when not nil, is the
// one at version, already read), checks each, and rebases st onto them. It
// returns the next version to try, or done with the version when a winner
// is this transaction's own commit.
func (t *Transaction) resolve(ctx context.Context, store logstore.Store, st *attemptState, version int64, first *winner) (int64, bool, error) {
	next := version
	for v := version; ; v++ {
		w := first
		if v != version || w == nil {
			data, err := store.Get(ctx, deltalog.CommitKey(v))
			if errors.Is(err, logstore.ErrNotFound) {
				break
			}
			if err != nil {
				return 0, false, t.unknownIf(st, v, fmt.Errorf("txn: reading winning commit %d: %w", v, err))
			}
			if w, err = decodeWinner(v, data); err != nil {
				return 0, false, err
			}
		}
		if w.txnID() == t.id {
			t.log.DebugContext(ctx, "txn: found own commit", "version", v, "txnId", t.id)
			return v, true, nil
		}
		if err := t.checkConflicts(w, st.level); err != nil {
			t.log.DebugContext(ctx, "txn: conflict", "err", err, "txnId", t.id)
			return 0, false, err
		}
		if err := st.rebase(w); err != nil {
			return 0, false, err
		}
		next = v + 1
	}
	return next, false, nil
}

// readBack reads version after an ambiguous put: the winner there, or nil
// when nothing is there.
func (t *Transaction) readBack(ctx context.Context, store logstore.Store, version int64) (*winner, error) {
	var err error
	for try := 0; try < readBackTries; try++ {
		if try > 0 {
			if serr := sleep(ctx, try); serr != nil {
				return nil, serr
			}
		}
		var data []byte
		data, err = store.Get(ctx, deltalog.CommitKey(version))
		switch {
		case errors.Is(err, logstore.ErrNotFound):
			return nil, nil
		case err == nil:
			return decodeWinner(version, data)
		}
	}
	return nil, err
}

// lostRacesBeforeJitter is how many races in a row a commit loses before
// it waits a random moment (up to jitterMax) between attempts.
const (
	lostRacesBeforeJitter = 5
	jitterMax             = 2 * time.Millisecond
)

func jitter(ctx context.Context) error {
	timer := time.NewTimer(rand.N(jitterMax) + 1)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

func sleep(ctx context.Context, attempt int) error {
	bound := min(backoffBase<<min(attempt-1, 16), backoffCap)
	d := rand.N(bound) + 1
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// initialState computes the attempt state from the snapshot read. Only
// row tracking reads more of the snapshot than its protocol and metadata:
// the high-water mark's domain, and the files that staged removes carry
// row ids from.
func (t *Transaction) initialState(ctx context.Context) (*attemptState, error) {
	p := t.snap.Protocol()
	props := t.snap.Properties()
	st := &attemptState{
		level:  t.isolation(),
		blind:  t.isBlindAppend(),
		ict:    p.HasWriterFeature(actions.FeatureInCommitTimestamp) && props["delta.enableInCommitTimestamps"] == "true",
		lastTS: t.snap.Timestamp().UnixMilli(),
		// The protocol's row-tracking writer requirements apply as soon
		// as the feature is supported.
		rowTrack: p.HasWriterFeature(actions.FeatureRowTracking),
		mark:     noHighWaterMark,
	}
	if st.rowTrack {
		cfg, ok, err := t.snap.DomainMetadata(ctx, rowTrackingDomain)
		if err != nil {
			return nil, err
		}
		if ok {
			m, err := parseHighWaterMark(cfg, fmt.Sprintf("snapshot %d", t.snap.Version()))
			if err != nil {
				return nil, err
			}
			st.mark = m
		}
		st.fresh = make([]bool, len(t.adds))
		for i := range t.adds {
			st.fresh[i] = t.adds[i].BaseRowID == nil
		}
		if err := t.carryRowIDs(ctx); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// carryRowIDs gives each staged remove without a baseRowId those of the
// live add it removes, as row tracking requires of removes.
func (t *Transaction) carryRowIDs(ctx context.Context) error {
	type key struct{ path, dv string }
	want := map[key]int{}
	for i := range t.removes {
		r := &t.removes[i]
		if r.BaseRowID == nil {
			want[key{snapshot.CanonicalPath(r.Path), r.DeletionVector.UniqueID()}] = i
		}
	}
	if len(want) == 0 {
		return nil
	}
	for a, err := range t.snap.Files(ctx) {
		if err != nil {
			return err
		}
		i, ok := want[key{snapshot.CanonicalPath(a.Path), a.DeletionVector.UniqueID()}]
		if !ok {
			continue
		}
		r := &t.removes[i]
		r.BaseRowID = a.BaseRowID
		if r.DefaultRowCommitVersion == nil {
			r.DefaultRowCommitVersion = a.DefaultRowCommitVersion
		}
	}
	return nil
}

// rebase moves the state past winner w, which passed the checks.
func (st *attemptState) rebase(w *winner) error {
	if ci := w.commitInfo; ci != nil {
		switch {
		case ci.InCommitTimestamp != nil:
			st.lastTS = max(st.lastTS, *ci.InCommitTimestamp)
		case ci.Timestamp != nil:
			st.lastTS = max(st.lastTS, *ci.Timestamp)
		}
	}
	for _, d := range w.domains {
		if d.Domain != rowTrackingDomain || d.Removed {
			continue
		}
		m, err := parseHighWaterMark(d.Configuration, deltalog.CommitKey(w.version))
		if err != nil {
			return err
		}
		st.mark = max(st.mark, m)
	}
	return nil
}

// encode builds the commit file for version.
func (t *Transaction) encode(st *attemptState, version int64) ([]byte, error) {
	now := t.now().UnixMilli()
	ts := now
	if st.ict {
		ts = max(now, st.lastTS+1)
	}
	readVersion := version - 1
	blind := st.blind
	op := cmp.Or(t.opts.Operation, "WRITE")
	ci := &actions.CommitInfo{
		Timestamp:           &ts,
		Operation:           op,
		OperationParameters: copyMap(t.opts.OperationParameters),
		ReadVersion:         &readVersion,
		IsolationLevel:      string(st.level),
		IsBlindAppend:       &blind,
		EngineInfo:          t.opts.EngineInfo,
		UserMetadata:        t.opts.UserMetadata,
		TxnID:               t.id,
	}
	if ci.OperationParameters == nil {
		ci.OperationParameters = map[string]any{}
	}
	if st.ict {
		ci.InCommitTimestamp = &ts
	}

	n := 3 + len(t.domains) + len(t.txns) + len(t.adds) + len(t.removes) + len(t.cdcs)
	acts := make([]actions.Action, 0, n)
	acts = append(acts, actions.Action{CommitInfo: ci}) // first, as in-commit timestamps require
	if t.protocol != nil {
		acts = append(acts, actions.Action{Protocol: t.protocol})
	}
	if t.metadata != nil {
		acts = append(acts, actions.Action{Metadata: t.metadata})
	}

	adds := t.adds
	if st.rowTrack {
		var mark int64
		var err error
		adds, mark, err = assignRowIDs(t.adds, st.fresh, st.mark, version)
		if err != nil {
			return nil, err
		}
		if mark != st.mark {
			d := highWaterMarkDomain(mark)
			acts = append(acts, actions.Action{DomainMetadata: &d})
		}
	}
	for _, name := range sortedKeys(t.domains) {
		d := t.domains[name]
		acts = append(acts, actions.Action{DomainMetadata: &d})
	}
	for _, id := range sortedKeys(t.txns) {
		x := t.txns[id]
		x.LastUpdated = &ts
		acts = append(acts, actions.Action{Txn: &x})
	}
	for i := range adds {
		acts = append(acts, actions.Action{Add: &adds[i]})
	}
	for i := range t.removes {
		r := t.removes[i]
		if r.DeletionTimestamp == nil {
			r.DeletionTimestamp = &ts
		}
		acts = append(acts, actions.Action{Remove: &r})
	}
	for i := range t.cdcs {
		acts = append(acts, actions.Action{CDC: &t.cdcs[i]})
	}
	return actions.EncodeCommit(acts)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

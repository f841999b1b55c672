package txn

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/internal/invariants"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/tableconfig"
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
	enableICT bool  // this commit turns in-commit timestamps on: stamp the enablement properties
	lastTS    int64 // timestamp of the newest commit seen, ms
	rowTrack  bool  // assign row ids
	mark      int64 // row-id high-water mark of the newest commit seen
	fresh     []bool
	ambiguous bool // a put of this Commit may have landed unseen
}

// Commit writes the staged actions as the next version of the table and
// returns what landed: the version, the commit's timestamp, the attempts it
// took, and the maintenance now due (PostCommitWork), which Commit does not
// run: see PostCommit. See the package doc for the checks, retries and
// errors: a *ConflictError (errors.Is ErrConflict), ErrRetriesExhausted,
// ErrCommitUnknown, ErrTableExists (a transaction of BeginCreate), a
// *deltaerr.FeatureError for a table this package cannot write,
// deltaerr.ErrInvalidArgument for staged actions that break the protocol's
// rules, or a storage error. A Transaction commits at most once: a second
// call returns ErrDone.
func (t *Transaction) Commit(ctx context.Context) (CommitResult, error) {
	l, err := t.commit(ctx)
	if err != nil {
		return CommitResult{}, err
	}
	// The configuration in force at the new version (validate built it):
	// no winner changed it, or the conflict checks would have failed the
	// commit.
	cfg := t.config
	return CommitResult{
		Version:    l.version,
		Timestamp:  time.UnixMilli(l.ts).UTC(),
		Attempts:   l.attempts,
		PostCommit: postCommitDue(cfg, l.version, t.opts),
		store:      t.store,
		cfg:        cfg,
		clock:      t.opts.Clock,
		log:        t.log,
		read:       t.snap,
		data:       l.data,
		op:         t.operation(),
		engine:     t.opts.EngineInfo,
		written:    t.partitionsWritten(),
	}, nil
}

// partitionsWritten returns the distinct partition values of the staged
// adds that hold new rows (CommitResult.PartitionsWritten).
func (t *Transaction) partitionsWritten() []map[string]string {
	var out []map[string]string
	seen := map[string]bool{}
	for i := range t.adds {
		a := &t.adds[i]
		if !a.DataChange || a.DeletionVector != nil {
			continue
		}
		var k strings.Builder
		for _, c := range slices.Sorted(maps.Keys(a.PartitionValues)) {
			fmt.Fprintf(&k, "%q=%q/", c, a.PartitionValues[c])
		}
		if !seen[k.String()] {
			seen[k.String()] = true
			pv := a.PartitionValues
			if pv == nil {
				pv = map[string]string{}
			}
			out = append(out, pv)
		}
	}
	return out
}

// landed is a commit in the log: its version, commitInfo.timestamp (ms)
// and the attempts it took.
type landed struct {
	version  int64
	ts       int64
	attempts int
	data     []byte // the commit file as written
}

func (t *Transaction) commit(ctx context.Context) (landed, error) {
	if t.done {
		return landed{}, ErrDone
	}
	t.done = true
	if err := t.validate(); err != nil {
		return landed{}, err
	}
	st, err := t.initialState(ctx)
	if err != nil {
		return landed{}, err
	}
	if t.snap == nil {
		return t.commitNew(ctx, st)
	}
	store := t.store
	maxRetries := t.maxRetries()
	version := t.snap.Version() + 1
	// backoff is set after a failed put: storage trouble, worth waiting
	// out. A race lost to other writers is retried at once, with the
	// winners checked and rebased on: waiting would only let more writers
	// pass (Spark and delta-rs retry at once too). After many lost races in
	// a row, a little jitter breaks lockstep with the other writers.
	backoff := false
	var lastPutErr error // the last failed put, for the message
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			if attempt > maxRetries {
				if st.ambiguous {
					return landed{}, fmt.Errorf("%w after %d attempts (last put: %v): %w", ErrCommitUnknown, attempt, lastPutErr, ErrRetriesExhausted)
				}
				return landed{}, fmt.Errorf("%w: %d attempts, last at version %d", ErrRetriesExhausted, attempt, version)
			}
			var err error
			switch {
			case backoff:
				err = sleep(ctx, attempt)
			case attempt >= lostRacesBeforeJitter:
				err = jitter(ctx)
			}
			if err != nil {
				return landed{}, t.unknownIf(st, version, err)
			}
			backoff = false
		}
		data, ts, err := t.encode(st, version)
		if err != nil {
			return landed{}, err
		}
		key := deltalog.CommitKey(version)
		err = store.PutIfAbsent(ctx, key, data)
		if err == nil {
			if invariants.Enabled && attempt == 0 {
				// The fast path: no race lost, so the commit sits right on
				// the version read, and the post-commit snapshot may be
				// built from it without reading the log.
				invariants.Assertf(version == t.snap.Version()+1, "txn: first attempt committed version %d on a read of version %d", version, t.snap.Version())
			}
			t.log.DebugContext(ctx, "txn: committed", "version", version, "txnId", t.id, "attempts", attempt+1)
			return landed{version: version, ts: ts, attempts: attempt + 1, data: data}, nil
		}
		var first *winner
		if !errors.Is(err, logstore.ErrAlreadyExists) {
			if logstore.IsCertainFailure(err) {
				// Nothing was written (no permission, no space, no
				// root): retrying or reading back cannot help. Say so
				// at once, with the cause; the outcome is unknown only
				// if an earlier put of this Commit may have landed.
				return landed{}, t.unknownIf(st, version, fmt.Errorf("put of %s: %w", key, err))
			}
			// The put may have landed: read the version back.
			lastPutErr = err
			st.ambiguous = true
			backoff = true
			t.log.DebugContext(ctx, "txn: ambiguous put, reading it back", "version", version, "err", err)
			w, rerr := t.readBack(ctx, store, version)
			if rerr != nil {
				return landed{}, fmt.Errorf("%w: put of %s failed (%v) and reading it back failed: %w", ErrCommitUnknown, key, err, rerr)
			}
			if w == nil {
				continue // it did not land: put again
			}
			first = w
		}
		next, own, err := t.resolve(ctx, store, st, version, first)
		if err != nil {
			return landed{}, err
		}
		if own != nil {
			return landed{version: next, ts: own.timestamp(ts), attempts: attempt + 1}, nil
		}
		t.log.DebugContext(ctx, "txn: lost the race, rebased", "version", version, "next", next, "txnId", t.id)
		version = next
	}
}

// maxRetries is the bound on attempts after the first.
func (t *Transaction) maxRetries() int {
	if t.opts.MaxRetries == 0 {
		return DefaultMaxRetries
	}
	return t.opts.MaxRetries
}

// commitNew commits version 0 of a new table, for BeginCreate. There is no
// race to rebase on: another commit 0, or any log file, means the table
// exists. A put that may have landed is read back, as in commit.
func (t *Transaction) commitNew(ctx context.Context, st *attemptState) (landed, error) {
	store := t.store
	// A log that holds any log file is a table, even one whose commit 0
	// was cleaned up: a new commit 0 there would rewrite its history.
	for obj, err := range store.List(ctx, deltalog.LogDir, "") {
		if err != nil {
			return landed{}, fmt.Errorf("listing %s: %w", deltalog.LogDir, err)
		}
		if _, ok := deltalog.ParseName(obj.Key); ok {
			return landed{}, ErrTableExists
		}
	}
	key := deltalog.CommitKey(0)
	var lastPutErr error
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			if attempt > t.maxRetries() {
				return landed{}, fmt.Errorf("%w after %d attempts (last put: %v): %w", ErrCommitUnknown, attempt, lastPutErr, ErrRetriesExhausted)
			}
			if err := sleep(ctx, attempt); err != nil {
				return landed{}, t.unknownIf(st, 0, err)
			}
		}
		data, ts, err := t.encode(st, 0)
		if err != nil {
			return landed{}, err
		}
		err = store.PutIfAbsent(ctx, key, data)
		if err == nil {
			t.log.DebugContext(ctx, "txn: created the table", "txnId", t.id, "attempts", attempt+1)
			return landed{version: 0, ts: ts, attempts: attempt + 1, data: data}, nil
		}
		if errors.Is(err, logstore.ErrAlreadyExists) && !st.ambiguous {
			return landed{}, ErrTableExists
		}
		// Either the put may have landed, or an earlier one may have: the
		// commit 0 there says whose it is.
		if !errors.Is(err, logstore.ErrAlreadyExists) {
			if logstore.IsCertainFailure(err) {
				return landed{}, t.unknownIf(st, 0, fmt.Errorf("put of %s: %w", key, err))
			}
			lastPutErr = err
			st.ambiguous = true
		}
		w, rerr := t.readBack(ctx, store, 0)
		if rerr != nil {
			return landed{}, fmt.Errorf("%w: put of %s failed (%v) and reading it back failed: %w", ErrCommitUnknown, key, err, rerr)
		}
		switch {
		case w == nil:
			continue // it did not land: put again
		case w.txnID() == t.id:
			return landed{version: 0, ts: w.timestamp(ts), attempts: attempt + 1}, nil
		default:
			return landed{}, ErrTableExists
		}
	}
}

// unknownIf wraps err in ErrCommitUnknown when a put of this Commit may
// have landed unseen.
func (t *Transaction) unknownIf(st *attemptState, version int64, err error) error {
	if st.ambiguous {
		return fmt.Errorf("%w (version %d or earlier): %w", ErrCommitUnknown, version, err)
	}
	return err
}

// resolve reads the winners from version on (first, when not nil, is the
// one at version, already read), checks each, and rebases st onto them. It
// returns the next version to try, or, when a winner is this transaction's
// own commit, its version and that winner.
func (t *Transaction) resolve(ctx context.Context, store logstore.Store, st *attemptState, version int64, first *winner) (int64, *winner, error) {
	next := version
	for v := version; ; v++ {
		w := first
		if v != version || w == nil {
			var err error
			w, err = readWinner(ctx, store, v)
			if errors.Is(err, logstore.ErrNotFound) {
				break
			}
			if err != nil {
				if errors.Is(err, deltaerr.ErrCorrupt) {
					return 0, nil, err
				}
				return 0, nil, t.unknownIf(st, v, fmt.Errorf("reading winning commit %d: %w", v, err))
			}
		}
		if w.txnID() == t.id {
			t.log.DebugContext(ctx, "txn: found own commit", "version", v, "txnId", t.id)
			return v, w, nil
		}
		if err := t.checkConflicts(w, st.level); err != nil {
			t.log.DebugContext(ctx, "txn: conflict", "err", err, "txnId", t.id)
			return 0, nil, err
		}
		if err := st.rebase(w); err != nil {
			return 0, nil, err
		}
		if st.enableICT {
			// The commit that turns in-commit timestamps on follows a
			// winner dated by its file's modification time, as readers
			// date it (Spark's rule too): its timestamp must be later.
			info, err := store.Stat(ctx, deltalog.CommitKey(v))
			if err != nil {
				return 0, nil, t.unknownIf(st, v, fmt.Errorf("reading the time of winning commit %d: %w", v, err))
			}
			st.lastTS = max(st.lastTS, info.ModTime.UnixMilli())
		}
		next = v + 1
	}
	return next, nil, nil
}

// timestamp returns the commitInfo.timestamp of w, or fallback when it has
// none.
func (w *winner) timestamp(fallback int64) int64 {
	if ci := w.commitInfo; ci != nil {
		switch {
		case ci.InCommitTimestamp != nil:
			return *ci.InCommitTimestamp
		case ci.Timestamp != nil:
			return *ci.Timestamp
		}
	}
	return fallback
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
		var w *winner
		w, err = readWinner(ctx, store, version)
		switch {
		case errors.Is(err, logstore.ErrNotFound):
			return nil, nil
		case err == nil, errors.Is(err, deltaerr.ErrCorrupt):
			return w, err
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

// initialState computes the attempt state from the snapshot read, or, for
// a new table, from the protocol and metadata staged. Only row tracking
// reads more of the snapshot than its protocol and metadata: the
// high-water mark's domain, and the files that staged removes carry row
// ids from.
func (t *Transaction) initialState(ctx context.Context) (*attemptState, error) {
	var (
		p      actions.Protocol
		lastTS int64
	)
	if t.snap != nil {
		p, lastTS = t.snap.Protocol(), t.snap.Timestamp().UnixMilli()
	} else {
		p = *t.protocol // validate checked it is staged
	}
	// In-commit timestamps as the table has them once this commit lands
	// (the configuration validate built), as Spark decides from the new
	// metadata: the commit that turns them on carries one, and on a table
	// that had commits it also records its own version and timestamp as
	// the enablement properties (encode stamps them on every attempt),
	// which is where readers switch from file times to in-commit ones.
	ict := t.config.InCommitTimestamps()
	enableICT := ict && t.snap != nil && !t.snap.Config().InCommitTimestamps()
	if enableICT && t.metadata == nil {
		// The protocol alone turned the property on: the metaData
		// carries the enablement properties.
		m := t.snap.Metadata()
		t.metadata = &m
	}
	st := &attemptState{
		level:     t.isolation(),
		blind:     t.isBlindAppend(),
		ict:       ict,
		enableICT: enableICT,
		lastTS:    lastTS,
		// The protocol's row-tracking writer requirements apply as soon
		// as the feature is supported.
		rowTrack: tableconfig.HasWriterFeature(&p, actions.FeatureRowTracking),
		mark:     noHighWaterMark,
	}
	if st.rowTrack {
		if t.snap != nil {
			dm, ok, err := t.snap.DomainMetadata(ctx, rowTrackingDomain)
			if err != nil {
				return nil, err
			}
			if ok {
				m, err := parseHighWaterMark(dm, fmt.Sprintf("snapshot %d", t.snap.Version()))
				if err != nil {
					return nil, err
				}
				st.mark = m
			}
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
	if len(want) == 0 || t.snap == nil { // a create removes nothing
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

// operation is the commit's commitInfo.operation: Options.Operation,
// else WRITE, or CREATE TABLE for a new table.
func (t *Transaction) operation() string {
	if t.snap == nil {
		return cmp.Or(t.opts.Operation, "CREATE TABLE")
	}
	return cmp.Or(t.opts.Operation, "WRITE")
}

// encode builds the commit file for version, and returns it with its
// commitInfo.timestamp.
func (t *Transaction) encode(st *attemptState, version int64) ([]byte, int64, error) {
	now := t.now().UnixMilli()
	var readVersion *int64
	op := t.operation()
	if t.snap == nil {
		// A new table's commit is as Spark writes CREATE TABLE: no
		// readVersion, and the time of the metaData's createdTime, so
		// that the two agree.
		if t.metadata != nil && t.metadata.CreatedTime != nil {
			now = *t.metadata.CreatedTime
		}
	} else {
		readVersion = new(version - 1)
	}
	ts := now
	if st.ict {
		ts = max(now, st.lastTS+1)
	}
	blind := st.blind
	ci := &actions.CommitInfo{
		Timestamp:           &ts,
		Operation:           op,
		OperationParameters: copyMap(t.opts.OperationParameters),
		OperationMetrics:    copyMap(t.opts.OperationMetrics),
		ReadVersion:         readVersion,
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
	if t.snap != nil && t.config != nil && t.config.RowTracking() {
		// A create says nothing, as Spark's and Kernel's do not.
		preserved := t.opts.RowTrackingPreserved || len(t.removes) == 0
		ci.Tags = map[string]string{actions.TagRowTrackingPreserved: strconv.FormatBool(preserved)}
	}
	if t.opts.IdentityOnlyMetadata && t.metadata != nil && t.protocol == nil && !st.enableICT {
		if ci.Tags == nil {
			ci.Tags = map[string]string{}
		}
		ci.Tags[actions.TagIdentitySchemaUpdate] = "true"
	}

	n := 3 + len(t.domains) + len(t.txns) + len(t.adds) + len(t.removes) + len(t.cdcs)
	acts := make([]actions.Action, 0, n)
	acts = append(acts, actions.Action{CommitInfo: ci}) // first, as in-commit timestamps require
	if t.protocol != nil {
		acts = append(acts, actions.Action{Protocol: t.protocol})
	}
	if t.metadata != nil {
		m := t.metadata
		if st.enableICT {
			m = withICTEnablement(*m, version, ts)
		}
		acts = append(acts, actions.Action{Metadata: m})
	}

	adds := t.adds
	if st.rowTrack {
		var mark int64
		var err error
		adds, mark, err = assignRowIDs(t.adds, st.fresh, st.mark, version)
		if err != nil {
			return nil, 0, err
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
	// validate checked the staged actions one by one; this checks the
	// commit as written, so that no action the protocol forbids (and no
	// second protocol or metaData) ever reaches the log.
	if err := actions.CheckCommit(acts); err != nil {
		return nil, 0, fmt.Errorf("commit %d: %w: %w", version, err, deltaerr.ErrInvalidArgument)
	}
	data, err := actions.EncodeCommit(acts)
	return data, ts, err
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// withICTEnablement returns a copy of m whose configuration records that
// in-commit timestamps are on from version, whose in-commit timestamp is
// ts: delta.inCommitTimestampEnablementVersion and
// delta.inCommitTimestampEnablementTimestamp, as PROTOCOL.md "In-Commit
// Timestamps" asks of a commit that enables them on an existing table.
// Any values the metadata had (from an earlier enablement) are replaced.
func withICTEnablement(m actions.Metadata, version, ts int64) *actions.Metadata {
	m.Configuration = maps.Clone(m.Configuration)
	if m.Configuration == nil {
		m.Configuration = map[string]string{}
	}
	m.Configuration[tableconfig.KeyInCommitTimestampEnablementVersion] = strconv.FormatInt(version, 10)
	m.Configuration[tableconfig.KeyInCommitTimestampEnablementTimestamp] = strconv.FormatInt(ts, 10)
	return &m
}

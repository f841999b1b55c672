package txn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"time"

	"github.com/google/uuid"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/snapshot"
)

// IsolationLevel is how strictly a transaction is checked against the
// commits that won the race before it. See the package doc. The values are
// written to commitInfo.isolationLevel and read from the table property
// delta.isolationLevel: never change them.
type IsolationLevel string

// Isolation levels, strongest first.
const (
	Serializable      IsolationLevel = "Serializable"
	WriteSerializable IsolationLevel = "WriteSerializable"
	SnapshotIsolation IsolationLevel = "SnapshotIsolation"
)

func (l IsolationLevel) valid() bool {
	return l == Serializable || l == WriteSerializable || l == SnapshotIsolation
}

// DefaultMaxRetries is the number of attempts after the first that Commit
// makes when Options.MaxRetries is 0.
const DefaultMaxRetries = 100

// Options configure a Transaction. The zero value is usable.
type Options struct {
	// Isolation is the level to check conflicts at; empty means the table
	// property delta.isolationLevel, else WriteSerializable.
	Isolation IsolationLevel
	// Operation names the operation in commitInfo ("WRITE", "DELETE",
	// "OPTIMIZE", ...); empty means "WRITE".
	Operation string
	// OperationParameters are recorded in commitInfo.operationParameters.
	OperationParameters map[string]any
	// EngineInfo is recorded in commitInfo.engineInfo.
	EngineInfo string
	// UserMetadata is recorded in commitInfo.userMetadata.
	UserMetadata string
	// MaxRetries bounds the attempts after the first; 0 means
	// DefaultMaxRetries and a negative value means none (the first lost race
	// fails with ErrRetriesExhausted, after the conflict checks).
	MaxRetries int
	// Clock gives the commit time; nil means time.Now. For tests.
	Clock func() time.Time
	// Logger receives debug records of retries and conflicts; nil means
	// slog.Default().
	Logger *slog.Logger
	// NoCheckpoint turns off the checkpoint Commit writes every
	// delta.checkpointInterval versions.
	NoCheckpoint bool
	// RowsChecked declares that every row of the staged data files was
	// checked against the table's invariants, CHECK constraints and
	// generated columns (package write sets it). Without it, Commit refuses
	// tables that use those features, since it cannot see rows.
	RowsChecked bool
}

// Errors of Commit, besides *ConflictError.
var (
	// ErrConflict is matched by every *ConflictError: a concurrent commit
	// made this transaction's result wrong. Begin again on a new snapshot.
	ErrConflict = errors.New("txn: conflicting concurrent commit")

	// ErrRetriesExhausted is returned when Commit lost the race for a
	// version more than Options.MaxRetries times, without any conflict.
	ErrRetriesExhausted = errors.New("txn: commit retries exhausted")

	// ErrCommitUnknown is returned when a put of the commit file failed in a
	// way that may have landed and the version could not be read back: the
	// commit may or may not be in the log.
	ErrCommitUnknown = errors.New("txn: commit outcome unknown")

	// ErrDone is returned by a second call to Commit: a Transaction commits
	// at most once, whatever the first call returned.
	ErrDone = errors.New("txn: transaction already finished")
)

// Transaction is one optimistic write to a table: what it read, and the
// actions it will commit. It is not safe for concurrent use. It holds no
// resource: one that is dropped without Commit leaves no trace in the log.
type Transaction struct {
	snap *snapshot.Snapshot
	opts Options
	log  *slog.Logger
	now  func() time.Time
	id   string // commitInfo.txnId

	// What was read.
	readPredicates []expr.Expr
	readFiles      map[string]bool // canonical paths
	readWholeTable bool
	readAppIDs     map[string]bool

	// What will be written.
	adds     []actions.Add
	removes  []actions.Remove
	cdcs     []actions.CDC
	txns     map[string]actions.Txn
	domains  map[string]actions.DomainMetadata
	metadata *actions.Metadata
	protocol *actions.Protocol

	done bool
}

// Begin starts a transaction that reads snap. snap must not be nil: a table
// is created by other means. Begin does no I/O; every check happens in
// Commit. Neither reads snap's file actions (which a snapshot reads on
// first use) unless the transaction needs them: TxnVersion reads the txn
// column of the checkpoint, and on a row-tracking table Commit reads the
// high-water mark's domain and, for staged removes without row ids, the
// files.
func Begin(snap *snapshot.Snapshot, opts Options) *Transaction {
	t := &Transaction{
		snap:       snap,
		opts:       opts,
		log:        opts.Logger,
		now:        opts.Clock,
		id:         uuid.NewString(),
		readFiles:  map[string]bool{},
		readAppIDs: map[string]bool{},
		txns:       map[string]actions.Txn{},
		domains:    map[string]actions.DomainMetadata{},
	}
	if t.log == nil {
		t.log = slog.Default()
	}
	if t.now == nil {
		t.now = time.Now
	}
	return t
}

// ID returns the transaction's id, written to commitInfo.txnId.
func (t *Transaction) ID() string { return t.id }

// Snapshot returns the snapshot the transaction read.
func (t *Transaction) Snapshot() *snapshot.Snapshot { return t.snap }

// ReadPredicate records that the transaction read the rows matching p. A
// concurrent add into a partition p may match is then a conflict (subject to
// the isolation level).
func (t *Transaction) ReadPredicate(p expr.Expr) {
	if p != nil {
		t.readPredicates = append(t.readPredicates, p)
	}
}

// ReadFiles records that the transaction read these files (paths as in the
// log). A concurrent remove of any of them is a conflict.
func (t *Transaction) ReadFiles(paths ...string) {
	for _, p := range paths {
		t.readFiles[snapshot.CanonicalPath(p)] = true
	}
}

// ReadWholeTable records that the transaction depends on the whole table: any
// concurrent add that counts at its isolation level, and any concurrent
// remove, is a conflict.
func (t *Transaction) ReadWholeTable() { t.readWholeTable = true }

// TxnVersion returns the last version application appID committed in the
// snapshot read, as snapshot.TxnVersion does, and records the read: a
// concurrent txn action for appID is then a conflict. It may read the
// snapshot's checkpoint (its txn column only), hence the context and error.
func (t *Transaction) TxnVersion(ctx context.Context, appID string) (int64, bool, error) {
	t.readAppIDs[appID] = true
	return t.snap.TxnVersion(ctx, appID)
}

// Add stages add actions: data files already written.
func (t *Transaction) Add(adds ...actions.Add) { t.adds = append(t.adds, adds...) }

// Remove stages remove actions.
func (t *Transaction) Remove(removes ...actions.Remove) { t.removes = append(t.removes, removes...) }

// AddCDC stages cdc actions: change-data files already written.
func (t *Transaction) AddCDC(cdcs ...actions.CDC) { t.cdcs = append(t.cdcs, cdcs...) }

// SetTransaction stages a txn action recording that application appID has
// committed its version: the exactly-once marker of streaming writers. The
// action's lastUpdated is the commit time. A later call for the same appID
// replaces the earlier one.
func (t *Transaction) SetTransaction(appID string, version int64) {
	t.txns[appID] = actions.Txn{AppID: appID, Version: version}
}

// SetMetadata stages a new metaData action, replacing any staged before.
func (t *Transaction) SetMetadata(m actions.Metadata) { t.metadata = &m }

// SetProtocol stages a new protocol action, replacing any staged before.
func (t *Transaction) SetProtocol(p actions.Protocol) { t.protocol = &p }

// SetDomainMetadata stages a domainMetadata action (Removed for a
// tombstone), replacing any staged before for the same domain. The domain
// delta.rowTracking belongs to this package and is refused by Commit.
func (t *Transaction) SetDomainMetadata(d actions.DomainMetadata) { t.domains[d.Domain] = d }

// validate checks the staged actions against the protocol's rules for one
// commit and against what the table allows.
func (t *Transaction) validate() error {
	if t.snap == nil {
		return fmt.Errorf("txn: no snapshot to begin from: %w", deltaerr.ErrInvalidArgument)
	}
	if t.opts.Isolation != "" && !t.opts.Isolation.valid() {
		return fmt.Errorf("txn: isolation level %q: %w", t.opts.Isolation, deltaerr.ErrInvalidArgument)
	}
	p, m := t.snap.Protocol(), t.snap.Metadata()
	if err := writeSupported(&p, &m, t.opts.RowsChecked); err != nil {
		return err
	}
	if t.protocol != nil || t.metadata != nil {
		np, nm := p, m
		if t.protocol != nil {
			np = *t.protocol
		}
		if t.metadata != nil {
			nm = *t.metadata
		}
		if err := writeSupported(&np, &nm, t.opts.RowsChecked); err != nil {
			return err
		}
	}
	if _, ok := t.domains[rowTrackingDomain]; ok {
		return fmt.Errorf("txn: domain %s is managed by the transaction: %w", rowTrackingDomain, deltaerr.ErrInvalidArgument)
	}
	type key struct{ path, dv string }
	added := map[key]bool{}
	for i := range t.adds {
		a := &t.adds[i]
		if a.Path == "" {
			return fmt.Errorf("txn: add %d has no path: %w", i, deltaerr.ErrInvalidArgument)
		}
		k := key{snapshot.CanonicalPath(a.Path), a.DeletionVector.UniqueID()}
		if added[k] {
			return fmt.Errorf("txn: file %s added twice in one commit: %w", a.Path, deltaerr.ErrInvalidArgument)
		}
		added[k] = true
	}
	removed := map[key]bool{}
	appendOnly := m.Configuration["delta.appendOnly"] == "true"
	if t.metadata != nil {
		appendOnly = t.metadata.Configuration["delta.appendOnly"] == "true"
	}
	for i := range t.removes {
		r := &t.removes[i]
		if r.Path == "" {
			return fmt.Errorf("txn: remove %d has no path: %w", i, deltaerr.ErrInvalidArgument)
		}
		k := key{snapshot.CanonicalPath(r.Path), r.DeletionVector.UniqueID()}
		if removed[k] || added[k] {
			return fmt.Errorf("txn: file %s removed twice, or added and removed, in one commit: %w", r.Path, deltaerr.ErrInvalidArgument)
		}
		removed[k] = true
		if appendOnly && r.DataChange {
			return fmt.Errorf("txn: table is append-only (delta.appendOnly): cannot remove %s with dataChange: %w", r.Path, deltaerr.ErrInvalidArgument)
		}
	}
	return nil
}

// isBlindAppend reports whether the transaction only adds files and read
// nothing, as Delta Spark defines it.
func (t *Transaction) isBlindAppend() bool {
	return len(t.removes) == 0 && len(t.readPredicates) == 0 && len(t.readFiles) == 0 && !t.readWholeTable
}

// isolation returns the level the transaction is checked at: the one asked
// for, downgraded to SnapshotIsolation when it changes no data.
func (t *Transaction) isolation() IsolationLevel {
	level := t.opts.Isolation
	if level == "" {
		level = IsolationLevel(t.snap.Properties()["delta.isolationLevel"])
		if !level.valid() {
			level = WriteSerializable
		}
	}
	if t.metadata != nil || t.protocol != nil || len(t.txns) > 0 || len(t.domains) > 0 || len(t.cdcs) > 0 {
		return level
	}
	for i := range t.adds {
		if t.adds[i].DataChange {
			return level
		}
	}
	for i := range t.removes {
		if t.removes[i].DataChange {
			return level
		}
	}
	return SnapshotIsolation
}

// Update runs fn in a transaction on the newest snapshot of the table and
// commits it. On a conflict it loads the table again and runs fn again, up
// to Options.MaxRetries times, so fn must be idempotent: it may run more
// than once, and only the transaction of its last run is committed. An
// error from fn ends Update with that error and commits nothing.
func Update(ctx context.Context, snap *snapshot.Snapshot, opts Options, fn func(*Transaction) error) (int64, error) {
	maxRuns := opts.MaxRetries
	if maxRuns == 0 {
		maxRuns = DefaultMaxRetries
	}
	for run := 0; ; run++ {
		if run > 0 {
			s, err := snap.Update(ctx)
			if err != nil {
				return 0, err
			}
			snap = s
		}
		tx := Begin(snap, opts)
		if err := fn(tx); err != nil {
			return 0, err
		}
		v, err := tx.Commit(ctx)
		if err == nil || !errors.Is(err, ErrConflict) || run >= maxRuns {
			return v, err
		}
		tx.log.DebugContext(ctx, "txn: conflict, running the transaction again", "run", run+1, "err", err)
	}
}

func copyMap[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return nil
	}
	return maps.Clone(m)
}

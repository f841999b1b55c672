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
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/internal/rowcheck"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/tableconfig"
)

// IsolationLevel is how strictly a transaction is checked against the
// commits that won the race before it. See the package doc. The values are
// written to commitInfo.isolationLevel and read from the table property
// delta.isolationLevel: never change them.
type IsolationLevel string

// Isolation levels, strongest first (tableconfig's, which parses the
// table property).
const (
	Serializable      = IsolationLevel(tableconfig.Serializable)
	WriteSerializable = IsolationLevel(tableconfig.WriteSerializable)
	SnapshotIsolation = IsolationLevel(tableconfig.SnapshotIsolation)
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
	// OperationMetrics are recorded in commitInfo.operationMetrics. Spark
	// writes every value as a string ("12"); DML does the same.
	OperationMetrics map[string]any
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
	// NoCheckpoint leaves the checkpoint out of the work a commit makes
	// due: CommitResult.PostCommit.Checkpoint stays false whatever the
	// table's delta.checkpointInterval.
	NoCheckpoint bool
	// RowTrackingPreserved says that the stable row ids of the rows the
	// commit updates or copies, and the row commit versions of those it
	// copies, were preserved (materialized, as write.Rewrite does). On a
	// table with row tracking enabled the commit is then tagged
	// actions.TagRowTrackingPreserved "true"; a commit that removes no file
	// is tagged so without it, and one that removes files without it is
	// tagged "false", as PROTOCOL.md "Row Tracking" asks.
	RowTrackingPreserved bool
	// IdentityOnlyMetadata says that the metadata the commit stages
	// changes nothing but identity columns' high-water marks (a write that
	// generated identity values). The commit is then tagged
	// actions.TagIdentitySchemaUpdate "true", as Spark tags such commits:
	// Spark's conflict checker lets a concurrent transaction that changes
	// no metadata commit after one. Ignored when no metadata is staged.
	IdentityOnlyMetadata bool
}

// Errors of Commit, besides *ConflictError.
var (
	// ErrConflict is matched by every *ConflictError: a concurrent commit
	// made this transaction's result wrong. Begin again on a new snapshot.
	ErrConflict = errors.New("conflicting concurrent commit")

	// ErrRetriesExhausted is returned when Commit lost the race for a
	// version more than Options.MaxRetries times, without any conflict.
	ErrRetriesExhausted = errors.New("commit retries exhausted")

	// ErrCommitUnknown is returned when a put of the commit file failed in a
	// way that may have landed and the version could not be read back: the
	// commit may or may not be in the log.
	ErrCommitUnknown = errors.New("commit outcome unknown")

	// ErrDone is returned by a second call to Commit: a Transaction commits
	// at most once, whatever the first call returned.
	ErrDone = errors.New("transaction already finished")

	// ErrAppendOnly is returned by Commit for a transaction that removes
	// data (a remove with dataChange=true) from a table whose
	// delta.appendOnly is true: the table read, the metadata staged, or
	// the metadata of a concurrent commit it would be rebased on. It is
	// tableconfig.ErrAppendOnly, also exported as write.ErrAppendOnly and
	// delta.ErrAppendOnly, and matches deltaerr.ErrInvalidArgument.
	ErrAppendOnly = tableconfig.ErrAppendOnly

	// ErrTableExists is returned by the Commit of a transaction of
	// BeginCreate where a Delta log already is. It matches
	// deltaerr.ErrInvalidArgument too.
	ErrTableExists = fmt.Errorf("table already exists: %w", deltaerr.ErrInvalidArgument)
)

// Transaction is one optimistic write to a table: what it read, and the
// actions it will commit. It is not safe for concurrent use. It holds no
// resource: one that is dropped without Commit leaves no trace in the log.
type Transaction struct {
	snap  *snapshot.Snapshot // nil for a new table (BeginCreate)
	store logstore.Store
	opts  Options
	log   *slog.Logger
	now   func() time.Time
	id    string // commitInfo.txnId

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

	// rowsChecked: package write checked every row of the staged files
	// against the table's invariants, CHECK constraints and generated
	// columns. Set only through internal/rowcheck, never by a caller.
	rowsChecked bool

	done bool
	// config is the table's configuration once this transaction commits
	// (newConfig), built once by validate.
	config *tableconfig.Config
}

func init() {
	rowcheck.Install(func(tx any) bool {
		t, ok := tx.(*Transaction)
		if ok {
			t.rowsChecked = true
		}
		return ok
	})
}

// Begin starts a transaction that reads snap. snap must not be nil: a new
// table is created with BeginCreate. Begin does no I/O; every check happens
// in Commit. Neither reads snap's file actions (which a snapshot reads on
// first use) unless the transaction needs them: TxnVersion reads the txn
// column of the checkpoint, and on a row-tracking table Commit reads the
// high-water mark's domain and, for staged removes without row ids, the
// files.
func Begin(snap *snapshot.Snapshot, opts Options) *Transaction {
	t := begin(opts)
	t.snap = snap
	if snap != nil {
		t.store = snap.Store()
	}
	return t
}

// BeginCreate starts the transaction that creates a table in store: its
// Commit writes version 0 with put-if-absent, so that of two concurrent
// creators exactly one wins, and fails with ErrTableExists where a Delta
// log already is (any log file, not only a commit 0). The transaction must
// stage a protocol and a metaData (SetProtocol, SetMetadata); it may stage
// adds (a table created with data), but no removes, and it reads nothing,
// so it never conflicts. Its commitInfo is Spark's for CREATE TABLE:
// operation "CREATE TABLE" unless Options.Operation says otherwise, no
// readVersion, isolation level Serializable unless Options.Isolation says
// otherwise, and the metaData's createdTime, when set, as timestamp (and
// in-commit timestamp, when the staged protocol and configuration enable
// them). Snapshot returns nil.
func BeginCreate(store logstore.Store, opts Options) *Transaction {
	if opts.Isolation == "" {
		opts.Isolation = Serializable
	}
	t := begin(opts)
	t.store = store
	return t
}

func begin(opts Options) *Transaction {
	t := &Transaction{
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

// Snapshot returns the snapshot the transaction read; nil for a
// transaction of BeginCreate.
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
	if t.snap == nil {
		return 0, false, nil
	}
	return t.snap.TxnVersion(ctx, appID)
}

// SetOperationMetrics sets commitInfo.operationMetrics, replacing
// Options.OperationMetrics: for operations that know their figures only
// once their files are written (DELETE, UPDATE, MERGE).
func (t *Transaction) SetOperationMetrics(m map[string]any) { t.opts.OperationMetrics = copyMap(m) }

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

// Metadata returns the metadata the commit will have: the one staged by
// SetMetadata, else the snapshot's (none for a new table).
func (t *Transaction) Metadata() actions.Metadata {
	switch {
	case t.metadata != nil:
		return *t.metadata
	case t.snap != nil:
		return t.snap.Metadata()
	}
	return actions.Metadata{}
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
	if t.store == nil {
		return fmt.Errorf("no snapshot to begin from: %w", deltaerr.ErrInvalidArgument)
	}
	if t.opts.Isolation != "" && !t.opts.Isolation.valid() {
		return fmt.Errorf("isolation level %q: %w", t.opts.Isolation, deltaerr.ErrInvalidArgument)
	}
	var p actions.Protocol
	var m actions.Metadata
	if t.snap == nil {
		if t.protocol == nil || t.metadata == nil {
			return fmt.Errorf("a new table needs a protocol and a metaData: %w", deltaerr.ErrInvalidArgument)
		}
		if len(t.removes) > 0 {
			return fmt.Errorf("a new table has no file to remove: %w", deltaerr.ErrInvalidArgument)
		}
		// A new table has no rows but the staged ones: without adds,
		// there is no row to check.
		if err := tableconfig.WriteSupported(t.protocol, t.metadata, t.rowsChecked || len(t.adds) == 0); err != nil {
			return err
		}
	} else {
		p, m = t.snap.Protocol(), t.snap.Metadata()
		// Without adds the commit writes no row, so the table's row rules
		// (constraints, invariants, generated columns) have nothing to
		// check: VACUUM's commits, a remove-only commit.
		if err := tableconfig.WriteSupported(&p, &m, t.rowsChecked || len(t.adds) == 0); err != nil {
			return err
		}
	}
	if t.snap != nil && (t.protocol != nil || t.metadata != nil) {
		np, nm := p, m
		if t.protocol != nil {
			np = *t.protocol
		}
		if t.metadata != nil {
			nm = *t.metadata
		}
		if err := tableconfig.WriteSupported(&np, &nm, t.rowsChecked); err != nil {
			return err
		}
	}
	// A commit to a catalog-managed table (or one that makes a table
	// catalog-managed) goes through the catalog, which ratifies it; put
	// into the directory alone, it would bypass the catalog.
	for _, proto := range []*actions.Protocol{t.protocol, &p} {
		if proto != nil && tableconfig.HasWriterFeature(proto, actions.FeatureCatalogManaged) && !deltalog.ThroughCatalog(t.store) {
			return &deltaerr.CatalogManagedError{Op: "write"}
		}
	}
	if _, ok := t.domains[rowTrackingDomain]; ok {
		return fmt.Errorf("domain %s is managed by the transaction: %w", rowTrackingDomain, deltaerr.ErrInvalidArgument)
	}
	type key struct{ path, dv string }
	added := map[key]bool{}
	for i := range t.adds {
		a := &t.adds[i]
		if err := (&actions.Action{Add: a}).Check(); err != nil {
			return fmt.Errorf("staged add %d: %w: %w", i, err, deltaerr.ErrInvalidArgument)
		}
		k := key{snapshot.CanonicalPath(a.Path), a.DeletionVector.UniqueID()}
		if added[k] {
			return fmt.Errorf("file %s added twice in one commit: %w", a.Path, deltaerr.ErrInvalidArgument)
		}
		added[k] = true
	}
	removed := map[key]bool{}
	cfg, err := t.newConfig()
	if err != nil {
		return err
	}
	t.config = cfg
	if t.metadata != nil {
		// Every change of metadata (CREATE, ALTER, an append that merges
		// its schema, CLONE, RESTORE, CONVERT) passes here: the rules on
		// column names and properties that Spark checks on new metadata.
		var prev *tableconfig.Config
		if t.snap != nil {
			prev = t.snap.Config()
		}
		if err := cfg.CheckMetadataChange(prev); err != nil {
			return err
		}
	}
	if err := checkIcebergCompat(cfg, t.adds, t.metadata != nil); err != nil {
		return err
	}
	appendOnly := cfg.AppendOnly()
	for i := range t.removes {
		r := &t.removes[i]
		if err := (&actions.Action{Remove: r}).Check(); err != nil {
			return fmt.Errorf("staged remove %d: %w: %w", i, err, deltaerr.ErrInvalidArgument)
		}
		k := key{snapshot.CanonicalPath(r.Path), r.DeletionVector.UniqueID()}
		if removed[k] || added[k] {
			return fmt.Errorf("file %s removed twice, or added and removed, in one commit: %w", r.Path, deltaerr.ErrInvalidArgument)
		}
		removed[k] = true
		if appendOnly && r.DataChange {
			return fmt.Errorf("cannot remove %s with dataChange: %w", r.Path, ErrAppendOnly)
		}
	}
	for i := range t.cdcs {
		if err := (&actions.Action{CDC: &t.cdcs[i]}).Check(); err != nil {
			return fmt.Errorf("staged cdc %d: %w: %w", i, err, deltaerr.ErrInvalidArgument)
		}
	}
	return nil
}

// newConfig returns the configuration the table has once this
// transaction commits: the snapshot's, or the one of the staged protocol
// and metadata, checked. A staged property value Spark refuses is a
// *tableconfig.PropertyError: SetMetadata is how an ALTER TABLE ... SET
// TBLPROPERTIES reaches the log, and this is where it is checked.
func (t *Transaction) newConfig() (*tableconfig.Config, error) {
	if t.protocol == nil && t.metadata == nil {
		return t.snap.Config(), nil
	}
	var p actions.Protocol
	var m actions.Metadata
	if t.snap != nil { // else a create, which stages both
		p, m = t.snap.Protocol(), t.snap.Metadata()
	}
	if t.protocol != nil {
		p = *t.protocol
	}
	if t.metadata != nil {
		m = *t.metadata
	}
	cfg, err := tableconfig.New(p, m)
	if err != nil {
		return nil, fmt.Errorf("staged metadata: %w", err)
	}
	return cfg, nil
}

// removesData reports whether the transaction stages a remove with
// dataChange, which an append-only table refuses.
func (t *Transaction) removesData() bool {
	for i := range t.removes {
		if t.removes[i].DataChange {
			return true
		}
	}
	return false
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
	if level == "" && t.snap != nil {
		level = IsolationLevel(t.snap.Config().IsolationLevel())
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
// commits it, returning Commit's result (with the post-commit work due, not
// run). On a conflict it loads the table again and runs fn again, up to
// Options.MaxRetries times, so fn must be idempotent: it may run more than
// once, and only the transaction of its last run is committed. An error
// from fn ends Update with that error and commits nothing.
func Update(ctx context.Context, snap *snapshot.Snapshot, opts Options, fn func(*Transaction) error) (CommitResult, error) {
	maxRuns := opts.MaxRetries
	if maxRuns == 0 {
		maxRuns = DefaultMaxRetries
	}
	for run := 0; ; run++ {
		if run > 0 {
			s, err := snap.Update(ctx)
			if err != nil {
				return CommitResult{}, err
			}
			snap = s
		}
		tx := Begin(snap, opts)
		if err := fn(tx); err != nil {
			return CommitResult{}, err
		}
		res, err := tx.Commit(ctx)
		if err == nil || !errors.Is(err, ErrConflict) || run >= maxRuns {
			return res, err
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

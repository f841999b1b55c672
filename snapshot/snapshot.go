// Package snapshot reconstructs the state of a Delta table at one version
// by replaying its log: the newest usable checkpoint, then the commits after
// it, under the protocol's reconciliation rules.
//
// # What Load reads, and what waits
//
// Load lists the log, checks the listing into a segment (package deltalog:
// a checkpoint and the commits after it), reads and decodes every commit of
// the segment, and reads the protocol and metaData columns of the
// checkpoint when the commits do not set both. That is all: the protocol
// and metaData are checked there (a table this library cannot read is
// refused by Load with a *deltaerr.FeatureError, a log without them with a
// *deltaerr.CorruptError), and Version, Protocol, Metadata, Schema,
// Properties, Timestamp and CommitInfo never do I/O.
//
// When the listing holds the version checksum of the version loaded
// (<v>.crc, package checksum) and the segment has a checkpoint, Load
// takes the protocol and metaData from it instead of the checkpoint, and
// the set transactions and domains too when it records them, so that a
// describe of a large table reads no part of its checkpoint (Load only
// checks that the checkpoint is still there). The checksum is a hint: it
// is used only when it decodes, passes its own checks, and agrees with
// every protocol, metaData, txn, domain and in-commit timestamp the
// commits after the checkpoint set; otherwise it is ignored (logged) and
// the checkpoint read as without it. Snapshot.Checksum says which one
// Load used. File lists always come from the replay.
//
// The checkpoint's file actions are read on first use, in two stages of
// their own, each once per checkpoint:
//
//   - txn and domainMetadata columns, by Txns, TxnVersion, Domains and
//     DomainMetadata (and not at all when the commits after the checkpoint
//     answer the question: a TxnVersion of an application that committed
//     since, say);
//   - add columns, by Files, FilesMatching, FilesWhere, NumFiles and
//     SizeInBytes (StreamFiles reads them again at each call instead,
//     until one of these has);
//   - remove columns, by Tombstones.
//
// These accessors therefore take a context and return an error. Time
// travel (Load at a version, LoadAsOf at a time), transactions that only
// append (package txn), and log cleanup never read the checkpoint's add
// and remove columns.
//
// # Concurrency
//
// A *Snapshot is immutable from the outside and safe for concurrent use.
// When several goroutines need a lazy stage at the same time, one reads it
// and the others wait for it (or for their own context to end). A failed
// read is not remembered: the next caller tries again, so a cancelled
// context or a transient store error does not poison the snapshot, and a
// damaged log fails the same way on every call.
//
// A lazy stage reads the log as it is when it runs. A snapshot first asked
// for its files long after Load, after log cleanup (delta.logRetentionDuration)
// deleted its checkpoint, fails then with the store's not-found error.
//
// # Replay
//
// Commits are reconciled in version order into a small "tail": for each
// file key (path plus deletion-vector id) the newest add or remove, the
// newest protocol and metaData, the newest txn per application and
// domainMetadata per domain (removals kept, to hide the checkpoint's). The
// checkpoint's adds are streamed once into a compact, columnar table: 24
// bytes of fixed-size columns per file, and a record per file in a shared
// arena with its size and modification time as varints, its name stored
// against an interned directory and a template name, and its stats in
// their compact form (an interned shape, and the values, repeated short
// strings interned); no page of the checkpoint decoder is kept. Stats are
// decoded only when something asks for the add: Files builds each Add,
// stats JSON included, as it yields it, and a predicate parses that JSON
// (package expr). A file of the checkpoint is live unless the tail holds
// its key. Memory is thus proportional to the live files: about 100 MB for
// a million files with stats on five columns (bench/RESULTS.md, issue 26).
//
// StreamFiles applies the same rule without the table: it streams the
// checkpoint's add column batch by batch, drops the files whose key the
// tail holds, and hands the rest to its caller, keeping none, as
// delta-kernel-rs's log replay does over its batches. A scan with a
// predicate (package scan) plans this way on a snapshot that has not read
// its files, so that its memory follows the files it keeps rather than
// the table: a selective plan of a table of ten million files needs no
// more memory than one of a thousand. One function reads a checkpoint's
// files for both (eachCheckpointFile); the two give the same files in
// the same order.
//
// Protocol and metaData are checked before any file of the checkpoint is
// decoded: a table this library cannot read is refused with a
// *deltaerr.FeatureError without reading its file actions. They are parsed
// once into a tableconfig.Config (Snapshot.Config), through which every
// table property is read; a property value Spark would refuse makes the
// snapshot fail to load with a *tableconfig.PropertyError.
//
// Update builds a newer snapshot from an older one by reading only the
// commits added since. The two share the checkpoint's lazy state: what one
// has read the other does not read again, and an Update of a snapshot that
// never read its files reads none either.
//
// A checkpoint that cannot be decoded is skipped: the snapshot is rebuilt
// from an older checkpoint, or from the commits alone. Load does this for
// the protocol and metaData; when the damage is only found by a lazy
// stage, that stage rebuilds the checkpoint's state the same way (listing
// the log again), and Segment still names the checkpoint Load chose. A
// checkpoint that the listing named but the store no longer has is not
// skipped by Load: it was deleted by log cleanup after the listing, and
// the log is listed again (next section).
//
// # Listing races
//
// A listing of the log may race a writer or log cleanup: a store whose
// listing is not a point-in-time snapshot (a local directory read while
// files are created, object stores' list pages) can show commit N+1
// without N although N was written first, and cleanup running beside a
// reader can delete a commit or checkpoint between the listing and the
// read. Everything here that lists the log (Load, Update, History,
// EarliestVersion, VersionAtTimestamp, LoadAtTimestamp, LoadAsOf and the
// lazy stages' rebuild) then lists it again through deltalog.Relist: a
// bounded number of times, with a short pause, until the listing is whole.
// What counts as a race is an error matching deltaerr.ErrMissingLogFile:
// a hole in the commits (after deltalog.List has looked up the missing
// versions directly), a listed commit or checkpoint that is no longer
// there (deltalog.Vanished), a log with commits but neither commit 0 nor a
// checkpoint, and a version asked for whose commit exists although the
// listing ended before it. Update of a snapshot whose next commits were
// cleaned up (the snapshot was held past the log's retention) loads the
// newest version from the checkpoint that replaced them, as Load would.
//
// A hole that stays through every listing is a log that is really broken,
// and Load fails with deltaerr.ErrMissingLogFile, as Delta Spark and the
// Delta kernels refuse such a log. Load of the latest version does not
// fall back to the newest version below the hole: the protocol names
// versions with contiguous integers and builds version v from the state
// at v-1 ("Delta Table Specification", "Delta Log Entries"), so the
// commits past a hole cannot be served, and serving the versions before it
// would hand out a version older than one the log shows to exist: a reader
// would go back in time, and a writer building on it would lose every race
// for a version that is already taken.
//
// # Errors
//
// Errors are tested with errors.Is on the kinds of package deltaerr:
// deltaerr.ErrTableNotFound (no Delta log in the store),
// deltaerr.ErrVersionNotFound and deltaerr.ErrMissingLogFile (the segment
// rules of deltalog.NewSegment), deltaerr.ErrCorrupt (a *deltaerr.CorruptError
// naming the file), deltaerr.ErrUnsupportedFeature (a *deltaerr.FeatureError)
// and tableconfig.ErrInvalidProperty (a *tableconfig.PropertyError). Store
// errors keep their logstore kinds. Load gives them at once; the lazy
// accessors give theirs on first use.
//
// The example builds a table with package txn, then loads it at its latest
// version and at an older one.
package snapshot

import (
	"context"
	"errors"
	"iter"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/internal/checksum"
	"github.com/godelta/delta/internal/invariants"
	"github.com/godelta/delta/location"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
)

// Snapshot is the state of a table at one version. It is immutable from the
// outside and safe for concurrent use (see the package doc's Concurrency).
// It holds no resource of its own and needs no Close; the store it reads
// stays the caller's, and must stay open while the snapshot's lazy
// accessors may still be called.
type Snapshot struct {
	store   logstore.Store
	version int64
	segment deltalog.Segment

	protocol actions.Protocol
	metadata actions.Metadata
	schema   *schema.StructType
	config   *tableconfig.Config
	// loc is where the table lives: its root, the roots it trusts, and
	// the one resolver of file paths (package location).
	loc *location.Location

	// base is the state of the checkpoint, read lazily and shared with
	// the snapshots built from this one by Update.
	base *baseState
	// tail holds the reconciled file actions of the commits after the
	// checkpoint; a base file whose key is in tail is superseded.
	tail map[fileKey]fileEntry
	// tailOrder is tail's entries in commit order.
	tailOrder []fileEntry
	// tailTxns and tailDomains are the newest txn per application and
	// domainMetadata per domain of those commits; removed domains are kept
	// so that they hide the checkpoint's.
	tailTxns    map[string]actions.Txn
	tailDomains map[string]actions.DomainMetadata

	files lazy[*fileView]
	meta  lazy[*metaView]

	// commitInfo is the commitInfo of the snapshot's version, if any.
	commitInfo *actions.CommitInfo
	// crc is the version checksum Load took protocol, metadata, txns and
	// domains from; nil when none was used.
	crc *checksum.VersionChecksum

	// timestamp is the commit timestamp of the snapshot's version in
	// milliseconds: its in-commit timestamp when enabled, else the commit
	// file's modification time.
	timestamp int64
}

// fileView is the file state of one snapshot: the checkpoint's files less
// those the tail supersedes.
type fileView struct {
	base *baseFiles
	// dead marks the rows of base.files that the tail supersedes; nil
	// when none is.
	dead        []uint64
	numFiles    int64
	sizeInBytes int64
}

// metaView is the txn and domain state of one snapshot.
type metaView struct {
	txns    map[string]actions.Txn
	domains map[string]actions.DomainMetadata // none removed
}

// fileKey is the logical identity of a file: its canonical path plus the
// unique id of its deletion vector.
type fileKey struct {
	path string
	dv   string
}

// fileEntry is the newest action for a key in the tail: exactly one of add
// and remove is set. seq orders entries by when they were committed.
type fileEntry struct {
	add    *actions.Add
	remove *actions.Remove
	seq    int64
}

func keyOf(path string, dv *actions.DeletionVector) fileKey {
	return fileKey{path: CanonicalPath(path), dv: dv.UniqueID()}
}

// CanonicalPath returns the form of a file path used to match adds and
// removes; see location.Canonical.
func CanonicalPath(p string) string { return location.Canonical(p) }

// Version returns the table version the snapshot shows.
func (s *Snapshot) Version() int64 { return s.version }

// Protocol returns the table's protocol action.
func (s *Snapshot) Protocol() actions.Protocol { return s.protocol }

// Metadata returns the table's metaData action.
func (s *Snapshot) Metadata() actions.Metadata { return s.metadata }

// Schema returns the table's logical schema.
func (s *Snapshot) Schema() *schema.StructType { return s.schema }

// Config returns the table's checked configuration: protocol, metadata
// and table properties, parsed once when the snapshot was loaded. Read
// every delta.* property through it.
func (s *Snapshot) Config() *tableconfig.Config { return s.config }

// Properties returns the table's configuration (table properties), raw.
// The map is shared: callers must not change it. Known properties are
// read through Config, never from this map.
func (s *Snapshot) Properties() map[string]string { return s.metadata.Configuration }

// Segment returns the log files Load chose to build the snapshot from. If a
// lazy stage later finds the checkpoint damaged and rebuilds its state
// from older files, Segment still names it.
func (s *Snapshot) Segment() deltalog.Segment { return s.segment }

// Location returns where the table lives: its root, the outside roots it
// trusts for reading, and the resolver every reader, writer and
// maintenance verb turns the snapshot's file paths into keys with.
func (s *Snapshot) Location() *location.Location { return s.loc }

// Store returns the store the table lives on.
func (s *Snapshot) Store() logstore.Store { return s.store }

// Timestamp returns the commit time of the snapshot's version: its
// in-commit timestamp where the table has them, else the modification time
// of the commit file (or of the checkpoint, for a version with no commit
// file left).
func (s *Snapshot) Timestamp() time.Time { return time.UnixMilli(s.timestamp) }

// CommitInfo returns the commitInfo of the snapshot's version, and false
// when that commit has none (or only a checkpoint is left of it).
func (s *Snapshot) CommitInfo() (actions.CommitInfo, bool) {
	if s.commitInfo == nil {
		return actions.CommitInfo{}, false
	}
	return *s.commitInfo, true
}

// NumFiles returns the number of live data files. It reads the
// checkpoint's files on first use.
func (s *Snapshot) NumFiles(ctx context.Context) (int64, error) {
	v, err := s.fileState(ctx)
	if err != nil {
		return 0, err
	}
	return v.numFiles, nil
}

// SizeInBytes returns the total size of the live data files. It reads the
// checkpoint's files on first use.
func (s *Snapshot) SizeInBytes(ctx context.Context) (int64, error) {
	v, err := s.fileState(ctx)
	if err != nil {
		return 0, err
	}
	return v.sizeInBytes, nil
}

// Files yields the live data files (add actions), checkpoint files first,
// then those added by later commits in the order they were committed. It
// reads the checkpoint's files on first use; an error doing so is yielded
// once, with a nil add, and ends the sequence. The yielded actions may
// share memory (maps, strings) with the snapshot and with each other: they
// must not be changed.
func (s *Snapshot) Files(ctx context.Context) iter.Seq2[*actions.Add, error] {
	return s.FilesMatching(ctx, nil)
}

// FilesMatching is Files without the files for which keep, given their
// partition values as the log has them (keyed by physical column name),
// returns false; those are left out before their add action is built,
// which is what makes partition pruning cheap on large tables. A nil keep
// keeps every file.
func (s *Snapshot) FilesMatching(ctx context.Context, keep func(partitionValues map[string]string) bool) iter.Seq2[*actions.Add, error] {
	return func(yield func(*actions.Add, error) bool) {
		v, err := s.fileState(ctx)
		if err != nil {
			yield(nil, err)
			return
		}
		files := v.base.files
		var slab []actions.Add
		var buf []byte
		var strs strArenas
		for i := range files.len() {
			if v.dead != nil && v.dead[i/64]&(1<<(i%64)) != 0 {
				continue
			}
			if keep != nil && !keep(files.partitionValues(i)) {
				continue
			}
			if invariants.Enabled {
				// The tail supersedes the checkpoint: a key it holds is
				// yielded from it, or not at all, never from the base too.
				_, inTail := s.tail[files.key(i)]
				invariants.Assertf(!inTail, "snapshot %d: checkpoint file %q yielded live although the commits after it hold its key", s.version, files.key(i).path)
			}
			if len(slab) == 0 {
				slab = make([]actions.Add, min(256, files.len()-i))
			}
			a := &slab[0]
			slab = slab[1:]
			buf = files.buildIn(i, a, buf, &strs)
			if !yield(a, nil) {
				return
			}
		}
		s.yieldTail(keep, yield)
	}
}

// yieldTail yields the files the commits after the checkpoint added, in
// the order they were committed, and reports whether yield asked for more.
func (s *Snapshot) yieldTail(keep func(map[string]string) bool, yield func(*actions.Add, error) bool) bool {
	for _, e := range s.tailOrder {
		if e.add == nil || keep != nil && !keep(e.add.PartitionValues) {
			continue
		}
		if !yield(e.add, nil) {
			return false
		}
	}
	return true
}

// StreamFiles yields what FilesMatching yields, in the same order, without
// keeping the checkpoint's files. On a snapshot that has not read them
// (nor shares a checkpoint whose files another snapshot read), each call
// reads the checkpoint's add column again, batch by batch, drops the files
// the commits after it supersede, hands those keep accepts to yield and
// keeps none of them: memory then follows what the caller keeps, not the
// size of the table, which is what a selective scan of a table of millions
// of files needs (package scan plans a scan with a predicate this way).
// Once the snapshot has read its files, StreamFiles is FilesMatching. It
// never makes the snapshot read its files.
//
// A checkpoint found damaged before the first file is yielded has its
// state rebuilt, as Files would do (see the package doc); one found
// damaged after that ends the sequence with the error, since the files
// already yielded cannot be taken back. Other errors are yielded as by
// Files.
func (s *Snapshot) StreamFiles(ctx context.Context, keep func(partitionValues map[string]string) bool) iter.Seq2[*actions.Add, error] {
	return func(yield func(*actions.Add, error) bool) {
		_, read := s.files.peek()
		if _, ok := s.base.files.peek(); ok || read || s.base.version < 0 {
			s.FilesMatching(ctx, keep)(yield)
			return
		}
		yielded, stopped := false, false
		err := eachCheckpointFile(ctx, s.store, s.base.version, s.base.keys, s.tail, nil, func(a *actions.Add, _ *addPrep) bool {
			if keep != nil && !keep(a.PartitionValues) {
				return true
			}
			yielded = true
			stopped = !yield(a, nil)
			return !stopped
		}, nil)
		var cpErr *checkpointError
		switch {
		case stopped:
			return
		case err != nil && !yielded && errors.As(err, &cpErr):
			s.FilesMatching(ctx, keep)(yield)
			return
		case err != nil:
			yield(nil, err)
			return
		}
		s.yieldTail(keep, yield)
	}
}

// Tombstones yields the remove actions still in the table state: removed
// files a VACUUM may delete once their retention has passed. It reads the
// checkpoint's removes on first use (not its adds: Files does that);
// errors are yielded as by Files.
func (s *Snapshot) Tombstones(ctx context.Context) iter.Seq2[*actions.Remove, error] {
	return func(yield func(*actions.Remove, error) bool) {
		ts, err := s.base.loadTombstones(ctx)
		if err != nil {
			yield(nil, err)
			return
		}
		for i := range ts {
			r := &ts[i]
			if len(s.tail) > 0 {
				if _, ok := s.tail[keyOf(r.Path, r.DeletionVector)]; ok {
					continue
				}
			}
			if !yield(r, nil) {
				return
			}
		}
		for _, e := range s.tailOrder {
			if e.remove != nil && !yield(e.remove, nil) {
				return
			}
		}
	}
}

// Txns yields the newest txn action of every application, expired ones
// included, by application id. It reads the checkpoint's txns on first
// use; errors are yielded as by Files.
func (s *Snapshot) Txns(ctx context.Context) iter.Seq2[actions.Txn, error] {
	return func(yield func(actions.Txn, error) bool) {
		v, err := s.metaState(ctx)
		if err != nil {
			yield(actions.Txn{}, err)
			return
		}
		for _, id := range sortedKeys(v.txns) {
			if !yield(v.txns[id], nil) {
				return
			}
		}
	}
}

// TxnVersion returns the last version the application appID committed, for
// exactly-once writes. A txn older than the table's
// delta.setTransactionRetentionDuration (by its lastUpdated) is expired and
// reported as absent, as Spark and delta-kernel do. The checkpoint is read
// only when no commit after it holds a txn of appID.
func (s *Snapshot) TxnVersion(ctx context.Context, appID string) (int64, bool, error) {
	t, ok := s.tailTxns[appID]
	if !ok {
		v, err := s.metaState(ctx)
		if err != nil {
			return 0, false, err
		}
		if t, ok = v.txns[appID]; !ok {
			return 0, false, nil
		}
	}
	if d, ok := s.txnRetention(); ok && t.LastUpdated != nil {
		if time.UnixMilli(*t.LastUpdated).Before(time.Now().Add(-d)) {
			return 0, false, nil
		}
	}
	return t.Version, true, nil
}

func (s *Snapshot) txnRetention() (time.Duration, bool) {
	return s.config.SetTransactionRetention()
}

// DomainMetadata returns the configuration of a domain, and false when the
// domain is absent or was removed. The checkpoint is read only when no
// commit after it holds a domainMetadata of domain.
func (s *Snapshot) DomainMetadata(ctx context.Context, domain string) (string, bool, error) {
	if d, ok := s.tailDomains[domain]; ok {
		if d.Removed {
			return "", false, nil
		}
		return d.Configuration, true, nil
	}
	v, err := s.metaState(ctx)
	if err != nil {
		return "", false, err
	}
	d, ok := v.domains[domain]
	return d.Configuration, ok, nil
}

// Domains yields every domain present in the table, by name. It reads the
// checkpoint's domains on first use; errors are yielded as by Files.
func (s *Snapshot) Domains(ctx context.Context) iter.Seq2[actions.DomainMetadata, error] {
	return func(yield func(actions.DomainMetadata, error) bool) {
		v, err := s.metaState(ctx)
		if err != nil {
			yield(actions.DomainMetadata{}, err)
			return
		}
		for _, name := range sortedKeys(v.domains) {
			if !yield(v.domains[name], nil) {
				return
			}
		}
	}
}

// fileState returns the snapshot's file state, reading the checkpoint's
// files on first use.
func (s *Snapshot) fileState(ctx context.Context) (*fileView, error) {
	return s.files.get(ctx, func(ctx context.Context) (*fileView, error) {
		b, err := s.base.loadFiles(ctx)
		if err != nil {
			return nil, err
		}
		return newFileView(b, s.tail, s.tailOrder), nil
	})
}

// metaState returns the snapshot's txns and domains, reading the
// checkpoint's on first use.
func (s *Snapshot) metaState(ctx context.Context) (*metaView, error) {
	return s.meta.get(ctx, func(ctx context.Context) (*metaView, error) {
		b, err := s.base.loadMeta(ctx)
		if err != nil {
			return nil, err
		}
		return newMetaView(b, s.tailTxns, s.tailDomains), nil
	})
}

// newFileView marks the base files the tail supersedes and counts the
// live files, in time proportional to the tail only.
func newFileView(b *baseFiles, tail map[fileKey]fileEntry, tailOrder []fileEntry) *fileView {
	files := b.files
	v := &fileView{base: b, numFiles: int64(files.len()), sizeInBytes: b.size}
	if len(tail) > 0 && files.len() > 0 {
		v.dead = make([]uint64, (files.len()+63)/64)
		for k := range tail {
			files.lookupAll(k, func(i int) {
				if v.dead[i/64]&(1<<(i%64)) == 0 {
					v.dead[i/64] |= 1 << (i % 64)
					v.numFiles--
					v.sizeInBytes -= files.size(i)
				}
			})
		}
	}
	for _, e := range tailOrder {
		if e.add != nil {
			v.numFiles++
			v.sizeInBytes += e.add.Size
		}
	}
	if invariants.Enabled {
		invariants.Assertf(len(tailOrder) == len(tail), "snapshot: the tail orders %d of its %d files", len(tailOrder), len(tail))
		invariants.Assertf(v.numFiles >= 0, "snapshot: %d live files", v.numFiles)
	}
	return v
}

// newMetaView lays the tail's txns and domains over the base's and drops
// the removed domains.
func newMetaView(b *baseMeta, txns map[string]actions.Txn, domains map[string]actions.DomainMetadata) *metaView {
	v := &metaView{txns: make(map[string]actions.Txn, len(b.txns)+len(txns)), domains: map[string]actions.DomainMetadata{}}
	for _, m := range []map[string]actions.Txn{b.txns, txns} {
		for id, t := range m {
			v.txns[id] = t
		}
	}
	for _, m := range []map[string]actions.DomainMetadata{b.domains, domains} {
		for name, d := range m {
			v.domains[name] = d
		}
	}
	for name, d := range v.domains {
		if d.Removed {
			delete(v.domains, name)
		}
	}
	return v
}

// InCommitTimestampsFrom returns the version from which the table records
// in-commit timestamps, and false when it does not.
func (s *Snapshot) InCommitTimestampsFrom() (int64, bool) {
	if !s.config.InCommitTimestamps() {
		return 0, false
	}
	v, _ := s.config.InCommitTimestampEnablementVersion() // unset: from creation, version 0
	return v, true
}

// Package snapshot reconstructs the state of a Delta table at one version
// by replaying its log: the newest usable checkpoint, then the commits after
// it, under the protocol's reconciliation rules.
//
// A *Snapshot is immutable once Load returns it and is safe for concurrent
// use. Update builds a newer snapshot from an older one by reading only the
// commits added since, sharing the checkpoint state with it.
//
// # Replay
//
// The segment (package deltalog) names a checkpoint and the commits after
// it. Commits are read first and reconciled in version order into a small
// "tail": for each file key (path plus deletion-vector id) the newest add or
// remove, the newest protocol and metaData, the newest txn per application
// and domainMetadata per domain. The checkpoint is then streamed once; its
// files stay in a compact table (a small row per file, stats packed into
// shared arenas, each Add built as Files yields it), shared by every
// snapshot built on it, and a file of the checkpoint is live unless the
// tail holds its key. Memory is thus proportional to the live files, and
// an Update costs only the new commits.
//
// Protocol and metaData are checked before any file of the checkpoint is
// decoded: a table this library cannot read is refused with a
// *deltaerr.FeatureError without reading its file actions. They are parsed
// once into a tableconfig.Config (Snapshot.Config), through which every
// table property is read; a property value Spark would refuse makes the
// snapshot fail to load with a *tableconfig.PropertyError.
//
// A checkpoint that is missing or cannot be decoded is skipped: the
// snapshot is rebuilt from an older checkpoint, or from the commits alone.
package snapshot

import (
	"iter"
	"net/url"
	"strings"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
)

// Snapshot is the state of a table at one version.
type Snapshot struct {
	store   logstore.Store
	version int64
	segment deltalog.Segment

	protocol actions.Protocol
	metadata actions.Metadata
	schema   *schema.StructType
	config   *tableconfig.Config

	// base holds the file actions of the checkpoint, shared with snapshots
	// built from this one by Update. tail holds the reconciled file actions
	// of the commits after the checkpoint; a base entry whose key is in tail
	// is superseded.
	base *baseState
	tail map[fileKey]fileEntry
	// tailOrder is tail's entries in commit order.
	tailOrder []fileEntry
	// dead marks the rows of base.files that tail supersedes; nil when
	// none is.
	dead []uint64

	txns    map[string]actions.Txn
	domains map[string]actions.DomainMetadata

	numFiles    int64
	sizeInBytes int64

	// commitInfo is the commitInfo of the snapshot's version, if any.
	commitInfo *actions.CommitInfo
	// timestamp is the commit timestamp of the snapshot's version in
	// milliseconds: its in-commit timestamp when enabled, else the commit
	// file's modification time.
	timestamp int64
}

// baseState is the file state of a checkpoint.
type baseState struct {
	version    int64 // checkpoint version; -1 for none
	files      *fileTable
	size       int64 // of all files
	tombstones []actions.Remove
}

// finish makes the base ready for use once the checkpoint is read.
func (b *baseState) finish() {
	b.files.finish()
	for i := range b.files.len() {
		b.size += b.files.size(i)
	}
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
// removes: percent-decoded, with a "file:" scheme and empty authority
// dropped, so "file:/a/b%20c", "file:///a/b%20c" and "/a/b c" are the same
// file. Other URIs are only percent-decoded.
func CanonicalPath(p string) string {
	if strings.HasPrefix(p, "file:") {
		rest := strings.TrimPrefix(p, "file:")
		if strings.HasPrefix(rest, "///") {
			rest = rest[2:]
		}
		p = rest
	}
	if strings.IndexByte(p, '%') < 0 {
		return p
	}
	if d, err := url.PathUnescape(p); err == nil {
		return d
	}
	return p
}

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

// Segment returns the log files the snapshot was built from.
func (s *Snapshot) Segment() deltalog.Segment { return s.segment }

// Store returns the store the table lives on.
func (s *Snapshot) Store() logstore.Store { return s.store }

// NumFiles returns the number of live data files.
func (s *Snapshot) NumFiles() int64 { return s.numFiles }

// SizeInBytes returns the total size of the live data files.
func (s *Snapshot) SizeInBytes() int64 { return s.sizeInBytes }

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

// Files yields the live data files (add actions), checkpoint files first,
// then those added by later commits in the order they were committed. The
// yielded actions may share memory (maps, strings) with the snapshot and
// with each other: they must not be changed.
func (s *Snapshot) Files() iter.Seq[*actions.Add] { return s.FilesMatching(nil) }

// FilesMatching is Files without the files for which keep, given their
// partition values as the log has them (keyed by physical column name),
// returns false; those are left out before their add action is built,
// which is what makes partition pruning cheap on large tables. A nil keep
// keeps every file.
func (s *Snapshot) FilesMatching(keep func(partitionValues map[string]string) bool) iter.Seq[*actions.Add] {
	return func(yield func(*actions.Add) bool) {
		files := s.base.files
		var slab []actions.Add
		var buf []byte
		for i := range files.len() {
			if s.dead != nil && s.dead[i/64]&(1<<(i%64)) != 0 {
				continue
			}
			if keep != nil && !keep(files.partitionValues(i)) {
				continue
			}
			if len(slab) == 0 {
				slab = make([]actions.Add, min(256, files.len()-i))
			}
			a := &slab[0]
			slab = slab[1:]
			buf = files.build(i, a, buf)
			if !yield(a) {
				return
			}
		}
		for _, e := range s.tailOrder {
			if e.add == nil || keep != nil && !keep(e.add.PartitionValues) {
				continue
			}
			if !yield(e.add) {
				return
			}
		}
	}
}

// Tombstones yields the remove actions still in the table state: removed
// files a VACUUM may delete once their retention has passed.
func (s *Snapshot) Tombstones() iter.Seq[*actions.Remove] {
	return func(yield func(*actions.Remove) bool) {
		for i := range s.base.tombstones {
			r := &s.base.tombstones[i]
			if len(s.tail) > 0 {
				if _, ok := s.tail[keyOf(r.Path, r.DeletionVector)]; ok {
					continue
				}
			}
			if !yield(r) {
				return
			}
		}
		for _, e := range s.tailOrder {
			if e.remove != nil && !yield(e.remove) {
				return
			}
		}
	}
}

// Txns yields the newest txn action of every application, expired ones
// included.
func (s *Snapshot) Txns() iter.Seq[actions.Txn] {
	return func(yield func(actions.Txn) bool) {
		for _, id := range sortedKeys(s.txns) {
			if !yield(s.txns[id]) {
				return
			}
		}
	}
}

// TxnVersion returns the last version the application appID committed, for
// exactly-once writes. A txn older than the table's
// delta.setTransactionRetentionDuration (by its lastUpdated) is expired and
// reported as absent, as Spark and delta-kernel do.
func (s *Snapshot) TxnVersion(appID string) (int64, bool) {
	t, ok := s.txns[appID]
	if !ok {
		return 0, false
	}
	if d, ok := s.txnRetention(); ok && t.LastUpdated != nil {
		if time.UnixMilli(*t.LastUpdated).Before(time.Now().Add(-d)) {
			return 0, false
		}
	}
	return t.Version, true
}

func (s *Snapshot) txnRetention() (time.Duration, bool) {
	return s.config.SetTransactionRetention()
}

// DomainMetadata returns the configuration of a domain, and false when the
// domain is absent or was removed.
func (s *Snapshot) DomainMetadata(domain string) (string, bool) {
	d, ok := s.domains[domain]
	return d.Configuration, ok
}

// Domains yields every domain present in the table, by name.
func (s *Snapshot) Domains() iter.Seq[actions.DomainMetadata] {
	return func(yield func(actions.DomainMetadata) bool) {
		for _, name := range sortedKeys(s.domains) {
			if !yield(s.domains[name]) {
				return
			}
		}
	}
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

package checksum

import (
	"cmp"
	"fmt"
	"iter"
	"slices"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/tableconfig"
)

// Operations (commitInfo.operation) after which the totals cannot be
// carried forward from the actions: Spark's ManualUpdate (a log edited by
// hand), and the operations that re-add files already in the table
// without removing them (Spark's operationNamesWhereAddFilesIgnoredForIncrementalCrc:
// COMPUTE STATS, ROW TRACKING BACKFILL and UNBACKFILL, DROP FEATURE).
// Spark ignores their adds; a Builder refuses them and the writer
// replays, which is right whatever the commit holds.
var nonIncrementalOps = map[string]bool{
	"Manual Update":           true,
	"COMPUTE STATS":           true,
	"ROW TRACKING BACKFILL":   true,
	"ROW TRACKING UNBACKFILL": true,
	"DROP FEATURE":            true,
}

// setTransactionRetentionKey is the table property under which Spark
// records no set transactions in checksums (their expiry would make the
// list depend on the clock).
const setTransactionRetentionKey = "delta.setTransactionRetentionDuration"

// State is what FromState needs of a table at one version, besides its
// files: all of it comes from a replay.
type State struct {
	Protocol actions.Protocol
	Metadata actions.Metadata
	// Txns are the newest txn of every application, expired ones
	// included.
	Txns []actions.Txn
	// Domains are the live domains (none removed).
	Domains []actions.DomainMetadata
	// InCommitTimestamp is the version's in-commit timestamp, when the
	// table has them.
	InCommitTimestamp *int64
	// TxnID is the id of the transaction that committed the version, if
	// known.
	TxnID string
}

// FromState computes the checksum of a table from its full state: st and
// its live files. It records the file size histogram always, the deletion
// vector counts when the protocol supports deletion vectors, the set
// transactions unless the table sets delta.setTransactionRetentionDuration
// or has more than MaxSetTransactions, and the domains unless there are
// more than MaxDomainMetadata: what a Builder records after a chain of
// commits from the table's creation. An error from files is returned.
func FromState(st State, files iter.Seq2[*actions.Add, error]) (*VersionChecksum, error) {
	p, m := st.Protocol, st.Metadata
	c := &VersionChecksum{
		TxnID:             st.TxnID,
		NumMetadata:       1,
		NumProtocol:       1,
		Protocol:          &p,
		Metadata:          &m,
		InCommitTimestamp: st.InCommitTimestamp,
		FileSizeHistogram: NewFileSizeHistogram(),
		SetTransactions:   slices.Clone(st.Txns),
		DomainMetadata:    slices.Clone(st.Domains),
	}
	if c.SetTransactions == nil {
		c.SetTransactions = []actions.Txn{}
	}
	if c.DomainMetadata == nil {
		c.DomainMetadata = []actions.DomainMetadata{}
	}
	dv := newDVCounts(0)
	for a, err := range files {
		if err != nil {
			return nil, err
		}
		c.NumFiles++
		c.TableSizeBytes += a.Size
		c.FileSizeHistogram.Insert(a.Size)
		dv.add(a.DeletionVector)
	}
	dv.set(c, &p)
	finish(c, nil)
	return c, nil
}

// dvCounts are the deletion vector counts of a checksum being built; nil
// fields are unknown.
type dvCounts struct {
	records, vectors *int64
	hist             *DeletedRecordCountsHistogram
}

// newDVCounts returns the counts of a table of files files none of which
// has a deletion vector.
func newDVCounts(files int64) dvCounts {
	h := NewDeletedRecordCountsHistogram()
	h.DeletedRecordCounts[0] = files
	return dvCounts{records: new(int64), vectors: new(int64), hist: h}
}

func (d *dvCounts) add(dv *actions.DeletionVector) { d.change(dv, 1) }

func (d *dvCounts) remove(dv *actions.DeletionVector) { d.change(dv, -1) }

func (d *dvCounts) change(dv *actions.DeletionVector, sign int64) {
	var card, n int64
	if dv != nil {
		card, n = dv.Cardinality, 1
	}
	if d.records != nil {
		*d.records += sign * card
		*d.vectors += sign * n
	}
	if d.hist != nil {
		d.hist.DeletedRecordCounts[deletedRecordsBin(card)] += sign
	}
}

// set records the counts in c when p supports deletion vectors, and
// clears them otherwise.
func (d *dvCounts) set(c *VersionChecksum, p *actions.Protocol) {
	c.NumDeletedRecords, c.NumDeletionVectors, c.DeletedRecordCountsHistogram = nil, nil, nil
	if !tableconfig.HasReaderFeature(p, actions.FeatureDeletionVectors) {
		return
	}
	if d.records != nil {
		c.NumDeletedRecords, c.NumDeletionVectors = d.records, d.vectors
	}
	c.DeletedRecordCountsHistogram = d.hist
}

// finish applies the rules on what a checksum records to c, whose
// previous version had metaData prev (nil for none): no set transactions
// under a retention, in either, nor more than the caps; lists sorted.
func finish(c *VersionChecksum, prev *actions.Metadata) {
	_, retention := c.Metadata.Configuration[setTransactionRetentionKey]
	if prev != nil {
		_, had := prev.Configuration[setTransactionRetentionKey]
		retention = retention || had
	}
	if retention || len(c.SetTransactions) > MaxSetTransactions {
		c.SetTransactions = nil
	}
	if len(c.DomainMetadata) > MaxDomainMetadata {
		c.DomainMetadata = nil
	}
	slices.SortFunc(c.SetTransactions, func(a, b actions.Txn) int { return cmp.Compare(a.AppID, b.AppID) })
	slices.SortFunc(c.DomainMetadata, func(a, b actions.DomainMetadata) int { return cmp.Compare(a.Domain, b.Domain) })
	if c.DeletedRecordCountsHistogram != nil && c.NumDeletedRecords == nil {
		// The histogram alone says nothing Spark would read: keep the
		// three together.
		c.DeletedRecordCountsHistogram = nil
	}
}

// Builder computes version checksums incrementally, one commit at a time:
// from the checksum of version v-1 and the actions committed at v, the
// checksum of v. It is not safe for concurrent use.
type Builder struct {
	cur *VersionChecksum // nil before version 0
	err error
}

// NewBuilder starts from prev, the checksum of the version before the
// first commit to Apply; nil starts from no table at all, before version
// 0. prev is not changed.
func NewBuilder(prev *VersionChecksum) *Builder {
	return &Builder{cur: prev}
}

// Apply advances the builder over one commit, given its actions. It
// returns an error matching ErrNotIncremental when the commit's checksum
// cannot be derived (see the package doc); the builder is then spent,
// and every later Apply returns the same error.
func (b *Builder) Apply(committed []actions.Action) error {
	if b.err != nil {
		return b.err
	}
	next, err := apply(b.cur, committed)
	if err != nil {
		b.err = err
		return err
	}
	b.cur = next
	return nil
}

// Checksum returns the checksum of the last version applied (nil when
// none was applied to a nil start), or the builder's error. The result is
// the caller's: the builder does not change it.
func (b *Builder) Checksum() (*VersionChecksum, error) {
	if b.err != nil {
		return nil, b.err
	}
	return b.cur, nil
}

// Apply returns the checksum of the version whose actions are committed,
// given prev, the checksum of the version before it (nil for a commit
// that creates the table, version 0). See Builder.Apply.
func Apply(prev *VersionChecksum, committed []actions.Action) (*VersionChecksum, error) {
	return apply(prev, committed)
}

func notIncremental(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrNotIncremental, fmt.Sprintf(format, args...))
}

// apply is one step of a Builder.
func apply(prev *VersionChecksum, acts []actions.Action) (*VersionChecksum, error) {
	var (
		ci        *actions.CommitInfo
		p         *actions.Protocol
		m         *actions.Metadata
		hasRemove bool
	)
	for i := range acts {
		switch a := &acts[i]; {
		case a.CommitInfo != nil:
			ci = a.CommitInfo
		case a.Protocol != nil:
			p = a.Protocol
		case a.Metadata != nil:
			m = a.Metadata
		case a.Remove != nil:
			hasRemove = true
		}
	}
	if ci != nil && nonIncrementalOps[ci.Operation] {
		return nil, notIncremental("operation %s re-adds files or edits the log", ci.Operation)
	}

	c := &VersionChecksum{NumMetadata: 1, NumProtocol: 1}
	var (
		dv       dvCounts
		prevMeta *actions.Metadata
	)
	if prev == nil {
		c.FileSizeHistogram = NewFileSizeHistogram()
		c.SetTransactions = []actions.Txn{}
		c.DomainMetadata = []actions.DomainMetadata{}
		dv = newDVCounts(0)
	} else {
		c.TableSizeBytes, c.NumFiles = prev.TableSizeBytes, prev.NumFiles
		c.Protocol, c.Metadata, prevMeta = prev.Protocol, prev.Metadata, prev.Metadata
		c.FileSizeHistogram = prev.FileSizeHistogram.clone()
		c.SetTransactions = slices.Clone(prev.SetTransactions)
		c.DomainMetadata = slices.Clone(prev.DomainMetadata)
		switch {
		case prev.Protocol != nil && !tableconfig.HasReaderFeature(prev.Protocol, actions.FeatureDeletionVectors):
			// Without the feature no file can have a deletion vector:
			// the counts are known whatever prev records.
			dv = newDVCounts(prev.NumFiles)
		case prev.NumDeletedRecords != nil:
			r, v := *prev.NumDeletedRecords, *prev.NumDeletionVectors
			dv = dvCounts{records: &r, vectors: &v, hist: prev.DeletedRecordCountsHistogram.clone()}
		}
	}
	if p != nil {
		c.Protocol = p
	}
	if m != nil {
		c.Metadata = m
	}
	if c.Protocol == nil || c.Metadata == nil {
		return nil, notIncremental("the previous checksum has no protocol or metadata")
	}

	type fileKey struct{ path, dv string }
	adds, removes := map[fileKey]bool{}, map[fileKey]bool{}
	for i := range acts {
		switch a := &acts[i]; {
		case a.Add != nil:
			k := fileKey{a.Add.Path, a.Add.DeletionVector.UniqueID()}
			if adds[k] {
				return nil, notIncremental("two adds of %s", a.Add.Path)
			}
			adds[k] = true
			if !a.Add.DataChange && !hasRemove {
				return nil, notIncremental("add of %s without data change in a commit that removes nothing: it may re-add a live file", a.Add.Path)
			}
			c.NumFiles++
			c.TableSizeBytes += a.Add.Size
			if h := c.FileSizeHistogram; h != nil {
				h.Insert(a.Add.Size)
			}
			dv.add(a.Add.DeletionVector)
		case a.Remove != nil:
			k := fileKey{a.Remove.Path, a.Remove.DeletionVector.UniqueID()}
			if removes[k] {
				return nil, notIncremental("two removes of %s", a.Remove.Path)
			}
			removes[k] = true
			if a.Remove.Size == nil {
				return nil, notIncremental("remove of %s has no size", a.Remove.Path)
			}
			size := *a.Remove.Size
			c.NumFiles--
			c.TableSizeBytes -= size
			if h := c.FileSizeHistogram; h != nil {
				h.Remove(size)
			}
			dv.remove(a.Remove.DeletionVector)
		case a.Txn != nil:
			if c.SetTransactions != nil {
				c.SetTransactions = upsert(c.SetTransactions, *a.Txn, func(t actions.Txn) bool { return t.AppID == a.Txn.AppID })
			}
		case a.DomainMetadata != nil:
			if c.DomainMetadata != nil {
				d := *a.DomainMetadata
				same := func(o actions.DomainMetadata) bool { return o.Domain == d.Domain }
				if d.Removed {
					c.DomainMetadata = slices.DeleteFunc(c.DomainMetadata, same)
				} else {
					c.DomainMetadata = upsert(c.DomainMetadata, d, same)
				}
			}
		}
	}
	if ci != nil {
		c.InCommitTimestamp, c.TxnID = ci.InCommitTimestamp, ci.TxnID
	}
	dv.set(c, c.Protocol)
	finish(c, prevMeta)
	if err := c.Check(); err != nil {
		// Negative totals or bins: the previous checksum, or the
		// commit, does not describe the table.
		return nil, notIncremental("%v", err)
	}
	return c, nil
}

// upsert replaces the element of s that same accepts with v, or appends
// v.
func upsert[T any](s []T, v T, same func(T) bool) []T {
	if i := slices.IndexFunc(s, same); i >= 0 {
		s[i] = v
		return s
	}
	return append(s, v)
}

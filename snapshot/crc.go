package snapshot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/internal/checksum"
)

// Checksum returns the version checksum (<v>.crc) Load took the
// snapshot's protocol, metadata, set transactions and domains from, or
// nil when it had none or did not trust it. The checksum is shared:
// callers must not change it.
func (s *Snapshot) Checksum() *checksum.VersionChecksum { return s.crc }

// readChecksum reads the checksum the segment names, and returns it when
// it is sound and agrees with the commits r has replayed on top of the
// checkpoint; otherwise nil, logged: a checksum is only a hint, and the
// log is read instead.
//
// A segment without a checkpoint is not helped by a checksum: the commits
// already read hold the whole state, and are what counts.
func (r *replay) readChecksum(ctx context.Context, s *Snapshot) *checksum.VersionChecksum {
	if s.segment.Checksum == nil || len(s.segment.Checkpoint) == 0 {
		return nil
	}
	c, err := checksum.Read(ctx, s.store, s.version)
	if err == nil {
		err = r.agrees(c)
	}
	if err != nil {
		level := slog.LevelWarn
		if errors.Is(err, checksum.ErrNotFound) || ctx.Err() != nil {
			level = slog.LevelDebug // cleaned up since the listing
		}
		slog.Log(ctx, level, "snapshot: not using the version checksum; reading the log instead", "version", s.version, "err", err)
		return nil
	}
	return c
}

// errChecksumDisagrees marks a checksum the log contradicts.
var errChecksumDisagrees = errors.New("the version checksum disagrees with the log")

// agrees reports whether c can stand for the state r has replayed: it has
// protocol and metadata, equal to those the commits after the checkpoint
// set, as the in-commit timestamp, set transactions and domains of those
// commits are to c's.
func (r *replay) agrees(c *checksum.VersionChecksum) error {
	if c.Protocol == nil || c.Metadata == nil {
		return fmt.Errorf("%w: it has no protocol or metadata", errChecksumDisagrees)
	}
	want := &checksum.VersionChecksum{NumMetadata: 1, NumProtocol: 1, NumFiles: c.NumFiles, TableSizeBytes: c.TableSizeBytes, Protocol: c.Protocol, Metadata: c.Metadata}
	if r.protocol != nil {
		want.Protocol = r.protocol
	}
	if r.metadata != nil {
		want.Metadata = r.metadata
	}
	if d := checksum.Compare(c, want); len(d) > 0 {
		return fmt.Errorf("%w: %v", errChecksumDisagrees, d)
	}
	if ci := r.lastCommitInfo; ci != nil && ci.InCommitTimestamp != nil && c.InCommitTimestamp != nil && *ci.InCommitTimestamp != *c.InCommitTimestamp {
		return fmt.Errorf("%w: in-commit timestamp %d, the commit's %d", errChecksumDisagrees, *c.InCommitTimestamp, *ci.InCommitTimestamp)
	}
	if c.SetTransactions != nil {
		for id, t := range r.txns {
			if got, ok := findTxn(c.SetTransactions, id); !ok || got.Version != t.Version {
				return fmt.Errorf("%w: txn of %s", errChecksumDisagrees, id)
			}
		}
	}
	if c.DomainMetadata != nil {
		for name, d := range r.domains {
			got, ok := findDomain(c.DomainMetadata, name)
			if ok == d.Removed || ok && got.Configuration != d.Configuration {
				return fmt.Errorf("%w: domain %s", errChecksumDisagrees, name)
			}
		}
	}
	return nil
}

func findTxn(ts []actions.Txn, id string) (actions.Txn, bool) {
	for _, t := range ts {
		if t.AppID == id {
			return t, true
		}
	}
	return actions.Txn{}, false
}

func findDomain(ds []actions.DomainMetadata, name string) (actions.DomainMetadata, bool) {
	for _, d := range ds {
		if d.Domain == name {
			return d, true
		}
	}
	return actions.DomainMetadata{}, false
}

// metaFromChecksum returns the txn and domain state of c, when it records
// both; nil otherwise.
func metaFromChecksum(c *checksum.VersionChecksum) *metaView {
	if c == nil || c.SetTransactions == nil || c.DomainMetadata == nil {
		return nil
	}
	v := &metaView{txns: make(map[string]actions.Txn, len(c.SetTransactions)), domains: make(map[string]actions.DomainMetadata, len(c.DomainMetadata))}
	for _, t := range c.SetTransactions {
		v.txns[t.AppID] = t
	}
	for _, d := range c.DomainMetadata {
		v.domains[d.Domain] = d
	}
	return v
}

// inheritMeta gives ns, built from prev by Update or Committed, the txn
// and domain state of prev overlaid with its own tail, when prev has one
// ready (from its checksum, or read), so that ns does not read the
// checkpoint's for it.
func (ns *Snapshot) inheritMeta(prev *Snapshot) {
	pv, ok := prev.meta.peek()
	if !ok {
		return
	}
	v := &metaView{txns: maps.Clone(pv.txns), domains: maps.Clone(pv.domains)}
	maps.Copy(v.txns, ns.tailTxns)
	for name, d := range ns.tailDomains {
		if d.Removed {
			delete(v.domains, name)
		} else {
			v.domains[name] = d
		}
	}
	ns.meta.set(v)
}

// CachedFileTotals returns the number and total size of the live files
// when they are known without I/O: the snapshot's files, or those of the
// checkpoint it shares with the snapshot it was built from, have been
// read, or it has no checkpoint. Otherwise ok is false and nothing is
// read. Writers use it to check a version checksum they derived.
func (s *Snapshot) CachedFileTotals() (files, bytes int64, ok bool) {
	if v, ok := s.files.peek(); ok {
		return v.numFiles, v.sizeInBytes, true
	}
	var b *baseFiles
	if s.base.version < 0 {
		b = newBaseFiles(nil, nil)
	} else if b, ok = s.base.files.peek(); !ok {
		return 0, 0, false
	}
	v := newFileView(b, s.tail, s.tailOrder)
	return v.numFiles, v.sizeInBytes, true
}

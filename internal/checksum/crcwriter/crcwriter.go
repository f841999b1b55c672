// Package crcwriter computes and writes the version checksum (<v>.crc,
// package checksum) of a table's version: from a replay of a snapshot
// (Compute), or after a commit, incrementally from the previous version's
// checksum when there is one (WriteAfterCommit). Package txn runs
// WriteAfterCommit after every commit, as the first post-commit hook.
//
// It is apart from package checksum because it needs package snapshot,
// which imports checksum to read .crc files.
package crcwriter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/internal/checksum"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/snapshot"
)

// Compute returns the checksum of snap's version from its replay: its
// protocol, metadata, set transactions and domains, and its live files,
// which it reads if snap has not yet (the checkpoint's add and remove
// columns). The txn id and in-commit timestamp come from the version's
// commitInfo, when the snapshot has it.
func Compute(ctx context.Context, snap *snapshot.Snapshot) (*checksum.VersionChecksum, error) {
	st := checksum.State{Protocol: snap.Protocol(), Metadata: snap.Metadata()}
	if ci, ok := snap.CommitInfo(); ok {
		st.TxnID = ci.TxnID
		if ci.InCommitTimestamp != nil && snap.Config().InCommitTimestamps() {
			ict := *ci.InCommitTimestamp
			st.InCommitTimestamp = &ict
		}
	}
	for t, err := range snap.Txns(ctx) {
		if err != nil {
			return nil, err
		}
		st.Txns = append(st.Txns, t)
	}
	for d, err := range snap.Domains(ctx) {
		if err != nil {
			return nil, err
		}
		st.Domains = append(st.Domains, d)
	}
	c, err := checksum.FromState(st, snap.Files(ctx))
	if err != nil {
		return nil, fmt.Errorf("checksum of version %d: %w", snap.Version(), err)
	}
	return c, nil
}

// WriteAfterCommit writes <version>.crc after the commit of committed at
// version landed, on a transaction that read the snapshot read (nil for
// a new table). See WriteAfterCommitFrom, of which it is the form that
// loads the post-commit snapshot itself when it needs one.
func WriteAfterCommit(ctx context.Context, store logstore.Store, read *snapshot.Snapshot, version int64, committed []actions.Action) error {
	return WriteAfterCommitFrom(ctx, store, read, version, committed, nil)
}

// WriteAfterCommitFrom writes <version>.crc after the commit of committed
// at version landed, on a transaction that read the snapshot read (nil
// for a new table), unless the file exists already.
//
// The checksum is derived from the previous version's (read's own, or the
// .crc of version-1 when others committed in between) and the actions,
// without reading the table (checksum.Apply), when that one exists and
// the commit allows it. A commit right on top of read is checked further
// against the post-commit snapshot (built from read and the actions, with
// no I/O, by the default post): protocol, metaData, in-commit timestamp
// and the txns the commit set must agree, and so must the file count and
// size when the snapshot knows them without I/O. Otherwise the
// checksum is computed from a replay of the post-commit snapshot, which
// post returns (nil: built from read, or loaded); that reads the table's
// files when the snapshot has not yet, once per table, since the next
// commit finds this checksum.
func WriteAfterCommitFrom(ctx context.Context, store logstore.Store, read *snapshot.Snapshot, version int64, committed []actions.Action,
	post func(context.Context) (*snapshot.Snapshot, error)) error {
	adjacent := read != nil && version == read.Version()+1
	if post == nil {
		post = func(ctx context.Context) (*snapshot.Snapshot, error) {
			if adjacent {
				return read.Committed(version, 0, committed)
			}
			return snapshot.Load(ctx, store, version)
		}
	}
	c, err := incremental(ctx, store, read, version, committed)
	if err == nil && adjacent {
		var snap *snapshot.Snapshot
		if snap, err = post(ctx); err == nil {
			err = agree(c, snap, committed)
		}
	}
	if err != nil {
		slog.DebugContext(ctx, "version checksum from a replay", "version", version, "why", err)
		snap, perr := post(ctx)
		if perr != nil {
			return fmt.Errorf("checksum of version %d: %w", version, perr)
		}
		if c, err = Compute(ctx, snap); err != nil {
			return err
		}
		if ci := commitInfo(committed); ci != nil {
			c.TxnID = ci.TxnID
		}
	}
	return checksum.Write(ctx, store, version, c)
}

// incremental derives the checksum of version from the previous one.
func incremental(ctx context.Context, store logstore.Store, read *snapshot.Snapshot, version int64, committed []actions.Action) (*checksum.VersionChecksum, error) {
	if version == 0 {
		return checksum.Apply(nil, committed)
	}
	var prev *checksum.VersionChecksum
	if read != nil && read.Version() == version-1 {
		prev = read.Checksum()
	}
	if prev == nil {
		var err error
		if prev, err = checksum.Read(ctx, store, version-1); err != nil {
			return nil, err
		}
	}
	return checksum.Apply(prev, committed)
}

// errDisagrees marks an incremental checksum that the post-commit state
// contradicts.
var errDisagrees = errors.New("the incremental checksum disagrees with the post-commit state")

// agree checks c against snap, the post-commit snapshot of the commit
// of committed.
func agree(c *checksum.VersionChecksum, snap *snapshot.Snapshot, committed []actions.Action) error {
	p, m := snap.Protocol(), snap.Metadata()
	want := &checksum.VersionChecksum{NumMetadata: 1, NumProtocol: 1, NumFiles: c.NumFiles, TableSizeBytes: c.TableSizeBytes, Protocol: &p, Metadata: &m}
	// The totals too, when the snapshot knows them without I/O (the
	// transaction read the table's files, as DML and OPTIMIZE do).
	if files, bytes, ok := snap.CachedFileTotals(); ok {
		want.NumFiles, want.TableSizeBytes = files, bytes
	}
	if d := checksum.Compare(c, want); len(d) > 0 {
		return fmt.Errorf("%w: %v", errDisagrees, d)
	}
	if ci, ok := snap.CommitInfo(); ok && snap.Config().InCommitTimestamps() && ci.InCommitTimestamp != nil {
		if c.InCommitTimestamp == nil || *c.InCommitTimestamp != *ci.InCommitTimestamp {
			return fmt.Errorf("%w: in-commit timestamp", errDisagrees)
		}
	}
	// The txns and domains the commit wrote must be in c as written.
	if c.SetTransactions != nil {
		for id, t := range txnsOf(committed) {
			i := slices.IndexFunc(c.SetTransactions, func(o actions.Txn) bool { return o.AppID == id })
			if i < 0 || c.SetTransactions[i].Version != t.Version {
				return fmt.Errorf("%w: txn of %s", errDisagrees, id)
			}
		}
	}
	return nil
}

func txnsOf(acts []actions.Action) map[string]actions.Txn {
	out := map[string]actions.Txn{}
	for i := range acts {
		if t := acts[i].Txn; t != nil {
			out[t.AppID] = *t
		}
	}
	return out
}

func commitInfo(acts []actions.Action) *actions.CommitInfo {
	for i := range acts {
		if acts[i].CommitInfo != nil {
			return acts[i].CommitInfo
		}
	}
	return nil
}

package snapshot

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
)

// Commit is one entry of a table's history.
type Commit struct {
	Version int64
	// Timestamp is the commit time: the in-commit timestamp where the
	// commit has one, else the commit file's modification time, adjusted
	// so that times increase strictly with versions.
	Timestamp time.Time
	// Info is the commit's commitInfo; HasInfo is false when it has none.
	Info    actions.CommitInfo
	HasInfo bool
}

// History returns up to limit commits of the table, newest first, from the
// commit files still present. A limit of 0 or less means all of them.
//
// Commits are dated as PROTOCOL.md "In-Commit Timestamps" asks, by the
// latest version's configuration (whose protocol and metaData History
// reads): from the version in-commit timestamps were enabled at
// (delta.inCommitTimestampEnablementVersion, 0 when they were on from the
// start) by their inCommitTimestamp, and before it, or when they are off,
// by the commit files' monotonized modification times, whatever an older
// commitInfo says. When the latest version does not load because of a
// feature this library cannot read or a damaged log, each commit that has
// an inCommitTimestamp is dated by it.
func History(ctx context.Context, store logstore.Store, limit int) ([]Commit, error) {
	return deltalog.Relist(ctx, func() ([]Commit, error) { return history(ctx, store, limit) })
}

// history is one attempt of History, with one listing.
func history(ctx context.Context, store logstore.Store, limit int) ([]Commit, error) {
	files, err := deltalog.List(ctx, store, 0)
	if err != nil {
		return nil, err
	}
	times := commitTimes(files)
	if len(times) == 0 {
		return nil, fmt.Errorf("no commit in %s: %w", deltalog.LogDir, deltaerr.ErrTableNotFound)
	}
	// Dating by each commit's own inCommitTimestamp is the fallback for a
	// table whose latest version does not load (a feature this library
	// cannot read, a damaged log): history is how such a table is looked
	// into.
	ictFrom, hasICT := int64(0), true
	latest, err := loadListed(ctx, store, files, deltalog.Latest, nil)
	switch {
	case err == nil:
		ictFrom, hasICT = latest.InCommitTimestampsFrom()
	case errors.Is(err, deltaerr.ErrUnsupportedFeature), errors.Is(err, deltaerr.ErrCorrupt):
	default:
		return nil, err
	}
	n := len(times)
	if limit > 0 && limit < n {
		n = limit
	}
	out := make([]Commit, 0, n)
	for i := len(times) - 1; i >= len(times)-n; i-- {
		ct := times[i]
		c := Commit{Version: ct.version, Timestamp: time.UnixMilli(ct.millis)}
		ci, err := readCommitInfo(ctx, store, ct.key)
		if err != nil {
			return nil, err
		}
		if ci != nil {
			c.Info, c.HasInfo = *ci, true
			if hasICT && ct.version >= ictFrom && ci.InCommitTimestamp != nil {
				c.Timestamp = time.UnixMilli(*ci.InCommitTimestamp)
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// commitTime is a commit file's version and monotonized modification time.
type commitTime struct {
	version int64
	key     string
	millis  int64
}

// commitTimes returns the commits of a listing in version order, with
// modification times made strictly increasing, as Delta's history does: a
// time not after its predecessor's becomes the predecessor's plus 1 ms.
func commitTimes(files []deltalog.LogFile) []commitTime {
	var out []commitTime
	for _, f := range files {
		if f.Kind != deltalog.Commit {
			continue
		}
		ms := f.ModTime
		if n := len(out); n > 0 && ms <= out[n-1].millis {
			ms = out[n-1].millis + 1
		}
		out = append(out, commitTime{version: f.Version, key: f.Key, millis: ms})
	}
	return out
}

// errStop ends an action walk early.
var errStop = errors.New("stop")

// readCommitInfo returns the commitInfo of a commit file, or nil if it has
// none. A commit file gone since the listing that named it is a
// deltalog.Vanished error.
func readCommitInfo(ctx context.Context, store logstore.Store, key string) (*actions.CommitInfo, error) {
	var ci *actions.CommitInfo
	err := actions.ReadActions(key, logstore.NewWindowReader(ctx, store, key, 0), func(a *actions.Action) error {
		if a.CommitInfo != nil {
			c := *a.CommitInfo
			ci = &c
			return errStop
		}
		return nil
	})
	if err != nil && err != errStop {
		return nil, deltalog.Vanished(key, err)
	}
	return ci, nil
}

// EarliestVersion returns the earliest version of the table in store that
// can still be reconstructed: 0 while commit 0 exists, else the oldest
// complete checkpoint's, after log cleanup.
func EarliestVersion(ctx context.Context, store logstore.Store) (int64, error) {
	return deltalog.Relist(ctx, func() (int64, error) {
		files, err := deltalog.List(ctx, store, 0)
		if err != nil {
			return 0, err
		}
		return deltalog.Earliest(files)
	})
}

// VersionAtTimestamp returns the newest version whose commit timestamp is at
// or before t: the version that was current at time t. latest is a current
// snapshot of the table, which says whether and from which version the
// table has in-commit timestamps; from that version on they are used, and
// before it the commit files' monotonized modification times. It lists the
// log and reads commit files only (for their in-commit timestamps), never
// a checkpoint.
//
// t before the earliest commit that can still be reconstructed, or after
// the latest commit, is deltaerr.ErrTimestampOutOfRange.
func VersionAtTimestamp(ctx context.Context, latest *Snapshot, t time.Time) (int64, error) {
	return deltalog.Relist(ctx, func() (int64, error) {
		files, err := deltalog.List(ctx, latest.store, 0)
		if err != nil {
			return 0, err
		}
		return versionAt(ctx, latest, files, t)
	})
}

// versionAt is VersionAtTimestamp on files, a listing of the whole log.
func versionAt(ctx context.Context, latest *Snapshot, files []deltalog.LogFile, t time.Time) (int64, error) {
	earliest, err := deltalog.Earliest(files)
	if err != nil {
		return 0, err
	}
	var times []commitTime
	for _, ct := range commitTimes(files) {
		if ct.version >= earliest && ct.version <= latest.version {
			times = append(times, ct)
		}
	}
	if len(times) == 0 {
		return 0, fmt.Errorf("no commit file to date versions by: %w", deltaerr.ErrTimestampOutOfRange)
	}
	target := t.UnixMilli()

	// Versions from the ICT enablement on are dated by their in-commit
	// timestamps, which only reading the commit can tell.
	ictFrom, hasICT := latest.InCommitTimestampsFrom()
	split := len(times) // index of the first ICT version
	if hasICT {
		split = sort.Search(len(times), func(i int) bool { return times[i].version >= ictFrom })
	}
	ictTarget := hasICT && split < len(times)
	if ictTarget && split > 0 {
		// Mixed history: the enablement timestamp says which part t is in.
		enabledAt, ok := latest.config.InCommitTimestampEnablementTimestamp()
		ictTarget = !ok || target >= enabledAt
	}
	var stamp func(i int) (int64, error)
	lo, hi := 0, split // search range [lo, hi)
	if ictTarget {
		lo, hi = split, len(times)
		stamp = func(i int) (int64, error) {
			ci, err := readCommitInfo(ctx, latest.store, times[i].key)
			if err != nil {
				return 0, err
			}
			if ci == nil || ci.InCommitTimestamp == nil {
				return 0, deltaerr.Corruptf(times[i].key, "no inCommitTimestamp although in-commit timestamps are enabled from version %d", ictFrom)
			}
			return *ci.InCommitTimestamp, nil
		}
	} else {
		stamp = func(i int) (int64, error) { return times[i].millis, nil }
	}

	first, err := stamp(lo)
	if err != nil {
		return 0, err
	}
	if target < first {
		return 0, fmt.Errorf("timestamp %s is before the earliest available commit (version %d at %s): %w",
			t.UTC().Format(time.RFC3339Nano), times[lo].version, time.UnixMilli(first).UTC().Format(time.RFC3339Nano), deltaerr.ErrTimestampOutOfRange)
	}
	last, err := stamp(hi - 1)
	if err != nil {
		return 0, err
	}
	if target > last && hi == len(times) {
		return 0, fmt.Errorf("timestamp %s is after the latest commit (version %d at %s): %w",
			t.UTC().Format(time.RFC3339Nano), times[hi-1].version, time.UnixMilli(last).UTC().Format(time.RFC3339Nano), deltaerr.ErrTimestampOutOfRange)
	}
	// Binary search for the last index in [lo, hi) with stamp <= target.
	var searchErr error
	i := lo + sort.Search(hi-lo, func(k int) bool {
		if searchErr != nil {
			return true
		}
		ts, err := stamp(lo + k)
		if err != nil {
			searchErr = err
			return true
		}
		return ts > target
	})
	if searchErr != nil {
		return 0, searchErr
	}
	return times[i-1].version, nil
}

// LoadAtTimestamp loads the version that was current at time t; see
// VersionAtTimestamp. One listing serves both the search and the load of
// the version found, which reads like Load: its file actions are read on
// first use.
func LoadAtTimestamp(ctx context.Context, latest *Snapshot, t time.Time) (*Snapshot, error) {
	return deltalog.Relist(ctx, func() (*Snapshot, error) {
		files, err := deltalog.List(ctx, latest.store, 0)
		if err != nil {
			return nil, err
		}
		return loadAt(ctx, latest, files, t)
	})
}

// LoadAsOf loads the version of the table in store that was current at
// time t, as LoadAtTimestamp from a latest snapshot would, but with one
// listing of the log for everything: the latest version's protocol and
// metaData (which say how commits are dated), the timestamp search, and
// the version found. No checkpoint's file actions are read.
func LoadAsOf(ctx context.Context, store logstore.Store, t time.Time) (*Snapshot, error) {
	return deltalog.Relist(ctx, func() (*Snapshot, error) {
		files, err := deltalog.List(ctx, store, 0)
		if err != nil {
			return nil, err
		}
		latest, err := loadListed(ctx, store, files, deltalog.Latest, nil)
		if err != nil {
			return nil, err
		}
		return loadAt(ctx, latest, files, t)
	})
}

func loadAt(ctx context.Context, latest *Snapshot, files []deltalog.LogFile, t time.Time) (*Snapshot, error) {
	v, err := versionAt(ctx, latest, files, t)
	if err != nil {
		return nil, err
	}
	if v == latest.version {
		return latest, nil
	}
	return loadListed(ctx, latest.store, files, v, latest.base)
}

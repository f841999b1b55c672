package deltalog

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/logstore"
)

// Latest asks NewSegment for the newest version the listing holds. It is
// not a version number (-1): every version, up to math.MaxInt64, names only
// itself, so a version past the newest is ErrVersionNotFound and never
// silently the latest.
const Latest int64 = -1

// List returns the log files of the table in store whose version is at
// least from, sorted by version and then by key. Names that are not log
// files are skipped. A table without a _delta_log lists as empty.
func List(ctx context.Context, store logstore.Store, from int64) ([]LogFile, error) {
	return list(ctx, store, from, nil)
}

// list is List, handing each name that is not a log file to other (when
// not nil).
func list(ctx context.Context, store logstore.Store, from int64, other func(key string)) ([]LogFile, error) {
	startAfter := ""
	if from > 0 {
		// Every log file name of version >= from sorts after the bare
		// padded version, and every one of a lower version before it.
		startAfter = LogDir + pad(from, versionDigits)
	}
	var files []LogFile
	for obj, err := range store.List(ctx, LogDir, startAfter) {
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", LogDir, err)
		}
		f, ok := ParseName(obj.Key)
		if !ok && other != nil {
			other(obj.Key)
		}
		if !ok || f.Version < from {
			continue
		}
		f.Size, f.ModTime = obj.Size, obj.ModTime.UnixMilli()
		files = append(files, f)
	}
	sortFiles(files)
	return fillGaps(ctx, store, files)
}

// fillGaps looks up the commits missing between the first and the last
// commit of a listing. A listing that runs while writers commit may miss
// a file created during it yet show later ones: the local disk lists a
// directory in hash order, not name order. Commits are created in version
// order, so a version missing below a listed one exists by now unless the
// log is broken; it is looked up directly, and left out (for the segment
// checks to report) only if it is not there.
func fillGaps(ctx context.Context, store logstore.Store, files []LogFile) ([]LogFile, error) {
	var added []LogFile
	prev := int64(-1)
	for _, f := range files {
		if f.Kind != Commit {
			continue
		}
		for v := prev + 1; prev >= 0 && v < f.Version; v++ {
			key := CommitKey(v)
			info, err := store.Stat(ctx, key)
			if errors.Is(err, logstore.ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("looking up %s: %w", key, err)
			}
			added = append(added, LogFile{Key: key, Version: v, Kind: Commit, Size: info.Size, ModTime: info.ModTime.UnixMilli()})
		}
		prev = f.Version
	}
	if len(added) == 0 {
		return files, nil
	}
	files = append(files, added...)
	sortFiles(files)
	return files, nil
}

func sortFiles(files []LogFile) {
	slices.SortFunc(files, func(a, b LogFile) int {
		return cmp.Or(cmp.Compare(a.Version, b.Version), cmp.Compare(a.Key, b.Key))
	})
}

// Segment is the set of log files that reconstruct one version of a table:
// at most one checkpoint, plus every commit after it up to the version.
//
// NewSegment guarantees, for every Segment it returns:
//  1. Commits are contiguous: versions CheckpointVersion+1 through Version,
//     one file each, in order (from 0 when there is no checkpoint).
//  2. The checkpoint, when present, is complete: all parts of a multi-part
//     set, or the one file of the other kinds, all of one version.
//  3. Version is the newest version of the segment, reached either by the
//     last commit or by the checkpoint itself.
type Segment struct {
	Version int64
	// Checkpoint holds the parts of the checkpoint, in part order; empty
	// when the segment starts at version 0 without one.
	Checkpoint []LogFile
	// Commits are the commit files after the checkpoint, in version order.
	Commits []LogFile
	// Checksum is the version checksum file (<Version>.crc) the listing
	// holds for Version, or nil. It is only a hint: readers check what
	// it says and fall back to the checkpoint and commits.
	Checksum *LogFile
	// Compactions are the log compaction files (<x>.<y>.compacted.json)
	// that cover commits of the segment, x after the checkpoint and y
	// before Version (so the newest commit, whose commitInfo a snapshot
	// keeps, is always read itself), ordered by x, then y. A replay may
	// read one in place of its commits x..y (see Plan).
	Compactions []LogFile
}

// Plan returns the files a replay of the segment's commits reads, in order:
// each commit, except that a run of commits x..y that a compaction file
// covers is read as that file, the one reaching furthest where several
// start at x. A compaction file holds the reconciled actions of its
// commits (no commitInfo), as delta-rs and kernel write them and Spark
// reads them, so applying it equals applying them.
func (s Segment) Plan() []LogFile {
	if len(s.Compactions) == 0 {
		return s.Commits
	}
	best := map[int64]LogFile{} // x -> the compaction from x reaching furthest
	for _, c := range s.Compactions {
		if b, ok := best[c.Version]; !ok || c.EndVersion > b.EndVersion {
			best[c.Version] = c
		}
	}
	var out []LogFile
	for i := 0; i < len(s.Commits); {
		c, ok := best[s.Commits[i].Version]
		if !ok {
			out = append(out, s.Commits[i])
			i++
			continue
		}
		out = append(out, c)
		i += int(c.EndVersion - c.Version + 1)
	}
	return out
}

// CheckpointVersion returns the version of the segment's checkpoint, and
// false when it has none.
func (s Segment) CheckpointVersion() (int64, bool) {
	if len(s.Checkpoint) == 0 {
		return 0, false
	}
	return s.Checkpoint[0].Version, true
}

// NewSegment picks, from a listing sorted as List sorts it, the files that
// reconstruct version (or the newest version, for Latest). It does no I/O.
//
// The newest complete checkpoint at or below the version is used, unless
// its version is in skip (a checkpoint the caller found unreadable), in
// which case the next older one is tried, down to none at all. Incomplete
// multi-part sets are ignored.
//
// Errors: deltaerr.ErrTableNotFound when the listing has no commit and no
// checkpoint; deltaerr.ErrVersionNotFound when version is newer than the
// newest or older than the earliest version the remaining log can
// reconstruct; deltaerr.ErrMissingLogFile when a commit between the
// checkpoint and the version is missing, or when the listing has commits
// but neither commit 0 nor any complete checkpoint (the log's start is
// missing). A caller that lists the log itself retries ErrMissingLogFile
// through Relist.
func NewSegment(files []LogFile, version int64, skip map[int64]bool) (Segment, error) {
	if version < 0 && version != Latest {
		return Segment{}, fmt.Errorf("version %d: %w", version, deltaerr.ErrInvalidArgument)
	}
	commits := make(map[int64]LogFile)
	var newest int64 = -1
	for _, f := range files {
		switch {
		case f.Kind == Commit:
			commits[f.Version] = f
		case f.Kind.IsCheckpoint():
		default:
			continue
		}
		newest = max(newest, f.Version)
	}
	if newest < 0 {
		return Segment{}, fmt.Errorf("no commit or checkpoint in %s: %w", LogDir, deltaerr.ErrTableNotFound)
	}
	if version == Latest {
		version = newest
	} else if version > newest {
		return Segment{}, fmt.Errorf("version %d is after the latest version %d: %w", version, newest, deltaerr.ErrVersionNotFound)
	}

	seg := Segment{Version: version}
	start := int64(0) // first commit the segment needs
	for _, cp := range completeCheckpoints(files) {
		v := cp[0].Version
		if v <= version && !skip[v] {
			seg.Checkpoint, start = cp, v+1
			break
		}
	}
	if len(seg.Checkpoint) == 0 {
		if _, ok := commits[0]; !ok && len(completeCheckpoints(files)) == 0 {
			// Commits with neither commit 0 nor any checkpoint before
			// them: the start of the log is missing (metadata cleanup
			// always keeps a checkpoint for the oldest version it keeps),
			// or the listing raced a cleanup that deleted the old start
			// before it showed the new one.
			return Segment{}, fmt.Errorf("version %d cannot be reconstructed: the log has neither commit 0 nor a checkpoint: %w",
				version, deltaerr.ErrMissingLogFile)
		}
		if _, ok := commits[0]; !ok {
			return Segment{}, fmt.Errorf("version %d cannot be reconstructed: no checkpoint at or before it and no commit 0 (earliest reconstructable is %s): %w",
				version, earliestDesc(files, skip), deltaerr.ErrVersionNotFound)
		}
	}
	for v := start; v <= version; v++ {
		c, ok := commits[v]
		if !ok {
			return Segment{}, fmt.Errorf("commit %s is missing (needed for version %d): %w", CommitKey(v), version, deltaerr.ErrMissingLogFile)
		}
		seg.Commits = append(seg.Commits, c)
	}
	seg.Checksum = ChecksumOf(files, version)
	for _, f := range files {
		if f.Kind == Compacted && f.Version >= start && f.Version < f.EndVersion && f.EndVersion < version {
			seg.Compactions = append(seg.Compactions, f)
		}
	}
	return seg, nil
}

// ChecksumOf returns the version checksum file of version in a listing,
// or nil.
func ChecksumOf(files []LogFile, version int64) *LogFile {
	for i := range files {
		if f := files[i]; f.Kind == CRC && f.Version == version {
			return &f
		}
	}
	return nil
}

// completeCheckpoints returns the usable checkpoints of a listing, newest
// first, one per version, each as its parts in order. Where several
// checkpoints share a version, a single-file one (V2 UUID, then classic) is
// preferred over a multi-part set, and among UUID ones the first by key.
func completeCheckpoints(files []LogFile) [][]LogFile {
	type group struct {
		single []LogFile         // UUID or classic, best first
		multi  map[int][]LogFile // NumParts -> parts seen
	}
	byVersion := map[int64]*group{}
	var versions []int64
	for _, f := range files {
		if !f.Kind.IsCheckpoint() {
			continue
		}
		g := byVersion[f.Version]
		if g == nil {
			g = &group{multi: map[int][]LogFile{}}
			byVersion[f.Version] = g
			versions = append(versions, f.Version)
		}
		switch f.Kind {
		case UUIDCheckpoint:
			g.single = append([]LogFile{f}, g.single...)
		case ClassicCheckpoint:
			g.single = append(g.single, f)
		case MultiPartCheckpoint:
			g.multi[f.NumParts] = append(g.multi[f.NumParts], f)
		}
	}
	slices.Sort(versions)
	var out [][]LogFile
	for i := len(versions) - 1; i >= 0; i-- {
		g := byVersion[versions[i]]
		if len(g.single) > 0 {
			out = append(out, g.single[:1])
			continue
		}
		for _, n := range slices.Sorted(maps.Keys(g.multi)) {
			if parts := completeSet(g.multi[n], n); parts != nil {
				out = append(out, parts)
				break
			}
		}
	}
	return out
}

// completeSet returns parts 1..n in order when all are present, else nil.
func completeSet(parts []LogFile, n int) []LogFile {
	byPart := make([]*LogFile, n+1)
	for i := range parts {
		byPart[parts[i].Part] = &parts[i]
	}
	out := make([]LogFile, 0, n)
	for p := 1; p <= n; p++ {
		if byPart[p] == nil {
			return nil
		}
		out = append(out, *byPart[p])
	}
	return out
}

// earliestDesc describes the oldest version a listing can reconstruct, for
// error messages.
func earliestDesc(files []LogFile, skip map[int64]bool) string {
	cps := completeCheckpoints(files)
	for i := len(cps) - 1; i >= 0; i-- {
		if v := cps[i][0].Version; !skip[v] {
			return fmt.Sprintf("version %d", v)
		}
	}
	return "none"
}

// Earliest returns the oldest version of a listing that a segment can be
// built for: 0 when commit 0 is present, else the version of the oldest
// complete checkpoint. When there is neither: deltaerr.ErrTableNotFound
// for a listing without commits, deltaerr.ErrMissingLogFile for one with
// commits (the log's start is missing, or the listing raced log cleanup;
// see Relist).
func Earliest(files []LogFile) (int64, error) {
	hasCommits := false
	for _, f := range files {
		if f.Kind == Commit {
			if f.Version == 0 {
				return 0, nil
			}
			hasCommits = true
		}
	}
	if cps := completeCheckpoints(files); len(cps) > 0 {
		return cps[len(cps)-1][0].Version, nil
	}
	if hasCommits {
		return 0, fmt.Errorf("the log has commits but neither commit 0 nor a checkpoint: %w", deltaerr.ErrMissingLogFile)
	}
	return 0, fmt.Errorf("no commit 0 and no checkpoint in %s: %w", LogDir, deltaerr.ErrTableNotFound)
}

package deltalog

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/logstore"
)

// DefaultLogRetention is the default of the table property
// delta.logRetentionDuration: how long log files are kept for time travel.
const DefaultLogRetention = 30 * 24 * time.Hour

// sidecarGrace is how long an unreferenced sidecar is kept, so that a
// checkpoint being written does not lose the sidecars it has written but
// not yet named (PROTOCOL.md "Metadata Cleanup", step 5).
const sidecarGrace = 24 * time.Hour

// CleanupOptions tune Cleanup.
type CleanupOptions struct {
	// Retention is how long log files are kept: the caller reads it from
	// delta.logRetentionDuration. Zero means DefaultLogRetention; a
	// negative value is deltaerr.ErrInvalidArgument.
	Retention time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// SidecarRefs returns the sidecar file names (as their sidecar actions
	// write them, relative to _delta_log/_sidecars/) that the checkpoint
	// made of parts references. Package checkpoint's SidecarRefs does
	// this. When nil, no sidecar file is deleted.
	SidecarRefs func(ctx context.Context, parts []LogFile) ([]string, error)
	// Verify reads the checkpoint made of parts in full (every part, every
	// page, and the sidecars it names) and returns nil only when all of it
	// decodes; package checkpoint's Verify does this. It is required:
	// Cleanup deletes the commits before a checkpoint only once Verify has
	// read that checkpoint, because a reader that meets a damaged
	// checkpoint replays the commits before it, which must then still be
	// there. Without Verify, Cleanup is deltaerr.ErrInvalidArgument.
	Verify func(ctx context.Context, parts []LogFile) error
	// ClassicCopy, when set, writes the classic-named copy of the
	// UUID-named checkpoint made of parts, so that clients that predate V2
	// checkpoints find a checkpoint they can name and fail cleanly on its
	// protocol (PROTOCOL.md "Handling Backward compatibility while moving
	// to UUID-named v2 Checkpoints"); package checkpoint's ClassicCopy
	// does this. Callers set it for tables with the v2Checkpoint feature.
	// Cleanup calls it as Spark's metadata cleanup does: once, before it
	// deletes anything and only when it is about to (never on a dry run),
	// for the newest complete checkpoint, when that is UUID-named and no
	// classic or multi-part checkpoint of its version exists. An error
	// stops Cleanup before it deletes anything.
	ClassicCopy func(ctx context.Context, parts []LogFile) error
	// DryRun reports what would be deleted and deletes nothing.
	DryRun bool
	// ProtectedBefore is the table's
	// delta.requireCheckpointProtectionBeforeVersion under the
	// checkpointProtection feature (tableconfig's
	// CheckpointProtectedBefore), 0 otherwise. Cleanup then creates no
	// checkpoint of a version below it (ClassicCopy is skipped for one):
	// exception (a) of the protocol RFC, which lets it truncate below the
	// protected version in more than one go, since it never erases a
	// checkpoint after the truncation version either.
	ProtectedBefore int64
}

// CleanupResult says what Cleanup did.
type CleanupResult struct {
	// Cutoff is the cut-off time: midnight UTC of the day Retention ago.
	Cutoff time.Time
	// CheckpointVersion is the version of the oldest checkpoint kept, from
	// which every later version can still be reconstructed; -1 when
	// nothing was eligible for deletion.
	CheckpointVersion int64
	// Unreadable lists the versions of the checkpoints at or before the
	// cut-off commit that Verify refused, newest first: Cleanup fell back
	// past them to an older checkpoint (or, with none left, refused).
	Unreadable []int64
	// Deleted lists the keys deleted (or, with DryRun, to delete), oldest
	// version first, then sidecars.
	Deleted []string
}

// Cleanup deletes the log files that no version still within retention
// needs, following PROTOCOL.md "Metadata Cleanup":
//
//  1. The cut-off is midnight UTC of the day Retention before Now. A
//     commit's time is its file's modification time, made monotonic over
//     versions (a commit is never older than the one before it), so a
//     clock skew cannot expire a version before an older one.
//  2. The cut-off commit is the newest commit not newer than the cut-off,
//     and the cut-off checkpoint the newest complete checkpoint at or
//     before it that Verify reads in full. A checkpoint Verify finds
//     damaged or missing (deltaerr.ErrCorrupt, logstore.ErrNotFound,
//     deltaerr.ErrPathEscapesRoot) is passed over for the next older one,
//     as readers pass over it; any other failure of Verify stops Cleanup
//     before it deletes anything. Without a cut-off commit, or without any
//     checkpoint before it, nothing is deleted; when there are checkpoints
//     but Verify refused them all, Cleanup deletes nothing and returns an
//     error matching deltaerr.ErrCorrupt. Verifying reads the whole
//     cut-off checkpoint once per Cleanup, and is skipped when no log file
//     before it is to be deleted (then nothing relies on it).
//  3. Commits, checkpoints (of every kind) and .crc files of versions
//     before the cut-off checkpoint are deleted, and compacted files that
//     start at or before it. The cut-off checkpoint, its commit, and
//     everything after them are kept: every version from the cut-off
//     checkpoint on can still be loaded, and time travel to any version at
//     or after the cut-off commit works. The newest checkpoint is never
//     deleted, as the cut-off checkpoint is at most it.
//  4. A sidecar in _delta_log/_sidecars is deleted when no kept checkpoint
//     references it and it was last modified more than a day before Now,
//     so that a checkpoint being written keeps the sidecars it has not
//     named yet. This needs SidecarRefs, which callers set only for
//     tables with the v2Checkpoint feature: on other tables _sidecars is
//     not even listed. Only names the protocol gives sidecars,
//     <uuid>.parquet, are candidates; anything else there is left alone. References are read before
//     anything is deleted; if a kept checkpoint cannot be read, Cleanup
//     deletes nothing and returns the error.
//
// Before it deletes anything, Cleanup has CleanupOptions.ClassicCopy, when
// set, write the classic-named copy of a newest checkpoint that has only
// a UUID name, for the clients that know only classic names.
//
// Only names the protocol defines are deleted: commits, checkpoints of
// every naming, .crc files, compacted files (deltalog.ParseName), and
// sidecars as above; and, with each file deleted, its Hadoop checksum
// side file (.<name>.crc, which Spark writes on local and HDFS file
// systems) when the listing shows one, as Spark's cleanup deletes it. The store lists one directory level and never yields
// directories; a local store refuses to list or delete through a symbolic
// link that leads out of its root (see package logstore/local), so a
// _delta_log/_sidecars linked elsewhere is an error, not a directory to
// empty.
//
// Files are deleted oldest version first, so a Cleanup that stops midway
// (an error, a crash) leaves a log whose every version from some point on
// is intact; running it again finishes the job. Deletes may be repeated.
// Cleanup must not run at the same time as a checkpoint of a version
// before the cut-off is being written, which no writer does.
//
// In-commit timestamps are not consulted: a table that has them and whose
// files were copied (new modification times) keeps more than it must,
// never less.
func Cleanup(ctx context.Context, store logstore.Store, opts CleanupOptions) (CleanupResult, error) {
	res := CleanupResult{CheckpointVersion: -1}
	if opts.Retention < 0 {
		return res, fmt.Errorf("log retention %v is negative: %w", opts.Retention, deltaerr.ErrInvalidArgument)
	}
	if opts.Verify == nil {
		return res, fmt.Errorf("cleanup: CleanupOptions.Verify is nil, so no checkpoint can be relied on: %w", deltaerr.ErrInvalidArgument)
	}
	if opts.Retention == 0 {
		opts.Retention = DefaultLogRetention
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	now := opts.Now()
	res.Cutoff = now.Add(-opts.Retention).UTC().Truncate(24 * time.Hour)

	sideFiles := map[string]bool{}
	files, err := list(ctx, store, 0, func(key string) {
		if isSideFile(key) {
			sideFiles[key] = true
		}
	})
	if err != nil {
		return res, err
	}
	cutoffCommit, ok := cutoffCommitVersion(files, res.Cutoff.UnixMilli())
	if !ok {
		return res, nil
	}
	var kept []LogFile // the cut-off checkpoint's parts
	var refused []error
	for _, cp := range completeCheckpoints(files) {
		if cp[0].Version > cutoffCommit {
			continue
		}
		if len(doomedBefore(files, cp[0].Version)) == 0 {
			// Nothing before it would go, nor before any older one:
			// nothing relies on it, so there is nothing to verify.
			kept = cp
			break
		}
		err := opts.Verify(ctx, cp)
		if err == nil {
			kept = cp
			break
		}
		if ctx.Err() != nil || !unreadable(err) {
			return res, fmt.Errorf("cleanup: verifying the checkpoint at version %d: %w", cp[0].Version, err)
		}
		res.Unreadable = append(res.Unreadable, cp[0].Version)
		refused = append(refused, fmt.Errorf("checkpoint %d: %w", cp[0].Version, err))
	}
	if kept == nil {
		if len(refused) > 0 {
			return res, fmt.Errorf("cleanup: no checkpoint at or before version %d reads in full, so nothing is deleted: %w",
				cutoffCommit, errors.Join(append(refused, deltaerr.ErrCorrupt)...))
		}
		return res, nil
	}
	cpVersion := kept[0].Version
	res.CheckpointVersion = cpVersion

	doomed := withSideFiles(doomedBefore(files, cpVersion), sideFiles)

	var sidecars []string
	if opts.SidecarRefs != nil {
		if sidecars, err = deadSidecars(ctx, store, files, cpVersion, now.Add(-sidecarGrace), opts.SidecarRefs); err != nil {
			return res, err
		}
	}
	res.Deleted = append(doomed, sidecars...)
	if opts.DryRun || len(res.Deleted) == 0 {
		return res, nil
	}
	if opts.ClassicCopy != nil {
		if newest := uuidOnly(files); newest != nil && newest[0].Version >= opts.ProtectedBefore {
			if err := opts.ClassicCopy(ctx, newest); err != nil {
				res.Deleted = nil
				return res, fmt.Errorf("cleanup: classic copy of the checkpoint at version %d: %w", newest[0].Version, err)
			}
		}
	}
	for i, key := range res.Deleted {
		if err := store.Delete(ctx, key); err != nil {
			res.Deleted = res.Deleted[:i]
			return res, fmt.Errorf("cleanup: deleting %s: %w", key, err)
		}
	}
	return res, nil
}

// uuidOnly returns the newest complete checkpoint when it is UUID-named
// and no classic or multi-part checkpoint of its version exists: the one
// that needs a classic-named copy. Otherwise it returns nil.
func uuidOnly(files []LogFile) []LogFile {
	cps := completeCheckpoints(files)
	if len(cps) == 0 || cps[0][0].Kind != UUIDCheckpoint {
		return nil
	}
	v := cps[0][0].Version
	for _, f := range files {
		if f.Version == v && (f.Kind == ClassicCheckpoint || f.Kind == MultiPartCheckpoint) {
			return nil
		}
	}
	return cps[0][:1]
}

// doomedBefore returns the keys of the log files that a cut-off checkpoint
// at version makes expendable, in listing order: commits, checkpoints and
// .crc files before it, and compacted files that start at or before it.
func doomedBefore(files []LogFile, version int64) []string {
	var doomed []string
	for _, f := range files {
		switch {
		case f.Kind == Compacted && f.Version <= version:
			doomed = append(doomed, f.Key)
		case f.Kind != Compacted && f.Kind != Unknown && f.Version < version:
			doomed = append(doomed, f.Key)
		}
	}
	return doomed
}

// isSideFile reports whether key names a Hadoop checksum side file of
// the log, .<name>.crc, which Spark writes beside each file it writes on a
// local or HDFS file system.
func isSideFile(key string) bool {
	name := key[strings.LastIndexByte(key, '/')+1:]
	return strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".crc")
}

// withSideFiles adds after each doomed key its Hadoop side file, when the
// listing showed one: Spark's cleanup deletes it with its file (Hadoop's
// checksummed file system does), and left behind it would only pile up.
func withSideFiles(doomed []string, side map[string]bool) []string {
	if len(side) == 0 {
		return doomed
	}
	out := make([]string, 0, len(doomed))
	for _, k := range doomed {
		out = append(out, k)
		i := strings.LastIndexByte(k, '/') + 1
		if s := k[:i] + "." + k[i:] + ".crc"; side[s] {
			out = append(out, s)
		}
	}
	return out
}

// unreadable reports whether err from Verify says the checkpoint cannot be
// read, as opposed to a failure to read it (a network error, a denied
// permission) that says nothing about it.
func unreadable(err error) bool {
	return errors.Is(err, deltaerr.ErrCorrupt) || errors.Is(err, logstore.ErrNotFound) || errors.Is(err, deltaerr.ErrPathEscapesRoot)
}

// cutoffCommitVersion returns the newest commit whose (monotonic) time is
// at or before cutoff (milliseconds).
func cutoffCommitVersion(files []LogFile, cutoff int64) (int64, bool) {
	var commits []LogFile
	for _, f := range files {
		if f.Kind == Commit {
			commits = append(commits, f)
		}
	}
	slices.SortFunc(commits, func(a, b LogFile) int { return cmp.Compare(a.Version, b.Version) })
	best, found := int64(-1), false
	prev := int64(-1 << 62)
	for _, c := range commits {
		ts := max(c.ModTime, prev+1)
		prev = ts
		if ts > cutoff {
			break
		}
		best, found = c.Version, true
	}
	return best, found
}

// deadSidecars returns the sidecar keys that no checkpoint at or after
// version from references and that were modified before olderThan.
func deadSidecars(ctx context.Context, store logstore.Store, files []LogFile, from int64, olderThan time.Time,
	refs func(context.Context, []LogFile) ([]string, error)) ([]string, error) {
	live := map[string]bool{}
	for _, cp := range allCheckpoints(files) {
		if cp[0].Version < from {
			continue
		}
		names, err := refs(ctx, cp)
		if err != nil {
			return nil, fmt.Errorf("cleanup: reading the sidecars of %s: %w", cp[0].Key, err)
		}
		for _, n := range names {
			live[n] = true
		}
	}
	var out []string
	for obj, err := range store.List(ctx, SidecarDir, "") {
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", SidecarDir, err)
		}
		name := obj.Key[len(SidecarDir):]
		if !isSidecarName(name) || live[name] || !obj.ModTime.Before(olderThan) {
			continue
		}
		out = append(out, obj.Key)
	}
	return out, nil
}

// isSidecarName reports whether name is one the protocol gives a sidecar
// file: <uuid>.parquet.
func isSidecarName(name string) bool {
	uuid, ok := strings.CutSuffix(name, ".parquet")
	return ok && isUUID(uuid)
}

// allCheckpoints returns every checkpoint of the listing that can hold
// sidecar references: each UUID-named and classic checkpoint on its own.
// Multi-part checkpoints follow the V1 spec, which has no sidecars.
func allCheckpoints(files []LogFile) [][]LogFile {
	var out [][]LogFile
	for _, f := range files {
		if f.Kind == UUIDCheckpoint || f.Kind == ClassicCheckpoint {
			out = append(out, []LogFile{f})
		}
	}
	return out
}

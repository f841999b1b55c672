package vacuum

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/location"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/txn"
)

// Operation names in commitInfo, as Spark writes them. They are read by
// other engines' history views: they must not change.
const (
	OperationStart = "VACUUM START"
	OperationEnd   = "VACUUM END"
)

// changeDataDir is the directory of change-data files, the one hidden
// directory VACUUM enters.
const changeDataDir = "_change_data"

// ErrRetentionTooShort is the kind of a *RetentionError.
var ErrRetentionTooShort = errors.New("vacuum: retention shorter than the table's")

// RetentionError refuses a retention shorter than the table's
// delta.deletedFileRetentionDuration without Options.Force (Spark's
// retentionDurationCheck). errors.Is(err, ErrRetentionTooShort) and
// errors.Is(err, deltaerr.ErrInvalidArgument) hold.
type RetentionError struct {
	Requested, Table time.Duration
}

func (e *RetentionError) Error() string {
	return fmt.Sprintf("vacuum: a retention of %v is shorter than the table's delta.deletedFileRetentionDuration (%v): "+
		"readers of older versions and writers in flight may lose files; set Force (--force) if no one reads or writes the table meanwhile",
		e.Requested, e.Table)
}

// Is reports whether target is ErrRetentionTooShort or deltaerr.ErrInvalidArgument.
func (e *RetentionError) Is(target error) bool {
	return target == ErrRetentionTooShort || target == deltaerr.ErrInvalidArgument
}

// Options tune Vacuum. The zero value runs a full VACUUM with the table's
// retention.
type Options struct {
	// Retention overrides the table's delta.deletedFileRetentionDuration
	// when RetentionSet is true (so that a retention of zero can be asked
	// for). Negative is deltaerr.ErrInvalidArgument.
	Retention    time.Duration
	RetentionSet bool
	// Force allows a Retention shorter than the table's.
	Force bool
	// Lite deletes only what the removes (and cdc actions) of the commits
	// since the last VACUUM name, without listing the root; it is refused
	// with a *LiteError when log cleanup has deleted some of those commits.
	// See the package doc.
	Lite bool
	// DryRun finds the files and deletes nothing, and commits nothing.
	DryRun bool
	// Concurrency is how many deletes run at once; 0 means 32 on object
	// stores and 4 on the local disk and in memory.
	Concurrency int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Progress, when set, is called after each delete (from any worker
	// goroutine) with the number done so far and the total.
	Progress func(done, total int64)
	// Txn configures the VACUUM START and END commits (engine info, user
	// metadata, a clock). Operation and its parameters are set here.
	Txn txn.Options
	// Inventory, when set, gives a full VACUUM the table's files and
	// directories instead of a listing of the root, as Spark's VACUUM ...
	// USING INVENTORY: see InventoryEntry. The rules are the listing's
	// (what is kept, hidden directories, other tables inside the root);
	// entries outside the root are counted in Result.InventorySkipped. A
	// file the inventory omits is not deleted. Lite mode refuses one
	// (deltaerr.ErrInvalidArgument).
	Inventory iter.Seq2[InventoryEntry, error]
}

// File is a file Vacuum deletes (or, in a dry run, would).
type File struct {
	Key  string // store key, relative to the table root
	Size int64  // bytes; in lite mode the size the log records, 0 if none
}

// Result says what Vacuum did.
type Result struct {
	// Cutoff is the cut-off: files tombstoned, or orphans modified, before
	// it are eligible.
	Cutoff time.Time
	// Retention is the retention applied, and TableRetention the table's.
	Retention, TableRetention time.Duration
	// Files are the files to delete, sorted by key.
	Files []File
	// Bytes is their total size.
	Bytes int64
	// Deleted is how many were deleted: 0 in a dry run.
	Deleted int64
	// DeletedDirs is how many empty directories a full VACUUM deleted
	// (on stores with directories: the local disk); 0 in a dry run.
	DeletedDirs int64
	// Dirs is the number of directories walked (the root included); 0 in
	// lite mode. Spark reports it as numVacuumedDirectories.
	Dirs int64
	// InventorySkipped is how many entries of Options.Inventory were not
	// under the table's root (or not a fully qualified path), and so were
	// neither kept nor deleted.
	InventorySkipped int64
	// StartVersion and EndVersion are the versions of the VACUUM START and
	// END commits; -1 when not committed (a dry run, or a failure before).
	StartVersion, EndVersion int64
	// LastVacuumInfo is the version this run recorded in
	// _last_vacuum_info (LastVacuumInfoKey): every file the commits up to
	// it removed before the cut-off is gone. -1 when it recorded none.
	LastVacuumInfo int64
	DryRun, Lite   bool
}

// Vacuum deletes the files of the table of snap (its latest snapshot, as
// loaded by the caller) that no version inside the retention window
// needs. See the package doc.
func Vacuum(ctx context.Context, snap *snapshot.Snapshot, opts Options) (Result, error) {
	res := Result{StartVersion: -1, EndVersion: -1, LastVacuumInfo: -1, DryRun: opts.DryRun, Lite: opts.Lite}
	if opts.Lite && opts.Inventory != nil {
		return res, errInventoryLite
	}
	if err := snap.Config().CheckMaintenance("VACUUM"); err != nil {
		return res, err
	}
	p, m := snap.Protocol(), snap.Metadata()
	// VACUUM writes no row: the table's row rules (CHECK constraints,
	// invariants, generated columns) do not stop it; every other writer
	// feature must be one this build supports (vacuumProtocolCheck).
	if err := txn.WriteSupportedChecked(&p, &m); err != nil {
		return res, fmt.Errorf("vacuum: %w", err)
	}
	tableRet := snap.Config().DeletedFileRetention()
	ret := tableRet
	if opts.RetentionSet {
		if opts.Retention < 0 {
			return res, fmt.Errorf("vacuum: negative retention %v: %w", opts.Retention, deltaerr.ErrInvalidArgument)
		}
		if opts.Retention < tableRet && !opts.Force {
			return res, &RetentionError{Requested: opts.Retention, Table: tableRet}
		}
		ret = opts.Retention
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	res.Retention, res.TableRetention = ret, tableRet
	res.Cutoff = now().Add(-ret)
	cutoffMs := res.Cutoff.UnixMilli()

	store := snap.Store()
	keep, err := fileSets(ctx, snap, cutoffMs)
	if err != nil {
		return res, err
	}
	part := partitionDirPrefixes(m.PartitionColumns)
	// The newest commit at or before the cut-off: lite mode reads the
	// commits up to it, and both modes record it in _last_vacuum_info.
	var outside int64
	hasOutside := false
	if opts.Lite || !opts.DryRun {
		outside, hasOutside, err = latestOutsideWindow(ctx, snap, res.Cutoff)
		if err != nil && opts.Lite {
			return res, err
		}
		// A full VACUUM needs it only to record it: when the log cannot
		// date its commits, it records nothing, which is always safe.
		hasOutside = hasOutside && err == nil
	}
	var walked []string // the directories a full VACUUM walked, the root excepted
	// candidate takes a listed file that neither the log keeps nor the
	// retention protects.
	candidate := func(info logstore.ObjectInfo) {
		if _, ok := keep[info.Key]; ok || !info.ModTime.Before(res.Cutoff) {
			return
		}
		res.Files = append(res.Files, File{Key: info.Key, Size: info.Size})
	}
	if opts.Lite {
		if hasOutside {
			if res.Files, err = liteFiles(ctx, snap, keep, outside, cutoffMs); err != nil {
				return res, err
			}
			if res.Files, err = dropUnplaceable(ctx, store, res.Files, part); err != nil {
				return res, err
			}
		}
	} else if opts.Inventory != nil {
		walked, res.InventorySkipped, err = inventoryFiles(ctx, snap.Location(), opts.Inventory, part, candidate)
		if err != nil {
			return res, err
		}
		// An inventory need not list another table's _delta_log: look for
		// one above every candidate and every directory, as lite mode does.
		if res.Files, err = dropUnplaceable(ctx, store, res.Files, part); err != nil {
			return res, err
		}
		dirs := make([]File, len(walked))
		for i, d := range walked {
			dirs[i] = File{Key: d} // "a/b/": a/ and a/b/ themselves are looked at
		}
		if dirs, err = dropUnplaceable(ctx, store, dirs, part); err != nil {
			return res, err
		}
		walked = walked[:0]
		for _, d := range dirs {
			walked = append(walked, d.Key)
		}
		res.Dirs = int64(len(walked)) + 1 // and the root
	} else {
		var nested []string
		walked, nested, err = walk(ctx, store, part, candidate)
		if err != nil {
			return res, fmt.Errorf("vacuum: listing the table: %w", err)
		}
		// Another table's files are not this one's to delete, nor are its
		// directories to remove.
		res.Files = slices.DeleteFunc(res.Files, func(f File) bool { return underAny(f.Key, nested) })
		walked = slices.DeleteFunc(walked, func(d string) bool { return underAny(d, nested) })
		res.Dirs = int64(len(walked)) + 1 // and the root
	}
	slices.SortFunc(res.Files, func(a, b File) int { return strings.Compare(a.Key, b.Key) })
	for _, f := range res.Files {
		res.Bytes += f.Size
	}
	if opts.DryRun {
		return res, nil
	}

	params := map[string]any{
		"retentionCheckEnabled":  !opts.Force,
		"defaultRetentionMillis": tableRet.Milliseconds(),
	}
	if opts.RetentionSet {
		params["specifiedRetentionMillis"] = ret.Milliseconds()
	}
	start, err := logCommit(ctx, snap, opts.Txn, OperationStart, params, map[string]any{
		"numFilesToDelete":   strconv.Itoa(len(res.Files)),
		"sizeOfDataToDelete": strconv.FormatInt(res.Bytes, 10),
	})
	if err != nil {
		return res, fmt.Errorf("vacuum: committing %s: %w", OperationStart, err)
	}
	res.StartVersion = start.Version
	// Like every commit, the START commit runs the post-commit chain (its
	// version checksum, the checkpoint it may make due): the END commit
	// then derives its checksum from this one's.
	txn.PostCommit(ctx, &start)

	deleted, delErr := deleteAll(ctx, store, res.Files, opts)
	res.Deleted = deleted
	if delErr == nil {
		res.DeletedDirs, delErr = removeEmptyDirs(ctx, store, walked)
	}
	status := "COMPLETED"
	metrics := map[string]any{
		"numDeletedFiles":        strconv.FormatInt(deleted, 10),
		"numVacuumedDirectories": strconv.FormatInt(res.Dirs, 10),
	}
	if delErr != nil {
		status, metrics = "FAILED", nil
	}
	// The END commit is made on a fresh context when ctx was cancelled
	// midway, so that the log says the run FAILED.
	endCtx := ctx
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		endCtx, cancel = context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
	}
	end, endErr := logCommit(endCtx, snap, opts.Txn, OperationEnd, map[string]any{"status": status}, metrics)
	if endErr == nil {
		res.EndVersion = end.Version
		txn.PostCommit(endCtx, &end)
	}
	if delErr != nil {
		return res, fmt.Errorf("vacuum: deleting files: %w", delErr)
	}
	if hasOutside {
		if err := recordLastVacuum(ctx, store, outside); err != nil {
			return res, err
		}
		res.LastVacuumInfo = outside
	}
	if endErr != nil {
		return res, fmt.Errorf("vacuum: committing %s: %w", OperationEnd, endErr)
	}
	return res, nil
}

// logCommit commits an empty commit recording op, on the newest snapshot.
func logCommit(ctx context.Context, snap *snapshot.Snapshot, base txn.Options, op string, params, metrics map[string]any) (txn.CommitResult, error) {
	o := base
	o.Operation, o.OperationParameters, o.OperationMetrics = op, params, metrics
	o.NoCheckpoint = op == OperationStart
	return txn.Update(ctx, snap, o, func(*txn.Transaction) error { return nil })
}

// fileSets returns the keys of the files to keep: live files, files
// tombstoned at or after cutoffMs, and the DV files of both, each
// resolved by the snapshot's Location (see keepPath). Paths outside the
// root are not in it: they are never deleted anyway. A deletion-vector
// descriptor that names no file it can place fails the VACUUM.
func fileSets(ctx context.Context, snap *snapshot.Snapshot, cutoffMs int64) (map[string]struct{}, error) {
	loc := snap.Location()
	keep := map[string]struct{}{}
	keepDV := func(of string, d *actions.DeletionVector) error {
		p, ok, err := location.DVPath(d)
		if err != nil {
			return fmt.Errorf("vacuum: the deletion vector of %s: %w", of, err)
		}
		if ok {
			keepPath(keep, loc, p)
		}
		return nil
	}
	for a, err := range snap.Files(ctx) {
		if err != nil {
			return nil, fmt.Errorf("vacuum: reading the live files: %w", err)
		}
		keepPath(keep, loc, a.Path)
		if err := keepDV(a.Path, a.DeletionVector); err != nil {
			return nil, err
		}
	}
	for r, err := range snap.Tombstones(ctx) {
		if err != nil {
			return nil, fmt.Errorf("vacuum: reading the tombstones: %w", err)
		}
		if r.DeletionTimestamp == nil || *r.DeletionTimestamp < cutoffMs {
			continue
		}
		keepPath(keep, loc, r.Path)
		if err := keepDV(r.Path, r.DeletionVector); err != nil {
			return nil, err
		}
	}
	return keep, nil
}

// keepPath adds to keep the key of the file at path p (as the log writes
// it) in the table's root. A path the Location cannot place (one that does
// not decode, or one an old writer left unescaped so that it reads as a
// URI of an unknown scheme) keeps every key it might mean: itself and its
// decoded form, where those are keys. VACUUM keeps what it cannot place.
func keepPath(keep map[string]struct{}, loc *location.Location, p string) {
	if k, err := loc.Key(p); err == nil {
		keep[k] = struct{}{}
		return
	}
	for _, k := range []string{p, location.Canonical(p)} {
		if logstore.CheckKey(k) == nil {
			keep[k] = struct{}{}
		}
	}
}

// partitionDirPrefixes are the "col=" prefixes of partition directories,
// which are walked even when col starts with '_' or '.'.
func partitionDirPrefixes(cols []string) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c + "="
	}
	return out
}

// hidden reports whether a file or directory name is hidden from VACUUM:
// it starts with '_' or '.', and is neither _change_data nor a partition
// directory.
func hidden(name string, part []string) bool {
	if name == "" || (name[0] != '_' && name[0] != '.') {
		return false
	}
	if name == changeDataDir {
		return false
	}
	for _, p := range part {
		if strings.HasPrefix(name, p) {
			return false
		}
	}
	return true
}

// walk lists every file under the root outside hidden directories, and
// calls fn for each that is not hidden. It returns the directories it
// walked, the root excepted, in the order it entered them, and the
// directories below the root that hold a _delta_log: other tables, whose
// files fn may have been given before their log was seen.
func walk(ctx context.Context, store logstore.Store, part []string, fn func(logstore.ObjectInfo)) (dirs, nested []string, err error) {
	enter := func(sub string) bool {
		name := strings.TrimSuffix(sub, "/")
		parent := name[:strings.LastIndexByte(name, '/')+1]
		name = name[len(parent):]
		if name+"/" == deltalog.LogDir && parent != "" {
			nested = append(nested, parent)
		}
		if hidden(name, part) {
			return false
		}
		dirs = append(dirs, sub)
		return true
	}
	for info, err := range logstore.Walk(ctx, store, "", enter) {
		if err != nil {
			return dirs, nested, err
		}
		if !hidden(info.Key[strings.LastIndexByte(info.Key, '/')+1:], part) {
			fn(info)
		}
	}
	return dirs, nested, nil
}

// underAny reports whether key lies under one of dirs (each ending in '/').
func underAny(key string, dirs []string) bool {
	for _, d := range dirs {
		if strings.HasPrefix(key, d) {
			return true
		}
	}
	return false
}

// dropUnplaceable removes from files, which a lite VACUUM took from the
// log, every key a full VACUUM would not reach: one with a hidden segment
// (_delta_log and its files, _last_checkpoint, any '_' or '.' name but
// _change_data and partition directories), and one inside a directory
// that holds another table's _delta_log.
func dropUnplaceable(ctx context.Context, store logstore.Store, files []File, part []string) ([]File, error) {
	tables := map[string]bool{} // directory -> holds a _delta_log
	isTable := func(dir string) (bool, error) {
		if v, ok := tables[dir]; ok {
			return v, nil
		}
		found := false
		for _, err := range store.List(ctx, dir+deltalog.LogDir, "") {
			if err != nil && !errors.Is(err, logstore.ErrNotFound) {
				return false, err
			}
			found = err == nil
			break
		}
		tables[dir] = found
		return found, nil
	}
	out := files[:0]
	for _, f := range files {
		segs := strings.Split(f.Key, "/")
		if slices.ContainsFunc(segs, func(s string) bool { return hidden(s, part) }) {
			continue
		}
		inTable := false
		for i := 1; i < len(segs) && !inTable; i++ {
			t, err := isTable(strings.Join(segs[:i], "/") + "/")
			if err != nil {
				return nil, fmt.Errorf("vacuum: looking for tables inside the table: %w", err)
			}
			inTable = t
		}
		if !inTable {
			out = append(out, f)
		}
	}
	return out, nil
}

// removeEmptyDirs removes those of dirs (walked, so never the root, nor
// _delta_log or another hidden directory) that are empty, deepest first,
// so that a partition directory whose sub-directories were all emptied
// goes too; on stores without directories it does nothing. It returns how
// many it removed. A directory in which a file appears meanwhile stays.
func removeEmptyDirs(ctx context.Context, store logstore.Store, dirs []string) (int64, error) {
	dirs = slices.Clone(dirs)
	// A directory sorts after its parent, its prefix: reversed, children
	// come first.
	slices.Sort(dirs)
	slices.Reverse(dirs)
	var n int64
	for _, d := range dirs {
		if d == "" || strings.HasPrefix(d, deltalog.LogDir) {
			continue // never the root or the log, whatever walked them
		}
		removed, err := logstore.RemoveEmptyDir(ctx, store, d)
		if err != nil {
			return n, fmt.Errorf("removing the empty directory %s: %w", d, err)
		}
		if removed {
			n++
		}
	}
	return n, nil
}

// deleteAll deletes files with a bounded pool of workers, and returns how
// many it deleted. It stops at the first error.
func deleteAll(ctx context.Context, store logstore.Store, files []File, opts Options) (int64, error) {
	workers := opts.Concurrency
	if workers <= 0 {
		workers = 32
		if u := store.URI(); strings.HasPrefix(u, "file:") || strings.HasPrefix(u, "memory:") {
			workers = 4
		}
	}
	workers = max(1, min(workers, len(files)))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		done     int64
		firstErr error
		wg       sync.WaitGroup
	)
	jobs := make(chan string)
	total := int64(len(files))
	for range workers {
		wg.Go(func() {
			for key := range jobs {
				if err := store.Delete(ctx, key); err != nil {
					mu.Lock()
					firstErr = cmp.Or(firstErr, err)
					mu.Unlock()
					cancel()
					continue
				}
				mu.Lock()
				done++
				d := done
				mu.Unlock()
				if opts.Progress != nil {
					opts.Progress(d, total)
				}
			}
		})
	}
feed:
	for _, f := range files {
		select {
		case jobs <- f.Key:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if firstErr == nil && ctx.Err() != nil {
		firstErr = context.Cause(ctx)
	}
	return done, firstErr
}

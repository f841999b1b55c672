package vacuum

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/location"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/snapshot"
)

// LastVacuumInfoKey is the key of the file in which a VACUUM records how
// far into the log it has deleted, Spark's _delta_log/_last_vacuum_info.
// Its name and its one field, latestCommitVersionOutsideOfRetentionWindow,
// are shared with Delta Spark: they must not change.
const LastVacuumInfoKey = deltalog.LogDir + "_last_vacuum_info"

// lastVacuumField is the field of the _last_vacuum_info JSON object.
const lastVacuumField = "latestCommitVersionOutsideOfRetentionWindow"

// ErrCannotVacuumLite is the kind of a *LiteError.
var ErrCannotVacuumLite = errors.New("vacuum: VACUUM LITE cannot delete all eligible files; run a full VACUUM")

// LiteError refuses a lite VACUUM (Options.Lite) that cannot find every
// file to delete in the log: log cleanup has deleted commits whose removes
// no VACUUM has handled since, so the files they removed are named by no
// commit left. Spark refuses it alike (DELTA_CANNOT_VACUUM_LITE). A full
// VACUUM, which lists the directory, deletes those files, and records how
// far it went so that lite runs work again after it.
// errors.Is(err, ErrCannotVacuumLite) holds.
type LiteError struct {
	// Earliest is the oldest commit still in the log.
	Earliest int64
	// LastVacuumed is the newest commit the last VACUUM handled, from
	// _last_vacuum_info; -1 when there is none.
	LastVacuumed int64
}

func (e *LiteError) Error() string {
	last := "no earlier VACUUM recorded how far it went"
	if e.LastVacuumed >= 0 {
		last = fmt.Sprintf("the last VACUUM handled the commits up to version %d", e.LastVacuumed)
	}
	return fmt.Sprintf("vacuum: VACUUM LITE cannot delete all eligible files, as some are named by no commit left: "+
		"log cleanup removed the commits before version %d and %s; run a full VACUUM", e.Earliest, last)
}

// Is reports whether target is ErrCannotVacuumLite.
func (e *LiteError) Is(target error) bool { return target == ErrCannotVacuumLite }

// readLastVacuum returns the version _last_vacuum_info records, or -1 when
// there is no such file, or it records none. A file that is not the JSON
// object Spark writes counts as none, as Spark reads it: the only harm is
// that a lite VACUUM may refuse to run.
func readLastVacuum(ctx context.Context, store logstore.Store) (int64, error) {
	data, err := store.Get(ctx, LastVacuumInfoKey)
	if errors.Is(err, logstore.ErrNotFound) {
		return -1, nil
	}
	if err != nil {
		return -1, fmt.Errorf("vacuum: reading %s: %w", LastVacuumInfoKey, err)
	}
	// Spark reads the first line.
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		data = data[:i]
	}
	var info map[string]json.RawMessage
	if json.Unmarshal(data, &info) != nil {
		return -1, nil
	}
	v, err := strconv.ParseInt(string(info[lastVacuumField]), 10, 64)
	if err != nil || v < 0 {
		return -1, nil
	}
	return v, nil
}

// writeLastVacuum records version v in _last_vacuum_info, byte for byte as
// Spark writes it (one line of JSON, replacing the file).
func writeLastVacuum(ctx context.Context, store logstore.Store, v int64) error {
	data := []byte(`{"` + lastVacuumField + `":` + strconv.FormatInt(v, 10) + "}\n")
	if err := store.Put(ctx, LastVacuumInfoKey, data); err != nil {
		return fmt.Errorf("vacuum: recording the last vacuum in %s: %w", LastVacuumInfoKey, err)
	}
	return nil
}

// latestOutsideWindow returns the newest commit version of snap's table
// committed at or before cutoff (Spark's
// latestCommitVersionOutsideOfRetentionWindow: the version current at
// the cut-off), and false when every commit still dated is after it.
func latestOutsideWindow(ctx context.Context, snap *snapshot.Snapshot, cutoff time.Time) (int64, bool, error) {
	v, err := snapshot.VersionAtTimestamp(ctx, snap, cutoff)
	switch {
	case err == nil:
		return v, true, nil
	case !errors.Is(err, deltaerr.ErrTimestampOutOfRange):
		return 0, false, fmt.Errorf("vacuum: finding the version at the cut-off: %w", err)
	case !cutoff.Before(snap.Timestamp()):
		return snap.Version(), true, nil // after the latest commit
	default:
		return 0, false, nil // before the earliest commit
	}
}

// liteFiles returns the files a lite VACUUM deletes, as Spark's LITE mode
// finds them: the files removed, and the change-data files added, by the
// commits from the one after the last VACUUM's (or the earliest) through
// end, the newest commit at or before the cut-off, that keep does not hold
// and were removed before the cut-off. It reads those commit files only,
// never a checkpoint, since a checkpoint drops expired removes. It returns
// a *LiteError when log cleanup has deleted commits no VACUUM has handled.
func liteFiles(ctx context.Context, snap *snapshot.Snapshot, keep map[string]struct{}, end int64, cutoffMs int64) ([]File, error) {
	store := snap.Store()
	logFiles, err := deltalog.List(ctx, store, 0)
	if err != nil {
		return nil, fmt.Errorf("vacuum: listing the log: %w", err)
	}
	commits := map[int64]string{}
	earliest := int64(-1)
	for _, f := range logFiles {
		if f.Kind != deltalog.Commit {
			continue
		}
		if earliest < 0 {
			earliest = f.Version
		}
		commits[f.Version] = f.Key
	}
	last, err := readLastVacuum(ctx, store)
	if err != nil {
		return nil, err
	}
	// Spark's rule, so that both decide alike on one table.
	if earliest != 0 && last < earliest {
		return nil, &LiteError{Earliest: earliest, LastVacuumed: last}
	}
	start := earliest
	if last >= 0 {
		start = last + 1
	}
	start = min(start, snap.Version())

	loc := snap.Location()
	seen := map[string]bool{}
	var out []File
	add := func(key string, size int64) {
		if _, ok := keep[key]; ok || seen[key] {
			return
		}
		seen[key] = true
		out = append(out, File{Key: key, Size: size})
	}
	for v := start; v <= end; v++ {
		key, ok := commits[v]
		if !ok {
			return nil, fmt.Errorf("vacuum: commit %d is missing from the log: %w", v, deltaerr.ErrMissingLogFile)
		}
		data, err := store.Get(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("vacuum: reading commit %d: %w", v, err)
		}
		err = actions.EachAction(key, data, func(a *actions.Action) error {
			switch {
			case a.Remove != nil:
				r := a.Remove
				if r.DeletionTimestamp != nil && *r.DeletionTimestamp >= cutoffMs {
					return nil
				}
				if p, ok, err := location.DVPath(r.DeletionVector); err == nil && ok {
					if k, err := loc.Key(p); err == nil {
						add(k, 0) // a DV file may hold many vectors: its size is unknown
					}
				}
				if k, err := loc.Key(r.Path); err == nil {
					var size int64
					if r.Size != nil {
						size = *r.Size
					}
					add(k, size)
				}
			case a.CDC != nil:
				// Spark counts change-data files as written at time zero.
				if k, err := loc.Key(a.CDC.Path); err == nil {
					add(k, a.CDC.Size)
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("vacuum: reading commit %d: %w", v, err)
		}
	}
	return out, nil
}

// recordLastVacuum records in _last_vacuum_info that the commits up to
// version v have been handled, once a VACUUM (full or lite) has deleted
// what they removed before its cut-off. A version already recorded that is
// newer stays: it is just as true (Spark writes its own run's version in
// any case).
func recordLastVacuum(ctx context.Context, store logstore.Store, v int64) error {
	prev, err := readLastVacuum(ctx, store)
	if err != nil {
		return err
	}
	return writeLastVacuum(ctx, store, max(prev, v))
}

package fileset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/internal/dv"
	"github.com/godelta/delta/internal/rowcheck"
	"github.com/godelta/delta/location"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/tableconfig"
	"github.com/godelta/delta/txn"
)

// OperationClone is the commitInfo operation of a CLONE, as Spark writes
// it. It must not change.
const OperationClone = "CLONE"

// rowTrackingDomain is the domain of the row-id high-water mark: a clone
// starts its own (its adds get fresh row ids), so it is not copied.
const rowTrackingDomain = "delta.rowTracking"

// CloneOptions tune Clone.
type CloneOptions struct {
	// Txn configures the commit; Operation and its parameters and metrics
	// are set by Clone.
	Txn txn.Options
	// Deep copies every data file and deletion vector file into the
	// target, so that the clone depends on nothing of the source (a deep
	// clone); see Clone.
	Deep bool
}

// CloneResult says what Clone committed; the names follow Spark's metrics.
type CloneResult struct {
	// SourceVersion is the version of the source cloned.
	SourceVersion int64
	// Commit is the result of the clone's version 0.
	Commit txn.CommitResult

	SourceTableSize  int64
	SourceNumOfFiles int64
	NumRemovedFiles  int64 // always 0: a clone never replaces a table here
	NumCopiedFiles   int64 // 0 for a shallow clone, which copies no file
	RemovedFilesSize int64
	CopiedFilesSize  int64
}

// Clone makes a shallow clone of source (a snapshot of any version) in
// target, an empty location: a new table whose version 0 holds the source's
// protocol, its metaData under a new table id and creation time, its
// domain metadata (but for the row-tracking high-water mark), and an add
// for every live file of the source with the file's path made absolute
// (the source root joined with the relative path) and a deletion vector
// stored in a file turned into one of storage type "p" naming that file by
// its absolute URI. The adds keep their partition values, size,
// modification time, stats and tags, with dataChange true; row ids are
// assigned afresh when the protocol has row tracking. The commitInfo is
// Spark's: operation CLONE, parameters source and sourceVersion (the keys
// of DeltaOperations.Clone, which has no isShallow), and the metrics of
// CloneResult.
//
// A deep clone (CloneOptions.Deep) copies every live data file, and every
// deletion-vector file, into target under the key it has in its own root,
// and its adds name the copies by relative paths: the clone reads nothing
// of the source and declares an empty list of source roots, so it survives
// the source's VACUUM or deletion. Its metrics count the copies (numCopiedFiles,
// copiedFilesSize). A copy whose size differs from the log's is
// deltaerr.ErrCorrupt; when a copy fails, the files already copied are
// deleted and nothing is committed.
//
// Nothing of the source is written or deleted. A shallow clone reads the
// source's files where they are: its metadata declares the source's root,
// and every root the source trusted, under location.CloneSourceRootsKey,
// so its Location trusts them for reading however its log is cleaned up;
// its own writes go under target, and VACUUM of the clone never deletes
// files outside it. A target that already holds a Delta log is
// txn.ErrTableExists; one that overlaps the source's root or a root it
// trusts is deltaerr.ErrRootsOverlap; one that holds other files is
// deltaerr.ErrNotEmpty; a version whose files are gone is a
// *MissingFilesError.
func Clone(ctx context.Context, source *snapshot.Snapshot, target logstore.Store, opts CloneOptions) (CloneResult, error) {
	res := CloneResult{SourceVersion: source.Version()}
	p := source.Protocol()
	if err := tableconfig.ReadSupported(&p); err != nil {
		return res, fmt.Errorf("fileset: clone: %w", err)
	}
	m := source.Metadata()
	// A clone's rows are the source's, checked when they were written.
	if err := txn.WriteSupportedChecked(&p, &m); err != nil {
		return res, fmt.Errorf("fileset: clone: %w", err)
	}
	srcLoc := source.Location()
	if err := checkCloneTarget(ctx, srcLoc, target); err != nil {
		return res, fmt.Errorf("fileset: clone: %w", err)
	}
	root := location.EncodeRoot(srcLoc.URI())
	o := opts.Txn
	clock := time.Now
	if o.Clock != nil {
		clock = o.Clock
	}
	now := clock().UnixMilli()
	meta := m
	meta.ID = uuid.NewString()
	meta.CreatedTime = &now
	meta.Configuration = maps.Clone(m.Configuration)
	if meta.Configuration == nil {
		meta.Configuration = map[string]string{}
	}
	// The clone trusts the source's root and every root the source
	// trusted, durably: its metadata says so (see package location).
	if opts.Deep {
		// Nothing outside its root: a deep clone of a shallow clone does
		// not inherit the roots its source reads from, and an empty list
		// (not none) says so, so that the CLONE commit 0 is not taken for
		// a shallow clone's of before the property (package location).
		meta.Configuration[location.CloneSourceRootsKey] = "[]"
	} else {
		roots, _ := json.Marshal(slices.Compact(slices.Sorted(slices.Values(append(srcLoc.TrustedRoots(ctx), root)))))
		meta.Configuration[location.CloneSourceRootsKey] = string(roots)
	}

	var adds []actions.Add
	for a, err := range source.Files(ctx) {
		if err != nil {
			return res, fmt.Errorf("fileset: clone: files of version %d: %w", source.Version(), err)
		}
		c := *a
		c.DataChange = true
		c.BaseRowID, c.DefaultRowCommitVersion = nil, nil
		if !opts.Deep && !location.IsAbsolute(c.Path) { // deepCopy places a deep clone's
			c.Path = root + "/" + c.Path
		}
		if d := a.DeletionVector; d != nil && d.StorageType == dv.StorageRelative && !opts.Deep {
			key, err := dv.RelativePath(d)
			if err != nil {
				return res, fmt.Errorf("fileset: clone: deletion vector of %s: %w", a.Path, err)
			}
			nd := *d
			nd.StorageType, nd.PathOrInlineDv = dv.StorageAbsolute, root+"/"+location.EncodePath(key)
			c.DeletionVector = &nd
		}
		adds = append(adds, c)
		res.SourceNumOfFiles++
		res.SourceTableSize += a.Size
	}
	// A clone of files that are gone could never be read (RESTORE refuses
	// the same).
	gone, err := missing(ctx, srcLoc, ptrs(adds), 100)
	if err != nil {
		return res, fmt.Errorf("fileset: clone: checking the files of version %d: %w", source.Version(), err)
	}
	if len(gone) > 0 {
		return res, fmt.Errorf("fileset: clone: %w", &MissingFilesError{Version: source.Version(), Paths: gone, Op: "clone"})
	}
	if opts.Deep {
		if res.NumCopiedFiles, res.CopiedFilesSize, err = deepCopy(ctx, srcLoc, target, adds); err != nil {
			return res, fmt.Errorf("fileset: clone: %w", err)
		}
	}
	var domains []actions.DomainMetadata
	for d, err := range source.Domains(ctx) {
		if err != nil {
			return res, fmt.Errorf("fileset: clone: domain metadata: %w", err)
		}
		if d.Domain != rowTrackingDomain && !d.Removed {
			domains = append(domains, d)
		}
	}

	o.Operation = OperationClone
	o.OperationParameters = map[string]any{
		"source":        logstore.RedactURI(source.Store().URI()),
		"sourceVersion": source.Version(),
	}
	o.OperationMetrics = map[string]any{
		"sourceTableSize":  strconv.FormatInt(res.SourceTableSize, 10),
		"sourceNumOfFiles": strconv.FormatInt(res.SourceNumOfFiles, 10),
		"numRemovedFiles":  "0",
		"numCopiedFiles":   strconv.FormatInt(res.NumCopiedFiles, 10),
		"removedFilesSize": "0",
		"copiedFilesSize":  strconv.FormatInt(res.CopiedFilesSize, 10),
	}
	o.Clock = func() time.Time { return time.UnixMilli(now) }
	tx := txn.BeginCreate(target, o)
	rowcheck.Mark(tx) // the source's rows, checked when they were written
	tx.SetProtocol(p)
	tx.SetMetadata(meta)
	for _, d := range domains {
		tx.SetDomainMetadata(d)
	}
	tx.Add(adds...)
	cr, err := tx.Commit(ctx)
	if err != nil {
		return res, fmt.Errorf("fileset: clone: %w", err)
	}
	res.Commit = cr
	return res, nil
}

// ptrs returns pointers to the elements of adds.
func ptrs(adds []actions.Add) []*actions.Add {
	out := make([]*actions.Add, len(adds))
	for i := range adds {
		out[i] = &adds[i]
	}
	return out
}

// checkCloneTarget refuses a target whose root overlaps the source's or
// one the source trusts (deltaerr.ErrRootsOverlap), and a target that
// holds files but no table (deltaerr.ErrNotEmpty); a target that holds a
// table is refused by the commit (txn.ErrTableExists).
func checkCloneTarget(ctx context.Context, src *location.Location, target logstore.Store) error {
	for _, r := range append(src.TrustedRoots(ctx), location.EncodeRoot(src.URI())) {
		if location.Overlap(r, location.EncodeRoot(target.URI())) {
			return fmt.Errorf("target %s and source root %s overlap: %w",
				logstore.RedactURI(target.URI()), logstore.RedactURI(r), deltaerr.ErrRootsOverlap)
		}
	}
	for info, err := range target.List(ctx, "", "") {
		if err != nil && !errors.Is(err, logstore.ErrNotFound) {
			return err
		}
		if err == nil {
			return fmt.Errorf("target %s holds %s and no Delta table: %w", logstore.RedactURI(target.URI()), info.Key, deltaerr.ErrNotEmpty)
		}
		break
	}
	for dir, err := range logstore.ListDirs(ctx, target, "") {
		if err != nil && !errors.Is(err, logstore.ErrNotFound) {
			return err
		}
		if err == nil && dir != deltalog.LogDir {
			return fmt.Errorf("target %s holds %s and no Delta table: %w", logstore.RedactURI(target.URI()), dir, deltaerr.ErrNotEmpty)
		}
	}
	return nil
}

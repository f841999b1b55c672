package fileset

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/internal/rowcheck"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/tableconfig"
	"github.com/godelta/delta/txn"
	"github.com/godelta/delta/write"
)

// OperationRestore is the commitInfo operation of a RESTORE, as Spark
// writes it. It must not change.
const OperationRestore = "RESTORE"

// ErrMissingFiles is the kind of a *MissingFilesError.
var ErrMissingFiles = errors.New("fileset: files of the version to restore are missing")

// MissingFilesError refuses a RESTORE to, or a CLONE of, a version whose
// data or deletion-vector files are gone (vacuumed, or deleted by hand).
type MissingFilesError struct {
	Version int64
	Paths   []string // up to 100, sorted
	Op      string   // "restore" (the default) or "clone"
}

func (e *MissingFilesError) Error() string {
	what := "restore to"
	if e.Op == "clone" {
		what = "clone"
	}
	return fmt.Sprintf("cannot %s version %d: %d or more of its files are missing (vacuumed?): %s",
		what, e.Version, len(e.Paths), strings.Join(e.Paths, ", "))
}

// Is reports whether target is ErrMissingFiles.
func (e *MissingFilesError) Is(target error) bool { return target == ErrMissingFiles }

// RestoreOptions tune Restore.
type RestoreOptions struct {
	// Timestamp is recorded in operationParameters.timestamp when the
	// version to restore was chosen by time; zero records the version.
	Timestamp time.Time
	// Txn configures the commit; Operation and its parameters and metrics
	// are set by Restore.
	Txn txn.Options
}

// RestoreResult says what Restore committed. The names follow Spark's
// metrics.
type RestoreResult struct {
	// Version is the version of the RESTORE commit, and Restored the version
	// it restored.
	Version, Restored int64
	// Commit is the commit's result (for txn.PostCommit).
	Commit txn.CommitResult

	TableSizeAfterRestore  int64
	NumOfFilesAfterRestore int64
	NumRemovedFiles        int64
	NumRestoredFiles       int64
	RemovedFilesSize       int64
	RestoredFilesSize      int64
}

// Restore commits, on latest (the table's latest snapshot), one commit
// that makes the table's live files those of target, an older snapshot of
// the same table: the files target has and latest lacks are added again
// with their original fields (deletion vectors, stats, tags, row ids) and
// dataChange true, and the files latest has and target lacks are removed.
// A file is matched by path and deletion vector, so a file whose deletion
// vector changed is removed with the new vector and added with the old.
// The metaData of target is restored; the protocol becomes the union of
// both (Spark never downgrades it). Domain metadata is handled as Spark's
// DomainMetadataUtils.handleDomainMetadataForRestoreTable does (see
// restoreDomains): the clustering columns (domain delta.clustering) become
// target's, and every other domain keeps its latest value, above all the
// row-id high-water mark of delta.rowTracking, which never goes back (the
// restored files keep their row ids, all below it). The commit carries no
// cdc actions:
// change data readers read its adds and removes as inserts and deletes,
// as Spark's do.
//
// Before committing, every data and deletion-vector file to add is checked
// to exist; a *MissingFilesError is returned, and nothing committed, when
// some do not. A target not older than latest is deltaerr.ErrInvalidArgument.
func Restore(ctx context.Context, latest, target *snapshot.Snapshot, opts RestoreOptions) (RestoreResult, error) {
	res := RestoreResult{Version: -1, Restored: target.Version()}
	if target.Version() >= latest.Version() {
		return res, fmt.Errorf("fileset: version to restore (%d) must be older than the latest version (%d): %w",
			target.Version(), latest.Version(), deltaerr.ErrInvalidArgument)
	}
	p, m := latest.Protocol(), latest.Metadata()
	// The rows RESTORE brings back were checked when they were written,
	// under the metadata it restores with them: only the other writer
	// features must be ones this build supports.
	if err := txn.WriteSupportedChecked(&p, &m); err != nil {
		return res, fmt.Errorf("fileset: restore: %w", err)
	}
	newProto := MergeProtocols(target.Protocol(), latest.Protocol())
	// Identity values generated since target stay used: the restored
	// schema keeps the latest high-water marks.
	tm, err := write.KeepHighWaterMarks(target.Metadata(), latest.Schema())
	if err != nil {
		return res, fmt.Errorf("fileset: restore to version %d: %w", target.Version(), err)
	}
	if err := txn.WriteSupportedChecked(&newProto, &tm); err != nil {
		return res, fmt.Errorf("fileset: restore to version %d: %w", target.Version(), err)
	}

	then, thenOrder, err := liveFiles(ctx, target)
	if err != nil {
		return res, fmt.Errorf("fileset: files of version %d: %w", target.Version(), err)
	}
	now, nowOrder, err := liveFiles(ctx, latest)
	if err != nil {
		return res, fmt.Errorf("fileset: files of version %d: %w", latest.Version(), err)
	}
	var adds []*actions.Add
	for _, k := range thenOrder {
		a := then[k]
		res.NumOfFilesAfterRestore++
		res.TableSizeAfterRestore += a.Size
		if _, ok := now[k]; !ok {
			adds = append(adds, a)
			res.NumRestoredFiles++
			res.RestoredFilesSize += a.Size
		}
	}
	var removes []*actions.Add
	for _, k := range nowOrder {
		if _, ok := then[k]; !ok {
			removes = append(removes, now[k])
			res.NumRemovedFiles++
			res.RemovedFilesSize += now[k].Size
		}
	}

	domains, err := restoreDomains(ctx, latest, target)
	if err != nil {
		return res, fmt.Errorf("fileset: restore to version %d: %w", target.Version(), err)
	}

	gone, err := missing(ctx, latest.Location(), adds, 100)
	if err != nil {
		return res, fmt.Errorf("fileset: checking the files of version %d: %w", target.Version(), err)
	}
	if len(gone) > 0 {
		return res, &MissingFilesError{Version: target.Version(), Paths: gone}
	}

	o := opts.Txn
	o.Operation = OperationRestore
	params := map[string]any{"version": target.Version(), "timestamp": nil}
	if !opts.Timestamp.IsZero() {
		params = map[string]any{"version": nil, "timestamp": opts.Timestamp.UTC().Format("2006-01-02 15:04:05.000")}
	}
	o.OperationParameters = params
	o.OperationMetrics = map[string]any{
		"numRestoredFiles":       strconv.FormatInt(res.NumRestoredFiles, 10),
		"removedFilesSize":       strconv.FormatInt(res.RemovedFilesSize, 10),
		"numRemovedFiles":        strconv.FormatInt(res.NumRemovedFiles, 10),
		"restoredFilesSize":      strconv.FormatInt(res.RestoredFilesSize, 10),
		"numOfFilesAfterRestore": strconv.FormatInt(res.NumOfFilesAfterRestore, 10),
		"tableSizeAfterRestore":  strconv.FormatInt(res.TableSizeAfterRestore, 10),
	}
	clock := time.Now
	if o.Clock != nil {
		clock = o.Clock
	}
	// Restored files keep their baseRowId and defaultRowCommitVersion: the
	// rows keep their identities.
	o.RowTrackingPreserved = true
	tx := txn.Begin(latest, o)
	rowcheck.Mark(tx) // restored rows were checked when first written
	tx.ReadWholeTable()
	tx.SetMetadata(tm)
	tx.SetProtocol(newProto)
	for _, d := range domains {
		tx.SetDomainMetadata(d)
	}
	for _, a := range adds {
		c := *a
		c.DataChange = true
		tx.Add(c)
	}
	ts := clock().UnixMilli()
	for _, a := range removes {
		tx.Remove(actions.RemoveOf(a, ts, true))
	}
	cr, err := tx.Commit(ctx)
	if err != nil {
		return res, fmt.Errorf("fileset: restore to version %d: %w", target.Version(), err)
	}
	res.Version, res.Commit = cr.Version, cr
	return res, nil
}

// restoreDomains returns the domainMetadata actions of a RESTORE of latest
// to target, as Spark's DomainMetadataUtils.handleDomainMetadataForRestoreTable
// computes them (Spark copies no other domain from target):
//
//   - latest has a clustering domain: it is replaced by one with target's
//     clustering columns when target's protocol supports clustering and
//     target has the domain, else by one with no columns (the table is no
//     longer clustered, as target was not);
//   - latest has none and target has one: target's is written back as a
//     tombstone (removed), which changes nothing, as Spark writes it;
//   - every other domain (delta.rowTracking, user domains) is left as it is
//     in latest: its latest value stays.
func restoreDomains(ctx context.Context, latest, target *snapshot.Snapshot) ([]actions.DomainMetadata, error) {
	_, hasNow, err := latest.DomainMetadata(ctx, actions.DomainClustering)
	if err != nil {
		return nil, err
	}
	then, hasThen, err := target.DomainMetadata(ctx, actions.DomainClustering)
	if err != nil {
		return nil, err
	}
	if !hasNow {
		if hasThen {
			return []actions.DomainMetadata{{Domain: actions.DomainClustering, Configuration: then, Removed: true}}, nil
		}
		return nil, nil
	}
	var cols [][]string
	tp := target.Protocol()
	if hasThen && (tableconfig.HasWriterFeature(&tp, actions.FeatureClustering) || tableconfig.HasWriterFeature(&tp, actions.FeatureLiquidPreview)) {
		cfg, err := actions.ParseClustering(then)
		if err != nil {
			return nil, fmt.Errorf("clustering columns of version %d: %w", target.Version(), err)
		}
		cols = cfg.Columns
	}
	d, err := actions.ClusteringDomain(cols)
	if err != nil {
		return nil, err
	}
	return []actions.DomainMetadata{d}, nil
}

// MergeProtocols returns the smallest protocol that supports every feature
// of a and of b: Spark's Protocol.merge. Two legacy protocols (reader below
// 3, writer below 7) give the larger versions; otherwise the writer
// version is 7 and every feature, explicit or implied by a legacy version,
// is listed (reader features only when the reader version is 3).
func MergeProtocols(a, b actions.Protocol) actions.Protocol {
	if a.MinReaderVersion < 3 && a.MinWriterVersion < 7 && b.MinReaderVersion < 3 && b.MinWriterVersion < 7 {
		return actions.Protocol{MinReaderVersion: max(a.MinReaderVersion, b.MinReaderVersion), MinWriterVersion: max(a.MinWriterVersion, b.MinWriterVersion)}
	}
	out := actions.Protocol{MinReaderVersion: max(a.MinReaderVersion, b.MinReaderVersion), MinWriterVersion: 7}
	var readers, writers []string
	for _, p := range []actions.Protocol{a, b} {
		r, w := featuresOf(p)
		readers, writers = append(readers, r...), append(writers, w...)
	}
	slices.Sort(writers)
	out.WriterFeatures = slices.Compact(writers)
	if out.MinReaderVersion >= 3 {
		slices.Sort(readers)
		out.ReaderFeatures = slices.Compact(readers)
		if out.ReaderFeatures == nil {
			out.ReaderFeatures = []string{}
		}
	}
	return out
}

// featuresOf returns the reader and writer features p supports, listed or
// implied by its legacy versions.
func featuresOf(p actions.Protocol) (readers, writers []string) {
	if p.MinWriterVersion >= 7 {
		writers = slices.Clone(p.WriterFeatures)
	}
	if p.MinReaderVersion >= 3 {
		readers = slices.Clone(p.ReaderFeatures)
	}
	for _, name := range legacyFeatures {
		f, ok := tableconfig.LookupFeature(name)
		if !ok {
			continue
		}
		if p.MinWriterVersion < 7 && f.LegacyWriter > 0 && p.MinWriterVersion >= f.LegacyWriter {
			writers = append(writers, name)
		}
		if p.MinReaderVersion < 3 && f.ReaderWriter && f.LegacyReader > 0 && p.MinReaderVersion >= f.LegacyReader && p.MinWriterVersion >= f.LegacyWriter {
			readers = append(readers, name)
		}
	}
	return readers, writers
}

// legacyFeatures are the features legacy protocol versions imply.
var legacyFeatures = []string{
	actions.FeatureAppendOnly, actions.FeatureInvariants, actions.FeatureCheckConstraints,
	actions.FeatureChangeDataFeed, actions.FeatureGeneratedColumns, actions.FeatureColumnMapping,
	actions.FeatureIdentityColumns,
}

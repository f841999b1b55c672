package fileset

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/godelta/delta/location"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/write"
)

// ManifestDir is the directory of the symlink manifests under the table
// root, and ManifestFile the name of each manifest, as Spark writes them
// and Presto, Trino, Athena, Redshift Spectrum and Snowflake read them.
// They must not change.
const (
	ManifestDir  = "_symlink_format_manifest"
	ManifestFile = "manifest"
)

// ErrManifestUnsupported refuses a manifest of a table that engines
// reading it would read wrong: one with deletion vectors in its live files
// (the manifest cannot say which rows are deleted) or with column mapping
// (the Parquet column names are not the table's). Spark refuses both.
var ErrManifestUnsupported = errors.New("fileset: symlink manifest not supported")

// ManifestResult says what GenerateManifest wrote.
type ManifestResult struct {
	// Written are the manifest keys written, one per partition directory
	// ("_symlink_format_manifest/p=a/manifest"), sorted.
	Written []string
	// Deleted are the keys of stale manifests deleted: those of partitions
	// with no live file left.
	Deleted []string
	// Files is the number of data files listed.
	Files int64
}

// GenerateManifest writes the symlink manifests of snap, as Spark's
// GENERATE symlink_format_manifest FOR TABLE does (full mode): under
// _symlink_format_manifest/, one file named manifest per Hive-style
// partition directory (col=value/..., escaped as data directories are,
// null as __HIVE_DEFAULT_PARTITION__), or a single one at the top of an
// unpartitioned table (empty for an empty table), each listing the
// absolute paths of the partition's live data files, one per line, in
// Hadoop's form (file:/data/t/p=a/part-0.parquet, s3://b/t/..., not
// percent-encoded). Manifests of partitions that no longer have files are
// deleted. Each manifest is replaced whole (Store.Put). Nothing is
// committed. A table with deletion vectors in its live files, or with
// column mapping, is ErrManifestUnsupported.
func GenerateManifest(ctx context.Context, snap *snapshot.Snapshot) (ManifestResult, error) {
	var res ManifestResult
	if mode := snap.Config().ColumnMappingMode(); mode != schema.ColumnMappingNone {
		return res, fmt.Errorf("%w: the table uses column mapping (mode %s), and engines reading the manifest would not find its columns", ErrManifestUnsupported, mode)
	}
	store := snap.Store()
	root := store.URI()
	parts := snap.Metadata().PartitionColumns
	lines := map[string][]string{} // partition dir ("" or "a=1/b=2/") -> absolute paths
	for a, err := range snap.Files(ctx) {
		if err != nil {
			return res, fmt.Errorf("fileset: manifest: %w", err)
		}
		if a.DeletionVector != nil {
			return res, fmt.Errorf("%w: file %s has a deletion vector; purge them first (REORG TABLE ... APPLY (PURGE))", ErrManifestUnsupported, a.Path)
		}
		var dir strings.Builder
		for _, c := range parts {
			dir.WriteString(write.PartitionDir(c, a.PartitionValues[c]))
			dir.WriteByte('/')
		}
		lines[dir.String()] = append(lines[dir.String()], hadoopPath(root, a.Path))
		res.Files++
	}
	if len(parts) == 0 && len(lines) == 0 {
		lines[""] = nil
	}
	dirs := make([]string, 0, len(lines))
	for d := range lines {
		dirs = append(dirs, d)
	}
	slices.Sort(dirs)
	written := map[string]bool{}
	for _, d := range dirs {
		var b strings.Builder
		ls := lines[d]
		slices.Sort(ls)
		for _, l := range ls {
			b.WriteString(l)
			b.WriteByte('\n')
		}
		key := ManifestDir + "/" + d + ManifestFile
		if err := store.Put(ctx, key, []byte(b.String())); err != nil {
			return res, fmt.Errorf("fileset: writing manifest %s: %w", key, err)
		}
		written[key] = true
		res.Written = append(res.Written, key)
	}
	for info, err := range logstore.Walk(ctx, store, ManifestDir+"/", nil) {
		if err != nil {
			return res, fmt.Errorf("fileset: listing old manifests: %w", err)
		}
		if strings.HasSuffix(info.Key, "/"+ManifestFile) && !written[info.Key] {
			if err := store.Delete(ctx, info.Key); err != nil {
				return res, fmt.Errorf("fileset: deleting stale manifest %s: %w", info.Key, err)
			}
			res.Deleted = append(res.Deleted, info.Key)
		}
	}
	return res, nil
}

// hadoopPath returns the absolute path of a data file as Hadoop's
// Path.toString writes it: percent-decoded, file:/ for local paths.
func hadoopPath(root, p string) string {
	abs := p
	if !location.IsAbsolute(p) {
		abs = location.EncodeRoot(root) + "/" + p
	}
	c := location.Canonical(abs)
	if rest, ok := strings.CutPrefix(c, "file://"); ok && strings.HasPrefix(rest, "/") {
		return "file:" + rest
	}
	return c
}

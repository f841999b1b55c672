package delta

import (
	"context"

	"github.com/godelta/delta/fileset"
)

// ManifestResult says what GenerateManifest wrote; see
// fileset.ManifestResult.
type ManifestResult = fileset.ManifestResult

// ErrManifestUnsupported refuses a symlink manifest of a table with
// deletion vectors in its live files or with column mapping.
var ErrManifestUnsupported = fileset.ErrManifestUnsupported

// GenerateManifest writes the symlink manifests of the table's latest
// version under _symlink_format_manifest/ (one per partition directory),
// for engines that read a Delta table as plain Parquet (Presto, Trino,
// Athena, Redshift Spectrum, Snowflake), as Spark's GENERATE
// symlink_format_manifest does; see fileset.GenerateManifest.
func (t *Table) GenerateManifest(ctx context.Context) (ManifestResult, error) {
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return ManifestResult{}, err
	}
	return fileset.GenerateManifest(ctx, snap)
}

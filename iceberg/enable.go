package iceberg

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/tableconfig"
	"github.com/godelta/delta/txn"
	"github.com/godelta/delta/write"
)

// ErrNeedsRewrite is returned by Enable for a table whose existing data
// files Iceberg readers would misread: files written without column
// mapping (no Parquet field ids), or with deletion vectors. Spark asks for
// a REORG ... UPGRADE UNIFORM in that case; this library has no such
// rewrite. It matches deltaerr.ErrUnsupportedFeature.
var ErrNeedsRewrite = fmt.Errorf("iceberg: existing data files must be rewritten first: %w", deltaerr.ErrUnsupportedFeature)

// Enable turns UniForm Iceberg on for an existing table, in one commit
// (operation SET TBLPROPERTIES) of metaData and protocol, as ALTER TABLE
// ... SET TBLPROPERTIES ('delta.universalFormat.enabledFormats' =
// 'iceberg') does in Spark: iceberg is added to
// delta.universalFormat.enabledFormats, delta.enableIcebergCompatV2 is set
// (and column mapping in name mode when the table has none), nested ids
// are given to array elements and map keys and values, and the protocol
// is upgraded to support icebergCompatV2 (and columnMapping). The checks of
// icebergCompatV2 run first (tableconfig.Config.CheckIcebergCompat), and
// the table's files are checked: a table with data files and no column
// mapping, or with files that carry deletion vectors or lack numRecords,
// gives ErrNeedsRewrite. A table where Iceberg is already on gives a zero
// CommitResult and no commit.
//
// The commit is a txn.Update: it is retried after a conflict, against the
// newer version. The Iceberg metadata is written by Convert, which the
// caller runs after the commit (package delta's Table.EnableIceberg does).
func Enable(ctx context.Context, snap *snapshot.Snapshot, opts txn.Options) (txn.CommitResult, error) {
	if snap.Config().UniversalFormatIceberg() {
		return txn.CommitResult{}, nil
	}
	if opts.Operation == "" {
		opts.Operation = "SET TBLPROPERTIES"
		if opts.OperationParameters == nil {
			// Spark's SetTableProperties.parameters: the properties set,
			// as a JSON object in a string.
			set, err := enableProperties(snap.Metadata().Configuration)
			if err != nil {
				return txn.CommitResult{}, err
			}
			b, _ := actions.EncodeJSON(set)
			opts.OperationParameters = map[string]any{"properties": string(b)}
		}
	}
	return txn.Update(ctx, snap, opts, func(tx *txn.Transaction) error {
		p, m, err := enabled(ctx, tx.Snapshot())
		if err != nil {
			return err
		}
		tx.ReadWholeTable()
		tx.SetProtocol(p)
		tx.SetMetadata(m)
		return nil
	})
}

// enableProperties returns the table properties Enable sets on a table
// with configuration conf: iceberg added to the enabled formats, and what
// icebergCompatV2 needs that conf does not set (tableconfig.IcebergProperties).
func enableProperties(conf map[string]string) (map[string]string, error) {
	props := maps.Clone(conf)
	if props == nil {
		props = map[string]string{}
	}
	formats := []string{"iceberg"}
	for f := range strings.SplitSeq(props[tableconfig.KeyUniversalFormatEnabledFormats], ",") {
		if f = strings.TrimSpace(f); f != "" && !strings.EqualFold(f, "iceberg") {
			formats = append(formats, f)
		}
	}
	set := map[string]string{tableconfig.KeyUniversalFormatEnabledFormats: strings.Join(formats, ",")}
	props[tableconfig.KeyUniversalFormatEnabledFormats] = set[tableconfig.KeyUniversalFormatEnabledFormats]
	extra, err := tableconfig.IcebergProperties(props)
	if err != nil {
		return nil, err
	}
	maps.Copy(set, extra)
	return set, nil
}

// enabled returns the protocol and metadata of snap with Iceberg on.
func enabled(ctx context.Context, snap *snapshot.Snapshot) (actions.Protocol, actions.Metadata, error) {
	cfg := snap.Config()
	p, m := snap.Protocol(), snap.Metadata()
	props := maps.Clone(m.Configuration)
	if props == nil {
		props = map[string]string{}
	}
	set, err := enableProperties(m.Configuration)
	if err != nil {
		return p, m, err
	}
	maps.Copy(props, set)

	// Existing files must read right in Iceberg.
	newMapping := cfg.ColumnMappingMode() == schema.ColumnMappingNone
	for a, err := range snap.Files(ctx) {
		if err != nil {
			return p, m, err
		}
		switch {
		case newMapping:
			return p, m, fmt.Errorf("%w: the table has data files written without column mapping (%s)", ErrNeedsRewrite, a.Path)
		case a.DeletionVector != nil:
			return p, m, fmt.Errorf("%w: file %s has a deletion vector", ErrNeedsRewrite, a.Path)
		case !strings.Contains(a.Stats, `"numRecords"`):
			return p, m, fmt.Errorf("%w: file %s has no numRecords statistic", ErrNeedsRewrite, a.Path)
		}
	}

	sch, err := schema.Parse(m.SchemaString)
	if err != nil {
		return p, m, &deltaerr.CorruptError{Path: "metaData.schemaString", Reason: "cannot parse the schema", Err: err}
	}
	// Column ids and physical names where the table had none (it has no
	// data files then), nested ids, the protocol upgraded for the features
	// the properties turn on: the one metadata-evolution path, as ALTER's.
	if p, m, err = write.Evolve(p, m, sch, props); err != nil {
		return p, m, err
	}
	check, err := tableconfig.New(p, m)
	if err != nil {
		return p, m, err
	}
	if err := check.CheckIcebergCompat(); err != nil {
		return p, m, err
	}
	if !check.UniversalFormatIceberg() {
		return p, m, fmt.Errorf("iceberg: enabling left the table without Iceberg: %w", deltaerr.ErrInvalidArgument)
	}
	return p, m, nil
}

package iceberg

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/internal/datafile"
	"github.com/godelta/delta/internal/rowcheck"
	"github.com/godelta/delta/internal/statsjson"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/tableconfig"
	"github.com/godelta/delta/txn"
	"github.com/godelta/delta/write"
)

// ErrNeedsRewrite is returned by Enable for a table whose existing data
// files Iceberg readers would misread: files written without column
// mapping (no Parquet field ids), with deletion vectors, without the
// numRecords statistic, or, in a partitioned table, without the partition
// columns (icebergCompatV2 materializes partition values in the data
// files, where Iceberg readers look for them: a reader finds null in a
// file without them). EnableOptions.Rewrite rewrites such files in the
// enabling commit, as Spark's REORG TABLE ... APPLY (UPGRADE UNIFORM
// (ICEBERG_COMPAT_VERSION = 2)) does; the error is then a *NeedsRewriteError.
// It matches deltaerr.ErrUnsupportedFeature.
var ErrNeedsRewrite = fmt.Errorf("iceberg: existing data files must be rewritten first: %w", deltaerr.ErrUnsupportedFeature)

// NeedsRewriteError is the ErrNeedsRewrite of Enable: the first data file
// found that Iceberg readers would misread, and why.
type NeedsRewriteError struct {
	Path   string // the file, as the log names it
	Reason string // what Iceberg readers would misread
}

func (e *NeedsRewriteError) Error() string {
	return fmt.Sprintf("%v: file %s %s; enable with EnableOptions.Rewrite to rewrite such files in the enabling commit", ErrNeedsRewrite, e.Path, e.Reason)
}

// Unwrap returns ErrNeedsRewrite.
func (e *NeedsRewriteError) Unwrap() error { return ErrNeedsRewrite }

// EnableOptions tune EnableWith. The zero value is Enable's behaviour.
type EnableOptions struct {
	// Txn tunes the enabling commit (operation SET TBLPROPERTIES, or
	// REORG TABLE UPGRADE UNIFORM when it rewrites files, unless set).
	Txn txn.Options
	// Rewrite rewrites, in the enabling commit, the data files that
	// Iceberg readers would misread (see ErrNeedsRewrite) instead of
	// refusing: each is read and written again under the new
	// configuration (column mapping, nested ids, partition values
	// materialized), its remove and the new files' adds with dataChange
	// false, as OPTIMIZE commits them, and the adds tagged
	// ICEBERG_COMPAT_VERSION=2 as Spark's REORG tags them. A conflict
	// with a concurrent commit fails the enabling (nothing is committed,
	// the files written are deleted) rather than rewriting again.
	Rewrite bool
	// Write tunes the rewrite's writer (target file size, compression).
	// Its Config is set by EnableWith.
	Write write.Options
}

// Enable turns UniForm Iceberg on for an existing table; see EnableWith.
// It refuses a table with data files Iceberg readers would misread
// (ErrNeedsRewrite).
func Enable(ctx context.Context, snap *snapshot.Snapshot, opts txn.Options) (txn.CommitResult, error) {
	return EnableWith(ctx, snap, EnableOptions{Txn: opts})
}

// EnableWith turns UniForm Iceberg on for an existing table, in one commit
// (operation SET TBLPROPERTIES) of metaData and protocol, as ALTER TABLE
// ... SET TBLPROPERTIES ('delta.universalFormat.enabledFormats' =
// 'iceberg') does in Spark: iceberg is added to
// delta.universalFormat.enabledFormats, delta.enableIcebergCompatV2 is set
// (and column mapping in name mode when the table has none), nested ids
// are given to array elements and map keys and values, and the protocol
// is upgraded to support icebergCompatV2 (and columnMapping). The checks of
// icebergCompatV2 run first (tableconfig.Config.CheckIcebergCompat), and
// the table's files are checked: files written without column mapping,
// with deletion vectors, without numRecords, or (partitioned table)
// without the partition columns in the file (its Parquet footer is read)
// give a *NeedsRewriteError (ErrNeedsRewrite), unless opts.Rewrite, with
// which they are rewritten in the same commit (operation REORG TABLE
// UPGRADE UNIFORM). A table where Iceberg is already on gives a zero
// CommitResult and no commit.
//
// Without a rewrite the commit is a txn.Update: it is retried after a
// conflict, against the newer version. The Iceberg metadata is written by
// Convert, which the caller runs after the commit (package delta's
// Table.EnableIceberg does).
func EnableWith(ctx context.Context, snap *snapshot.Snapshot, opts EnableOptions) (txn.CommitResult, error) {
	if snap.Config().UniversalFormatIceberg() {
		return txn.CommitResult{}, nil
	}
	if opts.Rewrite {
		p, m, files, err := enabled(ctx, snap, true)
		if err != nil {
			return txn.CommitResult{}, err
		}
		if len(files) > 0 {
			return enableRewriting(ctx, snap, p, m, files, opts)
		}
	}
	topts := opts.Txn
	if topts.Operation == "" {
		topts.Operation = "SET TBLPROPERTIES"
		if topts.OperationParameters == nil {
			// Spark's SetTableProperties.parameters: the properties set,
			// as a JSON object in a string.
			set, err := enableProperties(snap.Metadata().Configuration)
			if err != nil {
				return txn.CommitResult{}, err
			}
			b, _ := actions.EncodeJSON(set)
			topts.OperationParameters = map[string]any{"properties": string(b)}
		}
	}
	return txn.Update(ctx, snap, topts, func(tx *txn.Transaction) error {
		p, m, _, err := enabled(ctx, tx.Snapshot(), false)
		if err != nil {
			return err
		}
		tx.ReadWholeTable()
		tx.SetProtocol(p)
		tx.SetMetadata(m)
		return nil
	})
}

// TagIcebergCompatVersion is the tag of the adds Spark writes under
// icebergCompatV2 ("2"), which its REORG ... UPGRADE UNIFORM looks for.
const TagIcebergCompatVersion = "ICEBERG_COMPAT_VERSION"

// enableRewriting commits p and m with files rewritten under them.
func enableRewriting(ctx context.Context, snap *snapshot.Snapshot, p actions.Protocol, m actions.Metadata, files []*actions.Add, opts EnableOptions) (txn.CommitResult, error) {
	cfg, err := tableconfig.New(p, m)
	if err != nil {
		return txn.CommitResult{}, err
	}
	wopts := opts.Write
	wopts.Config = cfg
	keep := func(*actions.Add, int64, []schema.Value) (write.Verdict, []schema.Value, error) {
		return write.Keep, nil, nil
	}
	rw, err := write.Rewrite(ctx, snap, files, keep, write.RewriteOptions{Options: wopts, NoDataChange: true, Copy: true})
	if err != nil {
		return txn.CommitResult{}, fmt.Errorf("iceberg: rewriting the data files: %w", err)
	}
	for i := range rw.Adds {
		tags := maps.Clone(rw.Adds[i].Tags)
		if tags == nil {
			tags = map[string]string{}
		}
		tags[TagIcebergCompatVersion] = "2"
		rw.Adds[i].Tags = tags
	}
	topts := opts.Txn
	if topts.Operation == "" {
		topts.Operation = "REORG TABLE UPGRADE UNIFORM"
	}
	topts.RowTrackingPreserved = true // write.Rewrite keeps row identities
	tx := txn.Begin(snap, topts)
	tx.ReadWholeTable()
	tx.ReadFiles(rw.Read...)
	tx.SetProtocol(p)
	tx.SetMetadata(m)
	tx.Remove(rw.Removes...)
	tx.Add(rw.Adds...)
	rowcheck.Mark(tx) // the rows went through the row writer
	res, err := tx.Commit(ctx)
	if err != nil {
		write.Discard(snap, err, rw.Adds)
		return txn.CommitResult{}, err
	}
	return res, nil
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

// enabled returns the protocol and metadata of snap with Iceberg on and,
// when rewrite is set, the data files to rewrite under them; without it,
// a file to rewrite is a *NeedsRewriteError.
func enabled(ctx context.Context, snap *snapshot.Snapshot, rewrite bool) (actions.Protocol, actions.Metadata, []*actions.Add, error) {
	cfg := snap.Config()
	p, m := snap.Protocol(), snap.Metadata()
	props := maps.Clone(m.Configuration)
	if props == nil {
		props = map[string]string{}
	}
	set, err := enableProperties(m.Configuration)
	if err != nil {
		return p, m, nil, err
	}
	maps.Copy(props, set)

	// Existing files must read right in Iceberg.
	check := fileCheck{snap: snap, newMapping: cfg.ColumnMappingMode() == schema.ColumnMappingNone}
	var files []*actions.Add
	for a, err := range snap.Files(ctx) {
		if err != nil {
			return p, m, nil, err
		}
		reason, err := check.misread(ctx, a)
		if err != nil {
			return p, m, nil, err
		}
		switch {
		case reason == "":
		case rewrite:
			files = append(files, a)
		default:
			return p, m, nil, &NeedsRewriteError{Path: a.Path, Reason: reason}
		}
	}

	sch, err := schema.Parse(m.SchemaString)
	if err != nil {
		return p, m, nil, &deltaerr.CorruptError{Path: "metaData.schemaString", Reason: "cannot parse the schema", Err: err}
	}
	// Column ids and physical names where the table had none (its files
	// are all rewritten then, or it has none), nested ids, the protocol
	// upgraded for the features the properties turn on: the one
	// metadata-evolution path, as ALTER's.
	if p, m, err = write.Evolve(p, m, sch, props); err != nil {
		return p, m, nil, err
	}
	next, err := tableconfig.New(p, m)
	if err != nil {
		return p, m, nil, err
	}
	if err := next.CheckIcebergCompat(); err != nil {
		return p, m, nil, err
	}
	if !next.UniversalFormatIceberg() {
		return p, m, nil, fmt.Errorf("iceberg: enabling left the table without Iceberg: %w", deltaerr.ErrInvalidArgument)
	}
	return p, m, files, nil
}

// fileCheck finds the data files of a table that Iceberg readers would
// misread once Iceberg is on.
type fileCheck struct {
	snap       *snapshot.Snapshot
	newMapping bool // column mapping is turned on by the enabling
}

// misread returns why Iceberg readers would misread the file a, or "".
func (c *fileCheck) misread(ctx context.Context, a *actions.Add) (string, error) {
	switch {
	case c.newMapping:
		return "was written without column mapping (its columns have no field ids)", nil
	case a.DeletionVector != nil:
		return "has a deletion vector", nil
	case !hasNumRecords(a.Stats):
		return "has no numRecords statistic", nil
	}
	return c.partitionColumns(ctx, a)
}

// hasNumRecords reports whether stats hold a valid numRecords, which
// Iceberg's record_count needs.
func hasNumRecords(stats string) bool {
	_, ok, err := statsjson.NumRecords(stats)
	return ok && err == nil
}

// partitionColumns returns why a, a file of a partitioned table, lacks
// its partition columns, which icebergCompatV2 writers materialize in the
// data files (Iceberg readers read them there), or "": it reads the
// file's Parquet footer and looks for each column by field id, or by
// physical name in a file without ids.
func (c *fileCheck) partitionColumns(ctx context.Context, a *actions.Add) (string, error) {
	cfg := c.snap.Config()
	parts := cfg.Metadata().PartitionColumns
	if len(parts) == 0 {
		return "", nil
	}
	stores := c.snap.Location().NewStores()
	defer stores.Close()
	st, key, err := stores.Locate(ctx, a.Path)
	if errors.Is(err, deltaerr.ErrPathEscapesRoot) {
		return "lies outside the table's root and the roots it trusts, where its columns cannot be checked", nil
	}
	if err != nil {
		return "", fmt.Errorf("iceberg: data file %s: %w", a.Path, err)
	}
	f, err := datafile.OpenObject(ctx, st, key, a.Size)
	if err != nil {
		return "", fmt.Errorf("iceberg: reading the footer of data file %s: %w", a.Path, err)
	}
	have, err := f.Schema()
	if err != nil {
		return "", fmt.Errorf("iceberg: data file %s: %w", a.Path, err)
	}
	mode := cfg.ColumnMappingMode()
	sch := cfg.Schema()
	for _, col := range parts {
		pf, ok := sch.Field(col)
		if !ok {
			return "", fmt.Errorf("%w: partition column %s is not in the schema", ErrNotConvertible, col)
		}
		id, _ := pf.ColumnMappingID()
		phys := pf.PhysicalName(mode)
		found := slices.ContainsFunc(have.Fields, func(hf schema.StructField) bool {
			if hid, ok := hf.ColumnMappingID(); ok {
				return hid == id
			}
			return hf.Name == phys
		})
		if !found {
			return fmt.Sprintf("does not hold partition column %s, which icebergCompatV2 materializes in the data files (Iceberg readers would read it as null)", col), nil
		}
	}
	return "", nil
}

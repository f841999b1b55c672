package main

import (
	"errors"
	"fmt"
	"iter"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/godelta/delta"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
)

func newCreateCmd() *cobra.Command {
	var schemaArg, partitionBy, clusterBy, name, description string
	var props []string
	cmd := &cobra.Command{
		Use:   "create TABLE --schema SCHEMA",
		Short: "Create a Delta table",
		Long: "create makes a new, empty table. --schema is Spark SQL column definitions\n" +
			"('id BIGINT NOT NULL, name STRING, ts TIMESTAMP, tags ARRAY<STRING>') or the path\n" +
			"of a file holding a Delta schema as JSON. Table features follow from the schema\n" +
			"and the properties (delta.enableChangeDataFeed=true, delta.columnMapping.mode=name,\n" +
			"delta.enableDeletionVectors=true, delta.constraints.NAME=EXPR, ...).",
		Args: tableArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if schemaArg == "" {
				return usageErrorf(cmd, "--schema is required")
			}
			sch, err := readSchemaArg(schemaArg)
			if err != nil {
				return usageErrorf(cmd, "invalid --schema: %v", err)
			}
			spec := delta.TableSpec{Schema: sch, Name: name, Description: description, Properties: map[string]string{}}
			if partitionBy != "" {
				for c := range strings.SplitSeq(partitionBy, ",") {
					spec.PartitionColumns = append(spec.PartitionColumns, strings.TrimSpace(c))
				}
			}
			spec.ClusterBy = splitList(clusterBy)
			for _, p := range props {
				k, v, ok := strings.Cut(p, "=")
				if !ok || k == "" {
					return usageErrorf(cmd, "invalid --property %q: want key=value", p)
				}
				spec.Properties[k] = v
			}
			t, err := delta.Create(cmd.Context(), args[0], spec)
			if err != nil {
				return failure(err)
			}
			defer t.Close()
			snap, err := t.Snapshot(cmd.Context())
			if err != nil {
				return failure(err)
			}
			p := snap.Protocol()
			feats := append(append([]string(nil), p.ReaderFeatures...), p.WriterFeatures...)
			msg := fmt.Sprintf("created %s: protocol %d/%d", args[0], p.MinReaderVersion, p.MinWriterVersion)
			if len(feats) > 0 {
				msg += ", features " + strings.Join(uniq(feats), ",")
			}
			fmt.Fprintln(cmd.OutOrStdout(), msg)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&schemaArg, "schema", "", "column definitions, or a Delta schema JSON file (`SCHEMA`)")
	fs.StringVar(&partitionBy, "partition-by", "", "partition `COLUMNS`, comma-separated")
	fs.StringVar(&clusterBy, "cluster-by", "", "clustering `COLUMNS`, comma-separated (liquid clustering; not with --partition-by)")
	fs.StringArrayVar(&props, "property", nil, "table property `KEY=VALUE` (repeatable)")
	fs.StringVar(&name, "name", "", "table name")
	fs.StringVar(&description, "description", "", "table description")
	return cmd
}

// readSchemaArg reads --schema: a file of schema JSON, else DDL text.
func readSchemaArg(arg string) (*schema.StructType, error) {
	if data, err := os.ReadFile(arg); err == nil {
		return schema.Parse(string(data))
	}
	return schema.ParseDDL(arg)
}

func uniq(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

func newAppendCmd() *cobra.Command {
	var targetSize int64
	var app appFlags
	var mergeSchema bool
	cmd := &cobra.Command{
		Use:   "append TABLE FILE... [--merge-schema]",
		Short: "Append rows from CSV, JSON lines or Parquet files",
		Long: "append adds the rows of the files, in one commit. A file is read by its\n" +
			"extension: .csv (a header row naming the columns; empty fields are null),\n" +
			".jsonl/.json/.ndjson (one object per line, as scan --format jsonl writes) or\n" +
			".parquet. Columns are matched by name; missing ones are null. Every row is checked\n" +
			"against the schema and the table's constraints; a bad row fails the whole append,\n" +
			"naming the file, row and column. Concurrent appends to one table all succeed.",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usageErrorf(cmd, "want TABLE and at least one FILE")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := app.check(cmd); err != nil {
				return err
			}
			ctx := cmd.Context()
			t, err := openTable(cmd, args[0])
			if err != nil {
				return failure(err)
			}
			defer t.Close()
			snap, err := t.Snapshot(ctx)
			if err != nil {
				return failure(err)
			}
			sch := snap.Schema()
			var merged *schema.StructType
			if mergeSchema {
				if merged, err = mergedInputSchema(ctx, sch, args[1:]); err != nil {
					return failure(err)
				}
				sch = merged
			}
			// Where each row came from, to name it when it breaks a
			// constraint: the files' first rows, and each row's line.
			var src rowSources
			batches := func(yield func(delta.RowBatch, error) bool) {
				for _, path := range args[1:] {
					rows := func(yield func([]schema.Value, error) bool) {
						src.files = append(src.files, path)
						src.firsts = append(src.firsts, int64(len(src.lines)))
						for r, err := range inputRows(ctx, path, sch) {
							if err == nil {
								src.lines = append(src.lines, int32(min(r.line, 1<<31-1)))
							}
							if !yield(r.vals, err) {
								return
							}
						}
					}
					for b, err := range batchRows(rows, len(sch.Fields), 8192) {
						if !yield(b, err) || err != nil {
							return
						}
					}
				}
			}
			// Planned on the snapshot whose schema shaped the rows: the
			// append loads no other.
			res, err := t.AppendOn(ctx, snap, batches, delta.WriteOptions{TargetFileSize: targetSize,
				Txn: delta.TxnOptions{EngineInfo: "godelta-cli"}, AppID: app.id, AppVersion: app.version, MergeSchema: merged})
			if errors.Is(err, delta.ErrAppVersionCommitted) {
				return app.reportCommitted(cmd, t)
			}
			var ce *delta.ConstraintError
			if errors.As(err, &ce) {
				if file, line, ok := src.find(ce.Row); ok {
					err = fmt.Errorf("%s: line %d: %w", file, line, err)
				}
			}
			if errors.Is(err, delta.ErrNoRows) {
				fmt.Fprintln(cmd.OutOrStdout(), "appended 0 rows: the input has no rows, nothing committed")
				return nil
			}
			if err != nil {
				return failure(err)
			}
			rows := len(src.lines)
			fmt.Fprintf(cmd.OutOrStdout(), "appended %d rows at version %d\n", rows, res.Version)
			if v := res.PostCommit.AutoCompacted; v != 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "auto compaction (%s) committed OPTIMIZE at version %d\n", tableconfig.KeyAutoCompact, v)
			}
			return nil
		},
	}
	cmd.Flags().Int64Var(&targetSize, "target-file-size", 0, "roll data files at `BYTES` (default 128 MiB)")
	app.register(cmd)
	cmd.Flags().BoolVar(&mergeSchema, "merge-schema", false, "add the files' columns the table lacks, in the same commit (Parquet types; CSV STRING; JSON by value)")
	return cmd
}

// rowSources maps the index of an appended row to its file and line.
type rowSources struct {
	files  []string
	firsts []int64 // index of each file's first row
	lines  []int32 // line (or position) of each row
}

func (s *rowSources) find(row int64) (string, int, bool) {
	if row < 0 || row >= int64(len(s.lines)) {
		return "", 0, false
	}
	f := 0
	for f+1 < len(s.firsts) && s.firsts[f+1] <= row {
		f++
	}
	return s.files[f], int(s.lines[row]), true
}

// batchRows groups rows into column-major batches of up to size rows.
func batchRows(rows iter.Seq2[[]schema.Value, error], ncols, size int) iter.Seq2[delta.RowBatch, error] {
	return func(yield func(delta.RowBatch, error) bool) {
		var cur delta.RowBatch
		reset := func() {
			cur = delta.RowBatch{Columns: make([][]schema.Value, ncols)}
			for j := range cur.Columns {
				cur.Columns[j] = make([]schema.Value, 0, size)
			}
		}
		reset()
		for r, err := range rows {
			if err != nil {
				yield(delta.RowBatch{}, err)
				return
			}
			for j, v := range r {
				cur.Columns[j] = append(cur.Columns[j], v)
			}
			cur.Len++
			if cur.Len == size {
				if !yield(cur, nil) {
					return
				}
				reset()
			}
		}
		if cur.Len > 0 {
			yield(cur, nil)
		}
	}
}

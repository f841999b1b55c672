package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/godelta/delta"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/dml"
	"github.com/godelta/delta/internal/datafile"
	"github.com/godelta/delta/schema"
)

// mergeFlags are the flags of merge.
type mergeFlags struct {
	source, on                 string
	updateAll                  bool
	updateSet, updateIf        string
	deleteIf                   string
	insertAll                  bool
	insertValues, insertIf     string
	bySourceDeleteIf           string
	bySourceSet, bySourceSetIf string
	strategy                   string
	asJSON                     bool
	targetSize                 int64
	mergeSchema                bool
	memory, spillDir           string
}

func newMergeCmd() *cobra.Command {
	var f mergeFlags
	cmd := &cobra.Command{
		Use:   "merge TABLE --source FILE_OR_TABLE[@VERSION] --on COND [clauses]",
		Short: "Upsert a source into the table (SQL MERGE)",
		Long: "merge joins a source with the table on --on and applies WHEN clauses, in one\n" +
			"commit (SQL MERGE INTO). The table is t and the source s in every expression\n" +
			"(t.id = s.id). The source is a .csv, .jsonl/.json/.ndjson or .parquet file (its\n" +
			"columns take the table's types where the names match, else string; JSON numbers\n" +
			"and booleans keep theirs), or a table, optionally at a version: TABLE@3.\n" +
			"\n" +
			"Clauses, applied in this order within each kind (the first whose condition holds\n" +
			"wins):\n" +
			"  WHEN MATCHED:  --delete-if COND (DELETE), then --update-all (UPDATE SET *) or\n" +
			"                 --update-set 'c = expr, ...', both under --update-if COND if given\n" +
			"  WHEN NOT MATCHED:  --insert-all (INSERT *) or --insert-values 'c = expr, ...',\n" +
			"                 under --insert-if COND if given\n" +
			"  WHEN NOT MATCHED BY SOURCE:  --by-source-delete-if COND (DELETE), then\n" +
			"                 --by-source-update-set 'c = expr, ...' under --by-source-update-if\n" +
			"A COND of 'true' is an unconditional clause. A target row matched by two source\n" +
			"rows is an error unless the only matched clause is --delete-if true. The table's\n" +
			"strategy applies as for delete. With --merge-schema, --update-all and --insert-all\n" +
			"add the source's columns the table lacks to its schema (MERGE WITH SCHEMA\n" +
			"EVOLUTION), in the same commit. A source larger than --memory is spilled to\n" +
			"temporary files in --spill-dir and joined partition by partition.",
		Args: tableArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.source == "" || f.on == "" {
				return usageErrorf(cmd, "--source and --on are required")
			}
			if f.updateAll && f.updateSet != "" {
				return usageErrorf(cmd, "--update-all and --update-set exclude each other")
			}
			if f.insertAll && f.insertValues != "" {
				return usageErrorf(cmd, "--insert-all and --insert-values exclude each other")
			}
			if f.updateIf != "" && !f.updateAll && f.updateSet == "" {
				return usageErrorf(cmd, "--update-if needs --update-all or --update-set")
			}
			if f.insertIf != "" && !f.insertAll && f.insertValues == "" {
				return usageErrorf(cmd, "--insert-if needs --insert-all or --insert-values")
			}
			if f.bySourceSetIf != "" && f.bySourceSet == "" {
				return usageErrorf(cmd, "--by-source-update-if needs --by-source-update-set")
			}
			if f.deleteIf == "" && !f.updateAll && f.updateSet == "" && !f.insertAll && f.insertValues == "" &&
				f.bySourceDeleteIf == "" && f.bySourceSet == "" {
				return usageErrorf(cmd, "no clause: give --update-all, --update-set, --delete-if, --insert-all, --insert-values, --by-source-delete-if or --by-source-update-set")
			}
			df := dmlFlags{strategy: f.strategy}
			opts, err := df.options(cmd)
			if err != nil {
				return err
			}
			opts.Txn.EngineInfo = "godelta-cli"
			opts.TargetFileSize = f.targetSize
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
			src, closeSrc, err := mergeSource(cmd, f.source, snap.Schema())
			if err != nil {
				return failure(err)
			}
			defer closeSrc()
			cond := func(c string) string {
				if strings.EqualFold(strings.TrimSpace(c), "true") {
					return ""
				}
				return c
			}
			b := t.Merge(src, f.on).Options(opts)
			if f.memory != "" || f.spillDir != "" {
				var budget int64
				if f.memory != "" {
					if budget, err = parseSize(f.memory); err != nil || budget <= 0 {
						return usageErrorf(cmd, "--memory %q: a size such as 512MB", f.memory)
					}
				}
				b.WithMemoryBudget(budget, f.spillDir)
			}
			if f.mergeSchema {
				b.WithSchemaEvolution()
			}
			if f.deleteIf != "" {
				b.WhenMatchedDelete(cond(f.deleteIf))
			}
			switch {
			case f.updateAll:
				b.WhenMatchedUpdateAll(f.updateIf)
			case f.updateSet != "":
				b.WhenMatchedUpdate(f.updateIf, f.updateSet)
			}
			switch {
			case f.insertAll:
				b.WhenNotMatchedInsertAll(f.insertIf)
			case f.insertValues != "":
				b.WhenNotMatchedInsert(f.insertIf, f.insertValues)
			}
			if f.bySourceDeleteIf != "" {
				b.WhenNotMatchedBySourceDelete(cond(f.bySourceDeleteIf))
			}
			if f.bySourceSet != "" {
				b.WhenNotMatchedBySourceUpdate(f.bySourceSetIf, f.bySourceSet)
			}
			res, err := b.Execute(ctx)
			if err != nil {
				return failure(err)
			}
			return printMerge(cmd, f.asJSON, res)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.source, "source", "", "the source: a .csv/.jsonl/.parquet `FILE`, or a TABLE[@VERSION]")
	fs.StringVar(&f.on, "on", "", "the join condition (`COND`), e.g. 't.id = s.id'")
	fs.BoolVar(&f.updateAll, "update-all", false, "WHEN MATCHED THEN UPDATE SET *")
	fs.StringVar(&f.updateSet, "update-set", "", "WHEN MATCHED THEN UPDATE SET `'c = expr, ...'`")
	fs.StringVar(&f.updateIf, "update-if", "", "the condition (`COND`) of the matched update")
	fs.StringVar(&f.deleteIf, "delete-if", "", "WHEN MATCHED AND `COND` THEN DELETE (before the update)")
	fs.BoolVar(&f.insertAll, "insert-all", false, "WHEN NOT MATCHED THEN INSERT *")
	fs.StringVar(&f.insertValues, "insert-values", "", "WHEN NOT MATCHED THEN INSERT the values `'c = expr, ...'` (others null)")
	fs.StringVar(&f.insertIf, "insert-if", "", "the condition (`COND`) of the insert")
	fs.StringVar(&f.bySourceDeleteIf, "by-source-delete-if", "", "WHEN NOT MATCHED BY SOURCE AND `COND` THEN DELETE")
	fs.StringVar(&f.bySourceSet, "by-source-update-set", "", "WHEN NOT MATCHED BY SOURCE THEN UPDATE SET `'c = expr, ...'`")
	fs.StringVar(&f.bySourceSetIf, "by-source-update-if", "", "the condition (`COND`) of the by-source update")
	fs.StringVar(&f.strategy, "strategy", "auto", "auto (the table's), copy-on-write or deletion-vectors")
	fs.BoolVar(&f.mergeSchema, "merge-schema", false, "schema evolution: --update-all and --insert-all add the source's new columns to the table")
	fs.BoolVar(&f.asJSON, "json", false, "print one JSON document, of a stable shape")
	fs.Int64Var(&f.targetSize, "target-file-size", 0, "roll data files written at `BYTES` (default 128 MiB)")
	fs.StringVar(&f.memory, "memory", "", "hold up to `SIZE` of source rows in memory (default 256MB); a larger source is spilled to temporary files")
	fs.StringVar(&f.spillDir, "spill-dir", "", "the local `DIR` of the spilled source's temporary files (default the system's temp directory)")
	return cmd
}

// mergeSource opens the source of a merge: a file by its extension, else
// a table, TABLE@VERSION for a version, opened as the target is (with the
// command's --trust-root and --log-cache). The returned func closes what
// it opened.
func mergeSource(cmd *cobra.Command, src string, target *schema.StructType) (delta.MergeSource, func(), error) {
	ctx := cmd.Context()
	noop := func() {}
	switch strings.ToLower(filepath.Ext(src)) {
	case ".csv", ".json", ".jsonl", ".ndjson", ".parquet":
		if fi, err := os.Stat(src); err == nil && fi.Mode().IsRegular() {
			sch, err := inputSchema(ctx, src, target)
			if err != nil {
				return delta.MergeSource{}, noop, fmt.Errorf("%s: %w", src, err)
			}
			rows := func(yield func([]schema.Value, error) bool) {
				for r, err := range inputRows(ctx, src, sch) {
					if !yield(r.vals, err) || err != nil {
						return
					}
				}
			}
			return delta.MergeSource{Schema: sch, Batches: batchRows(rows, len(sch.Fields), 8192)}, noop, nil
		}
	}
	uri, version := src, int64(-1)
	if i := strings.LastIndexByte(src, '@'); i > 0 {
		if v, err := strconv.ParseInt(src[i+1:], 10, 64); err == nil && v >= 0 {
			uri, version = src[:i], v
		}
	}
	t, err := openTable(cmd, uri)
	if err != nil {
		return delta.MergeSource{}, noop, fmt.Errorf("source %s: %w", src, err)
	}
	var snap *delta.Snapshot
	if version >= 0 {
		snap, err = t.SnapshotAt(ctx, version)
	} else {
		snap, err = t.Snapshot(ctx)
	}
	if err != nil {
		t.Close()
		return delta.MergeSource{}, noop, fmt.Errorf("source %s: %w", src, err)
	}
	s, err := delta.MergeTable(ctx, snap, delta.ScanOptions{})
	if err != nil {
		t.Close()
		return delta.MergeSource{}, noop, err
	}
	return s, func() { t.Close() }, nil
}

// inputSchema is the schema of a source file: its columns, in the file's
// order, typed as the target's columns of the same name (ignoring case);
// other columns are strings in CSV, and in JSON take the type of their
// first non-null value (long, double, boolean, else string). A Parquet
// file has its own schema.
func inputSchema(ctx context.Context, path string, target *schema.StructType) (*schema.StructType, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sch := &schema.StructType{}
	col := func(name string, guess schema.DataType) {
		for _, c := range sch.Fields {
			if strings.EqualFold(c.Name, name) {
				return
			}
		}
		if tf, ok := target.FieldFold(name); ok {
			sch.Fields = append(sch.Fields, schema.StructField{Name: name, Type: tf.Type, Nullable: true})
			return
		}
		sch.Fields = append(sch.Fields, schema.StructField{Name: name, Type: guess, Nullable: true})
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv":
		header, err := csv.NewReader(&recordLimit{r: f}).Read()
		if errors.Is(err, errRecordTooLong) {
			return nil, err
		}
		if err != nil {
			return nil, fmt.Errorf("reading the header: %w", err)
		}
		for _, h := range header {
			col(h, schema.String)
		}
	case ".parquet":
		st, err := f.Stat()
		if err != nil {
			return nil, err
		}
		pf, err := datafile.Open(f, st.Size())
		if err != nil {
			return nil, err
		}
		fs, err := pf.Schema()
		if err != nil {
			return nil, err
		}
		for _, fl := range fs.Fields {
			sch.Fields = append(sch.Fields, schema.StructField{Name: fl.Name, Type: fl.Type, Nullable: true})
		}
	default: // JSON lines
		lines := newLineReader(f)
		pending := map[string]bool{} // keys seen only with null values
		var order []string
		for {
			raw, line, ok := lines.next()
			if !ok {
				break
			}
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			text := bytes.TrimSpace(raw)
			if len(text) == 0 {
				continue
			}
			dec := json.NewDecoder(bytes.NewReader(text))
			dec.UseNumber()
			var obj map[string]any
			if err := dec.Decode(&obj); err != nil {
				return nil, fmt.Errorf("line %d: not a JSON object: %w", line, deltaerr.ErrInvalidArgument)
			}
			if err := jsonStrict(text[:dec.InputOffset()]); err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
			keys := make([]string, 0, len(obj))
			for k := range obj {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				if _, known := pending[k]; !known {
					pending[k] = true
					order = append(order, k)
				}
				if !pending[k] {
					continue
				}
				var t schema.DataType
				switch v := obj[k].(type) {
				case nil:
					continue
				case bool:
					t = schema.Boolean
				case json.Number:
					t = schema.Double
					if _, err := v.Int64(); err == nil {
						t = schema.Long
					}
				default:
					t = schema.String
				}
				pending[k] = false
				col(k, t)
			}
		}
		if err := lines.err(); err != nil {
			return nil, err
		}
		for _, k := range order {
			if pending[k] {
				col(k, schema.String)
			}
		}
	}
	if len(sch.Fields) == 0 {
		return nil, fmt.Errorf("the source has no column: %w", deltaerr.ErrInvalidArgument)
	}
	return sch, nil
}

// printMerge reports what a merge did.
func printMerge(cmd *cobra.Command, asJSON bool, res delta.MergeResult) error {
	w, flush := output(cmd)
	m := res.Merge
	if asJSON {
		doc := dmlJSON{Operation: dml.OpMerge, Committed: res.Committed, Strategy: res.Strategy.String(), OperationMetrics: m.Map()}
		if res.Committed {
			doc.Version = &res.Commit.Version
		}
		if err := writeJSON(w, doc); err != nil {
			return failure(err)
		}
		return flush()
	}
	rows := fmt.Sprintf("%d rows inserted, %d updated, %d deleted (of %d source rows)",
		m.NumTargetRowsInserted, m.NumTargetRowsUpdated, m.NumTargetRowsDeleted, m.NumSourceRows)
	if !res.Committed {
		fmt.Fprintf(w, "%s: nothing changed, nothing committed\n", rows)
		return flush()
	}
	fmt.Fprintf(w, "%s at version %d (%s)\n", rows, res.Commit.Version, res.Strategy)
	fmt.Fprintf(w, "  files: %d read of %d, %d added (%d bytes), %d removed (%d bytes), %d rows copied\n",
		m.NumTargetFilesAfterSkipping, m.NumTargetFilesBeforeSkipping, m.NumTargetFilesAdded, m.NumTargetBytesAdded,
		m.NumTargetFilesRemoved, m.NumTargetBytesRemoved, m.NumTargetRowsCopied)
	if n := m.NumTargetDeletionVectorsAdded + m.NumTargetDeletionVectorsUpdated + m.NumTargetDeletionVectorsRemoved; n > 0 {
		fmt.Fprintf(w, "  deletion vectors: %d added, %d updated, %d removed\n",
			m.NumTargetDeletionVectorsAdded, m.NumTargetDeletionVectorsUpdated, m.NumTargetDeletionVectorsRemoved)
	}
	if m.NumTargetChangeFilesAdded > 0 {
		fmt.Fprintf(w, "  change data: %d files\n", m.NumTargetChangeFilesAdded)
	}
	return flush()
}

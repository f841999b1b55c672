package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/godelta/delta"
	"github.com/godelta/delta/dml"
)

// dmlFlags are the flags delete and update share.
type dmlFlags struct {
	where    string
	strategy string
	asJSON   bool
}

func (f *dmlFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.where, "where", "", "only the rows this predicate matches (`EXPR`)")
	fs.StringVar(&f.strategy, "strategy", "auto", "auto (the table's), copy-on-write or deletion-vectors")
	fs.BoolVar(&f.asJSON, "json", false, "print one JSON document, of a stable shape")
}

func (f *dmlFlags) options(cmd *cobra.Command) (delta.DMLOptions, error) {
	var o delta.DMLOptions
	switch f.strategy {
	case "", "auto":
	case "copy-on-write":
		o.Strategy = delta.StrategyCopyOnWrite
	case "deletion-vectors", "merge-on-read":
		o.Strategy = delta.StrategyMergeOnRead
	default:
		return o, usageErrorf(cmd, "invalid --strategy %q: want auto, copy-on-write or deletion-vectors", f.strategy)
	}
	return o, nil
}

// run opens the table, runs do on it with the options of the flags, and
// prints what it did.
func (f *dmlFlags) run(cmd *cobra.Command, uri, op string, do func(*delta.Table, delta.DMLOptions) (delta.DMLResult, error)) error {
	opts, err := f.options(cmd)
	if err != nil {
		return err
	}
	t, err := openTable(cmd, uri)
	if err != nil {
		return failure(err)
	}
	defer t.Close()
	res, err := do(t, opts)
	if err != nil {
		return failure(err)
	}
	return printDML(cmd, f.asJSON, op, res)
}

func newDeleteCmd() *cobra.Command {
	var f dmlFlags
	cmd := &cobra.Command{
		Use:   "delete TABLE --where EXPR",
		Short: "Delete the rows a predicate matches",
		Long: "delete removes the rows --where matches, in one commit (SQL DELETE). Files whose\n" +
			"partition values alone match are removed without being read. On a table with\n" +
			"delta.enableDeletionVectors=true the rows are marked in deletion vectors; otherwise\n" +
			"the files holding them are rewritten without them. --where is required: to delete\n" +
			"every row, say --where 'true'. A concurrent writer that touched the same rows or\n" +
			"files makes it fail with a conflict, and nothing is committed.",
		Args: tableArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.where == "" {
				return usageErrorf(cmd, "--where is required (--where 'true' deletes every row)")
			}
			where := f.where
			if strings.EqualFold(strings.TrimSpace(where), "true") {
				where = ""
			}
			return f.run(cmd, args[0], dml.OpDelete, func(t *delta.Table, opts delta.DMLOptions) (delta.DMLResult, error) {
				return t.Delete(cmd.Context(), where, opts)
			})
		},
	}
	f.register(cmd.Flags())
	return cmd
}

func newUpdateCmd() *cobra.Command {
	var f dmlFlags
	var set string
	cmd := &cobra.Command{
		Use:   "update TABLE --set 'c = expr[, d = expr]' [--where EXPR]",
		Short: "Set columns in the rows a predicate matches",
		Long: "update sets columns in the rows --where matches (every row without it), in one\n" +
			"commit (SQL UPDATE). Values are expressions over the row before the update\n" +
			"(arithmetic, CAST, functions, SQL nulls), cast to the column's type; NOT NULL, CHECK\n" +
			"constraints and generated columns are enforced on every row written. The table's\n" +
			"strategy applies as for delete.",
		Args: tableArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if set == "" {
				return usageErrorf(cmd, "--set is required")
			}
			if _, err := delta.ParseAssignments(set); err != nil {
				return usageErrorf(cmd, "invalid --set: %v", err)
			}
			return f.run(cmd, args[0], dml.OpUpdate, func(t *delta.Table, opts delta.DMLOptions) (delta.DMLResult, error) {
				return t.UpdateRows(cmd.Context(), set, f.where, opts)
			})
		},
	}
	cmd.Flags().StringVar(&set, "set", "", "assignments `'c = expr[, d = expr]'`")
	f.register(cmd.Flags())
	return cmd
}

// dmlJSON is the --json document of delete and update; its field names
// and types are stable.
type dmlJSON struct {
	Operation        string         `json:"operation"`
	Committed        bool           `json:"committed"`
	Version          *int64         `json:"version,omitempty"`
	Strategy         string         `json:"strategy"`
	OperationMetrics map[string]any `json:"operationMetrics"`
}

// printDML reports what a DELETE or UPDATE did.
func printDML(cmd *cobra.Command, asJSON bool, op string, res delta.DMLResult) error {
	w, flush := output(cmd)
	m := res.Metrics
	if asJSON {
		doc := dmlJSON{Operation: op, Committed: res.Committed, Strategy: res.Strategy.String(), OperationMetrics: m.Map(op)}
		if res.Committed {
			doc.Version = &res.Commit.Version
		}
		if err := writeJSON(w, doc); err != nil {
			return failure(err)
		}
		return flush()
	}
	dmlText(w, op, res)
	return flush()
}

func dmlText(w io.Writer, op string, res delta.DMLResult) {
	m := res.Metrics
	rows := fmt.Sprintf("%d rows deleted", m.NumDeletedRows)
	if op == dml.OpUpdate {
		rows = fmt.Sprintf("%d rows updated", m.NumUpdatedRows)
	}
	if !res.Committed {
		fmt.Fprintf(w, "%s: no row matched, nothing committed\n", rows)
		return
	}
	fmt.Fprintf(w, "%s at version %d (%s)\n", rows, res.Commit.Version, res.Strategy)
	fmt.Fprintf(w, "  files: %d added (%d bytes), %d removed (%d bytes), %d rows copied\n",
		m.NumAddedFiles, m.NumAddedBytes, m.NumRemovedFiles, m.NumRemovedBytes, m.NumCopiedRows)
	if n := m.NumDeletionVectorsAdded + m.NumDeletionVectorsUpdated + m.NumDeletionVectorsRemoved; n > 0 {
		fmt.Fprintf(w, "  deletion vectors: %d added, %d updated, %d removed\n",
			m.NumDeletionVectorsAdded, m.NumDeletionVectorsUpdated, m.NumDeletionVectorsRemoved)
	}
	if m.NumAddedChangeFiles > 0 {
		fmt.Fprintf(w, "  change data: %d files (%d bytes)\n", m.NumAddedChangeFiles, m.ChangeFileBytes)
	}
}

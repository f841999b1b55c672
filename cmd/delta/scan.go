package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"iter"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/godelta/delta"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/schema/variant"
)

// rowFormat holds the flags that shape printed rows.
type rowFormat struct {
	columns string
	limit   int64
	format  string
}

func (f *rowFormat) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&f.columns, "columns", "", "comma-separated `COLUMNS` to print (default: all)")
	fs.Int64Var(&f.limit, "limit", -1, "print at most `N` rows")
	fs.StringVar(&f.format, "format", "table", "output `FORMAT`: table, csv or jsonl")
}

func (f *rowFormat) check(cmd *cobra.Command) error {
	switch f.format {
	case "table", "csv", "jsonl":
	default:
		return usageErrorf(cmd, "invalid --format %q: want table, csv or jsonl", f.format)
	}
	return nil
}

// columnList returns the columns --columns names, nil (all columns) when
// the flag is not given. An empty name (",,," or "a,,b", or the flag given
// empty) and a name given twice, ignoring case as column names are
// matched, are usage errors: the first used to mean all columns, the
// second printed the column twice (and a JSON object with a key twice).
func (f *rowFormat) columnList(cmd *cobra.Command) ([]string, error) {
	if !cmd.Flags().Changed("columns") {
		return nil, nil
	}
	var out []string
	seen := map[string]string{}
	for c := range strings.SplitSeq(f.columns, ",") {
		c = strings.TrimSpace(c)
		if c == "" {
			return nil, usageErrorf(cmd, "invalid --columns %q: an empty column name", f.columns)
		}
		key := strings.ToLower(c)
		if prev, dup := seen[key]; dup {
			if prev != c {
				return nil, usageErrorf(cmd, "invalid --columns %q: column %q given twice (also as %q)", f.columns, c, prev)
			}
			return nil, usageErrorf(cmd, "invalid --columns %q: column %q given twice", f.columns, c)
		}
		seen[key] = c
		out = append(out, c)
	}
	return out, nil
}

func newScanCmd() *cobra.Command {
	var sel selector
	var rf rowFormat
	var where string
	var stats bool
	cmd := &cobra.Command{
		Use:   "scan TABLE",
		Short: "Print a table's rows",
		Long: "scan prints the rows of a table, at its latest version or the one --version or\n" +
			"--timestamp selects, that satisfy --where (a predicate such as\n" +
			"\"a = 1 AND ts >= '2026-01-01' AND name IS NOT NULL\"). Files that cannot hold a\n" +
			"matching row are skipped unread; --stats reports how many on standard error.",
		Args: tableArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := rf.check(cmd); err != nil {
				return err
			}
			cols, err := rf.columnList(cmd)
			if err != nil {
				return err
			}
			opts := delta.ScanOptions{Columns: cols}
			if where != "" {
				pred, err := delta.ParsePredicate(where)
				if err != nil {
					return usageErrorf(cmd, "invalid --where: %v", err)
				}
				opts.Predicate = pred
			}
			t, snap, err := sel.open(cmd, args[0])
			defer sel.close()
			if err != nil {
				return err
			}
			s, err := t.Scan(snap, opts)
			if err != nil {
				return failure(err)
			}
			w, flush := output(cmd)
			if err := printRows(w, s.Schema(), s.Rows(cmd.Context()), rf); err != nil {
				return failure(err)
			}
			if err := flush(); err != nil {
				return err
			}
			if stats {
				m := s.Metrics()
				fmt.Fprintf(cmd.ErrOrStderr(), "files: %d in snapshot, %d skipped by partition, %d by statistics, %d read; rows: %d read, %d deleted, %d filtered, %d returned\n",
					m.FilesTotal, m.FilesSkippedPart, m.FilesSkippedStat, m.FilesRead, m.RowsRead, m.RowsDeleted, m.RowsFiltered, m.RowsReturned)
			}
			return nil
		},
	}
	sel.register(cmd.Flags())
	rf.register(cmd)
	cmd.Flags().StringVar(&where, "where", "", "print only rows satisfying `EXPR`")
	cmd.Flags().BoolVar(&stats, "stats", false, "report files skipped and rows read on standard error")
	return cmd
}

func newChangesCmd() *cobra.Command {
	var rf rowFormat
	var from, to int64
	var since string
	cmd := &cobra.Command{
		Use:   "changes TABLE --from V [--to W]",
		Short: "Print a table's change data feed",
		Long: "changes prints the rows that commits --from V to --to W (default: the latest)\n" +
			"inserted, deleted or updated, with _change_type, _commit_version and\n" +
			"_commit_timestamp. The table must have delta.enableChangeDataFeed set.\n" +
			"--since T starts at the first commit at or after time T instead of --from.",
		Args: tableArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := rf.check(cmd); err != nil {
				return err
			}
			byFrom, bySince := cmd.Flags().Changed("from"), cmd.Flags().Changed("since")
			if byFrom == bySince {
				return usageErrorf(cmd, "give exactly one of --from and --since")
			}
			cols, err := rf.columnList(cmd)
			if err != nil {
				return err
			}
			opts := delta.ChangeOptions{Start: from, Columns: cols}
			if cmd.Flags().Changed("to") { // else the latest
				if to < 0 {
					return usageErrorf(cmd, "invalid --to %d: must not be negative", to)
				}
				opts.End = delta.UpTo(to)
			}
			ctx := cmd.Context()
			t, err := openTable(cmd, args[0])
			if err != nil {
				return failure(err)
			}
			defer t.Close()
			var c *delta.Changes
			if bySince {
				ts, err := parseTimestamp(since)
				if err != nil {
					return usageErrorf(cmd, "invalid --since: %v", err)
				}
				c, err = t.ChangesSince(ctx, ts, opts)
				if err != nil {
					return failure(err)
				}
			} else if c, err = t.Changes(ctx, opts); err != nil {
				return failure(err)
			}
			w, flush := output(cmd)
			if err := printRows(w, c.Schema(), c.Rows(ctx), rf); err != nil {
				return failure(err)
			}
			return flush()
		},
	}
	rf.register(cmd)
	cmd.Flags().Int64Var(&from, "from", 0, "first version `V`")
	cmd.Flags().Int64Var(&to, "to", 0, "last version `W` (default: the latest)")
	cmd.Flags().StringVar(&since, "since", "", "start at the first commit at or after time `T`")
	return cmd
}

// printRows writes rows in the chosen format, at most rf.limit of them.
func printRows(w io.Writer, sch *schema.StructType, rows iter.Seq2[delta.Row, error], rf rowFormat) error {
	limited := func(yield func(delta.Row, error) bool) {
		n := int64(0)
		for r, err := range rows {
			if err != nil {
				yield(r, err)
				return
			}
			if rf.limit >= 0 && n >= rf.limit {
				return
			}
			n++
			if !yield(r, nil) {
				return
			}
		}
	}
	// How each column's values print, chosen once per column.
	show := make([]func(schema.Value, string) string, len(sch.Fields))
	for i, f := range sch.Fields {
		show[i] = cell(f.Type)
	}
	switch rf.format {
	case "jsonl":
		var buf []byte
		for r, err := range limited {
			if err != nil {
				return err
			}
			buf = appendRowJSON(buf[:0], sch, r.Values())
			buf = append(buf, '\n')
			if _, err := w.Write(buf); err != nil {
				return err
			}
		}
		return nil
	case "csv":
		cw := csv.NewWriter(w)
		header := make([]string, len(sch.Fields))
		for i, f := range sch.Fields {
			header[i] = f.Name
		}
		if err := cw.Write(header); err != nil {
			return err
		}
		rec := make([]string, len(sch.Fields))
		for r, err := range limited {
			if err != nil {
				return err
			}
			for i, v := range r.Values() {
				rec[i] = show[i](v, "")
			}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	}
	// table: aligned columns; needs every row before printing.
	cells := [][]string{make([]string, len(sch.Fields))}
	for i, f := range sch.Fields {
		cells[0][i] = f.Name
	}
	for r, err := range limited {
		if err != nil {
			return err
		}
		row := make([]string, len(sch.Fields))
		for i, v := range r.Values() {
			row[i] = show[i](v, "NULL")
		}
		cells = append(cells, row)
	}
	widths := make([]int, len(sch.Fields))
	for _, row := range cells {
		for i, c := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	var sb strings.Builder
	for k, row := range cells {
		sb.Reset()
		for i, c := range row {
			if i > 0 {
				sb.WriteString("  ")
			}
			sb.WriteString(c)
			if i < len(row)-1 {
				sb.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)))
			}
		}
		sb.WriteByte('\n')
		if _, err := io.WriteString(w, sb.String()); err != nil {
			return err
		}
		if k == 0 {
			continue
		}
	}
	_, err := fmt.Fprintf(w, "(%d rows)\n", len(cells)-1)
	return err
}

// cell returns how a value of type t prints in table and CSV output (null
// as the string given): Value.String, but a variant, wherever it is
// nested, as its JSON text, as Spark shows one (not the hex of its two
// binaries).
func cell(t schema.DataType) func(v schema.Value, null string) string {
	variants := hasVariant(t)
	return func(v schema.Value, null string) string {
		switch {
		case v.IsNull():
			return null
		case variants:
			return string(appendCell(nil, v, t))
		}
		return v.String()
	}
}

// hasVariant reports whether t is or holds a variant.
func hasVariant(t schema.DataType) bool {
	switch t := t.(type) {
	case *schema.StructType:
		for _, f := range t.Fields {
			if hasVariant(f.Type) {
				return true
			}
		}
	case *schema.ArrayType:
		return hasVariant(t.ElementType)
	case *schema.MapType:
		return hasVariant(t.KeyType) || hasVariant(t.ValueType)
	}
	return t == schema.Variant
}

// appendCell appends v, of type t, as cell shows it: nested values as
// Value.String writes them ({f1, f2}, [e1, e2], {k1: v1}), variants as
// JSON. A variant whose bytes are malformed shows as such, with the
// reason, in place of its value.
func appendCell(b []byte, v schema.Value, t schema.DataType) []byte {
	if v.IsNull() {
		return append(b, "null"...)
	}
	switch t := t.(type) {
	case *schema.StructType:
		b = append(b, '{')
		for i, f := range v.Fields() {
			if i > 0 {
				b = append(b, ", "...)
			}
			var ft schema.DataType
			if i < len(t.Fields) {
				ft = t.Fields[i].Type
			}
			b = appendCell(b, f, ft)
		}
		return append(b, '}')
	case *schema.ArrayType:
		b = append(b, '[')
		for i, e := range v.Elements() {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = appendCell(b, e, t.ElementType)
		}
		return append(b, ']')
	case *schema.MapType:
		b = append(b, '{')
		for i := range v.MapLen() {
			if i > 0 {
				b = append(b, ", "...)
			}
			k, e := v.MapEntry(i)
			b = appendCell(b, k, t.KeyType)
			b = append(b, ": "...)
			b = appendCell(b, e, t.ValueType)
		}
		return append(b, '}')
	}
	if t == schema.Variant {
		if f := v.Fields(); len(f) == 2 {
			out, err := variant.AppendJSON(b, f[0].Bytes(), f[1].Bytes())
			if err == nil {
				return out
			}
			return append(b, "<"+err.Error()+">"...)
		}
	}
	return append(b, v.String()...)
}

// appendRowJSON appends a row as one JSON object keyed by logical column
// names.
func appendRowJSON(b []byte, sch *schema.StructType, vals []schema.Value) []byte {
	return schema.AppendValueJSON(b, schema.StructValue(vals), sch)
}

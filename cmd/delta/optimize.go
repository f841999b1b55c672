package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/godelta/delta"
	"github.com/godelta/delta/internal/progress"
	"github.com/godelta/delta/optimize"
)

func newOptimizeCmd() *cobra.Command {
	var where, targetSize, zorderBy, hilbertBy string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "optimize TABLE [--where EXPR] [--target-size SIZE] [--zorder-by a,b | --hilbert-by a,b]",
		Short: "Compact small files, or lay a table out along a Z-order or Hilbert curve",
		Long: "optimize rewrites data files without changing rows, in one commit whose removes and\n" +
			"adds have dataChange=false (concurrent appends still commit; streaming readers skip it).\n" +
			"Without --zorder-by or --hilbert-by it compacts, per partition, the files smaller than\n" +
			"the target size (and those whose deletion vectors remove over 5% of their rows) into\n" +
			"files of the target size; run again, it has nothing to do. --zorder-by and\n" +
			"--hilbert-by rewrite each partition's files sorted along that curve of the columns,\n" +
			"which must be data columns with statistics. On a clustered table it clusters the\n" +
			"files not yet clustered. --where limits it to partitions (partition columns only).\n" +
			"--target-size takes bytes or a unit (256MB, 1GB; powers of 1024); the default is\n" +
			"delta.targetFileSize, else 1GB. A progress bar is drawn on standard error when it is\n" +
			"a terminal.",
		Args: tableArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			var opts delta.OptimizeOptions
			if zorderBy != "" && hilbertBy != "" {
				return usageErrorf(cmd, "--zorder-by and --hilbert-by cannot be combined")
			}
			opts.ZOrderBy, opts.HilbertBy = splitList(zorderBy), splitList(hilbertBy)
			if err := scopeFlags(cmd, where, targetSize, &opts); err != nil {
				return err
			}
			return runOptimize(cmd, args[0], opts, asJSON)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&where, "where", "", "only the partitions matching `EXPR` (partition columns only)")
	fs.StringVar(&targetSize, "target-size", "", "target file `SIZE` (bytes, or 256MB, 1GB)")
	fs.StringVar(&zorderBy, "zorder-by", "", "Z-order the files by `COLUMNS`, comma-separated")
	fs.StringVar(&hilbertBy, "hilbert-by", "", "order the files along the Hilbert curve of `COLUMNS`")
	fs.BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

// splitList splits a comma-separated list, trimming spaces; nil when s is
// empty.
func splitList(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	var out []string
	for c := range strings.SplitSeq(s, ",") {
		out = append(out, strings.TrimSpace(c))
	}
	return out
}

// parseSize reads a size: bytes, or a number with a unit K, M, G, T
// (optionally followed by B or iB, any case), in powers of 1024.
func parseSize(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "IB"), "B")
	mult := int64(1)
	if t != "" {
		switch t[len(t)-1] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		case 'T':
			mult = 1 << 40
		}
		if mult > 1 {
			t = t[:len(t)-1]
		}
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || n <= 0 || n*float64(mult) >= 1<<62 {
		return 0, fmt.Errorf("%q is not a positive size", s)
	}
	return int64(n * float64(mult)), nil
}

// formatSize prints bytes with a binary unit.
func formatSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// scopeFlags sets opts from --where and --target-size, the flags optimize
// and reorg share; a bad value is a usage error.
func scopeFlags(cmd *cobra.Command, where, targetSize string, opts *delta.OptimizeOptions) error {
	if targetSize != "" {
		n, err := parseSize(targetSize)
		if err != nil {
			return usageErrorf(cmd, "invalid --target-size: %v", err)
		}
		opts.TargetSize = n
	}
	if where != "" {
		e, err := delta.ParsePredicate(where)
		if err != nil {
			return usageErrorf(cmd, "invalid --where: %v", err)
		}
		opts.Where = e
	}
	return nil
}

// runOptimize runs optimize (or reorg) with opts on table and prints the
// result.
func runOptimize(cmd *cobra.Command, table string, opts delta.OptimizeOptions, asJSON bool) error {
	ctx := cmd.Context()
	t, err := openTable(cmd, table)
	if err != nil {
		return failure(err)
	}
	defer t.Close()
	var bar *progress.Bar
	var bytesDone int64
	opts.Progress = func(p optimize.Progress) {
		if bar == nil {
			bar = progress.New(cmd.ErrOrStderr(), cmd.Name()+": bytes", p.BytesTotal)
		}
		bar.Add(p.BytesDone - bytesDone)
		bytesDone = p.BytesDone
	}
	res, err := t.Optimize(ctx, opts)
	bar.Done()
	if err != nil {
		return failure(err)
	}
	out := cmd.OutOrStdout()
	if asJSON {
		doc := struct {
			Committed bool             `json:"committed"`
			Version   *int64           `json:"version,omitempty"`
			Metrics   optimize.Metrics `json:"metrics"`
		}{Committed: res.Committed, Metrics: res.Metrics}
		if res.Committed {
			doc.Version = &res.Commit.Version
		}
		b, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return failure(err)
		}
		fmt.Fprintln(out, string(b))
		return nil
	}
	m := res.Metrics
	if !res.Committed {
		if opts.Purge {
			fmt.Fprintf(out, "%s: nothing to purge (%d files considered, none with a deletion vector); nothing committed\n", table, m.TotalConsideredFiles)
		} else {
			fmt.Fprintf(out, "%s: nothing to optimize (%d files considered, none worth rewriting); nothing committed\n", table, m.TotalConsideredFiles)
		}
		return nil
	}
	done := "optimized"
	if opts.Purge {
		done = "purged"
	}
	fmt.Fprintf(out, "%s: %s at version %d: %d files (%s) rewritten as %d files (%s) in %d partitions",
		table, done, res.Commit.Version, m.NumFilesRemoved, formatSize(m.FilesRemoved.TotalSize), m.NumFilesAdded, formatSize(m.FilesAdded.TotalSize), m.PartitionsOptimized)
	if n := m.DeletionVectorStats.NumDeletionVectorsRemoved; n > 0 {
		fmt.Fprintf(out, ", %d deletion vectors purged", n)
	}
	fmt.Fprintln(out)
	return nil
}

func newReorgCmd() *cobra.Command {
	var where, targetSize string
	var purge, asJSON bool
	cmd := &cobra.Command{
		Use:   "reorg TABLE --purge [--where EXPR] [--target-size SIZE]",
		Short: "Rewrite the files that have deletion vectors, so deleted rows leave storage",
		Long: "reorg --purge rewrites every data file that has a deletion vector, whatever its size,\n" +
			"without the rows the vector deletes, as Spark's REORG TABLE ... APPLY (PURGE): the\n" +
			"rows stay deleted, and once VACUUM has removed the old files they are gone from\n" +
			"storage (as needed before turning deletion vectors off). One commit, operation\n" +
			"REORG, with dataChange=false. --where limits it to partitions (partition columns\n" +
			"only); --target-size bounds the files written, as for optimize.",
		Args: tableArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !purge {
				return usageErrorf(cmd, "reorg needs --purge (the one reorganisation there is)")
			}
			opts := delta.OptimizeOptions{Purge: true}
			if err := scopeFlags(cmd, where, targetSize, &opts); err != nil {
				return err
			}
			return runOptimize(cmd, args[0], opts, asJSON)
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&purge, "purge", false, "rewrite the files that have deletion vectors (APPLY (PURGE))")
	fs.StringVar(&where, "where", "", "only the partitions matching `EXPR` (partition columns only)")
	fs.StringVar(&targetSize, "target-size", "", "target file `SIZE` (bytes, or 256MB, 1GB)")
	fs.BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

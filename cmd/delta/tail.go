package main

import (
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/godelta/delta"
	"github.com/godelta/delta/stream"
)

func newTailCmd() *cobra.Command {
	var rf rowFormat
	var from int64
	var fromTS string
	var cdf, once, skipChanges, ignoreDeletes bool
	var maxFiles int
	var poll time.Duration
	cmd := &cobra.Command{
		Use:   "tail TABLE [--from V | --from-timestamp T] [--format jsonl|table] [--cdf] [--once]",
		Short: "Follow a table: print the rows each new commit adds",
		Long: "tail prints, commit by commit in version order, the rows each commit added, and\n" +
			"then waits for more, like tail -f, until interrupted (Ctrl-C). Without --from or\n" +
			"--from-timestamp it starts with every row of the latest version (the default\n" +
			"starting point of a Spark stream), then follows; --from V starts at commit V,\n" +
			"--from-timestamp T at the first commit made at or after T. --once prints what is\n" +
			"there and exits. --cdf prints the change data feed instead (inserts, deletes and\n" +
			"updates, with _change_type, _commit_version and _commit_timestamp); without it a\n" +
			"commit that deletes or rewrites rows stops the command, unless\n" +
			"--skip-change-commits or --ignore-deletes. Commits that only rearrange data\n" +
			"(OPTIMIZE) print nothing. Rows are printed a batch at a time (--max-files files).",
		Args: tableArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch rf.format {
			case "table", "jsonl":
			default:
				return usageErrorf(cmd, "invalid --format %q: want table or jsonl", rf.format)
			}
			cols, err := rf.columnList(cmd)
			if err != nil {
				return err
			}
			opts := delta.StreamOptions{Columns: cols, ReadChangeFeed: cdf, SkipChangeCommits: skipChanges,
				IgnoreDeletes: ignoreDeletes, MaxFilesPerTrigger: maxFiles, MaxPollInterval: poll}
			byFrom, byTS := cmd.Flags().Changed("from"), cmd.Flags().Changed("from-timestamp")
			switch {
			case byFrom && byTS:
				return usageErrorf(cmd, "give at most one of --from and --from-timestamp")
			case byFrom:
				if from < 0 {
					return usageErrorf(cmd, "invalid --from %d: must not be negative", from)
				}
				opts.Start = stream.FromVersion(from)
			case byTS:
				ts, err := parseTimestamp(fromTS)
				if err != nil {
					return usageErrorf(cmd, "invalid --from-timestamp: %v", err)
				}
				opts.Start = stream.FromTimestamp(ts)
			}
			if poll < 0 {
				return usageErrorf(cmd, "invalid --poll %v: must not be negative", poll)
			}
			ctx := cmd.Context()
			t, err := openTable(cmd, args[0])
			if err != nil {
				return failure(err)
			}
			defer t.Close()
			src, err := t.Stream(ctx, opts)
			if err != nil {
				return failure(err)
			}
			defer src.Close()
			w, flush := output(cmd)
			rf.limit = -1
			for {
				var b *delta.StreamBatch
				if once {
					var ok bool
					if b, ok, err = src.TryNext(ctx); err == nil && !ok {
						return flush()
					}
				} else {
					b, err = src.Next(ctx)
				}
				if err == nil {
					err = printRows(w, b.Schema(), b.Rows(ctx), rf)
				}
				if ferr := flush(); err == nil && ferr != nil {
					return ferr
				}
				if err != nil {
					if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
						return nil // interrupted: a clean end (the signal sets the exit status)
					}
					return failure(err)
				}
			}
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&rf.columns, "columns", "", "comma-separated `COLUMNS` to print (default: all)")
	fs.StringVar(&rf.format, "format", "table", "output `FORMAT`: table or jsonl")
	fs.Int64Var(&from, "from", 0, "start at commit `V`")
	fs.StringVar(&fromTS, "from-timestamp", "", "start at the first commit at or after time `T`")
	fs.BoolVar(&cdf, "cdf", false, "print the change data feed (inserts, deletes, updates)")
	fs.BoolVar(&once, "once", false, "print what the table holds now and exit")
	fs.BoolVar(&skipChanges, "skip-change-commits", false, "pass over commits that delete or rewrite rows")
	fs.BoolVar(&ignoreDeletes, "ignore-deletes", false, "pass over commits that only delete rows")
	fs.IntVar(&maxFiles, "max-files", 0, "data files per batch, at most `N` (default 1000)")
	fs.DurationVar(&poll, "poll", 0, "longest wait `D` between polls of the log once caught up (default 5s)")
	return cmd
}

package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/godelta/delta"
	"github.com/godelta/delta/logstore"
)

func newCheckpointCmd() *cobra.Command {
	var cleanup, dryRun bool
	cmd := &cobra.Command{
		Use:   "checkpoint TABLE",
		Short: "Write a checkpoint of a table's latest version",
		Long: "checkpoint writes a checkpoint of the latest version (V2 when the table has the\n" +
			"v2Checkpoint feature), then updates _delta_log/_last_checkpoint. With --cleanup it\n" +
			"then deletes the log files older than delta.logRetentionDuration (default 30 days)\n" +
			"that no retained version needs. With --cleanup --dry-run it writes and deletes\n" +
			"nothing: it says which version it would checkpoint and lists what the cleanup\n" +
			"would delete now (the checkpoint it would write can only let it delete more).\n" +
			"A table whose writer version or features this build does not support is refused.",
		Args: tableArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if dryRun && !cleanup {
				return usageErrorf(cmd, "--dry-run needs --cleanup")
			}
			ctx := cmd.Context()
			t, err := openTable(cmd, args[0])
			if err != nil {
				return failure(err)
			}
			defer t.Close()
			out := cmd.OutOrStdout()
			if dryRun {
				// Refused tables fail here, as they would below.
				res, err := t.CleanupLog(ctx, true)
				if err != nil {
					return failure(err)
				}
				snap, err := t.Snapshot(ctx)
				if err != nil {
					return failure(err)
				}
				fmt.Fprintf(out, "dry run: would write a checkpoint at version %d\n", snap.Version())
				printCleanup(out, res, "would delete")
				return nil
			}
			v, err := t.Checkpoint(ctx)
			if err != nil {
				return failure(err)
			}
			fmt.Fprintf(out, "checkpoint written at version %d\n", v)
			if !cleanup {
				return nil
			}
			res, err := t.CleanupLog(ctx, false)
			if err != nil {
				return failure(err)
			}
			printCleanup(out, res, "deleted")
			return nil
		},
	}
	cmd.Flags().BoolVar(&cleanup, "cleanup", false, "then delete expired log files")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "with --cleanup, list what would be deleted and delete nothing")
	return cmd
}

// printCleanup reports what a log cleanup deleted (verb "deleted") or would
// delete.
func printCleanup(out io.Writer, res delta.CleanupResult, verb string) {
	fmt.Fprintf(out, "log cleanup: %s %d files older than %s\n", verb, len(res.Deleted), res.Cutoff.UTC().Format("2006-01-02T15:04:05Z"))
	for _, k := range res.Deleted {
		fmt.Fprintf(out, "  %s\n", k)
	}
}

func newCompactLogCmd() *cobra.Command {
	var from, to int64
	cmd := &cobra.Command{
		Use:   "compact-log TABLE [--from V] [--to V]",
		Short: "Write a log compaction file of a range of commits",
		Long: "compact-log writes _delta_log/<from>.<to>.compacted.json, the reconciled actions of\n" +
			"commits --from to --to (default: from the version after the latest checkpoint, or 0,\n" +
			"to the latest version), so that readers of later versions read one file in place\n" +
			"of those commits, as delta-rs and kernel write them and Spark reads them. The\n" +
			"commits stay. A range already compacted is left as it is. A table whose writer\n" +
			"version or features this build does not support is refused.",
		Args: tableArg,
		RunE: func(cmd *cobra.Command, args []string) error {
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
			if !cmd.Flags().Changed("from") {
				from = 0
				if cp, ok := snap.Segment().CheckpointVersion(); ok {
					from = cp + 1
				}
			}
			if !cmd.Flags().Changed("to") {
				to = snap.Version()
			}
			out := cmd.OutOrStdout()
			if from >= to && !cmd.Flags().Changed("from") && !cmd.Flags().Changed("to") {
				fmt.Fprintf(out, "nothing to compact: versions %d to %d hold fewer than two commits\n", from, to)
				return nil
			}
			key, err := snap.WriteLogCompaction(ctx, from, to)
			if errors.Is(err, logstore.ErrAlreadyExists) {
				fmt.Fprintf(out, "versions %d to %d are already compacted\n", from, to)
				return nil
			}
			if err != nil {
				return failure(err)
			}
			fmt.Fprintf(out, "compacted versions %d to %d into %s\n", from, to, key)
			return nil
		},
	}
	cmd.Flags().Int64Var(&from, "from", 0, "the first commit `V` of the range")
	cmd.Flags().Int64Var(&to, "to", 0, "the last commit `V` of the range")
	return cmd
}

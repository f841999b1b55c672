package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/godelta/delta"
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

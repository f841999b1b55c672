package main

import (
	"fmt"

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
			"that no retained version needs.",
		Args: tableArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			t, err := delta.Open(ctx, args[0])
			if err != nil {
				return failure(err)
			}
			defer t.Close()
			v, err := t.Checkpoint(ctx)
			if err != nil {
				return failure(err)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "checkpoint written at version %d\n", v)
			if !cleanup {
				return nil
			}
			res, err := t.CleanupLog(ctx, dryRun)
			if err != nil {
				return failure(err)
			}
			verb := "deleted"
			if dryRun {
				verb = "would delete"
			}
			fmt.Fprintf(out, "log cleanup: %s %d files older than %s\n", verb, len(res.Deleted), res.Cutoff.UTC().Format("2006-01-02T15:04:05Z"))
			for _, k := range res.Deleted {
				fmt.Fprintf(out, "  %s\n", k)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&cleanup, "cleanup", false, "then delete expired log files")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "with --cleanup, list what would be deleted and delete nothing")
	return cmd
}

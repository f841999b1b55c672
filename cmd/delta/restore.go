package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/godelta/delta"
)

func newRestoreCmd() *cobra.Command {
	var sel selector
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "restore TABLE (--version V | --timestamp T)",
		Short: "Make the table's latest version hold an older version's files",
		Long: "restore commits one RESTORE that makes the table's live files (with their deletion\n" +
			"vectors) and metadata those of an older version, chosen by --version or by\n" +
			"--timestamp (the newest version committed at or before T). It fails, and commits\n" +
			"nothing, when files that version needs were vacuumed.",
		Args: tableArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			byVersion, byTime := cmd.Flags().Changed("version"), cmd.Flags().Changed("timestamp")
			if !byVersion && !byTime {
				return usageErrorf(cmd, "one of --version or --timestamp is required")
			}
			// The selector checks the flags and opens the table at that
			// version, which also tells whether it exists.
			t, target, err := sel.open(cmd, args[0])
			defer sel.close()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			var res delta.RestoreResult
			if byTime {
				ts, _ := parseTimestamp(sel.timestamp)
				res, err = t.RestoreTimestamp(ctx, ts, delta.TxnOptions{})
			} else {
				res, err = t.RestoreVersion(ctx, target.Version(), delta.TxnOptions{})
			}
			if err != nil {
				return failure(err)
			}
			w, flush := output(cmd)
			if asJSON {
				if err := writeJSON(w, restoreDocument(&res)); err != nil {
					return failure(err)
				}
			} else {
				fmt.Fprintf(w, "restored version %d as version %d: %d files restored (%d bytes), %d removed (%d bytes); %d files (%d bytes) now\n",
					res.Restored, res.Version, res.NumRestoredFiles, res.RestoredFilesSize, res.NumRemovedFiles, res.RemovedFilesSize,
					res.NumOfFilesAfterRestore, res.TableSizeAfterRestore)
			}
			return flush()
		},
	}
	sel.register(cmd.Flags())
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document, of a stable shape")
	return cmd
}

// restoreJSON is restore --json; the metric names are Spark's.
type restoreJSON struct {
	Version                int64 `json:"version"`
	RestoredVersion        int64 `json:"restoredVersion"`
	TableSizeAfterRestore  int64 `json:"tableSizeAfterRestore"`
	NumOfFilesAfterRestore int64 `json:"numOfFilesAfterRestore"`
	NumRemovedFiles        int64 `json:"numRemovedFiles"`
	NumRestoredFiles       int64 `json:"numRestoredFiles"`
	RemovedFilesSize       int64 `json:"removedFilesSize"`
	RestoredFilesSize      int64 `json:"restoredFilesSize"`
}

func restoreDocument(r *delta.RestoreResult) restoreJSON {
	return restoreJSON{
		Version: r.Version, RestoredVersion: r.Restored,
		TableSizeAfterRestore: r.TableSizeAfterRestore, NumOfFilesAfterRestore: r.NumOfFilesAfterRestore,
		NumRemovedFiles: r.NumRemovedFiles, NumRestoredFiles: r.NumRestoredFiles,
		RemovedFilesSize: r.RemovedFilesSize, RestoredFilesSize: r.RestoredFilesSize,
	}
}

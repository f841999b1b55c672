package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/godelta/delta"
)

func newCloneCmd() *cobra.Command {
	var sel selector
	var asJSON, deep bool
	cmd := &cobra.Command{
		Use:   "clone SOURCE TARGET [--version V | --timestamp T] [--deep]",
		Short: "Make a shallow (or, with --deep, a deep) clone of a table at a new location",
		Long: "clone creates at TARGET a new table whose version 0 holds SOURCE's schema,\n" +
			"partitioning and properties and names SOURCE's data files (of the latest version,\n" +
			"or of --version / --timestamp) by absolute path, as Spark's SHALLOW CLONE does. No\n" +
			"data file is copied and SOURCE is never written; the clone's own writes go under\n" +
			"TARGET, and VACUUM of the clone never deletes SOURCE's files. TARGET must not\n" +
			"hold a table.\n" +
			"--deep copies every data file and deletion vector file under TARGET and names\n" +
			"them by relative paths, so the clone needs nothing of SOURCE (a deep clone); if a\n" +
			"copy fails, the files copied are deleted and nothing is committed.",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usageErrorf(cmd, "want SOURCE and TARGET arguments, got %d", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			src, snap, err := sel.open(cmd, args[0])
			defer sel.close()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			cloneTo := src.CloneTo
			if deep {
				cloneTo = src.DeepCloneTo
			}
			clone, res, err := cloneTo(ctx, snap, args[1], delta.TxnOptions{})
			if err != nil {
				return failure(err)
			}
			defer clone.Close()
			w, flush := output(cmd)
			if asJSON {
				doc := cloneJSON{
					Version: res.Commit.Version, SourceVersion: res.SourceVersion,
					SourceTableSize: res.SourceTableSize, SourceNumOfFiles: res.SourceNumOfFiles,
					NumRemovedFiles: res.NumRemovedFiles, NumCopiedFiles: res.NumCopiedFiles,
					RemovedFilesSize: res.RemovedFilesSize, CopiedFilesSize: res.CopiedFilesSize,
				}
				if err := writeJSON(w, doc); err != nil {
					return failure(err)
				}
			} else if deep {
				fmt.Fprintf(w, "cloned version %d (%d files, %d bytes) as a deep clone; %d files (%d bytes) copied\n",
					res.SourceVersion, res.SourceNumOfFiles, res.SourceTableSize, res.NumCopiedFiles, res.CopiedFilesSize)
			} else {
				fmt.Fprintf(w, "cloned version %d (%d files, %d bytes) as a shallow clone; no file copied\n",
					res.SourceVersion, res.SourceNumOfFiles, res.SourceTableSize)
			}
			return flush()
		},
	}
	sel.register(cmd.Flags())
	cmd.Flags().BoolVar(&deep, "deep", false, "copy the data and deletion vector files: a clone that needs nothing of SOURCE")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document, of a stable shape")
	return cmd
}

// cloneJSON is clone --json; the metric names are Spark's.
type cloneJSON struct {
	Version          int64 `json:"version"`
	SourceVersion    int64 `json:"sourceVersion"`
	SourceTableSize  int64 `json:"sourceTableSize"`
	SourceNumOfFiles int64 `json:"sourceNumOfFiles"`
	NumRemovedFiles  int64 `json:"numRemovedFiles"`
	NumCopiedFiles   int64 `json:"numCopiedFiles"`
	RemovedFilesSize int64 `json:"removedFilesSize"`
	CopiedFilesSize  int64 `json:"copiedFilesSize"`
}

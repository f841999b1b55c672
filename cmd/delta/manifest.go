package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newGenerateManifestCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "generate-manifest TABLE",
		Short: "Write the table's symlink_format_manifest for Parquet-only engines",
		Long: "generate-manifest writes _symlink_format_manifest/ under the table: one file named\n" +
			"manifest per partition directory listing the absolute paths of the live data files,\n" +
			"as Spark's GENERATE symlink_format_manifest does, for Presto, Trino, Athena,\n" +
			"Redshift Spectrum and Snowflake; manifests of partitions with no files left are\n" +
			"deleted. Tables with deletion vectors or column mapping are refused.",
		Args: tableArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			t, err := openTable(cmd, args[0])
			if err != nil {
				return failure(err)
			}
			defer t.Close()
			res, err := t.GenerateManifest(ctx)
			if err != nil {
				return failure(err)
			}
			w, flush := output(cmd)
			if asJSON {
				doc := manifestJSON{NumFiles: res.Files, Written: res.Written, Deleted: res.Deleted}
				if doc.Written == nil {
					doc.Written = []string{}
				}
				if doc.Deleted == nil {
					doc.Deleted = []string{}
				}
				if err := writeJSON(w, doc); err != nil {
					return failure(err)
				}
			} else {
				fmt.Fprintf(w, "wrote %d manifests listing %d files; deleted %d stale manifests\n", len(res.Written), res.Files, len(res.Deleted))
				for _, k := range res.Written {
					fmt.Fprintf(w, "  %s\n", k)
				}
			}
			return flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document, of a stable shape")
	return cmd
}

// manifestJSON is generate-manifest --json.
type manifestJSON struct {
	NumFiles int64    `json:"numFiles"`
	Written  []string `json:"written"`
	Deleted  []string `json:"deleted"`
}

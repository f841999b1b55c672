package main

import (
	"fmt"
	"sync"

	"github.com/spf13/cobra"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/convert"
	"github.com/godelta/delta/internal/progress"
	"github.com/godelta/delta/schema"
)

func newConvertCmd() *cobra.Command {
	var partitionBy string
	var props []string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "convert DIR|URI [--partition-by 'a STRING, b INT']",
		Short: "Put a directory of Parquet files under a Delta log (CONVERT TO DELTA)",
		Long: "convert writes version 0 of a Delta table over the Parquet files of DIR, in place:\n" +
			"one commit of adds with statistics computed from the files; nothing is rewritten.\n" +
			"The schema comes from the files' footers, which must all agree. Hive-style\n" +
			"partition directories (a=1/b=x/) are given with --partition-by, in directory order,\n" +
			"with their types. Hidden files (_SUCCESS, .crc) are skipped. A progress bar is\n" +
			"drawn on stderr when it is a terminal.",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf(cmd, "want one DIR")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := convert.Options{Properties: map[string]string{}}
			if partitionBy != "" {
				ps, err := schema.ParseDDL(partitionBy)
				if err != nil {
					return usageErrorf(cmd, "invalid --partition-by: %v", err)
				}
				opts.PartitionSchema = ps
			}
			for _, p := range props {
				k, v, ok := splitProperty(p)
				if !ok {
					return usageErrorf(cmd, "invalid --property %q: want key=value", p)
				}
				opts.Properties[k] = v
			}
			var bar *progress.Bar
			var once sync.Once
			opts.Progress = func(done, total int) {
				once.Do(func() { bar = progress.New(cmd.ErrOrStderr(), "convert", int64(total)) })
				bar.Add(1)
			}
			opts.Txn.EngineInfo = "godelta-cli"
			t, res, err := delta.Convert(cmd.Context(), args[0], opts)
			if bar != nil {
				bar.Done()
			}
			if err != nil {
				return failure(err)
			}
			t.Close()
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), convertJSON{Version: res.Version, NumConvertedFiles: res.Files, SizeInBytes: res.Bytes})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "converted %s: %d files, %d bytes, version %d\n", args[0], res.Files, res.Bytes, res.Version)
			return nil
		},
	}
	cmd.Flags().StringVar(&partitionBy, "partition-by", "", "partition columns with types, in directory order (`'a STRING, b INT'`)")
	cmd.Flags().StringArrayVar(&props, "property", nil, "table property `KEY=VALUE` (repeatable)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document, of a stable shape")
	return cmd
}

// convertJSON is convert --json; numConvertedFiles is Spark's metric name.
type convertJSON struct {
	Version           int64 `json:"version"`
	NumConvertedFiles int   `json:"numConvertedFiles"`
	SizeInBytes       int64 `json:"sizeInBytes"`
}

// splitProperty splits KEY=VALUE.
func splitProperty(p string) (string, string, bool) {
	for i := 0; i < len(p); i++ {
		if p[i] == '=' {
			return p[:i], p[i+1:], i > 0
		}
	}
	return "", "", false
}

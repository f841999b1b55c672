package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/godelta/delta"
	"github.com/godelta/delta/iceberg"
)

// icebergDoc is the --json output of the iceberg command.
type icebergDoc struct {
	Table        string `json:"table"`
	Enabled      bool   `json:"enabled"`      // UniForm Iceberg on at the latest version
	DeltaVersion int64  `json:"deltaVersion"` // latest Delta version
	delta.IcebergStatus
	Behind int64 `json:"behind"` // Delta versions not converted yet
	// Converted, with --sync or --enable, lists the Delta versions this
	// run converted; absent when none.
	Converted []int64 `json:"converted,omitempty"`
}

func newIcebergCmd() *cobra.Command {
	var sync, enable, rewrite, asJSON bool
	cmd := &cobra.Command{
		Use:   "iceberg TABLE",
		Short: "Show or bring up to date a table's Iceberg metadata (UniForm)",
		Long: "iceberg shows the state of the Iceberg metadata that a table with\n" +
			"delta.universalFormat.enabledFormats=iceberg keeps under metadata/: the latest\n" +
			"metadata file (what an Iceberg reader opens), the Delta version it was converted\n" +
			"from, and how many versions it is behind. --sync converts the versions not\n" +
			"converted yet, one Iceberg snapshot each. --enable first turns UniForm Iceberg on\n" +
			"(icebergCompatV2, column mapping) in one commit, then converts. It refuses a table\n" +
			"whose data files Iceberg readers would misread (in a partitioned table, files that\n" +
			"do not hold the partition columns, which icebergCompatV2 writes into the files;\n" +
			"files without column mapping or with deletion vectors); --enable --rewrite rewrites\n" +
			"them in the enabling commit, as Spark's REORG TABLE ... APPLY (UPGRADE UNIFORM\n" +
			"(ICEBERG_COMPAT_VERSION = 2)) does.",
		Args: tableArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if rewrite && !enable {
				return usageErrorf(cmd, "--rewrite goes with --enable")
			}
			ctx := cmd.Context()
			t, err := openTable(cmd, args[0])
			if err != nil {
				return failure(err)
			}
			defer t.Close()
			if enable {
				_, err := t.EnableIcebergWith(ctx, delta.IcebergEnableOptions{Rewrite: rewrite})
				if errors.Is(err, iceberg.ErrNeedsRewrite) {
					err = fmt.Errorf("%w (--rewrite rewrites them as part of --enable)", err)
				}
				if err != nil {
					return failure(err)
				}
			}
			var converted []int64
			if sync || enable {
				res, err := t.SyncIceberg(ctx)
				if err != nil {
					return failure(err)
				}
				converted = []int64{}
				for v := res.FromVersion; v <= res.ToVersion && res.Snapshots > 0; v++ {
					converted = append(converted, v)
				}
			}
			snap, err := t.Snapshot(ctx)
			if err != nil {
				return failure(err)
			}
			st, err := t.IcebergStatus(ctx)
			if err != nil {
				return failure(err)
			}
			doc := icebergDoc{
				Table: args[0], Enabled: snap.Config().UniversalFormatIceberg(), DeltaVersion: snap.Version(),
				IcebergStatus: st, Behind: snap.Version() - st.ConvertedVersion, Converted: converted,
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return failure(writeJSON(out, doc))
			}
			fmt.Fprintf(out, "iceberg enabled:   %v\n", doc.Enabled)
			fmt.Fprintf(out, "delta version:     %d\n", doc.DeltaVersion)
			if st.MetadataVersion == 0 {
				fmt.Fprintf(out, "iceberg metadata:  none\n")
				return nil
			}
			fmt.Fprintf(out, "iceberg metadata:  %s\n", st.MetadataLocation)
			fmt.Fprintf(out, "converted version: %d (%d behind)\n", st.ConvertedVersion, doc.Behind)
			fmt.Fprintf(out, "snapshots:         %d (current %d: %d data files, %d records)\n", st.Snapshots, st.SnapshotID, st.DataFiles, st.Records)
			if converted != nil {
				fmt.Fprintf(out, "converted now:     %d versions\n", len(converted))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&sync, "sync", false, "convert the Delta versions not converted yet")
	cmd.Flags().BoolVar(&enable, "enable", false, "turn UniForm Iceberg on first (one commit), then convert")
	cmd.Flags().BoolVar(&rewrite, "rewrite", false, "with --enable: rewrite, in the enabling commit, the data files Iceberg readers would misread")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	return cmd
}

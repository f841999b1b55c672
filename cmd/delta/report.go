package main

import (
	"bufio"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/report"
)

func init() { extraCommands = append(extraCommands, newReportCmd) }

func newReportCmd() *cobra.Command {
	var sel selector
	var htmlPath string
	cmd := &cobra.Command{
		Use:   "report TABLE",
		Short: "Print a table-health report, or write it as an HTML page",
		Long: "report reads the table's log and reports its health: file sizes and small files,\n" +
			"files and bytes per partition, deletion vectors, stats coverage per column, commits\n" +
			"over time, checkpoint age and log tail, and estimates of what OPTIMIZE and VACUUM\n" +
			"would gain. With --html FILE it writes one self-contained HTML page with SVG charts.",
		Args: tableArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			defer sel.close()
			snap, err := sel.snapshot(cmd, args[0])
			if err != nil {
				return err
			}
			r, err := report.Build(cmd.Context(), snap, report.Options{Name: logstore.RedactURI(args[0])})
			if err != nil {
				return failure(err)
			}
			if htmlPath != "" {
				f, err := os.Create(htmlPath)
				if err != nil {
					return failure(err)
				}
				bw := bufio.NewWriter(f)
				err = r.WriteHTML(bw)
				if err == nil {
					err = bw.Flush()
				}
				if cerr := f.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					return failure(fmt.Errorf("writing %s: %w", htmlPath, err))
				}
				fmt.Fprintf(cmd.OutOrStdout(), "wrote %s\n", htmlPath)
				return nil
			}
			w, flush := output(cmd)
			if err := r.WriteText(w); err != nil {
				return failure(err)
			}
			return flush()
		},
	}
	sel.register(cmd.Flags())
	cmd.Flags().StringVar(&htmlPath, "html", "", "write the report as an HTML page to `FILE` instead of printing it")
	return cmd
}

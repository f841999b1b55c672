package main

import (
	"fmt"
	"io"
	"sort"

	"github.com/spf13/cobra"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/tablecheck"
)

func init() { extraCommands = append(extraCommands, newCheckCmd) }

// exitCheckFailed is check's exit status when the check itself could not
// run (no table, a store that fails): unlike the other commands', 1 means
// the table has problems.
const exitCheckFailed = 2

// checkOutput is check --json's document.
type checkOutput struct {
	Table string `json:"table"`
	OK    bool   `json:"ok"`
	Deep  bool   `json:"deep"`
	*tablecheck.Report
}

func newCheckCmd() *cobra.Command {
	var deep, asJSON bool
	cmd := &cobra.Command{
		Use:   "check TABLE",
		Short: "Check a table against the Delta invariants (fsck) and list every problem",
		Long: "check reads the whole log of a table and checks it, without changing anything:\n" +
			"the commits are contiguous, each checkpoint equals the replay of the commits it\n" +
			"replaces, the newest ten version checksums (.crc) equal the replay of their\n" +
			"versions, every live data file and deletion vector exists with its logged size,\n" +
			"deletion vectors' checksums and cardinalities hold, no path escapes the table root\n" +
			"(or a root it trusts), and the roots of a clone's sources can be read. With --deep\n" +
			"it also reads each data file's Parquet footer and compares its row count, null\n" +
			"counts and numeric bounds with the stats of the log.\n\n" +
			"Exit status: 0 when no problem is found; 1 when some are, all of them listed; 2\n" +
			"when the check cannot run (no table there, a store error). --json prints\n" +
			"{table, ok, deep, version, problems: [{kind, version, path?, message}],\n" +
			"checked: {commits, checkpoints, files, ...}, skipped: [reason...]}; version is -1\n" +
			"for a problem of no one version. Kinds: " + kindList() + ".",
		Args: tableArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			t, err := openTable(cmd, args[0])
			if err != nil {
				return &exitError{code: exitCheckFailed, err: err}
			}
			defer t.Close()
			rep, err := tablecheck.Check(ctx, t.Store(), tablecheck.Options{Deep: deep})
			if err != nil {
				return &exitError{code: exitCheckFailed, err: err}
			}
			w, flush := output(cmd)
			name := logstore.RedactURI(args[0])
			if asJSON {
				err = writeJSON(w, checkOutput{Table: name, OK: rep.OK(), Deep: deep, Report: rep})
			} else {
				err = writeCheck(w, name, rep)
			}
			if err == nil {
				err = flush()
			}
			if err != nil {
				return &exitError{code: exitCheckFailed, err: err}
			}
			if !rep.OK() {
				return failure(fmt.Errorf("%s: %s found", name, plural(len(rep.Problems), "problem")))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&deep, "deep", false, "also compare each data file's Parquet footer with the log's stats")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

// writeCheck prints a check's report for people.
func writeCheck(w io.Writer, name string, rep *tablecheck.Report) error {
	var keys []string
	for k := range rep.Checked {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintf(w, "checked %s at version %d:", name, rep.Version)
	for i, k := range keys {
		sep := ","
		if i == 0 {
			sep = ""
		}
		fmt.Fprintf(w, "%s %s %d", sep, k, rep.Checked[k])
	}
	fmt.Fprintln(w)
	for _, s := range rep.Skipped {
		fmt.Fprintf(w, "skipped: %s\n", s)
	}
	for _, p := range rep.Problems {
		fmt.Fprintf(w, "problem: %s\n", p)
	}
	var err error
	if rep.OK() {
		_, err = fmt.Fprintln(w, "no problems found")
	} else {
		_, err = fmt.Fprintf(w, "%s found\n", plural(len(rep.Problems), "problem"))
	}
	return err
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func kindList() string {
	s := ""
	for i, k := range tablecheck.Kinds() {
		if i > 0 {
			s += ", "
		}
		s += string(k)
	}
	return s
}

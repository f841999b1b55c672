package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/godelta/delta"
)

// alterOp is one subcommand of delta alter. Files of this package add
// theirs to alterOps in init(), so that each operation lives in its own
// file and none edits this one.
type alterOp struct {
	// Usage is the operation and its arguments, as help shows it
	// ("add-column 'c TYPE'").
	Usage string
	// MinArgs and MaxArgs bound the arguments after the operation name;
	// MaxArgs < 0 means no bound.
	MinArgs, MaxArgs int
	// Run applies the operation to the table and returns the commit's
	// result; a zero Version means nothing was committed (no change).
	Run func(ctx context.Context, t *delta.Table, args []string) (delta.CommitResult, error)
}

// alterOps maps an operation name to its implementation.
var alterOps = map[string]alterOp{}

func newAlterCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "alter [--json] TABLE OPERATION ARGS...",
		Short: "Change a table's schema, properties, constraints or features",
		Long: "alter changes the definition of a table in one commit, without rewriting data.\n" +
			"Operations:\n" + alterUsage(),
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usageErrorf(cmd, "want TABLE and an operation")
			}
			op, ok := alterOps[args[1]]
			if !ok {
				return usageErrorf(cmd, "unknown alter operation %q", args[1])
			}
			if n := len(args) - 2; n < op.MinArgs || (op.MaxArgs >= 0 && n > op.MaxArgs) {
				return usageErrorf(cmd, "usage: alter TABLE %s", op.Usage)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			t, err := openTable(cmd, args[0])
			if err != nil {
				return failure(err)
			}
			defer t.Close()
			res, err := alterOps[args[1]].Run(ctx, t, args[2:])
			if err != nil {
				return failure(err)
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), alterJSON{Operation: args[1], Committed: res.Version > 0, Version: res.Version})
			}
			printAltered(cmd.OutOrStdout(), args[0], args[1], res)
			return nil
		},
	}
	// Flags after the operation belong to it (unset --if-exists), so
	// --json comes before the table.
	cmd.Flags().SetInterspersed(false)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document, of a stable shape (give it before TABLE)")
	return cmd
}

// alterJSON is alter --json.
type alterJSON struct {
	Operation string `json:"operation"` // the alter operation, as given ("add-column")
	Committed bool   `json:"committed"` // false when the table already was as asked
	Version   int64  `json:"version"`   // the commit's version; 0 when nothing was committed
}

func printAltered(w io.Writer, table, op string, res delta.CommitResult) {
	if res.Version == 0 {
		fmt.Fprintf(w, "%s: %s: no change, nothing committed\n", table, op)
		return
	}
	fmt.Fprintf(w, "%s: %s committed at version %d\n", table, op, res.Version)
}

// alterUsage lists the operations, sorted.
func alterUsage() string {
	names := make([]string, 0, len(alterOps))
	for n := range alterOps {
		names = append(names, n)
	}
	slices.Sort(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "  %s\n", alterOps[n].Usage)
	}
	return b.String()
}

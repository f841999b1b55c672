package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/godelta/delta"
)

// appFlags are append's --app-id and --app-version: an exactly-once
// batch of an application (Spark's txnAppId and txnVersion).
type appFlags struct {
	id      string
	version int64
}

func (a *appFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&a.id, "app-id", "", "application `ID` of an exactly-once write (with --app-version)")
	fs.Int64Var(&a.version, "app-version", 0, "the application's batch `N`: nothing is appended when the table already holds ID at N or later")
}

func (a *appFlags) check(cmd *cobra.Command) error {
	byID, byVersion := cmd.Flags().Changed("app-id"), cmd.Flags().Changed("app-version")
	switch {
	case byID != byVersion:
		return usageErrorf(cmd, "--app-id and --app-version go together")
	case byID && a.id == "":
		return usageErrorf(cmd, "--app-id must not be empty")
	case a.version < 0:
		return usageErrorf(cmd, "invalid --app-version %d: must not be negative", a.version)
	}
	return nil
}

// reportCommitted says that the batch was committed before: not an error.
func (a *appFlags) reportCommitted(cmd *cobra.Command, t *delta.Table) error {
	held, ok, err := t.AppVersion(cmd.Context(), a.id)
	if err != nil {
		return failure(err)
	}
	msg := fmt.Sprintf("appended 0 rows: application %q already committed version %d", a.id, a.version)
	if ok {
		msg += fmt.Sprintf(" (the table holds version %d)", held)
	}
	fmt.Fprintln(cmd.OutOrStdout(), msg+", nothing committed")
	return nil
}

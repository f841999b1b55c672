// Command delta inspects Delta Lake tables.
//
//	delta describe TABLE [--version V | --timestamp T] [--json]
//	delta history  TABLE [--limit N] [--json]
//	delta files    TABLE [--version V | --timestamp T] [--json]
//
// TABLE is a local path or a URI (file://, memory://). --timestamp takes
// RFC 3339 ("2024-01-02T03:04:05.123Z"), "YYYY-MM-DD[ HH:MM:SS[.fff]]" in
// UTC, or milliseconds since the epoch.
//
// Output is for people by default. With --json each command prints one JSON
// document, whose shape is stable:
//
//   - describe: {"version", "timestamp", "protocol" (the protocol action),
//     "metadata": {"id", "name", "description", "format", "schema" (an
//     object), "partitionColumns", "configuration", "createdTime"},
//     "numFiles", "sizeInBytes"}
//   - files: [{"path" (as in the log), "size", "modificationTime",
//     "partitionValues" (null for a null value), "dataChange", "stats" (an
//     object, when present), "deletionVector" (the descriptor, or null)}]
//   - history: [{"version", "timestamp", "operation", "operationParameters",
//     and when recorded "readVersion", "isolationLevel", "isBlindAppend",
//     "engineInfo", "userMetadata", "operationMetrics", "txnId"}], newest
//     first
//
// Timestamps are RFC 3339 in UTC with milliseconds. Errors print one line
// on stderr; the exit status is 1 for a failure and 2 for a usage error.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	delta "github.com/godelta/delta"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// usageError marks errors in how the command was called.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }

func run(args []string, stdout, stderr io.Writer) int {
	cmd := newRootCmd(stdout)
	cmd.SetArgs(args)
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	err := cmd.ExecuteContext(context.Background())
	if err == nil {
		return 0
	}
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	if !strings.HasPrefix(msg, "delta: ") {
		msg = "delta: " + msg
	}
	fmt.Fprintln(stderr, msg)
	var ue usageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		return 2
	}
	return 1
}

func isCobraUsage(err error) bool {
	s := err.Error()
	return strings.HasPrefix(s, "unknown command") || strings.HasPrefix(s, "unknown flag") ||
		strings.HasPrefix(s, "unknown shorthand") || strings.Contains(s, "accepts ") ||
		strings.HasPrefix(s, "invalid argument") || strings.Contains(s, "flag needs an argument")
}

func newRootCmd(stdout io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "delta",
		Short:         "Inspect Delta Lake tables",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newDescribeCmd(stdout), newHistoryCmd(stdout), newFilesCmd(stdout))
	return root
}

// versionFlags are the time-travel flags shared by describe and files.
type versionFlags struct {
	version   int64
	timestamp string
}

func (f *versionFlags) add(cmd *cobra.Command) {
	cmd.Flags().Int64Var(&f.version, "version", -1, "table version to read (default: latest)")
	cmd.Flags().StringVar(&f.timestamp, "timestamp", "", "read the version current at this time")
}

func (f *versionFlags) snapshot(ctx context.Context, cmd *cobra.Command, uri string) (*delta.Snapshot, error) {
	hasV, hasT := cmd.Flags().Changed("version"), cmd.Flags().Changed("timestamp")
	if hasV && hasT {
		return nil, usageError{errors.New("--version and --timestamp cannot be used together")}
	}
	if hasV && f.version < 0 {
		return nil, usageError{fmt.Errorf("--version %d: must be 0 or more", f.version)}
	}
	var ts = f.timestamp
	t, err := parseTimestamp(ts)
	if hasT && err != nil {
		return nil, usageError{err}
	}
	tbl, err := delta.Open(ctx, uri)
	if err != nil {
		return nil, err
	}
	switch {
	case hasV:
		return tbl.SnapshotAt(ctx, f.version)
	case hasT:
		return tbl.SnapshotAtTimestamp(ctx, t)
	}
	return tbl.Snapshot(ctx)
}

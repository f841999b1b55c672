// Command delta reads, writes and maintains Delta Lake tables: it shows
// their metadata, history, data files, rows and change data feed; creates
// them and changes their rows (append, DELETE, UPDATE, MERGE); and
// maintains them (checkpoints, OPTIMIZE, VACUUM, RESTORE, CLONE, CONVERT
// TO DELTA, ALTER TABLE, UniForm Iceberg metadata).
//
//	delta describe TABLE [--version V | --timestamp T] [--json]
//	delta history  TABLE [--limit N] [--json]
//	delta files    TABLE [--version V | --timestamp T] [--json]
//	delta scan     TABLE [--version V | --timestamp T] [--where EXPR] [--columns a,b]
//	               [--limit N] [--format table|csv|jsonl] [--stats]
//	delta changes  TABLE (--from V | --since T) [--to W] [--columns a,b]
//	               [--limit N] [--format table|csv|jsonl]
//	delta delete   TABLE --where EXPR [--strategy S] [--json]
//	delta update   TABLE --set 'c = expr[, d = expr]' [--where EXPR] [--strategy S] [--json]
//	delta merge    TABLE --source FILE_OR_TABLE[@VERSION] --on COND [--delete-if COND]
//	               [--update-all | --update-set 'c = expr, ...'] [--update-if COND]
//	               [--insert-all | --insert-values 'c = expr, ...'] [--insert-if COND]
//	               [--by-source-delete-if COND] [--by-source-update-set 'c = expr, ...']
//	               [--by-source-update-if COND] [--strategy S] [--target-file-size B]
//	               [--memory SIZE] [--spill-dir DIR] [--json]
//	delta optimize TABLE [--where EXPR] [--target-size SIZE]
//	               [--zorder-by a,b | --hilbert-by a,b] [--json]
//	delta vacuum   TABLE [--retain 168h] [--dry-run] [--force] [--lite] [--json]
//	delta restore  TABLE (--version V | --timestamp T) [--json]
//	delta clone    SOURCE TARGET [--version V | --timestamp T] [--json]
//	delta generate-manifest TABLE [--json]
//	delta append   TABLE FILE... [--app-id ID --app-version N]
//	delta tail     TABLE [--from V | --from-timestamp T] [--format jsonl|table] [--cdf]
//	               [--once] [--columns a,b] [--max-files N] [--poll D]
//	               [--skip-change-commits] [--ignore-deletes]
//
// append --app-id ID --app-version N is one batch of an exactly-once
// producer: the commit records txn(ID, N) with the rows, and when the table
// already holds ID at N or later nothing is appended ("appended 0 rows:
// application ... already committed version N", exit 0). tail follows a
// table like tail -f: the rows of the latest version, or from commit V or
// time T, then the rows each new commit adds, until interrupted (exit 130 on
// SIGINT); --once prints what is there and exits; --cdf prints the change
// data feed (see package stream).
//
//	delta alter    [--json] TABLE add-column 'c TYPE' | add-column 'a.b TYPE' | rename-column a b |
//	               drop-column c... | widen-column c TYPE | set-default c 'LITERAL' | drop-default c |
//	               set k=v... | unset [--if-exists] k... |
//	               add-constraint NAME 'EXPR' | drop-constraint [--if-exists] NAME |
//	               enable-feature NAME
//	delta convert  DIR|URI [--partition-by 'a STRING, b INT'] [--property k=v] [--json]
//	delta append   TABLE FILE... --merge-schema   (new columns of the files added in the same commit)
//	delta report   TABLE [--version V | --timestamp T] [--html FILE]
//	delta check    TABLE [--deep] [--json]
//
// check is the table's fsck (package tablecheck): it reads the whole log and
// lists every problem it finds (a hole in the commits, a checkpoint that
// differs from the replay of its commits, a missing or resized data file, a
// deletion vector whose size, checksum or cardinality is wrong, a path that
// escapes the table root, a clone source that cannot be read; with --deep,
// footers' row counts, null counts and numeric bounds against the log's
// stats). Unlike the other commands, it exits 1 when it found problems, all
// of them listed, and 2 when the check itself cannot run. check --json
// prints {"table", "ok", "deep", "version", "problems": [{"kind", "version",
// "path", "message"}], "checked": {what: count}, "skipped": [reason]}.
//
// TABLE is a local path or a URI (file:///abs/path, memory://name,
// s3://bucket/prefix, gs://bucket/prefix, az://container/prefix,
// abfss://container@account.dfs.core.windows.net/prefix); see delta.Resolve.
// It may also be catalog://HOST[:PORT]/NAMESPACE.TABLE (catalogs:// for
// HTTPS): a table of a catalog server (delta catalog serve, or Unity
// Catalog with NAMESPACE.TABLE its catalog.schema.table), which says where
// the table is, with the bearer token of $DELTA_CATALOG_TOKEN; a
// catalog-managed table is then read and committed through the server.
// The command links every backend of the module, by the blank imports
// below, so that it speaks every scheme.
//
// --version V selects the table as of version V. --timestamp T selects the
// newest version committed at or before T, which may be written
//
//	2024-01-02T03:04:05Z          RFC 3339, any offset, optional fraction
//	2024-01-02T03:04:05.123+02:00
//	2024-01-02 03:04:05[.fff]     UTC (a "T" separator is accepted too)
//	2024-01-02                    UTC midnight
//	1704164645000                 milliseconds since the Unix epoch
//
// The two flags cannot be combined. Without either, the latest version is
// shown.
//
// # Output
//
// By default the output is meant for people: aligned columns, subject to
// change. With --json each command prints exactly one JSON document,
// indented by two spaces and followed by a newline. That form is stable:
// fields may be added, but none is renamed, removed or changes type.
// Object keys of maps (configuration, partitionValues, operationParameters
// and the like) are as in the log; timestamps are strings in RFC 3339 with
// milliseconds, in UTC ("2023-05-31T18:58:33.633Z").
//
// describe --json prints an object:
//
//	{
//	  "version": 14,                      // int
//	  "timestamp": "2023-05-31T18:58:33.633Z", // commit time of the version
//	  "protocol": {                       // the protocol action as in the log
//	    "minReaderVersion": 3,
//	    "minWriterVersion": 7,
//	    "readerFeatures": ["deletionVectors"], // only when the table has them
//	    "writerFeatures": ["deletionVectors"]  // only when the table has them
//	  },
//	  "metadata": {
//	    "id": "…",
//	    "name": "",                       // string, "" when not set
//	    "description": "",                // string, "" when not set
//	    "format": {"provider": "parquet", "options": {}},
//	    "schema": {"type": "struct", "fields": […]}, // the schema as an object
//	    "partitionColumns": [],           // array, never null
//	    "configuration": {},              // object, never null
//	    "createdTime": 1685559513283      // int, absent when not recorded
//	  },
//	  "numFiles": 2,                      // live data files
//	  "sizeInBytes": 1234                 // their total size
//	}
//
// files --json prints an array (never null; [] for an empty table) of the
// live data files, in the order the snapshot yields them, each:
//
//	{
//	  "path": "part-00000-….parquet",     // as written in the log (URI-encoded)
//	  "size": 1234,
//	  "modificationTime": 1685559513000,  // ms since the epoch
//	  "partitionValues": {"p": "a", "q": null}, // never null; a null value is null
//	  "dataChange": true,
//	  "stats": {"numRecords": 3, …},      // the stats parsed; absent when the
//	                                      // file has none or they are not a JSON object
//	  "deletionVector": null              // or the descriptor as in the log:
//	                                      // {storageType, pathOrInlineDv, offset?,
//	                                      //  sizeInBytes, cardinality, maxRowIndex?}
//	}
//
// history --json prints an array of the commits still in the log, newest
// first, each:
//
//	{
//	  "version": 3,
//	  "timestamp": "2023-05-31T18:58:33.633Z", // in-commit timestamp, else file time
//	  "operation": "WRITE",               // string, "" when the commit has no commitInfo
//	  "operationParameters": {…},         // object, never null, as in the log
//	  // and, when the commitInfo records them:
//	  "readVersion": 2,                   // int
//	  "isolationLevel": "Serializable",   // string
//	  "isBlindAppend": true,              // bool
//	  "engineInfo": "…",                  // string
//	  "userMetadata": "…",                // string
//	  "operationMetrics": {…},            // object, as in the log
//	  "txnId": "…"                        // string
//	}
//
// delete and update change rows in one commit (SQL DELETE and UPDATE) and
// print what they did: rows deleted or updated, files added and removed,
// deletion vectors written. --strategy is auto (the table's: deletion
// vectors when delta.enableDeletionVectors is true), copy-on-write or
// deletion-vectors. delete --where 'true' deletes every row. With --json
// they print an object:
//
//	{
//	  "operation": "DELETE",              // or "UPDATE"
//	  "committed": true,                  // false when no row matched
//	  "version": 4,                       // int, absent when nothing was committed
//	  "strategy": "merge-on-read",        // or "copy-on-write"
//	  "operationMetrics": {…}             // as commitInfo records them: Spark's
//	                                      // names, decimal strings
//	}
//
// merge joins a source with the table on --on (the table is t, the source
// s: --on 't.id = s.id') and applies WHEN clauses in one commit (SQL
// MERGE INTO). The source is a .csv, .jsonl or .parquet file (its columns
// typed as the table's of the same name, others string, or as JSON gives
// them) or a table, TABLE@VERSION for a version. WHEN MATCHED clauses:
// --delete-if COND, then --update-all or --update-set, under --update-if;
// WHEN NOT MATCHED: --insert-all or --insert-values 'c = expr, ...' under
// --insert-if; WHEN NOT MATCHED BY SOURCE: --by-source-delete-if COND,
// then --by-source-update-set under --by-source-update-if. COND 'true' is
// unconditional. It prints the rows inserted, updated and deleted, the
// files read, added and removed, and the deletion vectors written; --json
// prints the object above with "operation": "MERGE" and Spark's MERGE
// metrics (numSourceRows, numTargetRowsInserted, numTargetRowsUpdated,
// numTargetRowsDeleted, numTargetFilesAdded, ...).
// optimize --json prints an object: "committed" (bool; false when there
// was nothing to rewrite and nothing was committed), "version" (int, only
// when committed) and "metrics", Delta Spark's OptimizeMetrics: numFilesAdded,
// numFilesRemoved, filesAdded and filesRemoved ({min, max, avg, totalFiles,
// totalSize}), partitionsOptimized, zOrderStats or clusteringStats (when
// ordered), numBins, numBatches, totalConsideredFiles, totalFilesSkipped,
// preserveInsertionOrder, startTimeMs, endTimeMs, deletionVectorStats
// ({numDeletionVectorsRemoved, numDeletionVectorRowsRemoved}),
// numTableColumns, numRowsWritten, sortRuns. Without --json it prints a
// one-line summary, and draws a progress bar on standard error when that is
// a terminal. create --cluster-by a,b makes a clustered table (liquid
// clustering), which optimize then clusters incrementally.
// vacuum deletes the files under the table root that no version inside
// the retention window needs (--retain, a Go duration or Nd; default the
// table's delta.deletedFileRetentionDuration); a shorter retention than the
// table's needs --force; --lite deletes only what the commits since the
// last vacuum removed, without listing, and refuses when log cleanup has
// deleted some of them (run a full vacuum then); --dry-run deletes and commits nothing. On a terminal it
// draws a progress bar on standard error. vacuum --json prints
//
//	{
//	  "dryRun": false, "lite": false,
//	  "cutoff": "2023-05-31T18:58:33.633Z",   // files older than this may go
//	  "retentionMillis": 604800000, "tableRetentionMillis": 604800000,
//	  "numFiles": 2, "sizeInBytes": 1234,     // found to delete
//	  "numDeletedFiles": 2,                   // 0 in a dry run
//	  "numDirectories": 3,                    // walked; 0 with --lite
//	  "numDeletedDirectories": 1,             // left empty, deleted (local disk)
//	  "startVersion": 7, "endVersion": 8,     // VACUUM START/END; null in a dry run
//	  "files": [{"path": "p=a/part-….parquet", "size": 617}]
//	}
//
// restore --json prints {"version", "restoredVersion", and Spark's metrics
// "tableSizeAfterRestore", "numOfFilesAfterRestore", "numRemovedFiles",
// "numRestoredFiles", "removedFilesSize", "restoredFilesSize"} (ints).
// clone --json prints {"version" (0), "sourceVersion", "sourceTableSize",
// "sourceNumOfFiles", "numRemovedFiles", "numCopiedFiles", "removedFilesSize",
// "copiedFilesSize"} (ints). generate-manifest --json prints {"numFiles",
// "written": [manifest keys], "deleted": [stale manifest keys]}. convert
// --json prints {"version" (0), "numConvertedFiles", "sizeInBytes"} (ints).
// alter --json (given before TABLE) prints {"operation" (as given),
// "committed" (false when the table already was as asked), "version" (0
// when nothing was committed)}.
//
// # Rows
//
// scan and changes print rows. --format table (the default) aligns columns
// for people, with NULL for nulls; csv writes a header row then one record
// per row, with empty fields for nulls; jsonl writes one JSON object per
// row keyed by logical column names, in the form of Spark's to_json:
// numbers for integers, floats and decimals (exact), strings for dates,
// timestamps (as in the history output, with 0, 3 or 6 fraction digits),
// binary (base64) and NaN/Infinity, objects for structs and string-keyed
// maps, arrays for arrays and other maps ({"key","value"} objects), and
// null. --where takes a predicate such as
//
//	a = 1 AND ts >= '2026-01-01' AND name IS NOT NULL AND c IN ('x', 'y')
//
// with SQL comments, -- to the end of the line and /* */, as Spark SQL
// reads them.
//
// changes adds the columns _change_type (insert, delete, update_preimage,
// update_postimage), _commit_version and _commit_timestamp (the commit's
// time in milliseconds, as Spark gives it: its in-commit timestamp, else
// its log file's modification time).
//
// --columns names each column once (ignoring case), with no empty name.
//
// On a table with row tracking, scan --columns may name
// _metadata.row_id and _metadata.row_commit_version: each row's stable row
// id and row commit version, as Spark shows them.
// # Iceberg
//
//	delta iceberg TABLE [--sync] [--enable] [--json]
//
// shows the state of the Iceberg metadata of a UniForm table (see package
// iceberg), --sync converts the versions not converted yet, and --enable
// turns UniForm Iceberg on first. iceberg --json prints an object:
//
//	{
//	  "table": "…", "enabled": true,      // UniForm Iceberg on at the latest version
//	  "deltaVersion": 7,                  // latest Delta version
//	  "metadataVersion": 8,               // N of metadata/vN.metadata.json, 0 for none
//	  "metadataLocation": "file:///…/metadata/v8.metadata.json", // absent when none
//	  "convertedVersion": 7,              // Delta version of the current Iceberg snapshot, -1 for none
//	  "snapshotId": 123, "snapshots": 8,  // current Iceberg snapshot, and how many are kept
//	  "dataFiles": 3, "records": 30,      // totals of the current snapshot
//	  "behind": 0,                        // Delta versions not converted yet
//	  "converted": [7]                    // with --sync or --enable: versions converted now, absent when none
//	}
//
// # Exit status
//
// 0 on success; 1 when the table cannot be read (the message is printed as
// one line "delta: <error>" on standard error); 2 for a usage error, such as
// an unknown flag, a malformed --timestamp or a missing TABLE argument.
//
// SIGINT (Ctrl-C) or SIGTERM cancels the command: it stops where it is (a
// commit already sent may land or not, as after a crash) and exits with
// 128 plus the signal's number (130, 143). A command blocked where
// cancelling cannot reach it (reading input from a pipe that sends nothing)
// exits so anyway after 3 s, and a second signal ends the process at once.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/godelta/delta"
	// Every backend, so that TABLE may be any URI scheme of the module
	// (the root package links only local and memory).
	_ "github.com/godelta/delta/logstore/azblob"
	_ "github.com/godelta/delta/logstore/gcs"
	_ "github.com/godelta/delta/logstore/s3"
)

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1 // the command ran and failed
	exitUsage   = 2 // the command line is wrong
)

// interruptGrace is how long a command may take to stop after SIGINT or
// SIGTERM cancelled its context, before the process exits anyway: a call
// blocked where no context reaches (a read of a pipe or terminal, a hung
// network file system) must not make the signal a no-op.
const interruptGrace = 3 * time.Second

func main() {
	// Warnings of the library (a checkpoint skipped, say) go to standard
	// error as single lines, like the CLI's own errors.
	slog.SetDefault(slog.New(newWarnHandler(os.Stderr)))
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	var sig atomic.Value // the signal received, if any
	go func() {
		s := <-sigs
		sig.Store(s)
		// From here a second signal has its default effect (the process
		// ends at once), and the command is asked to stop.
		signal.Stop(sigs)
		cancel()
		time.Sleep(interruptGrace)
		fmt.Fprintf(os.Stderr, "delta: %v: the command did not stop within %v; exiting\n", s, interruptGrace)
		os.Exit(signalExit(s))
	}()
	code := runContext(ctx, os.Args[1:], os.Stdout, os.Stderr)
	if s, ok := sig.Load().(os.Signal); ok {
		code = signalExit(s)
	}
	os.Exit(code)
}

// signalExit is the exit status of a process ended by s, as a shell
// reports it: 128 plus the signal's number.
func signalExit(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return exitFailure
}

// run executes the command line args (without the program name) and
// returns the exit status. It writes to stdout and stderr only.
func run(args []string, stdout, stderr io.Writer) int {
	return runContext(context.Background(), args, stdout, stderr)
}

func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	code := exitUsage // errors cobra produces itself are about the command line
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	fmt.Fprintln(stderr, "delta: "+oneLine(err))
	return code
}

// newRootCmd returns the delta command with its subcommands, writing its
// output and help to stdout and usage messages to stderr. Errors are left
// to the caller (see run), which prints them on one line.
func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "delta",
		Short: "Read, write and maintain Delta Lake tables",
		Long: "delta reads, writes and maintains Delta Lake tables. It shows their metadata\n" +
			"(describe, report), commit history (history), live data files (files), rows (scan,\n" +
			"tail) and change data feed (changes); creates them and changes their rows (create,\n" +
			"append, delete, update, merge); and maintains them (checkpoint, optimize, vacuum,\n" +
			"restore, clone, convert, alter, iceberg, generate-manifest), and checks them\n" +
			"(check); catalog serves a warehouse of tables to Iceberg engines. TABLE is a\n" +
			"path or a URI, or catalog://HOST[:PORT]/NAMESPACE.TABLE for a table of a catalog\n" +
			"server (token: $DELTA_CATALOG_TOKEN).",
		// Errors are printed once, as one line, by run.
		SilenceErrors: true,
		SilenceUsage:  true,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			msg := fmt.Sprintf("unknown command %q", args[0])
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += fmt.Sprintf(" (did you mean %q?)", s[0])
			}
			return usageErrorf(cmd, "%s", msg)
		},
		// An empty argument is never a table, a file or a value: taken as
		// a path it would mean the current directory (clone SOURCE ""
		// created a table there).
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			for i, a := range args {
				if a == "" {
					return usageErrorf(cmd, "argument %d is empty", i+1)
				}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			cmd.SetOut(cmd.ErrOrStderr())
			_ = cmd.Usage()
			return usageErrorf(cmd, "a command is required")
		},
		CompletionOptions:          cobra.CompletionOptions{HiddenDefaultCmd: true},
		SuggestionsMinimumDistance: 2,
	}
	root.PersistentFlags().StringArray("trust-root", nil,
		"a root `URI` outside TABLE whose files its log may name (the source of a shallow clone Spark wrote); read, never written or deleted; repeatable")
	root.PersistentFlags().String("log-cache", "",
		"keep TABLE's immutable log files (commits, checkpoints) in local directory `DIR`, so that the next command reads only the new ones; default $"+logCacheEnv)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return usageErrorf(cmd, "%v", err)
	})
	root.AddCommand(newDescribeCmd(), newHistoryCmd(), newFilesCmd(), newScanCmd(), newChangesCmd(), newCheckpointCmd(), newCreateCmd(), newAppendCmd(), newDemoCmd())
	root.AddCommand(newDeleteCmd(), newUpdateCmd())
	root.AddCommand(newMergeCmd())
	root.AddCommand(newOptimizeCmd())
	root.AddCommand(newReorgCmd())
	root.AddCommand(newCompactLogCmd())
	root.AddCommand(newVacuumCmd(), newRestoreCmd(), newCloneCmd(), newGenerateManifestCmd())
	root.AddCommand(newTailCmd())
	root.AddCommand(newIcebergCmd())
	root.AddCommand(newAlterCmd(), newConvertCmd())
	for _, c := range extraCommands {
		root.AddCommand(c())
	}
	return root
}

// extraCommands are commands registered by init functions of their own
// files, so that adding a command does not edit the list above.
var extraCommands []func() *cobra.Command

// exitError carries the exit status for an error.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErrorf returns a usage error (exit status 2) for cmd, pointing to
// its help.
func usageErrorf(cmd *cobra.Command, format string, args ...any) error {
	err := fmt.Errorf(format+" (see '%s --help')", append(args, cmd.CommandPath())...)
	return &exitError{code: exitUsage, err: err}
}

// failure marks err as a failure of the command (exit status 1).
func failure(err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: exitFailure, err: err}
}

// oneLine returns err's message on one line, without the "delta: " prefix
// that the library's errors and run's own prefix would otherwise repeat.
// Joined errors are separated by "; ".
func oneLine(err error) string {
	var parts []string
	for line := range strings.SplitSeq(err.Error(), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			parts = append(parts, strings.TrimPrefix(line, "delta: "))
		}
	}
	return strings.Join(parts, "; ")
}

// tableArg is the Args check of the commands that take one TABLE.
func tableArg(cmd *cobra.Command, args []string) error {
	if len(args) != 1 {
		return usageErrorf(cmd, "want exactly one TABLE argument (a path or URI), got %d", len(args))
	}
	if args[0] == "" {
		return usageErrorf(cmd, "TABLE is empty: give a path or URI")
	}
	return nil
}

// selector holds the --version and --timestamp flags that choose which
// version of a table a command shows.
type selector struct {
	version   int64
	timestamp string
	table     *delta.Table // the table snapshot or open opened, for close
}

// close closes the table snapshot or open opened, if any.
func (s *selector) close() {
	if s.table != nil {
		s.table.Close()
		s.table = nil
	}
}

func (s *selector) register(fs *pflag.FlagSet) {
	fs.Int64Var(&s.version, "version", 0, "show the table as of version `V`")
	fs.StringVar(&s.timestamp, "timestamp", "",
		"show the table as of time `T` (RFC 3339, 'YYYY-MM-DD HH:MM:SS[.fff]' or YYYY-MM-DD in UTC, or ms since the epoch)")
}

// logCacheEnv names the log cache directory when --log-cache is not given.
const logCacheEnv = "GODELTA_LOG_CACHE"

// openTable opens the table at uri, trusting the roots of --trust-root,
// with the log cache of --log-cache or $GODELTA_LOG_CACHE.
func openTable(cmd *cobra.Command, uri string) (*delta.Table, error) {
	roots, _ := cmd.Flags().GetStringArray("trust-root")
	cache, _ := cmd.Flags().GetString("log-cache")
	if !cmd.Flags().Changed("log-cache") {
		cache = os.Getenv(logCacheEnv)
	}
	opts := delta.OpenOptions{TrustRoots: roots, LogCacheDir: cache}
	if base, name, ok := catalogTableURI(uri); ok {
		return openCatalogTable(cmd.Context(), base, name, opts)
	}
	return delta.OpenWith(cmd.Context(), uri, opts)
}

// snapshot checks the flags, then opens the table named by uri and loads the
// version they select: the latest when neither is set.
func (s *selector) snapshot(cmd *cobra.Command, uri string) (*delta.Snapshot, error) {
	_, snap, err := s.open(cmd, uri)
	return snap, err
}

// open is snapshot, also returning the table.
func (s *selector) open(cmd *cobra.Command, uri string) (*delta.Table, *delta.Snapshot, error) {
	byVersion := cmd.Flags().Changed("version")
	byTime := cmd.Flags().Changed("timestamp")
	var ts time.Time
	switch {
	case byVersion && byTime:
		return nil, nil, usageErrorf(cmd, "--version and --timestamp are mutually exclusive")
	case byVersion && s.version < 0:
		return nil, nil, usageErrorf(cmd, "invalid --version %d: must not be negative", s.version)
	case byTime:
		var err error
		if ts, err = parseTimestamp(s.timestamp); err != nil {
			return nil, nil, usageErrorf(cmd, "invalid --timestamp: %v", err)
		}
	}
	ctx := cmd.Context()
	t, err := openTable(cmd, uri)
	if err != nil {
		return nil, nil, failure(err)
	}
	s.table = t
	var snap *delta.Snapshot
	switch {
	case byVersion:
		snap, err = t.SnapshotAt(ctx, s.version)
	case byTime:
		snap, err = t.SnapshotAtTimestamp(ctx, ts)
	default:
		snap, err = t.Snapshot(ctx)
	}
	return t, snap, failure(err)
}

// output returns a buffered writer on the command's standard output and a
// function that flushes it, reporting a write error as a failure.
func output(cmd *cobra.Command) (*bufio.Writer, func() error) {
	w := bufio.NewWriterSize(cmd.OutOrStdout(), 64<<10)
	return w, func() error {
		if err := w.Flush(); err != nil {
			return failure(fmt.Errorf("writing output: %w", err))
		}
		return nil
	}
}

// warnHandler is a slog.Handler that prints records of level Warn and above
// as single lines: "delta: warning: <message> (key=value ...)".
type warnHandler struct {
	mu    *sync.Mutex
	w     io.Writer
	attrs []slog.Attr
	group string // prefix of the keys, from WithGroup
}

func newWarnHandler(w io.Writer) slog.Handler {
	return &warnHandler{mu: new(sync.Mutex), w: w}
}

func (h *warnHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h *warnHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString("delta: warning: ")
	b.WriteString(oneLine(errors.New(r.Message)))
	attrs := slices.Clone(h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		attrs = append(attrs, slog.Attr{Key: h.group + a.Key, Value: a.Value})
		return true
	})
	for i, a := range attrs {
		if i == 0 {
			b.WriteString(" (")
		} else {
			b.WriteByte(' ')
		}
		b.WriteString(a.Key)
		b.WriteByte('=')
		v := a.Value.Resolve().String()
		if v == "" || strings.ContainsAny(v, " \t\r\n\"=()") {
			v = strconv.Quote(v)
		}
		b.WriteString(v)
	}
	if len(attrs) > 0 {
		b.WriteByte(')')
	}
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}

func (h *warnHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	h2 := *h
	h2.attrs = slices.Clone(h.attrs)
	for _, a := range attrs {
		h2.attrs = append(h2.attrs, slog.Attr{Key: h.group + a.Key, Value: a.Value})
	}
	return &h2
}

func (h *warnHandler) WithGroup(name string) slog.Handler {
	h2 := *h
	h2.group = h.group + name + "."
	return &h2
}

// writeJSON writes v as one JSON document indented by two spaces, with a
// trailing newline, leaving <, > and & unescaped.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// isJSONObject reports whether b is one valid JSON object.
func isJSONObject(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}

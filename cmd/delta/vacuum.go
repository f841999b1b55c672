package main

import (
	"context"
	"fmt"
	"io"
	"iter"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/godelta/delta"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/internal/progress"
	"github.com/godelta/delta/schema"
)

func newVacuumCmd() *cobra.Command {
	var retain, inventory string
	var dryRun, force, lite, asJSON bool
	cmd := &cobra.Command{
		Use:   "vacuum TABLE",
		Short: "Delete files no version inside the retention window needs",
		Long: "vacuum deletes the files under the table root that no version inside the retention\n" +
			"window (--retain, default the table's delta.deletedFileRetentionDuration, 7 days)\n" +
			"needs: removed data files, their deletion vectors, change-data files and orphans\n" +
			"of failed writes older than the cut-off. It never touches _delta_log or other\n" +
			"hidden directories, files outside the root, or anything through a symbolic link\n" +
			"out of it. A retention shorter than the table's is refused without --force.\n" +
			"--lite deletes only what the commits since the last vacuum removed (no listing);\n" +
			"after log cleanup has deleted some of those commits it refuses: run a full vacuum.\n" +
			"--inventory FILE takes the table's files from an inventory report instead of a\n" +
			"listing, as Spark's VACUUM ... USING INVENTORY: a .csv, .jsonl or .parquet file\n" +
			"with the columns path (a fully qualified URI), length, isDir and modificationTime\n" +
			"(ms since the epoch) and no others; entries outside the root are skipped and\n" +
			"counted, and a file the inventory omits is not deleted.\n" +
			"--dry-run lists what would go and deletes and commits nothing. The run is\n" +
			"recorded as VACUUM START and VACUUM END commits, as Spark records it.",
		Args: tableArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := delta.VacuumOptions{Force: force, Lite: lite, DryRun: dryRun}
			if cmd.Flags().Changed("retain") {
				d, err := parseRetention(retain)
				if err != nil {
					return usageErrorf(cmd, "invalid --retain %q: %v", retain, err)
				}
				opts.Retention, opts.RetentionSet = d, true
			}
			if inventory != "" {
				if lite {
					return usageErrorf(cmd, "--inventory is for a full vacuum; --lite lists nothing")
				}
				opts.Inventory = inventoryEntries(cmd.Context(), inventory)
			}
			ctx := cmd.Context()
			t, err := openTable(cmd, args[0])
			if err != nil {
				return failure(err)
			}
			defer t.Close()
			var (
				once sync.Once
				bar  *progress.Bar
			)
			opts.Progress = func(done, total int64) {
				once.Do(func() { bar = progress.New(cmd.ErrOrStderr(), "vacuum: deleting", total) })
				bar.Add(1)
			}
			res, err := t.Vacuum(ctx, opts)
			bar.Done()
			if err != nil {
				return failure(err)
			}
			w, flush := output(cmd)
			if asJSON {
				if err := writeJSON(w, vacuumDocument(&res)); err != nil {
					return failure(err)
				}
			} else {
				vacuumText(w, &res)
			}
			return flush()
		},
	}
	cmd.Flags().StringVar(&retain, "retain", "", "keep files removed less than `D` ago (168h, 7d, 30m; default the table's)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "list what would be deleted; delete and commit nothing")
	cmd.Flags().BoolVar(&force, "force", false, "allow a --retain shorter than the table's (Spark's retentionDurationCheck off)")
	cmd.Flags().BoolVar(&lite, "lite", false, "delete only files expired tombstones name, without listing the table")
	cmd.Flags().StringVar(&inventory, "inventory", "", "take the table's files from inventory `FILE` (path, length, isDir, modificationTime) instead of listing it")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document, of a stable shape")
	return cmd
}

// parseRetention parses a Go duration, or a whole number of days with the
// suffix d ("7d").
func parseRetention(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.ParseInt(n, 10, 32)
		if err != nil || days < 0 {
			return 0, fmt.Errorf("want a whole number of days before d")
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	if d < 0 {
		return 0, fmt.Errorf("must not be negative")
	}
	return d, nil
}

// vacuumJSON is vacuum --json; its field names and types are part of the
// CLI's stable output.
type vacuumJSON struct {
	DryRun               bool             `json:"dryRun"`
	Lite                 bool             `json:"lite"`
	Cutoff               string           `json:"cutoff"`
	RetentionMillis      int64            `json:"retentionMillis"`
	TableRetentionMillis int64            `json:"tableRetentionMillis"`
	NumFiles             int              `json:"numFiles"`
	SizeInBytes          int64            `json:"sizeInBytes"`
	NumDeletedFiles      int64            `json:"numDeletedFiles"`
	NumDirectories       int64            `json:"numDirectories"`
	NumDeletedDirs       int64            `json:"numDeletedDirectories"`
	InventorySkipped     int64            `json:"inventorySkipped"`
	StartVersion         *int64           `json:"startVersion"`
	EndVersion           *int64           `json:"endVersion"`
	Files                []vacuumFileJSON `json:"files"`
}

type vacuumFileJSON struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
}

func vacuumDocument(r *delta.VacuumResult) vacuumJSON {
	doc := vacuumJSON{
		DryRun: r.DryRun, Lite: r.Lite, Cutoff: formatTime(r.Cutoff),
		RetentionMillis: r.Retention.Milliseconds(), TableRetentionMillis: r.TableRetention.Milliseconds(),
		NumFiles: len(r.Files), SizeInBytes: r.Bytes, NumDeletedFiles: r.Deleted, NumDirectories: r.Dirs,
		NumDeletedDirs: r.DeletedDirs, InventorySkipped: r.InventorySkipped,
		Files: make([]vacuumFileJSON, len(r.Files)),
	}
	if r.StartVersion >= 0 {
		doc.StartVersion = &r.StartVersion
	}
	if r.EndVersion >= 0 {
		doc.EndVersion = &r.EndVersion
	}
	for i, f := range r.Files {
		doc.Files[i] = vacuumFileJSON{Path: f.Key, Size: f.Size}
	}
	return doc
}

func vacuumText(w io.Writer, r *delta.VacuumResult) {
	mode := "full"
	if r.Lite {
		mode = "lite"
	}
	if r.InventorySkipped > 0 {
		fmt.Fprintf(w, "vacuum: %d inventory entries are not under the table's root; skipped\n", r.InventorySkipped)
	}
	if r.DryRun {
		fmt.Fprintf(w, "vacuum (%s, dry run): would delete %d files (%d bytes) older than %s\n", mode, len(r.Files), r.Bytes, formatTime(r.Cutoff))
		for _, f := range r.Files {
			fmt.Fprintf(w, "  %s\n", f.Key)
		}
		return
	}
	fmt.Fprintf(w, "vacuum (%s): deleted %d of %d files (%d bytes) older than %s", mode, r.Deleted, len(r.Files), r.Bytes, formatTime(r.Cutoff))
	if r.Dirs > 0 {
		fmt.Fprintf(w, " in %d directories", r.Dirs)
	}
	if r.DeletedDirs > 0 {
		fmt.Fprintf(w, ", and %d empty directories", r.DeletedDirs)
	}
	fmt.Fprintf(w, "; recorded at versions %d and %d\n", r.StartVersion, r.EndVersion)
}

// inventorySchema is the columns of an inventory file, Spark's
// VacuumCommand.INVENTORY_SCHEMA.
var inventorySchema = &schema.StructType{Fields: []schema.StructField{
	{Name: "path", Type: schema.String, Nullable: true},
	{Name: "length", Type: schema.Long, Nullable: true},
	{Name: "isDir", Type: schema.Boolean, Nullable: true},
	{Name: "modificationTime", Type: schema.Long, Nullable: true},
}}

// inventoryEntries reads the inventory file at path for vacuum
// --inventory. A row without a path, or a file row without a length or a
// time, is an error naming its line.
func inventoryEntries(ctx context.Context, path string) iter.Seq2[delta.InventoryEntry, error] {
	return func(yield func(delta.InventoryEntry, error) bool) {
		for r, err := range inputRows(ctx, path, inventorySchema) {
			if err != nil {
				yield(delta.InventoryEntry{}, err)
				return
			}
			v := r.vals
			isDir := !v[2].IsNull() && v[2].Bool()
			if v[0].IsNull() || !isDir && (v[1].IsNull() || v[3].IsNull()) {
				yield(delta.InventoryEntry{}, fmt.Errorf("%s: line %d: path, length and modificationTime are required for a file: %w", path, r.line, deltaerr.ErrInvalidArgument))
				return
			}
			e := delta.InventoryEntry{Path: v[0].String(), IsDir: isDir}
			if !v[1].IsNull() {
				e.Size = v[1].Int64()
			}
			if !v[3].IsNull() {
				e.ModTime = time.UnixMilli(v[3].Int64())
			}
			if !yield(e, nil) {
				return
			}
		}
	}
}

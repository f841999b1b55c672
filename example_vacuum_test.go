package delta_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	delta "github.com/godelta/delta"
)

// An overwrite removes the files of the rows it replaces; VACUUM deletes
// them once they are older than the retention. Here the clock is moved
// 8 days ahead, past the default 7 days, and a dry run lists them.
func ExampleTable_Vacuum() {
	ctx := context.Background()
	tbl, err := exampleEvents(ctx, "example-vacuum", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tbl.Close()
	if _, err := tbl.OverwriteRows(ctx, nil, delta.OverwriteOptions{}); err != nil { // removes all 3 files
		fmt.Println(err)
		return
	}
	later := time.Now().Add(8 * 24 * time.Hour)
	res, err := tbl.Vacuum(ctx, delta.VacuumOptions{DryRun: true, Now: func() time.Time { return later }})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("would delete", len(res.Files), "files")

	// A retention below the table's is refused unless forced.
	_, err = tbl.Vacuum(ctx, delta.VacuumOptions{Retention: time.Hour, RetentionSet: true})
	fmt.Println(errors.Is(err, delta.ErrRetentionTooShort))
	// Output:
	// would delete 3 files
	// true
}

// RESTORE makes the latest version hold an older version's files again.
func ExampleTable_RestoreVersion() {
	ctx := context.Background()
	tbl, err := exampleEvents(ctx, "example-restore", nil) // versions 1 to 3 append
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tbl.Close()
	res, err := tbl.RestoreVersion(ctx, 1, delta.TxnOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("version %d restores version %d: %d files removed, %d left\n",
		res.Version, res.Restored, res.NumRemovedFiles, res.NumOfFilesAfterRestore)
	// Output:
	// version 4 restores version 1: 2 files removed, 1 left
}

// A shallow clone names the source's files; it copies none, and reads the
// source's rows.
func ExampleTable_CloneTo() {
	ctx := context.Background()
	tbl, err := exampleEvents(ctx, "example-clone-source", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tbl.Close()
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	clone, res, err := tbl.CloneTo(ctx, snap, "memory://example-clone-target", delta.TxnOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer clone.Close()
	cs, err := clone.Snapshot(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	sc, err := clone.Scan(cs, delta.ScanOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	n := 0
	for _, err := range sc.Rows(ctx) {
		if err != nil {
			fmt.Println(err)
			return
		}
		n++
	}
	fmt.Println("cloned", res.SourceNumOfFiles, "files, copied", res.NumCopiedFiles, "; the clone reads", n, "rows")
	// Output:
	// cloned 3 files, copied 0 ; the clone reads 5 rows
}

// Symlink manifests list the live files per partition for engines that
// read Parquet only.
func ExampleTable_GenerateManifest() {
	ctx := context.Background()
	tbl, err := exampleEvents(ctx, "example-manifest", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tbl.Close()
	res, err := tbl.GenerateManifest(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, key := range res.Written {
		fmt.Println(key)
	}
	// Output:
	// _symlink_format_manifest/year=2024/manifest
	// _symlink_format_manifest/year=2025/manifest
	// _symlink_format_manifest/year=2026/manifest
}

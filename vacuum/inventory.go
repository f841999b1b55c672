package vacuum

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/location"
	"github.com/godelta/delta/logstore"
)

// InventoryEntry is one row of an inventory: a list of the table's files
// and directories made by someone else (an S3 Inventory or Azure blob
// inventory report, a previous listing), which a full VACUUM may use
// instead of listing the root (Options.Inventory). Its fields are the
// columns of Spark's VACUUM ... USING INVENTORY: path, length, isDir,
// modificationTime.
type InventoryEntry struct {
	// Path is the fully qualified URI of the file or directory, as Spark
	// wants it (s3://bucket/table/a=1/part-0.parquet, file:///data/t/x).
	// Entries not under the table's root, and relative paths, are skipped
	// (Result.InventorySkipped), never deleted.
	Path  string
	Size  int64
	IsDir bool
	// ModTime is required for a file: the retention counts from it.
	ModTime time.Time
}

// inventoryFiles is the full VACUUM's walk over an inventory: it calls fn
// with every file of the inventory that the walk of the root would have
// reported (beneath the root, outside hidden directories; the newest entry
// of a path that is listed twice), and returns the directories, as walk
// does, and how many entries it skipped because they are not under the
// root. The caller drops files inside other tables with dropUnplaceable,
// since an inventory need not list their _delta_log.
func inventoryFiles(ctx context.Context, loc *location.Location, inv iter.Seq2[InventoryEntry, error], part []string, fn func(logstore.ObjectInfo)) (dirs []string, skipped int64, err error) {
	files := map[string]logstore.ObjectInfo{}
	seenDirs := map[string]bool{}
	addDir := func(d string) {
		if !seenDirs[d] {
			seenDirs[d] = true
			dirs = append(dirs, d)
		}
	}
	for e, err := range inv {
		if err != nil {
			return nil, skipped, fmt.Errorf("vacuum: reading the inventory: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return nil, skipped, err
		}
		if !location.IsAbsolute(e.Path) {
			skipped++
			continue
		}
		key, err := loc.Key(strings.TrimSuffix(e.Path, "/"))
		if err != nil || logstore.CheckKey(key) != nil && key != "" {
			skipped++
			continue
		}
		if key == "" {
			continue // the root itself
		}
		if !e.IsDir && e.ModTime.IsZero() {
			// Without a time the retention cannot protect a file being
			// written now: refuse rather than guess.
			return nil, skipped, fmt.Errorf("vacuum: inventory entry %s has no modification time: %w", e.Path, deltaerr.ErrInvalidArgument)
		}
		segs := strings.Split(key, "/")
		hiddenAt := -1
		for i, s := range segs {
			if hidden(s, part) {
				hiddenAt = i
				break
			}
		}
		// The directories above the entry, up to the first hidden one.
		top := len(segs) - 1
		if e.IsDir {
			top = len(segs)
		}
		if hiddenAt >= 0 {
			top = min(top, hiddenAt)
		}
		for i := 1; i <= top; i++ {
			addDir(strings.Join(segs[:i], "/") + "/")
		}
		if e.IsDir || hiddenAt >= 0 {
			continue
		}
		if old, ok := files[key]; !ok || e.ModTime.After(old.ModTime) {
			files[key] = logstore.ObjectInfo{Key: key, Size: e.Size, ModTime: e.ModTime}
		}
	}
	for _, info := range files {
		fn(info)
	}
	return dirs, skipped, nil
}

// errInventoryLite is the error of a lite VACUUM given an inventory: lite
// mode lists nothing, so it has no use for one.
var errInventoryLite = fmt.Errorf("vacuum: an inventory is for a full VACUUM; lite mode reads the log only: %w", deltaerr.ErrInvalidArgument)

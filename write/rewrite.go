package write

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
)

// Verdict is what a rewrite does with one row of a file it reads.
type Verdict uint8

// The verdicts of a RowFunc.
const (
	// Keep writes the row again unchanged, if its file is rewritten.
	Keep Verdict = iota
	// Drop deletes the row (change type delete).
	Drop
	// Update replaces the row with the values the RowFunc returns
	// (change types update_preimage and update_postimage).
	Update
)

// RowFunc decides the fate of one live row of the file add: row holds its
// values in table schema order, partition columns included, and pos is its
// position in the file (as deletion vectors count rows). For Update it
// returns the new row, in table schema order; it must not modify row, nor
// keep it after returning (its slice is reused).
//
// Rewrite may call it twice for a row (once to find whether the file
// changes, again to rewrite it): it must give the same answer both times.
type RowFunc func(add *actions.Add, pos int64, row []schema.Value) (Verdict, []schema.Value, error)

// RewriteOptions tune Rewrite. The zero value is usable.
type RewriteOptions struct {
	// Options tune the row writer: file size, compression, and Require,
	// which every written row (kept or updated) must satisfy. Rows written
	// are checked as Rows checks them.
	Options
	// NoDataChange marks the removes and adds dataChange=false and writes
	// no change data: a rewrite that moves rows without changing them
	// (OPTIMIZE). The RowFunc must then keep every row.
	NoDataChange bool
	// Copy rewrites every file given, even one whose rows the RowFunc
	// all keeps (compaction); without it such a file is left as it is.
	Copy bool
	// DeletionVectors deletes rows by position instead of rewriting
	// files (merge-on-read; see the package doc): a file in which the
	// RowFunc drops or updates rows keeps its path and gets a new deletion
	// vector, the union of its old one and those rows' positions
	// (Rewritten.DVAdds); updated rows are written to new data files.
	// The table's protocol must support the deletionVectors feature, and
	// Copy and NoDataChange must be false; else ErrDVMode.
	DeletionVectors bool
	// InlineDVMax is, with DeletionVectors, the largest serialized
	// deletion vector written inline in the log; larger ones go to a
	// deletion vector file. 0 means DefaultInlineDVMax; negative, never
	// inline.
	InlineDVMax int
	// ReadColumns, with DeletionVectors on a table without change data,
	// reads only these top-level columns: the others are null in the rows
	// the RowFunc sees, and the RowFunc may only Keep or Drop (a DELETE
	// needs no more than its predicate's columns to mark rows). Ignored
	// otherwise.
	ReadColumns []string
	// SortKey, when set, writes the rows kept and updated in the order of
	// their keys (ties in read order) rather than in read order: the
	// curve-ordered rewrites of OPTIMIZE (Z-order, Hilbert, clustering).
	// The files are read once: SortKey observes every row as it is
	// staged, and gives the keys once every file is read (so that a
	// curve's ranges come from a sample of all the rows). The rows are
	// staged as compact records (varints, float bits, string bytes) and
	// sorted by (key, read order) in cache-sized buckets of their keys'
	// top bits (see colSorter). Past SortMemory bytes of staged
	// rows they are spilled, unsorted, to a temporary file in SortDir; at
	// the end each such run is read back, sorted and written as a sorted
	// run, and the runs are merged as the files are written, so the
	// memory held does not grow with the data, and the rows and files
	// written are the same whatever the budget. SortKey requires
	// NoDataChange (deltaerr.ErrInvalidArgument otherwise).
	SortKey SortKey
	// SortMemory bounds the bytes of rows (and their keys) a sorted
	// rewrite stages in memory; 0 means DefaultSortMemory.
	SortMemory int64
	// SortDir is the local directory of a sorted rewrite's temporary runs;
	// empty means os.TempDir(). The runs are removed when Rewrite returns.
	SortDir string
	// FileDone, when set, is called after each file given has been read
	// and its rows written (or, sorted, staged), with the file: for
	// progress reports.
	FileDone func(a *actions.Add)
	// Insert, when set, is called once every file has been read (so the
	// rows it gives may depend on what the RowFunc saw) and gives new rows
	// to add, in batches of table rows. They are written to the same data
	// files as the rows kept and updated, as Spark writes a MERGE's
	// inserted and updated rows together, and are checked like them; they
	// get insert change data and fresh row ids. Rewritten.Inserted counts
	// them. Insert needs a rewrite that changes data (not NoDataChange).
	Insert func() (iter.Seq2[Batch, error], error)
}

// Rewritten is what a rewrite of files changes in a table, for a
// transaction to stage.
type Rewritten struct {
	// Removes are the remove actions of the files rewritten: dataChange
	// as asked, with extendedFileMetadata (partition values, size, tags,
	// stats, deletion vector, row tracking fields) from their adds.
	Removes []actions.Remove
	// Adds are the data files written with the rows kept and updated.
	Adds []actions.Add
	// CDC are the change-data files of the rows dropped (delete) and
	// updated (update_preimage, update_postimage), when the table has the
	// change data feed on and the rewrite changes data. A commit holding
	// them must carry the change data of any other row it writes too (see
	// RowsWithChanges).
	CDC []actions.CDC
	// Read are the paths of the files read, for the transaction's
	// ReadFiles.
	Read []string
	// DVAdds are, with DeletionVectors, the adds of files that stay in
	// the table under a new deletion vector: same path, dataChange true,
	// numRecords unchanged and tightBounds false in their stats. Each has
	// its remove (the old entry) in Removes. They are not new files: a
	// caller cleaning up after a failed commit must not delete them.
	DVAdds []actions.Add

	// Rows counted, as DML metrics report them: Dropped (deleted),
	// Updated, Copied (kept rows written again by a copy-on-write
	// rewrite; always 0 with DeletionVectors) and Inserted (the rows of
	// RewriteOptions.Insert).
	Dropped, Updated, Copied, Inserted int64
	// Deletion vectors, as Spark counts them: DVsAdded, vectors put on
	// files that had none; DVsUpdated, files whose vector was replaced by
	// a larger one; DVsRemoved, vectors gone with their file (a file
	// whose rows are all deleted, or one rewritten without its deleted
	// rows). DVBytes is the size of the deletion vector file written, if
	// any.
	DVsAdded, DVsUpdated, DVsRemoved, DVBytes int64
	// Rows is the number of rows written to the data files (Adds).
	Rows int64
	// HighWaterMarks are the identity values the inserted rows (Insert)
	// were allocated, for StageHighWaterMarks to record in the same
	// commit; nil when none was. Kept and updated rows keep their values.
	HighWaterMarks HighWaterMarks
	// SortRuns is the number of sorted runs a sorted rewrite spilled to
	// disk (0: it sorted in memory).
	SortRuns int
	// FindTime is the time DeleteWhere took to find the files to read or
	// remove (partition and statistics skipping), before rewriting them:
	// what DML reports as scanTimeMs.
	FindTime time.Duration
}

// errChanges ends the read of a file at its first changed row.
var errChanges = errors.New("write: file changes")

// Rewrite reads the live rows of files, data files of snap, through
// scan.FileReader, and rewrites each file in which fn changes a row (each
// file, with Copy): it is removed, and its rows fn keeps or updates are
// written to new data files with the row writer (constraints checked,
// statistics, partition directories), while the rows it drops or updates
// go to change data when the table has delta.enableChangeDataFeed on. A
// file in which fn changes no row writes nothing and is not removed.
//
// Rows stream: a file is read batch by batch, and written files are rolled
// at the target size, so memory does not grow with the files. A caller
// that will rather delete rows by position (deletion vectors) reads pos in
// fn. Rewrite commits nothing; on error it deletes the files it wrote and
// returns no actions.
//
// On a table with row tracking enabled, rows keep their identity across
// the rewrite (PROTOCOL.md "Row Tracking"): each kept row's stable row id
// and row commit version, as scan.MetadataRowID and
// scan.MetadataRowCommitVersion read them, are written to the table's
// hidden materialized columns; an updated row keeps its row id and gets a
// null row commit version, so that it takes the version of the commit
// that adds its new file. The new files' adds carry no baseRowId: the
// transaction assigns fresh ones at commit.
func Rewrite(ctx context.Context, snap *snapshot.Snapshot, files []*actions.Add, fn RowFunc, opts RewriteOptions) (Rewritten, error) {
	var out Rewritten
	data, err := newRowWriter(snap, opts.Options, "")
	if err != nil {
		return out, err
	}
	if err := data.materialize(snap.Config()); err != nil {
		return out, err
	}
	ropts := scan.Options{}
	// A DV-mode DELETE reads only the columns it needs: it writes no row
	// again, so it needs neither the others nor the rows' identities.
	project := opts.DeletionVectors && len(opts.ReadColumns) > 0 && (opts.NoDataChange || !snap.Config().ChangeDataFeed())
	switch {
	case project:
		ropts.Columns = opts.ReadColumns
	case data.tracked:
		// Each row's stable row id and row commit version, to copy.
		for _, f := range snap.Schema().Fields {
			ropts.Columns = append(ropts.Columns, f.Name)
		}
		ropts.Columns = append(ropts.Columns, scan.MetadataRowID, scan.MetadataRowCommitVersion)
	}
	fr, err := scan.NewFileReader(snap, ropts)
	if err != nil {
		return out, err
	}
	defer fr.Close() // the stores of external roots it opened
	var cdc *rowWriter
	if !opts.NoDataChange && snap.Config().ChangeDataFeed() {
		if cdc, err = newRowWriter(snap, opts.Options, ChangeDelete); err != nil {
			return out, err
		}
	}
	rw := rewriter{fr: fr, fn: fn, data: data, cdc: cdc, row: make([]schema.Value, len(snap.Schema().Fields)), store: snap.Store(), tracked: data.tracked && !project}
	if project {
		// Where each column read goes in the row.
		for _, f := range fr.Schema().Fields {
			rw.slots = append(rw.slots, snap.Schema().Index(f.Name))
		}
	}
	if opts.Insert != nil && opts.NoDataChange {
		return out, fmt.Errorf("write: a rewrite that inserts rows (Insert) changes data, and cannot be NoDataChange: %w", deltaerr.ErrInvalidArgument)
	}
	if opts.SortKey != nil {
		if !opts.NoDataChange {
			return out, fmt.Errorf("write: a sorted rewrite (SortKey) must be a NoDataChange one: %w", deltaerr.ErrInvalidArgument)
		}
		width := len(snap.Schema().Fields)
		rw.sorter = newColSorter(opts.SortMemory, opts.SortDir, opts.SortKey, width)
		defer rw.sorter.close()
	}
	run := rw.run
	if opts.DeletionVectors {
		if opts.Copy || opts.NoDataChange {
			return out, fmt.Errorf("%w: Copy or NoDataChange", ErrDVMode)
		}
		if !snap.Config().IsFeatureSupported(actions.FeatureDeletionVectors) {
			return out, fmt.Errorf("%w: the table's protocol does not support %s", ErrDVMode, actions.FeatureDeletionVectors)
		}
		run = rw.runDV
	}
	if err := run(ctx, files, opts, &out); err != nil {
		rw.cleanup()
		return Rewritten{}, err
	}
	out.Dropped, out.Updated, out.Copied, out.Inserted, out.DVBytes = rw.dropped, rw.updated, rw.copied, rw.inserted, rw.dvBytes
	out.Adds = data.adds
	out.Rows = data.row
	out.HighWaterMarks = data.ident.marks()
	if rw.sorter != nil {
		out.SortRuns = rw.sorter.spills
	}
	if opts.NoDataChange {
		for i := range out.Adds {
			out.Adds[i].DataChange = false
		}
	}
	if cdc != nil {
		out.CDC = cdc.cdcs
	}
	return out, nil
}

// rewriter is the state of one Rewrite call.
type rewriter struct {
	fr   *scan.FileReader
	fn   RowFunc
	data *rowWriter
	cdc  *rowWriter // nil: no change data
	row  []schema.Value
	// tracked: the table materializes row tracking; the reader's last two
	// columns are each row's stable row id and row commit version, and
	// id and version hold those of the row being visited.
	tracked     bool
	id, version schema.Value

	// slots, when reading only some columns (ReadColumns), is the
	// schema index of each column read; the others stay null in row.
	slots []int

	store   logstore.Store
	dvFiles []string // deletion vector files put, for cleanup
	dvBytes int64
	// rows dropped, updated, kept and written again, and inserted
	dropped, updated, copied, inserted int64

	// sorter, when set, takes the rows to write, which are written in
	// the order of key when every file is read.
	sorter *colSorter
	staged []schema.Value // a row and its identities, for the sorter
}

// cleanup deletes, best effort, what a failed rewrite wrote.
func (rw *rewriter) cleanup() {
	rw.data.cleanup()
	if rw.cdc != nil {
		rw.cdc.cleanup()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, key := range rw.dvFiles {
		_ = rw.store.Delete(ctx, key)
	}
}

func (rw *rewriter) run(ctx context.Context, files []*actions.Add, opts RewriteOptions, out *Rewritten) error {
	now := time.Now().UnixMilli()
	if opts.Now != nil {
		now = opts.Now().UnixMilli()
	}
	for _, a := range files {
		out.Read = append(out.Read, a.Path)
		if !opts.Copy {
			changes, err := rw.changes(ctx, a)
			if err != nil {
				return err
			}
			if !changes {
				continue
			}
		}
		out.Removes = append(out.Removes, removeOf(a, now, !opts.NoDataChange))
		if a.DeletionVector != nil {
			out.DVsRemoved++
		}
		if err := rw.rewrite(ctx, a); err != nil {
			return err
		}
		if opts.FileDone != nil {
			opts.FileDone(a)
		}
	}
	if rw.sorter != nil {
		if err := rw.writeSorted(ctx); err != nil {
			return err
		}
	}
	if err := rw.insert(ctx, opts); err != nil {
		return err
	}
	return rw.flush(ctx, true)
}

// insert writes the rows of opts.Insert, with their insert change data.
func (rw *rewriter) insert(ctx context.Context, opts RewriteOptions) error {
	if opts.Insert == nil {
		return nil
	}
	batches, err := opts.Insert()
	if err != nil || batches == nil {
		return err
	}
	// New rows get identity values; kept and updated ones keep theirs.
	rw.data.newRows = true
	defer func() { rw.data.newRows = false }()
	return rw.data.feed(ctx, batches, func(vals []schema.Value) error {
		// The data writer completes vals (generated columns): the
		// change data is the row as written.
		if err := rw.data.add(vals); err != nil {
			return err
		}
		rw.inserted++
		if rw.cdc != nil {
			return rw.cdc.addAs(vals, ChangeInsert)
		}
		return nil
	}, func() error { return rw.flush(ctx, false) })
}

// sortedFlushRows is how many sorted rows are staged between flushes.
const sortedFlushRows = 512

// writeSorted writes the rows the sorter holds, in key order.
func (rw *rewriter) writeSorted(ctx context.Context) error {
	n := 0
	width := len(rw.row)
	return rw.sorter.drain(func(row []schema.Value) error {
		var err error
		if rw.tracked {
			err = rw.data.addTracked(row[:width], row[width], row[width+1])
		} else {
			err = rw.data.add(row)
		}
		if err != nil {
			return err
		}
		if n++; n%sortedFlushRows == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			return rw.flush(ctx, false)
		}
		return nil
	})
}

// write sends a row, with its stable row id and row commit version when
// the table tracks rows, to the data files, or to the sorter (which then
// stages the identities after the row's values).
func (rw *rewriter) write(row []schema.Value, id, version schema.Value) error {
	if rw.sorter == nil {
		return rw.data.addTracked(row, id, version)
	}
	if rw.tracked {
		rw.staged = append(append(rw.staged[:0], row...), id, version)
		row = rw.staged
	}
	return rw.sorter.add(row)
}

// each calls do with every live row of a, as rw.row, and its position,
// and after with each batch done, when not nil.
func (rw *rewriter) each(ctx context.Context, a *actions.Add, do func(pos int64, row []schema.Value) error, after func() error) error {
	return rw.fr.ReadFile(ctx, a, func(b *scan.FileBatch) error {
		for i := range b.Len {
			if rw.slots != nil {
				for k, j := range rw.slots {
					rw.row[j] = b.Columns[k][i]
				}
			} else {
				for j := range rw.row {
					rw.row[j] = b.Columns[j][i]
				}
			}
			if rw.tracked {
				rw.id, rw.version = b.Columns[len(rw.row)][i], b.Columns[len(rw.row)+1][i]
			}
			if err := do(b.Positions[i], rw.row); err != nil {
				return err
			}
		}
		if after != nil {
			return after()
		}
		return nil
	})
}

// changes reports whether fn changes a row of a, reading up to the first
// such row.
func (rw *rewriter) changes(ctx context.Context, a *actions.Add) (bool, error) {
	err := rw.each(ctx, a, func(pos int64, row []schema.Value) error {
		v, _, err := rw.fn(a, pos, row)
		if err != nil {
			return err
		}
		if v != Keep {
			return errChanges
		}
		return nil
	}, nil)
	if errors.Is(err, errChanges) {
		return true, nil
	}
	return false, err
}

// rewrite writes the rows of a that fn keeps or updates, and the change
// data of those it drops or updates.
func (rw *rewriter) rewrite(ctx context.Context, a *actions.Add) error {
	return rw.each(ctx, a, func(pos int64, row []schema.Value) error {
		v, vals, err := rw.fn(a, pos, row)
		if err != nil {
			return err
		}
		return rw.apply(a, pos, v, row, vals, true)
	}, func() error { return rw.flush(ctx, false) })
}

// apply does what verdict v says with one row: a kept row is written
// again when copy is set (copy-on-write), a dropped one goes to delete
// change data, an updated one is written as vals, with its pre- and
// post-images in change data.
func (rw *rewriter) apply(a *actions.Add, pos int64, v Verdict, row, vals []schema.Value, copy bool) error {
	var err error
	switch v {
	case Keep:
		if copy {
			rw.copied++
			// A copied row keeps its stable row id and row commit version.
			err = rw.write(row, rw.id, rw.version)
		}
	case Drop:
		rw.dropped++
		if rw.cdc != nil {
			err = rw.cdc.addAs(row, ChangeDelete)
		}
	case Update:
		if rw.slots != nil {
			return fmt.Errorf("write: row %d of %s: an update needs every column, and ReadColumns read only some: %w", pos, a.Path, ErrDVMode)
		}
		rw.updated++
		if len(vals) != len(row) {
			return fmt.Errorf("%w: an update of row %d of %s gives %d values for %d columns", ErrBatch, pos, a.Path, len(vals), len(row))
		}
		if rw.cdc != nil {
			if err = rw.cdc.addAs(row, ChangeUpdatePre); err != nil {
				return err
			}
		}
		// The data writer completes vals (generated columns): the
		// post-image is the row as written. An updated row keeps its
		// stable row id; its row commit version is the new file's.
		if err = rw.write(vals, rw.id, schema.Value{}); err == nil && rw.cdc != nil {
			err = rw.cdc.addAs(vals, ChangeUpdatePost)
		}
	default:
		return fmt.Errorf("write: row %d of %s: unknown verdict %d", pos, a.Path, v)
	}
	return err
}

// flush writes out the rows staged from the batch read (all, and closes
// every file, when final), so that staging never holds more than a batch.
func (rw *rewriter) flush(ctx context.Context, final bool) error {
	if err := rw.data.flush(ctx, final); err != nil {
		return err
	}
	if rw.cdc != nil {
		return rw.cdc.flush(ctx, final)
	}
	return nil
}

// removeOf is the remove action of the file a, at now, with the file's
// metadata.
func removeOf(a *actions.Add, now int64, dataChange bool) actions.Remove {
	return actions.RemoveOf(a, now, dataChange)
}

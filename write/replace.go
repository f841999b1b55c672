package write

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
)

// Replacement is what an overwrite removes from a table, and what it
// writes back of the rows it keeps.
type Replacement struct {
	// Removes are the remove actions (dataChange true) of the files that
	// held rows the predicate matches.
	Removes []actions.Remove
	// Adds are the files written with the rows of the removed files that
	// the predicate does not match; empty when the predicate names
	// partition columns only.
	Adds []actions.Add
	// CDC are the change-data files of the rows the predicate matched in
	// the files read (change type delete), when the table has the change
	// data feed on and the predicate names a data column (see
	// RewritesRows). The commit must then carry the new rows' insert
	// change data too (RowsWithChanges).
	CDC []actions.CDC
	// Read are the paths of the files read to decide, for the
	// transaction's ReadFiles.
	Read []string
}

// RewritesRows reports whether an overwrite of snap with replaceWhere pred
// rewrites rows (pred names a data column, so files are read and the rows
// it does not match written again), and whether that overwrite must write
// change data: it must when the table has delta.enableChangeDataFeed on,
// since the change data feed would otherwise read the kept rows of every
// rewritten file as deleted and inserted again. nil pred rewrites nothing.
func RewritesRows(snap *snapshot.Snapshot, pred expr.Expr) (rewrites, changeData bool, err error) {
	if pred == nil {
		return false, false, nil
	}
	sch := snap.Schema()
	parts := snap.Metadata().PartitionColumns
	for _, c := range expr.Columns(pred) {
		l := &rowLookup{sch: sch}
		if _, _, ok := l.lookup(c); !ok {
			return false, false, fmt.Errorf("write: replaceWhere column %q is not in the table: %w", c, deltaerr.ErrInvalidArgument)
		}
		top := splitColumn(c)[0]
		if i := fieldIndex(sch, top); i < 0 || !slices.Contains(parts, sch.Fields[i].Name) {
			rewrites = true
		}
	}
	return rewrites, rewrites && isTrue(snap.Properties()[PropEnableChangeDataFeed]), nil
}

// Replace plans the removal of the rows of snap that pred matches (TRUE),
// the first half of an overwrite; nil pred matches every row. Files whose
// rows all match are removed. When pred names a data column, the files
// that may hold a matching row (after partition and statistics skipping)
// are read: those with at least one matching row are removed and their
// other rows written again with Rows, under opts (whose Require is
// ignored); on a table with the change data feed on, the rows pred matched
// in them are written as delete change data (Replacement.CDC). Replace
// commits nothing; on error it deletes the files it wrote. A table with
// delta.appendOnly=true is ErrAppendOnly.
func Replace(ctx context.Context, snap *snapshot.Snapshot, pred expr.Expr, opts Options) (Replacement, error) {
	var r Replacement
	if isTrue(snap.Properties()[PropAppendOnly]) {
		return r, ErrAppendOnly
	}
	now := time.Now().UnixMilli()
	if opts.Now != nil {
		now = opts.Now().UnixMilli()
	}
	remove := func(a *actions.Add) {
		size := a.Size
		ext := true
		r.Removes = append(r.Removes, actions.Remove{
			Path: a.Path, DeletionTimestamp: &now, DataChange: true, ExtendedFileMetadata: &ext,
			PartitionValues: a.PartitionValues, Size: &size, Stats: a.Stats, Tags: a.Tags,
			DeletionVector: a.DeletionVector, BaseRowID: a.BaseRowID, DefaultRowCommitVersion: a.DefaultRowCommitVersion,
		})
	}
	if pred == nil {
		for a, err := range snap.Files(ctx) {
			if err != nil {
				return r, err
			}
			remove(a)
		}
		return r, nil
	}
	sch := snap.Schema()
	rewrites, changeData, err := RewritesRows(snap, pred)
	if err != nil {
		return r, err
	}
	partOnly := !rewrites
	s, err := scan.New(snap, scan.Options{Predicate: pred})
	if err != nil {
		return r, err
	}
	var cands []*actions.Add
	for f, err := range s.Files(ctx) {
		if err != nil {
			return r, err
		}
		if partOnly {
			vals := make([]schema.Value, len(sch.Fields))
			for i := range sch.Fields {
				vals[i] = f.PartitionValues[sch.Fields[i].Name]
			}
			m, err := matches(pred, sch, vals)
			if err != nil {
				return r, err
			}
			if m {
				remove(f.Add)
				r.Read = append(r.Read, f.Add.Path)
			}
			continue
		}
		cands = append(cands, f.Add)
	}
	if partOnly {
		return r, nil
	}
	var rewrite []*actions.Add
	for _, a := range cands {
		r.Read = append(r.Read, a.Path)
		hit := false
		for b, err := range FileRows(ctx, snap, a) {
			if err != nil {
				return r, err
			}
			for i := range b.Len {
				if hit, err = matches(pred, sch, rowOf(b, i)); err != nil {
					return r, err
				}
				if hit {
					break
				}
			}
			if hit {
				break
			}
		}
		if hit {
			remove(a)
			rewrite = append(rewrite, a)
		}
	}
	if len(rewrite) == 0 {
		return r, nil
	}
	// One pass over the rewritten files: the rows pred does not match are
	// written again, the ones it matches go to delete change data.
	opts.Require = nil
	keep, err := newRowWriter(snap, opts, "")
	if err != nil {
		return r, err
	}
	var deleted *rowWriter
	if changeData {
		if deleted, err = newRowWriter(snap, opts, ChangeDelete); err != nil {
			return r, err
		}
	}
	if err := splitRows(ctx, snap, rewrite, pred, keep, deleted); err != nil {
		keep.cleanup()
		if deleted != nil {
			deleted.cleanup()
		}
		return r, err
	}
	r.Adds = keep.adds
	if deleted != nil {
		r.CDC = deleted.cdcs
	}
	return r, nil
}

// splitRows reads the rows of files and adds each to keep when pred does
// not match it, else to deleted (when not nil), then flushes both.
func splitRows(ctx context.Context, snap *snapshot.Snapshot, files []*actions.Add, pred expr.Expr, keep, deleted *rowWriter) error {
	sch := snap.Schema()
	for _, a := range files {
		for b, err := range FileRows(ctx, snap, a) {
			if err != nil {
				return err
			}
			for i := range b.Len {
				row := rowOf(b, i)
				m, err := matches(pred, sch, row)
				if err != nil {
					return err
				}
				switch {
				case !m:
					err = keep.add(row)
				case deleted != nil:
					err = deleted.add(row)
				}
				if err != nil {
					return err
				}
			}
			if err := keep.flush(ctx, false); err != nil {
				return err
			}
			if deleted != nil {
				if err := deleted.flush(ctx, false); err != nil {
					return err
				}
			}
		}
	}
	if err := keep.flush(ctx, true); err != nil {
		return err
	}
	if deleted != nil {
		return deleted.flush(ctx, true)
	}
	return nil
}

func rowOf(b Batch, i int) []schema.Value {
	row := make([]schema.Value, len(b.Columns))
	for j := range b.Columns {
		row[j] = b.Columns[j][i]
	}
	return row
}

// matches reports whether pred is TRUE on a row.
func matches(pred expr.Expr, sch *schema.StructType, row []schema.Value) (bool, error) {
	l := &rowLookup{sch: sch, vals: row}
	v, err := expr.EvalValue(pred, l.lookup)
	if err != nil {
		return false, fmt.Errorf("write: replaceWhere %s: %w", pred, err)
	}
	return v.Kind() == schema.KindBoolean && v.Bool(), nil
}

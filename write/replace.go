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
		if _, _, ok := expr.FieldPath(sch, c); !ok {
			return false, false, fmt.Errorf("write: replaceWhere column %q is not in the table: %w", c, deltaerr.ErrInvalidArgument)
		}
		top := splitColumn(c)[0]
		if i := sch.Index(top); i < 0 || !slices.Contains(parts, sch.Fields[i].Name) {
			rewrites = true
		}
	}
	return rewrites, rewrites && snap.Config().ChangeDataFeed(), nil
}

// replace plans the removal of the rows of snap that pred matches (TRUE),
// the first half of an overwrite; nil pred matches every row. Files whose
// rows all match are removed. When pred names a data column, the files
// that may hold a matching row (after partition and statistics skipping)
// are rewritten (Rewrite): those with at least one matching row are
// removed and their other rows written again, under opts (whose Require is
// ignored); on a table with the change data feed on, the rows pred matched
// in them are written as delete change data (Rewritten.CDC). replace
// commits nothing; on error it deletes the files it wrote. A table with
// delta.appendOnly=true is ErrAppendOnly. It is DeleteWhere copying
// files.
func replace(ctx context.Context, snap *snapshot.Snapshot, pred expr.Expr, opts Options) (Rewritten, error) {
	return DeleteWhere(ctx, snap, pred, RewriteOptions{Options: opts})
}

// DeleteWhere plans the deletion of the rows of snap that pred matches
// (TRUE; nil matches every row), as Replace describes, with the rewrite
// opts asks for: with opts.DeletionVectors the files in which some rows
// match get deletion vectors instead of being copied (SQL DELETE on a
// table with deletion vectors). Files whose rows all match, by their
// partition values alone, are removed without being read, as Spark's
// DELETE removes whole partitions; their rows count in Rewritten.Dropped
// when their statistics give numRecords. opts.Require is ignored.
func DeleteWhere(ctx context.Context, snap *snapshot.Snapshot, pred expr.Expr, ropts RewriteOptions) (Rewritten, error) {
	var r Rewritten
	if snap.Config().AppendOnly() {
		return r, ErrAppendOnly
	}
	opts := ropts.Options
	now := time.Now().UnixMilli()
	if opts.Now != nil {
		now = opts.Now().UnixMilli()
	}
	removeWhole := func(a *actions.Add) {
		r.Removes = append(r.Removes, removeOf(a, now, true))
		n, ok := numRecords(a.Stats)
		if a.DeletionVector != nil {
			n -= a.DeletionVector.Cardinality
			r.DVsRemoved++
		}
		if ok {
			r.Dropped += n
		}
	}
	if pred == nil {
		for a, err := range snap.Files(ctx) {
			if err != nil {
				return r, err
			}
			removeWhole(a)
		}
		return r, nil
	}
	sch := snap.Schema()
	rewrites, _, err := RewritesRows(snap, pred)
	if err != nil {
		return r, err
	}
	findStart := time.Now()
	s, err := scan.New(snap, scan.Options{Predicate: pred})
	if err != nil {
		return r, err
	}
	var cands []*actions.Add
	for f, err := range s.Files(ctx) {
		if err != nil {
			return r, err
		}
		if rewrites {
			cands = append(cands, f.Add)
			continue
		}
		vals := make([]schema.Value, len(sch.Fields))
		for i := range sch.Fields {
			vals[i] = f.PartitionValues[sch.Fields[i].Name]
		}
		m, err := matches(pred, sch, vals)
		if err != nil {
			return r, err
		}
		if m {
			removeWhole(f.Add)
			r.Read = append(r.Read, f.Add.Path)
		}
	}
	r.FindTime = time.Since(findStart)
	if !rewrites {
		return r, nil
	}
	// The rows pred does not match are written again, the ones it
	// matches are dropped (delete change data).
	ropts.Require = nil
	if ropts.DeletionVectors && ropts.ReadColumns == nil {
		// Marking rows needs only the predicate's columns.
		for _, c := range expr.Columns(pred) {
			if i := sch.Index(splitColumn(c)[0]); i >= 0 && !slices.Contains(ropts.ReadColumns, sch.Fields[i].Name) {
				ropts.ReadColumns = append(ropts.ReadColumns, sch.Fields[i].Name)
			}
		}
	}
	// Compiled once: evaluating it on a row allocates nothing.
	p := expr.Compile(pred, expr.RowResolver(sch))
	drop := func(_ *actions.Add, _ int64, row []schema.Value) (Verdict, []schema.Value, error) {
		m, err := p.Matches(row)
		if err != nil {
			return Keep, nil, predicateErr(pred, err)
		}
		if m {
			return Drop, nil, nil
		}
		return Keep, nil, nil
	}
	rw, err := Rewrite(ctx, snap, cands, drop, ropts)
	rw.FindTime = r.FindTime
	return rw, err
}

// matches reports whether pred is TRUE on a row.
func matches(pred expr.Expr, sch *schema.StructType, row []schema.Value) (bool, error) {
	m, err := expr.Compile(pred, expr.RowResolver(sch)).Matches(row)
	if err != nil {
		return false, predicateErr(pred, err)
	}
	return m, nil
}

func predicateErr(pred expr.Expr, err error) error {
	return fmt.Errorf("write: predicate %s: %w", pred, err)
}

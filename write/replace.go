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
//
// It is PlanDelete, then DeletePlan.Rewrite of every file the plan reads.
func DeleteWhere(ctx context.Context, snap *snapshot.Snapshot, pred expr.Expr, ropts RewriteOptions) (Rewritten, error) {
	p, err := PlanDelete(ctx, snap, pred, ropts.Options)
	if err != nil {
		return Rewritten{}, err
	}
	if !p.rewrites {
		return p.Whole, nil
	}
	r, err := p.Rewrite(ctx, p.Files, ropts)
	r.FindTime = p.Whole.FindTime
	return r, err
}

// DeletePlan is the first half of DeleteWhere, found before any row is
// read: the files removed whole, and the files to read. An engine that
// rewrites files on several workers plans once and gives each worker some
// of Files to rewrite (Rewrite); the parts together are what DeleteWhere
// returns, but for how the rows kept are cut into files.
type DeletePlan struct {
	// Whole are the removes (dataChange true) of the files whose rows all
	// match: every file with a nil predicate, the files whose partition
	// values make it TRUE with a predicate on partition columns only. Read
	// holds those read by the predicate (none with nil), Dropped their
	// rows (when their statistics say), DVsRemoved their deletion
	// vectors, FindTime the time taken to find the files.
	Whole Rewritten
	// Files are the files that may hold a matching row, after partition
	// and statistics skipping, in the order of the scan, when pred names
	// a data column (else none): each is read, and rewritten when a row
	// matches.
	Files []*actions.Add

	snap     *snapshot.Snapshot
	pred     expr.Expr
	rewrites bool
}

// PlanDelete plans a DeleteWhere of pred on snap (see DeletePlan); opts
// give the clock of the removes. It reads the log, no data file. A table
// with delta.appendOnly=true is ErrAppendOnly; a predicate naming a
// column the table lacks, deltaerr.ErrInvalidArgument.
func PlanDelete(ctx context.Context, snap *snapshot.Snapshot, pred expr.Expr, opts Options) (*DeletePlan, error) {
	if snap.Config().AppendOnly() {
		return nil, ErrAppendOnly
	}
	p := &DeletePlan{snap: snap, pred: pred}
	r := &p.Whole
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
				return nil, err
			}
			removeWhole(a)
		}
		return p, nil
	}
	sch := snap.Schema()
	rewrites, _, err := RewritesRows(snap, pred)
	if err != nil {
		return nil, err
	}
	p.rewrites = rewrites
	findStart := time.Now()
	s, err := scan.New(snap, scan.Options{Predicate: pred})
	if err != nil {
		return nil, err
	}
	for f, err := range s.Files(ctx) {
		if err != nil {
			return nil, err
		}
		if rewrites {
			p.Files = append(p.Files, f.Add)
			continue
		}
		vals := make([]schema.Value, len(sch.Fields))
		for i := range sch.Fields {
			vals[i] = f.PartitionValues[sch.Fields[i].Name]
		}
		m, err := matches(pred, sch, vals)
		if err != nil {
			return nil, err
		}
		if m {
			removeWhole(f.Add)
			r.Read = append(r.Read, f.Add.Path)
		}
	}
	r.FindTime = time.Since(findStart)
	return p, nil
}

// Rewrite rewrites files, some of p.Files, with the rewrite core: the
// rows the predicate matches are dropped (delete change data on a table
// with the change data feed on), the others written again, or, with
// opts.DeletionVectors, marked in deletion vectors; a file in which no
// row matches is read but not rewritten. opts.Require is ignored. Each
// call compiles the predicate afresh, so calls may run at once. It
// commits nothing; on error it deletes what it wrote.
func (p *DeletePlan) Rewrite(ctx context.Context, files []*actions.Add, ropts RewriteOptions) (Rewritten, error) {
	pred, sch := p.pred, p.snap.Schema()
	if pred == nil || !p.rewrites {
		if len(files) > 0 {
			return Rewritten{}, fmt.Errorf("write: a delete by %v reads no file, %d given: %w", pred, len(files), deltaerr.ErrInvalidArgument)
		}
		return Rewritten{}, nil
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
	prog := expr.Compile(pred, expr.RowResolver(sch))
	drop := func(_ *actions.Add, _ int64, row []schema.Value) (Verdict, []schema.Value, error) {
		m, err := prog.Matches(row)
		if err != nil {
			return Keep, nil, predicateErr(pred, err)
		}
		if m {
			return Drop, nil, nil
		}
		return Keep, nil, nil
	}
	return Rewrite(ctx, p.snap, files, drop, ropts)
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

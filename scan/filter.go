package scan

import (
	"fmt"

	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/schema"
)

// rowFilter is Options.Predicate compiled for the rows of one file
// (expr.Compile): the top-level columns it names are copied into a small
// row, from the batch read or the file's partition values, and the
// program tests that row. A row is kept where the predicate is TRUE, with
// Spark SQL semantics (expr.EvalValue); a row on which it cannot be
// evaluated (an integer overflow) fails the scan, as a Spark query with
// ANSI mode on fails.
type rowFilter struct {
	prog *expr.Program
	pred expr.Expr
	// slots say where each value of row comes from: a read column
	// (read >= 0), else the partition value part.
	slots []filterSlot
	row   []schema.Value
}

type filterSlot struct {
	read int
	part schema.Value
}

// newRowFilter compiles pred for the rows a file read by plan yields,
// with partition values pv.
func newRowFilter(pred expr.Expr, plan *readPlan, pv map[string]schema.Value) *rowFilter {
	f := &rowFilter{pred: pred}
	slot := map[int]int{} // table field index -> index in row
	resolve := func(name string) (expr.Ref, bool) {
		path, _, ok := expr.FieldPath(plan.table, name)
		if !ok {
			return expr.Ref{}, false
		}
		k, seen := slot[path[0]]
		if !seen {
			k = len(f.slots)
			slot[path[0]] = k
			top := plan.table.Fields[path[0]].Name
			s := filterSlot{read: -1}
			if _, isPart := plan.parts[top]; isPart {
				s.part = pv[top]
			} else if idx, ok := plan.readIdx[top]; ok {
				s.read = idx
			}
			f.slots = append(f.slots, s)
		}
		return expr.Ref{Path: append([]int{k}, path[1:]...)}, true
	}
	f.prog = expr.Compile(pred, resolve)
	f.row = make([]schema.Value, len(f.slots))
	return f
}

// keeps reports whether row i of the batch columns cols passes the
// filter. It is not safe for concurrent use: one file read owns it.
func (f *rowFilter) keeps(cols [][]schema.Value, i int) (bool, error) {
	for k, s := range f.slots {
		if s.read >= 0 {
			f.row[k] = cols[s.read][i]
		} else {
			f.row[k] = s.part
		}
	}
	ok, err := f.prog.Matches(f.row)
	if err != nil {
		return false, fmt.Errorf("evaluating the predicate %s: %w", f.pred, err)
	}
	return ok, nil
}

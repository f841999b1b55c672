package dml

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/internal/rowcheck"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/txn"
	"github.com/godelta/delta/write"
)

// insertBatchRows is how many inserted rows go to the writer at once.
const insertBatchRows = 8192

// Merge merges src into the table snap shows, as spec says, in one commit
// on top of snap (see the MERGE section of this file's doc above for the
// semantics, the cost and the conflicts). A merge that changes nothing
// (no row inserted, updated or deleted) commits nothing. On any error
// nothing is committed and the files written are deleted, unless the
// commit's outcome is unknown (txn.ErrCommitUnknown).
func Merge(ctx context.Context, snap *snapshot.Snapshot, src Source, spec MergeSpec, opts MergeOptions) (MergeResult, error) {
	start := time.Now()
	var res MergeResult
	if src.Schema == nil || src.Batches == nil {
		return res, fmt.Errorf("%w: no source", ErrMergeClause)
	}
	tsch := snap.Schema()
	p, err := newPlan(spec, tsch, src.Schema, snap.Metadata().PartitionColumns)
	if err != nil {
		return res, err
	}
	modifies := len(p.matched)+len(p.bySrc) > 0
	if modifies && snap.Config().AppendOnly() {
		return res, write.ErrAppendOnly
	}
	useDV, err := chooseDV(snap, opts.Strategy)
	if err != nil {
		return res, err
	}

	m := &merger{plan: p, snap: snap}
	t0 := time.Now()
	if err := m.loadSource(src); err != nil {
		return res, err
	}
	res.Metrics.MaterializeSourceTimeMs = time.Since(t0).Milliseconds()
	res.Metrics.NumSourceRows = int64(len(m.rows))

	// Which target files can hold a row the merge touches.
	t1 := time.Now()
	readPred := m.filePredicate()
	files, before, err := m.candidates(ctx, readPred, opts.Write.TableURI)
	if err != nil {
		return res, err
	}
	res.Metrics.NumTargetFilesBeforeSkipping = before
	res.Metrics.NumTargetFilesAfterSkipping = int64(len(files))
	res.Metrics.ScanTimeMs = time.Since(t1).Milliseconds()

	// Matched and not-matched-by-source rows: one rewrite of the files.
	t2 := time.Now()
	// An insert-only merge reads the files only to find the matches.
	ropts := write.RewriteOptions{Options: opts.Write, DeletionVectors: useDV}
	var rw write.Rewritten
	if modifies {
		rw, err = write.Rewrite(ctx, snap, files, m.rowFunc, ropts)
	} else {
		err = m.findMatches(ctx, files, opts.Write.TableURI)
	}
	if err != nil {
		return res, err
	}
	written := slices.Concat(rw.Adds, cdcAdds(rw.CDC))
	cleanup := func(err error) { dropFiles(snap, err, written) }

	// Not-matched source rows: inserts, through the row writer.
	var inserts []actions.Add
	var insertCDC []actions.CDC
	nIns, batches := m.insertBatches()
	if nIns > 0 {
		if snap.Config().ChangeDataFeed() {
			inserts, insertCDC, err = write.RowsWithChanges(ctx, snap, batches, opts.Write)
		} else {
			inserts, err = write.Rows(ctx, snap, batches, opts.Write)
		}
		if err != nil {
			cleanup(nil)
			return res, err
		}
		written = append(written, inserts...)
		written = append(written, cdcAdds(insertCDC)...)
	} else if m.insertErr != nil {
		cleanup(nil)
		return res, m.insertErr
	}
	res.Metrics.RewriteTimeMs = time.Since(t2).Milliseconds()

	met := &res.Metrics
	m.fillMetrics(met, rw, useDV)
	met.NumTargetRowsInserted = nIns
	met.NumOutputRows = met.NumTargetRowsInserted + met.NumTargetRowsUpdated + met.NumTargetRowsCopied
	met.NumTargetFilesAdded = int64(len(rw.Adds) + len(inserts))
	met.NumTargetChangeFilesAdded = int64(len(rw.CDC) + len(insertCDC))
	for _, a := range rw.Adds {
		met.NumTargetBytesAdded += a.Size
	}
	for _, a := range inserts {
		met.NumTargetBytesAdded += a.Size
	}
	if len(rw.Removes) == 0 && len(inserts) == 0 {
		met.ExecutionTimeMs = time.Since(start).Milliseconds()
		return res, nil // nothing changed: nothing to commit
	}

	topts := opts.Txn
	topts.Operation = "MERGE"
	topts.OperationParameters = m.parameters()
	tx := txn.Begin(snap, topts)
	if readPred == nil {
		tx.ReadPredicate(expr.Literal{Value: schema.BooleanValue(true)})
	} else {
		tx.ReadPredicate(readPred)
	}
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.Path
	}
	tx.ReadFiles(paths...)
	tx.Remove(rw.Removes...)
	tx.Add(rw.Adds...)
	tx.Add(rw.DVAdds...)
	tx.Add(inserts...)
	tx.AddCDC(rw.CDC...)
	tx.AddCDC(insertCDC...)
	rowcheck.Mark(tx) // the row writer checked every row written
	met.ExecutionTimeMs = time.Since(start).Milliseconds()
	tx.SetOperationMetrics(met.Map())
	commit, err := tx.Commit(ctx)
	if err != nil {
		cleanup(err)
		return res, err
	}
	res.Commit, res.Committed = commit, true
	return res, nil
}

// chooseDV reports whether touched files get deletion vectors.
func chooseDV(snap *snapshot.Snapshot, s Strategy) (bool, error) {
	switch s {
	case StrategyCopyOnWrite:
		return false, nil
	case StrategyDeletionVectors:
		if !snap.Config().IsFeatureSupported(actions.FeatureDeletionVectors) {
			return false, fmt.Errorf("%w: the table's protocol does not support deletion vectors", write.ErrDVMode)
		}
		return true, nil
	}
	return snap.Config().DeletionVectors(), nil
}

// merger is the state of one merge: the source in memory, its hash index,
// which source rows matched, and the per-file counts of what happened.
type merger struct {
	*plan
	snap *snapshot.Snapshot

	rows  [][]schema.Value   // the source rows
	index map[string][]int32 // join key -> source rows, with keys
	// keyMin and keyMax are the source's smallest and largest key value
	// per join key (cast to the target column's type); keyVals its
	// distinct values of keys on partition columns.
	keyMin, keyMax []schema.Value
	keyVals        []map[string]schema.Value
	noKeys         bool // the source has no row whose keys are all non-null

	mu         sync.Mutex
	srcMatched []bool // per source row: some target row matched it
	counts     map[string]*fileCounts

	insertErr error
}

// fileCounts are the rows of one file by fate, in the latest pass over
// the file (Rewrite may read a file twice; a pass starts again at a
// position not after the last one seen).
type fileCounts struct {
	last                                         int64
	matchedUpd, matchedDel, srcUpd, srcDel, kept int64
}

// loadSource reads the source into memory and indexes it on the join
// keys.
func (m *merger) loadSource(src Source) error {
	n := len(m.ssch.Fields)
	for b, err := range src.Batches {
		if err != nil {
			return err
		}
		if len(b.Columns) != n {
			return fmt.Errorf("%w: a source batch has %d columns for %d fields", write.ErrBatch, len(b.Columns), n)
		}
		for j := range b.Columns {
			if len(b.Columns[j]) < b.Len {
				return fmt.Errorf("%w: source column %q has %d values for %d rows", write.ErrBatch, m.ssch.Fields[j].Name, len(b.Columns[j]), b.Len)
			}
		}
		for i := range b.Len {
			row := make([]schema.Value, n)
			for j := range n {
				row[j] = b.Columns[j][i]
			}
			m.rows = append(m.rows, row)
		}
	}
	m.srcMatched = make([]bool, len(m.rows))
	m.counts = map[string]*fileCounts{}
	if len(m.keys) == 0 {
		return nil
	}
	m.index = make(map[string][]int32)
	m.keyMin = make([]schema.Value, len(m.keys))
	m.keyMax = make([]schema.Value, len(m.keys))
	m.keyVals = make([]map[string]schema.Value, len(m.keys))
	m.noKeys = true
	var kb keyBuilder
	vals := make([]schema.Value, len(m.keys))
	for i, row := range m.rows {
		kb.buf = kb.buf[:0]
		ok := true
		for k, key := range m.keys {
			v, err := expr.EvalValue(key.sval, m.lookup(nil, row))
			if err != nil || !kb.add(v, m.tsch.Fields[key.tcol].Type) {
				ok = false
				break
			}
			vals[k], _ = castTo(v, m.tsch.Fields[key.tcol].Type)
		}
		if !ok {
			continue // a null key matches nothing
		}
		m.noKeys = false
		m.index[string(kb.buf)] = append(m.index[string(kb.buf)], int32(i))
		for k, v := range vals {
			if c, ok := expr.Order(v, m.keyMin[k]); m.keyMin[k].IsNull() || ok && c < 0 {
				m.keyMin[k] = v
			}
			if c, ok := expr.Order(v, m.keyMax[k]); m.keyMax[k].IsNull() || ok && c > 0 {
				m.keyMax[k] = v
			}
			if m.partitionCol[m.keys[k].tcol] {
				if m.keyVals[k] == nil {
					m.keyVals[k] = map[string]schema.Value{}
				}
				if len(m.keyVals[k]) <= m.maxPartitionValuesInPruning {
					m.keyVals[k][v.String()] = v
				}
			}
		}
	}
	return nil
}

// lookup resolves the names of resolved expressions against a target row
// and a source row; a nil row has no columns.
func (m *merger) lookup(trow, srow []schema.Value) expr.Lookup {
	tl := expr.RowLookup(m.tsch, trow)
	sl := expr.RowLookup(m.ssch, srow)
	return func(name string) (schema.DataType, schema.Value, bool) {
		if rest, ok := strings.CutPrefix(name, targetPrefix); ok {
			if trow == nil {
				return nil, schema.Value{}, false
			}
			return tl(rest)
		}
		if rest, ok := strings.CutPrefix(name, sourcePrefix); ok {
			if srow == nil {
				return nil, schema.Value{}, false
			}
			return sl(rest)
		}
		return nil, schema.Value{}, false
	}
}

// filePredicate is the predicate over target columns that every target
// row the merge may touch satisfies (nil: any row): the target-only
// conjuncts of the condition and the ranges of the source's keys, ORed
// with the NOT MATCHED BY SOURCE conditions.
func (m *merger) filePredicate() expr.Expr {
	if m.needsAllFiles {
		return nil
	}
	var terms []expr.Expr
	if m.targetOnly != nil {
		terms = append(terms, m.targetOnly)
	}
	if len(m.keys) > 0 && m.noKeys {
		// No source row has a whole key: no target row matches.
		terms = []expr.Expr{expr.Literal{Value: schema.BooleanValue(false)}}
	}
	if len(m.keys) > 0 && !m.noKeys {
		for k, key := range m.keys {
			col := expr.Column{Name: key.tname}
			if vals := m.keyVals[k]; vals != nil && len(vals) <= m.maxPartitionValuesInPruning {
				list := make([]expr.Expr, 0, len(vals))
				for _, s := range slices.Sorted(mapsKeys(vals)) {
					list = append(list, literal(vals[s]))
				}
				terms = append(terms, expr.In{Value: col, List: list})
				continue
			}
			if m.keyMin[k].IsNull() {
				continue
			}
			if _, ok := expr.Order(m.keyMin[k], m.keyMax[k]); !ok {
				continue // a type without an order: no range
			}
			terms = append(terms,
				expr.Compare{Op: expr.Ge, Left: col, Right: literal(m.keyMin[k])},
				expr.Compare{Op: expr.Le, Left: col, Right: literal(m.keyMax[k])})
		}
	}
	var matched expr.Expr
	if len(terms) > 0 {
		matched = and(terms)
	}
	if m.bySourceConds == nil {
		return matched
	}
	if matched == nil {
		return nil // every file may hold a matched row
	}
	return expr.Or{Terms: []expr.Expr{matched, m.bySourceConds}}
}

func mapsKeys[V any](m map[string]V) iter.Seq[string] {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// candidates lists the live files that pred (nil: all) may match, after
// partition and statistics skipping, and how many files the table has.
func (m *merger) candidates(ctx context.Context, pred expr.Expr, tableURI string) ([]*actions.Add, int64, error) {
	total, err := m.snap.NumFiles(ctx)
	if err != nil {
		return nil, 0, err
	}
	if l, ok := pred.(expr.Literal); ok && l.Value.Kind() == schema.KindBoolean && !l.Value.Bool() {
		return nil, total, nil // no row can match
	}
	s, err := scan.New(m.snap, scan.Options{Predicate: pred, TableURI: tableURI})
	if err != nil {
		return nil, 0, err
	}
	var out []*actions.Add
	for f, err := range s.Files(ctx) {
		if err != nil {
			return nil, 0, err
		}
		out = append(out, f.Add)
	}
	return out, total, nil
}

// match returns the source rows the target row trow matches.
func (m *merger) match(trow []schema.Value, buf []int32) ([]int32, error) {
	buf = buf[:0]
	try := func(i int32) {
		if expr.Eval(m.on, m.lookup(trow, m.rows[i])) == expr.True {
			buf = append(buf, i)
		}
	}
	if m.index == nil {
		if len(m.keys) > 0 {
			return buf, nil // the source has no non-null keys
		}
		for i := range m.rows {
			try(int32(i))
		}
		return buf, nil
	}
	var kb keyBuilder
	for _, key := range m.keys {
		if !kb.add(trow[key.tcol], m.tsch.Fields[key.tcol].Type) {
			return buf, nil
		}
	}
	for _, i := range m.index[string(kb.buf)] {
		try(i)
	}
	return buf, nil
}

// decision is the fate of a target row.
type decision uint8

const (
	keep decision = iota
	matchedUpdate
	matchedDelete
	sourceUpdate
	sourceDelete
)

// decide finds the fate of the target row trow, and its new values for an
// update.
func (m *merger) decide(trow []schema.Value) (decision, []schema.Value, error) {
	var buf [4]int32
	hits, err := m.match(trow, buf[:0])
	if err != nil {
		return keep, nil, err
	}
	if len(hits) > 0 {
		m.mu.Lock()
		for _, i := range hits {
			m.srcMatched[i] = true
		}
		m.mu.Unlock()
		if len(hits) > 1 && !m.multiMatchOK {
			return keep, nil, ErrMultipleMatch
		}
		srow := m.rows[hits[0]]
		for _, c := range m.matched {
			if c.cond != nil && expr.Eval(c.cond, m.lookup(trow, srow)) != expr.True {
				continue
			}
			if c.action == Delete {
				return matchedDelete, nil, nil
			}
			vals, err := m.values(c, trow, srow)
			return matchedUpdate, vals, err
		}
		return keep, nil, nil
	}
	for _, c := range m.bySrc {
		if c.cond != nil && expr.Eval(c.cond, m.lookup(trow, nil)) != expr.True {
			continue
		}
		if c.action == Delete {
			return sourceDelete, nil, nil
		}
		vals, err := m.values(c, trow, nil)
		return sourceUpdate, vals, err
	}
	return keep, nil, nil
}

// values computes the row a clause writes: an update starts from trow
// (generated columns left null, to be computed again), an insert from
// nulls; assigned columns are computed and cast to their types.
func (m *merger) values(c plannedClause, trow, srow []schema.Value) ([]schema.Value, error) {
	out := make([]schema.Value, len(m.tsch.Fields))
	if trow != nil {
		copy(out, trow)
	}
	l := m.lookup(trow, srow)
	for i, e := range c.values {
		if e == nil {
			if m.generated[i] {
				out[i] = schema.Value{}
			}
			continue
		}
		v, err := expr.EvalValue(e, l)
		if err != nil {
			return nil, fmt.Errorf("dml: merge: the value of %q: %w", m.tsch.Fields[i].Name, err)
		}
		cv, ok := castTo(v, m.tsch.Fields[i].Type)
		if !ok {
			return nil, fmt.Errorf("%w: the value %s cannot be cast to %s for column %q", ErrMergeColumn, v, m.tsch.Fields[i].Type, m.tsch.Fields[i].Name)
		}
		out[i] = cv
	}
	return out, nil
}

// rowFunc is the write.RowFunc of the merge's rewrite.
func (m *merger) rowFunc(add *actions.Add, pos int64, row []schema.Value) (write.Verdict, []schema.Value, error) {
	d, vals, err := m.decide(row)
	if err != nil {
		return write.Keep, nil, err
	}
	m.mu.Lock()
	fc := m.counts[add.Path]
	if fc == nil {
		fc = &fileCounts{last: -1}
		m.counts[add.Path] = fc
	}
	if pos <= fc.last { // a new pass over the file
		*fc = fileCounts{last: -1}
	}
	fc.last = pos
	switch d {
	case keep:
		fc.kept++
	case matchedUpdate:
		fc.matchedUpd++
	case matchedDelete:
		fc.matchedDel++
	case sourceUpdate:
		fc.srcUpd++
	case sourceDelete:
		fc.srcDel++
	}
	m.mu.Unlock()
	switch d {
	case matchedUpdate, sourceUpdate:
		return write.Update, vals, nil
	case matchedDelete, sourceDelete:
		return write.Drop, nil, nil
	}
	return write.Keep, nil, nil
}

// findMatches reads the candidate files of an insert-only merge to mark
// the source rows some target row matches.
func (m *merger) findMatches(ctx context.Context, files []*actions.Add, tableURI string) error {
	if len(files) == 0 || len(m.rows) == 0 {
		return nil
	}
	fr, err := scan.NewFileReader(m.snap, scan.Options{TableURI: tableURI})
	if err != nil {
		return err
	}
	row := make([]schema.Value, len(m.tsch.Fields))
	var buf []int32
	for _, a := range files {
		err := fr.ReadFile(ctx, a, func(b *scan.FileBatch) error {
			for i := range b.Len {
				for j := range row {
					row[j] = b.Columns[j][i]
				}
				hits, err := m.match(row, buf)
				if err != nil {
					return err
				}
				buf = hits
				for _, h := range hits {
					m.srcMatched[h] = true
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// insertBatches counts the rows the NOT MATCHED clauses insert and yields
// them in batches of table rows. An error computing a row is yielded, and
// kept in insertErr.
func (m *merger) insertBatches() (int64, iter.Seq2[schema.Batch, error]) {
	if len(m.notMatched) == 0 {
		return 0, nil
	}
	type ins struct {
		row    int
		clause int
	}
	var todo []ins
	for i, srow := range m.rows {
		if m.srcMatched[i] {
			continue
		}
		for k, c := range m.notMatched {
			if c.cond != nil && expr.Eval(c.cond, m.lookup(nil, srow)) != expr.True {
				continue
			}
			todo = append(todo, ins{i, k})
			break
		}
	}
	n := len(m.tsch.Fields)
	return int64(len(todo)), func(yield func(schema.Batch, error) bool) {
		for start := 0; start < len(todo); start += insertBatchRows {
			end := min(start+insertBatchRows, len(todo))
			b := schema.Batch{Len: end - start, Columns: make([][]schema.Value, n)}
			for j := range b.Columns {
				b.Columns[j] = make([]schema.Value, b.Len)
			}
			for r, t := range todo[start:end] {
				vals, err := m.values(m.notMatched[t.clause], nil, m.rows[t.row])
				if err != nil {
					m.insertErr = err
					yield(schema.Batch{}, err)
					return
				}
				for j, v := range vals {
					b.Columns[j][r] = v
				}
			}
			if !yield(b, nil) {
				return
			}
		}
	}
}

// fillMetrics adds up the per-file counts of the files rewritten.
func (m *merger) fillMetrics(met *MergeMetrics, rw write.Rewritten, useDV bool) {
	removed := map[string]bool{}
	for _, r := range rw.Removes {
		removed[r.Path] = true
		if r.Size != nil {
			met.NumTargetBytesRemoved += *r.Size
		}
	}
	for path, fc := range m.counts {
		if !removed[path] {
			continue // a file left as it was: nothing changed in it
		}
		met.NumTargetRowsMatchedUpdated += fc.matchedUpd
		met.NumTargetRowsMatchedDeleted += fc.matchedDel
		met.NumTargetRowsNotMatchedBySourceUpdated += fc.srcUpd
		met.NumTargetRowsNotMatchedBySourceDeleted += fc.srcDel
		if !useDV {
			met.NumTargetRowsCopied += fc.kept
		}
	}
	met.NumTargetRowsUpdated = met.NumTargetRowsMatchedUpdated + met.NumTargetRowsNotMatchedBySourceUpdated
	met.NumTargetRowsDeleted = met.NumTargetRowsMatchedDeleted + met.NumTargetRowsNotMatchedBySourceDeleted
	met.NumTargetFilesRemoved = int64(len(rw.Removes))
	if useDV {
		// As Spark counts them with deletion vectors: a file that keeps
		// its path under a new vector is not removed.
		met.NumTargetFilesRemoved -= int64(len(rw.DVAdds))
		met.NumTargetBytesRemoved = 0
		kept := map[string]bool{}
		for _, a := range rw.DVAdds {
			kept[a.Path] = true
		}
		for _, r := range rw.Removes {
			if !kept[r.Path] && r.Size != nil {
				met.NumTargetBytesRemoved += *r.Size
			}
		}
	}
	met.NumTargetDeletionVectorsAdded = rw.DVsAdded
	met.NumTargetDeletionVectorsRemoved = rw.DVsRemoved
	met.NumTargetDeletionVectorsUpdated = rw.DVsUpdated
}

// parameters are the commit's operationParameters, as Spark writes them
// for MERGE.
func (m *merger) parameters() map[string]any {
	enc := func(v any) string {
		b, _ := actions.EncodeJSON(v)
		return string(b)
	}
	return map[string]any{
		"predicate":                    enc([]string{m.onText}),
		"matchedPredicates":            enc(m.matchedTxt),
		"notMatchedPredicates":         enc(m.notMatchedTxt),
		"notMatchedBySourcePredicates": enc(m.bySrcTxt),
	}
}

// cdcAdds returns the files of cdc actions as adds, for cleanup.
func cdcAdds(cdcs []actions.CDC) []actions.Add {
	out := make([]actions.Add, len(cdcs))
	for i, c := range cdcs {
		out[i] = actions.Add{Path: c.Path}
	}
	return out
}

// dropFiles deletes data files no commit names, best effort, unless err
// says the commit may have landed.
func dropFiles(snap *snapshot.Snapshot, err error, adds []actions.Add) {
	if errors.Is(err, txn.ErrCommitUnknown) || len(adds) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, a := range adds {
		_ = snap.Store().Delete(ctx, snapshot.CanonicalPath(a.Path))
	}
}

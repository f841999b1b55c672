package dml

import (
	"context"
	"fmt"
	"iter"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/txn"
	"github.com/godelta/delta/write"
)

// insertBatchRows is how many inserted rows go to the writer at once.
const insertBatchRows = 8192

// Merge merges src into the table snap shows, as spec says, and commits
// it through Run, the package's DML pipeline (operation MERGE, Spark's
// operationParameters and metrics); see MergeSpec for the semantics, the
// cost and the conflicts. A merge that changes nothing
// (no row inserted, updated or deleted) commits nothing. On any error
// nothing is committed and the files written are deleted, unless the
// commit's outcome is unknown (txn.ErrCommitUnknown).
//
// The source is read once, before the first attempt; with
// opts.ConflictRetries the merge is planned again on the table's new
// version after a conflict, against the same source rows.
func Merge(ctx context.Context, snap *snapshot.Snapshot, src Source, spec MergeSpec, opts Options) (MergeResult, error) {
	var res MergeResult
	ms, err := setupMerge(snap, src, spec, true)
	if err != nil {
		return res, err
	}
	defer ms.m.close() // the spilled source, on every path
	var mm MergeMetrics
	op := ms.operation()
	op.Plan = func(ctx context.Context, snap *snapshot.Snapshot, s Strategy) (*Plan, error) {
		j, err := ms.planJob(ctx, snap, s, opts, time.Now())
		if err != nil {
			return nil, err
		}
		plan, err := j.rewriteAll(ctx, &mm)
		if err != nil {
			// What the attempt wrote before failing (a rewrite,
			// before inserts that broke a constraint): no commit
			// names it.
			dropWritten(j.asnap, nil, plan)
			return nil, err
		}
		return plan, nil
	}
	op.Metrics = func(g *Metrics) map[string]any {
		mm.fromRun(g)
		return mm.Map()
	}
	r, err := Run(ctx, snap, op, opts)
	if err != nil {
		return res, err
	}
	mm.fromRun(&r.Metrics)
	return MergeResult{Result: r, Merge: mm}, nil
}

// mergeSetup is what a merge knows before its first attempt: the plan
// checked against the two schemas, the source loaded (or spilled), and
// the schema it evolves the table to, if any.
type mergeSetup struct {
	m           *merger
	tableSchema *schema.StructType // the table's, before evolution
	target      *snapshot.Snapshot // the table under the evolved schema (or snap)
	ep          *actions.Protocol  // staged by the commit, when not nil
	em          *actions.Metadata
	sourceTime  time.Duration
}

// setupMerge checks spec against the table snap shows and src, and
// loads the source: into memory, or, past spec.MemoryBudget, spilled
// when spill allows it, else ErrMergeSourceTooLarge.
func setupMerge(snap *snapshot.Snapshot, src Source, spec MergeSpec, spill bool) (*mergeSetup, error) {
	if src.Schema == nil || src.Batches == nil {
		return nil, fmt.Errorf("%w: no source", ErrMergeClause)
	}
	ms := &mergeSetup{target: snap, tableSchema: snap.Schema()}
	// With schema evolution, the merge is planned, and its rows written,
	// under the evolved schema, which its commit stages.
	evolve := spec.SchemaEvolution && slices.ContainsFunc(slices.Concat(spec.Matched, spec.NotMatched), func(c Clause) bool { return c.All })
	if evolve {
		p, m, changed, err := write.MergedMetadata(snap, src.Schema)
		if err != nil {
			return nil, fmt.Errorf("merge: schema evolution: %w", err)
		}
		if changed {
			if ms.target, err = snap.WithMetadata(p, m); err != nil {
				return nil, fmt.Errorf("merge: schema evolution: %w", err)
			}
			if !write.SameProtocol(p, snap.Protocol()) {
				ms.ep = &p
			}
			ms.em = &m
		}
	}
	p, err := newPlan(spec, ms.target.Schema(), src.Schema, snap.Metadata().PartitionColumns)
	if err != nil {
		return nil, err
	}
	ms.m = &merger{plan: p, noSpill: !spill}
	t0 := time.Now()
	if err := ms.m.loadSource(src, snap, spec); err != nil {
		ms.m.close()
		return nil, err
	}
	ms.sourceTime = time.Since(t0)
	return ms, nil
}

// operation is the merge's Operation but its Plan and Metrics.
func (ms *mergeSetup) operation() Operation {
	return Operation{
		Name:       OpMerge,
		Parameters: ms.m.parameters(),
		InsertOnly: len(ms.m.matched)+len(ms.m.bySrc) == 0,
	}
}

// attempt returns the snapshot an attempt on snap rewrites: snap under
// the evolved schema, if any. A table whose schema changed since the
// merge was set up is a conflict.
func (ms *mergeSetup) attempt(snap *snapshot.Snapshot) (*snapshot.Snapshot, error) {
	if !sameSchema(ms.tableSchema, snap.Schema()) {
		return nil, fmt.Errorf("merge: the table's schema changed at version %d: %w", snap.Version(), txn.ErrConflict)
	}
	if ms.em == nil {
		return snap, nil
	}
	return snap.WithMetadata(ms.target.Protocol(), *ms.em)
}

// OpMerge is commitInfo.operation of a merge.
const OpMerge = "MERGE"

// fromRun takes from the pipeline's metrics the figures it computes from
// the actions staged: files, bytes, deletion vectors, times.
func (mm *MergeMetrics) fromRun(g *Metrics) {
	mm.NumTargetFilesAdded = g.NumAddedFiles
	mm.NumTargetFilesRemoved = g.NumRemovedFiles
	mm.NumTargetBytesAdded = g.NumAddedBytes
	mm.NumTargetBytesRemoved = g.NumRemovedBytes
	mm.NumTargetChangeFilesAdded = g.NumAddedChangeFiles
	mm.NumTargetDeletionVectorsAdded = g.NumDeletionVectorsAdded
	mm.NumTargetDeletionVectorsUpdated = g.NumDeletionVectorsUpdated
	mm.NumTargetDeletionVectorsRemoved = g.NumDeletionVectorsRemoved
	mm.ExecutionTimeMs = g.ExecutionTimeMs
	mm.ScanTimeMs = g.ScanTimeMs
	mm.RewriteTimeMs = g.RewriteTimeMs
}

func sameSchema(a, b *schema.StructType) bool { return a.String() == b.String() }

// rewriteAll is the rest of one in-process attempt of the merge, after
// planJob: one rewrite of all the candidate files, which then writes the
// inserts (not-matched source rows, known once every file is read) to
// the same files as the updated rows, as Spark writes them; with a
// spilled source, the grace hash join first. It fills mm and returns the
// plan to commit; on error the plan holds what it wrote, for the caller
// to delete. It uses the setup's merger, so one attempt runs at a time.
func (j *MergeJob) rewriteAll(ctx context.Context, mm *MergeMetrics) (*Plan, error) {
	m := j.ms.m
	m.snap = j.asnap
	m.staged = j.newPlan()
	clear(m.srcMatched)
	clear(m.srcBits)
	clear(m.counts)
	*mm = j.baseMetrics()
	files := j.files
	if m.spill != nil {
		// The grace hash join's partitions of the target keys, joined
		// with the source's.
		if err := m.partitionTarget(ctx, files); err != nil {
			return m.staged, err
		}
	}
	// An insert-only merge reads the files only to find the matches.
	useDV := j.strategy == MergeOnRead
	var nIns int64
	if len(m.matched)+len(m.bySrc) > 0 {
		r, err := write.Rewrite(ctx, j.asnap, files, m.rowFunc, write.RewriteOptions{
			Options: j.opts.Options, DeletionVectors: useDV, InlineDVMax: j.opts.InlineDVMax,
			Insert: func() (iter.Seq2[schema.Batch, error], error) {
				_, batches, err := m.insertBatches()
				return batches, err
			},
		})
		if err != nil {
			return m.staged, err
		}
		m.staged.Rewritten = r
		nIns = r.Inserted
	} else {
		if err := m.findMatches(ctx, files); err != nil {
			return m.staged, err
		}
		for _, f := range files {
			m.staged.Read = append(m.staged.Read, f.Path)
		}
		r, err := m.writeInserts(ctx, j.asnap, j.opts)
		if err != nil {
			return m.staged, err
		}
		nIns = r.Inserted
		m.staged.Adds, m.staged.CDC, m.staged.HighWaterMarks = r.Adds, r.CDC, r.HighWaterMarks
	}
	m.fillMetrics(mm, m.staged.Rewritten, useDV)
	mm.NumTargetRowsInserted = nIns
	mm.NumOutputRows = mm.NumTargetRowsInserted + mm.NumTargetRowsUpdated + mm.NumTargetRowsCopied
	m.staged.Protocol, m.staged.Metadata = j.ms.ep, j.ms.em
	return m.staged, nil
}

// writeInserts writes the rows the NOT MATCHED clauses insert, given
// which source rows matched, through the rewrite core with no file to
// rewrite (the inserts, their change data, and the identity values they
// got). Nothing to insert: an empty Rewritten.
func (m *merger) writeInserts(ctx context.Context, snap *snapshot.Snapshot, opts Options) (write.Rewritten, error) {
	nIns, batches, err := m.insertBatches()
	if err != nil || nIns == 0 { // -1: not counted (a spilled source)
		return write.Rewritten{}, err
	}
	r, err := write.Rewrite(ctx, snap, nil, nil, write.RewriteOptions{
		Options: opts.Options,
		Insert:  func() (iter.Seq2[schema.Batch, error], error) { return batches, nil },
	})
	if err != nil {
		return write.Rewritten{}, err
	}
	if r.Inserted == 0 {
		if len(r.Adds)+len(r.CDC) > 0 {
			dropWritten(snap, nil, &Plan{Adds: r.Adds, CDC: r.CDC})
		}
		return write.Rewritten{}, nil
	}
	return r, nil
}

// merger is the state of one merge: the source in memory, its hash index,
// which source rows matched, and the per-file counts of what happened; or,
// for a source over the memory budget, the source spilled (spill) and the
// bitset of the source rows matched (srcBits).
type merger struct {
	*plan
	snap   *snapshot.Snapshot // the attempt's
	staged *Plan              // what the attempt wrote

	nSource int64 // the source's rows
	// spill, when set, holds the source on disk (see merge_spill.go) and
	// rows is nil. Its state is read and changed by one goroutine at a
	// time: Rewrite calls the RowFunc file by file, in order.
	spill     *spiller
	srcBits   []uint64
	spillIDs  []int64
	spillRows [][]schema.Value

	rows  [][]schema.Value   // the source rows
	index map[string][]int32 // join key -> source rows, with keys
	// intIndex replaces index for one key on an integer column (the
	// common id = id): no key encoding, a cheaper map.
	intIndex map[int64][]int32
	// keyMin and keyMax are the source's smallest and largest key value
	// per join key (cast to the target column's type); keyVals its
	// distinct values of keys on partition columns.
	keyMin, keyMax []schema.Value
	keyVals        []map[string]schema.Value
	noKeys         bool // the source has no row whose keys are all non-null

	mu         sync.Mutex
	srcMatched []bool // per source row: some target row matched it
	counts     map[string]*fileCounts

	noSpill bool // a source over the budget is ErrMergeSourceTooLarge
}

// fileCounts are the rows of one file by fate, in the latest pass over
// the file (Rewrite may read a file twice; a pass starts again at a
// position not after the last one seen).
type fileCounts struct {
	last                                         int64
	matchedUpd, matchedDel, srcUpd, srcDel, kept int64
}

// loadSource reads the source into memory and indexes it on the join
// keys; past the memory budget, a source with join keys is spilled to
// local temporary files instead (see merge_spill.go). The key ranges that
// skip files are computed either way.
func (m *merger) loadSource(src Source, snap *snapshot.Snapshot, spec MergeSpec) error {
	budget := spec.MemoryBudget
	if budget <= 0 {
		budget = DefaultMergeMemory
	}
	n := len(m.ssch.Fields)
	m.counts = map[string]*fileCounts{}
	if len(m.keys) > 0 {
		m.keyMin = make([]schema.Value, len(m.keys))
		m.keyMax = make([]schema.Value, len(m.keys))
		m.keyVals = make([]map[string]schema.Value, len(m.keys))
		m.noKeys = true
	}
	var kb keyBuilder
	vals := make([]schema.Value, len(m.keys))
	spillRow := func(row []schema.Value) error {
		var key []byte
		if m.sourceKey(row, &kb, vals) {
			m.observeKey(vals)
			key = kb.buf
		}
		return m.spill.add(row, key)
	}
	var held int64
	var spilled []schema.Value
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
			if m.spill != nil {
				spilled = spilled[:0]
				for j := range n {
					spilled = append(spilled, b.Columns[j][i])
				}
				if err := spillRow(spilled); err != nil {
					return err
				}
				continue
			}
			row := make([]schema.Value, n)
			for j := range n {
				row[j] = b.Columns[j][i]
			}
			m.rows = append(m.rows, row)
			if held += rowMemory(row); held <= budget || len(m.keys) == 0 {
				// Without join keys there is no hash to partition
				// on: the nested loop needs the source in memory.
				continue
			}
			if m.noSpill {
				return fmt.Errorf("%w: more than %d bytes of source rows", ErrMergeSourceTooLarge, budget)
			}
			dir, err := spillDir(spec.SpillDir, snap)
			if err != nil {
				return err
			}
			if m.spill, err = newSpiller(dir, budget); err != nil {
				return err
			}
			for _, r := range m.rows {
				if err := spillRow(r); err != nil {
					return err
				}
			}
			m.rows = nil
		}
	}
	if m.spill != nil {
		if err := m.spill.finish(); err != nil {
			return err
		}
		if testSpilled != nil {
			testSpilled(m.spill)
		}
		m.nSource = m.spill.rows
		m.srcBits = make([]uint64, (m.nSource+63)/64)
		slog.Debug("merge: source spilled", "rows", m.nSource, "partitions", len(m.spill.leaves), "budget", budget, "dir", m.spill.dir)
		return nil
	}
	m.nSource = int64(len(m.rows))
	m.srcMatched = make([]bool, len(m.rows))
	if len(m.keys) == 0 {
		return nil
	}
	intKey := len(m.keys) == 1 && isIntegral(m.tsch.Fields[m.keys[0].tcol].Type)
	if intKey {
		m.intIndex = make(map[int64][]int32)
	} else {
		m.index = make(map[string][]int32)
	}
	for i, row := range m.rows {
		if !m.sourceKey(row, &kb, vals) {
			continue // a null key matches nothing
		}
		if intKey {
			m.intIndex[vals[0].Int64()] = append(m.intIndex[vals[0].Int64()], int32(i))
		} else {
			m.index[string(kb.buf)] = append(m.index[string(kb.buf)], int32(i))
		}
		m.observeKey(vals)
	}
	return nil
}

// sourceKey encodes the join key of a source row into kb and its values,
// cast to the target columns' types, into vals, and reports false for a
// key that is null (or cannot be one): it matches nothing.
func (m *merger) sourceKey(row []schema.Value, kb *keyBuilder, vals []schema.Value) bool {
	kb.buf = kb.buf[:0]
	for k, key := range m.keys {
		v, err := key.prog.Value2(nil, row)
		if err != nil || !kb.add(v, &m.tsch.Fields[key.tcol]) {
			return false
		}
		vals[k], _ = castTo(v, &m.tsch.Fields[key.tcol])
	}
	return true
}

// observeKey adds a source row's key values to the ranges and partition
// values that skip target files.
func (m *merger) observeKey(vals []schema.Value) {
	m.noKeys = false
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

// testSpilled, when set (by tests), is called with the spiller of a
// merge whose source was spilled.
var testSpilled func(*spiller)

// close removes the spilled source, if any.
func (m *merger) close() {
	if m.spill != nil {
		m.spill.close()
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
func (m *merger) candidates(ctx context.Context, pred expr.Expr) ([]*actions.Add, int64, error) {
	total, err := m.snap.NumFiles(ctx)
	if err != nil {
		return nil, 0, err
	}
	if l, ok := pred.(expr.Literal); ok && l.Value.Kind() == schema.KindBoolean && !l.Value.Bool() {
		return nil, total, nil // no row can match
	}
	s, err := scan.New(m.snap, scan.Options{Predicate: pred})
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
	var err error
	try := func(i int32) {
		if err != nil {
			return
		}
		var t expr.Tri
		if t, err = m.onProg.Test2(trow, m.rows[i]); err != nil {
			err = fmt.Errorf("merge: the merge condition %s: %w", m.onText, err)
		} else if t == expr.True {
			buf = append(buf, i)
		}
	}
	if m.intIndex != nil {
		v := trow[m.keys[0].tcol]
		if v.IsNull() {
			return buf, nil
		}
		for _, i := range m.intIndex[v.Int64()] {
			try(i)
		}
		return buf, err
	}
	if m.index == nil {
		if len(m.keys) > 0 {
			return buf, nil // the source has no non-null keys
		}
		for i := range m.rows {
			try(int32(i))
		}
		return buf, err
	}
	var kb keyBuilder
	for _, key := range m.keys {
		if !kb.add(trow[key.tcol], &m.tsch.Fields[key.tcol]) {
			return buf, nil
		}
	}
	for _, i := range m.index[string(kb.buf)] {
		try(i)
	}
	return buf, err
}

// holds reports whether the clause's condition is TRUE on a target row
// and a source row (either nil where the clause has no such side); a
// clause without a condition always holds.
func (c *plannedClause) holds(trow, srow []schema.Value) (bool, error) {
	if c.condProg == nil {
		return true, nil
	}
	t, err := c.condProg.Test2(trow, srow)
	if err != nil {
		return false, fmt.Errorf("merge: the clause condition %s: %w", c.text, err)
	}
	return t == expr.True, nil
}

// isIntegral reports whether values of t are integers read with Int64.
func isIntegral(t schema.DataType) bool {
	switch t {
	case schema.Byte, schema.Short, schema.Integer, schema.Long, schema.Date, schema.Timestamp, schema.TimestampNTZ:
		return true
	}
	return false
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
func (m *merger) decide(add *actions.Add, pos int64, trow []schema.Value) (decision, []schema.Value, error) {
	hits, srow, err := m.matchRow(add, pos, trow)
	if err != nil {
		return keep, nil, err
	}
	if hits > 0 {
		if hits > 1 && !m.multiMatchOK {
			return keep, nil, ErrMultipleMatch
		}
		for _, c := range m.matched {
			if ok, err := c.holds(trow, srow); err != nil || !ok {
				if err != nil {
					return keep, nil, err
				}
				continue
			}
			if c.action == ActionDelete {
				return matchedDelete, nil, nil
			}
			vals, err := m.values(c, trow, srow)
			return matchedUpdate, vals, err
		}
		return keep, nil, nil
	}
	for _, c := range m.bySrc {
		if ok, err := c.holds(trow, nil); err != nil || !ok {
			if err != nil {
				return keep, nil, err
			}
			continue
		}
		if c.action == ActionDelete {
			return sourceDelete, nil, nil
		}
		vals, err := m.values(c, trow, nil)
		return sourceUpdate, vals, err
	}
	return keep, nil, nil
}

// matchRow finds the source rows the target row trow, at position pos of
// add, matches, marks them matched, and returns how many there are and
// the first, in source order.
func (m *merger) matchRow(add *actions.Add, pos int64, trow []schema.Value) (int, []schema.Value, error) {
	if m.spill != nil {
		ids, rows, err := m.spillMatch(add, pos, trow)
		if len(ids) == 0 {
			return 0, nil, err
		}
		m.mu.Lock()
		for _, id := range ids {
			m.setMatched(id)
		}
		m.mu.Unlock()
		return len(ids), rows[0], err
	}
	var buf [4]int32
	hits, err := m.match(trow, buf[:0])
	if len(hits) == 0 {
		return 0, nil, err
	}
	m.mu.Lock()
	for _, i := range hits {
		m.srcMatched[i] = true
	}
	m.mu.Unlock()
	return len(hits), m.rows[hits[0]], err
}

// values computes the row a clause writes: an update starts from trow
// (generated columns left null, to be computed again), an insert from
// nulls; assigned columns are computed and converted to their types
// (plannedClause.stores).
func (m *merger) values(c plannedClause, trow, srow []schema.Value) ([]schema.Value, error) {
	out := make([]schema.Value, len(m.tsch.Fields))
	if trow != nil {
		copy(out, trow)
	}
	for i, e := range c.valueProgs {
		if e == nil {
			if m.generated[i] {
				out[i] = schema.Value{}
			}
			continue
		}
		v, err := e.Value2(trow, srow)
		if err != nil {
			return nil, fmt.Errorf("merge: the value of %q: %w", m.tsch.Fields[i].Name, err)
		}
		cv, err := store(v, c.stores[i], &m.tsch.Fields[i])
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		out[i] = cv
	}
	return out, nil
}

// rowFunc is the write.RowFunc of the merge's rewrite.
func (m *merger) rowFunc(add *actions.Add, pos int64, row []schema.Value) (write.Verdict, []schema.Value, error) {
	d, vals, err := m.decide(add, pos, row)
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
func (m *merger) findMatches(ctx context.Context, files []*actions.Add) error {
	if len(files) == 0 || m.nSource == 0 {
		return nil
	}
	fr, err := scan.NewFileReader(m.snap, scan.Options{})
	if err != nil {
		return err
	}
	defer fr.Close() // the stores of external roots it opened
	row := make([]schema.Value, len(m.tsch.Fields))
	for _, a := range files {
		err := fr.ReadFile(ctx, a, func(b *scan.FileBatch) error {
			for i := range b.Len {
				for j := range row {
					row[j] = b.Columns[j][i]
				}
				if _, _, err := m.matchRow(a, b.Positions[i], row); err != nil {
					return err
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
// them in batches of table rows. An error evaluating a condition is
// returned; one computing a row is yielded. A spilled source is not
// counted (-1) and all its errors are yielded: its rows are read once,
// as they are yielded.
func (m *merger) insertBatches() (int64, iter.Seq2[schema.Batch, error], error) {
	if len(m.notMatched) == 0 {
		return 0, nil, nil
	}
	if m.spill != nil {
		return -1, m.spillInserts(), nil
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
			ok, err := c.holds(nil, srow)
			if err != nil {
				return 0, nil, err
			}
			if !ok {
				continue
			}
			todo = append(todo, ins{i, k})
			break
		}
	}
	n := len(m.tsch.Fields)
	batches := func(yield func(schema.Batch, error) bool) {
		for start := 0; start < len(todo); start += insertBatchRows {
			end := min(start+insertBatchRows, len(todo))
			b := schema.Batch{Len: end - start, Columns: make([][]schema.Value, n)}
			for j := range b.Columns {
				b.Columns[j] = make([]schema.Value, b.Len)
			}
			for r, t := range todo[start:end] {
				vals, err := m.values(m.notMatched[t.clause], nil, m.rows[t.row])
				if err != nil {
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
	return int64(len(todo)), batches, nil
}

// fillMetrics adds up the per-file row counts of the files rewritten
// (the files removed: those whose rows all stay were left alone).
func (m *merger) fillMetrics(met *MergeMetrics, rw write.Rewritten, useDV bool) {
	removed := map[string]bool{}
	for _, r := range rw.Removes {
		removed[r.Path] = true
	}
	for path, fc := range m.counts {
		if !removed[path] {
			continue
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

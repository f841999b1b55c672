package write

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/big"
	"slices"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/txn"
)

// HighWaterMarks are the identity values a write allocated: for each
// top-level identity column (by logical name) that got at least one
// value, the last one, which becomes its delta.identity.highWaterMark
// when the write commits.
type HighWaterMarks map[string]int64

// identityCol is the allocation state of one identity column in one call
// of the row writer.
type identityCol struct {
	idx  int
	name string
	def  schema.Identity
	// next is the value to give next; exhausted when that value does not
	// fit in a long (the previous one was the last).
	next      int64
	exhausted bool
	// given: a value was allocated; last is the last one.
	given bool
	last  int64
}

// identityAlloc allocates the values of a table's identity columns to the
// new rows of one call of the row writer.
type identityAlloc struct {
	cols []identityCol
	// now[k] says that the row just filled got an allocated value in
	// column k (and did not give one).
	now []bool
}

// newIdentityAlloc returns the allocator of sch's identity columns, nil
// when it has none. A column's first value is the first of start + k*step
// (k >= 0) beyond its high-water mark in the step's direction, or start
// when it has none: PROTOCOL.md's rules, as Spark's GenerateIdentityValues
// and IdentityColumn.roundToNext compute it. Identity metadata that does
// not decode is deltaerr.ErrCorrupt; one on a nested field is not an
// identity column (Spark allows them only at the top level) and is
// ignored, as Spark ignores it.
func newIdentityAlloc(sch *schema.StructType) (*identityAlloc, error) {
	var a identityAlloc
	for i := range sch.Fields {
		f := &sch.Fields[i]
		def, ok, err := f.Identity()
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		c := identityCol{idx: i, name: f.Name, def: def}
		c.next, c.exhausted = firstIdentityValue(def)
		a.cols = append(a.cols, c)
	}
	if len(a.cols) == 0 {
		return nil, nil
	}
	a.now = make([]bool, len(a.cols))
	return &a, nil
}

// firstIdentityValue returns the first value to allocate for def, and
// true when there is none: the next one past the high-water mark does not
// fit in a long.
func firstIdentityValue(def schema.Identity) (int64, bool) {
	if !def.HasHighWaterMark {
		return def.Start, false
	}
	// k = floor((hwm - start) / step) + 1, at least 0; value = start + k*step.
	start, step := big.NewInt(def.Start), big.NewInt(def.Step)
	d := new(big.Int).Sub(big.NewInt(def.HighWaterMark), start)
	q, r := new(big.Int).QuoRem(d, step, new(big.Int))
	if r.Sign() != 0 && (r.Sign() < 0) != (step.Sign() < 0) {
		q.Sub(q, big.NewInt(1)) // floor, not truncation
	}
	q.Add(q, big.NewInt(1))
	if q.Sign() < 0 {
		q.SetInt64(0) // a high-water mark before start: start comes first
	}
	v := q.Mul(q, step).Add(q, start)
	if !v.IsInt64() {
		return 0, true
	}
	return v.Int64(), false
}

// fill gives the identity columns of one new row their values: a null in
// a column is allocated the next value; a value given is refused for
// GENERATED ALWAYS (ErrIdentityExplicit) and kept for BY DEFAULT. row is
// the row's number for errors. a.now says which columns were allocated.
func (a *identityAlloc) fill(vals []schema.Value, row int64, show func() string) error {
	for k := range a.cols {
		c := &a.cols[k]
		a.now[k] = false
		if !vals[c.idx].IsNull() {
			if !c.def.AllowExplicitInsert {
				return &ConstraintError{Kind: KindIdentity, Name: c.name, Row: row, Values: show(), Err: ErrIdentityExplicit}
			}
			continue
		}
		if c.exhausted {
			return &ConstraintError{Kind: KindIdentity, Name: c.name, Row: row, Values: show(), Err: ErrIdentityOverflow}
		}
		v := c.next
		vals[c.idx] = schema.LongValue(v)
		c.given, c.last = true, v
		if n := v + c.def.Step; (c.def.Step > 0) != (n > v) {
			c.exhausted = true
		} else {
			c.next = n
		}
		a.now[k] = true
	}
	return nil
}

// marks returns the high-water marks of the columns that got values, nil
// when none did.
func (a *identityAlloc) marks() HighWaterMarks {
	if a == nil {
		return nil
	}
	var m HighWaterMarks
	for _, c := range a.cols {
		if c.given {
			if m == nil {
				m = HighWaterMarks{}
			}
			m[c.name] = c.last
		}
	}
	return m
}

// posRange is a run of row positions in a data file, [from, to).
type posRange struct{ from, to int64 }

// addPos adds pos, which is not below any position already in rs.
func addPos(rs []posRange, pos int64) []posRange {
	if n := len(rs); n > 0 && rs[n-1].to == pos {
		rs[n-1].to++
		return rs
	}
	return append(rs, posRange{pos, pos + 1})
}

// inRanges reports whether pos is in rs, which are sorted.
func inRanges(rs []posRange, pos int64) bool {
	i, _ := slices.BinarySearchFunc(rs, pos, func(r posRange, p int64) int {
		switch {
		case r.to <= p:
			return -1
		case r.from > p:
			return 1
		}
		return 0
	})
	return i < len(rs) && rs[i].from <= pos && pos < rs[i].to
}

// rowsOut is what one call of the row writer for new rows wrote: the data
// files and change data, the high-water marks it allocated up to, the
// snapshot's marks it started from, and, per data file, which row
// positions got allocated values in each identity column (by the order of
// the allocator's columns), to allocate again (reallocate).
type rowsOut struct {
	adds      []actions.Add
	cdcs      []actions.CDC
	changes   bool // the rows went to insert change data too (cdcs)
	marks     HighWaterMarks
	from      string // identityMarks of the schema written for
	allocated map[string][][]posRange
}

// writeRows writes new rows as Rows (or, with changes, RowsWithChanges)
// does, allocating identity values, and says what it allocated.
func writeRows(ctx context.Context, snap *snapshot.Snapshot, batches iter.Seq2[Batch, error], opts Options, changes bool) (rowsOut, error) {
	w, err := newRowWriter(snap, opts, "")
	if err != nil {
		return rowsOut{}, err
	}
	w.newRows = true
	if changes {
		if w.inserts, err = newRowWriter(snap, opts, ChangeInsert); err != nil {
			return rowsOut{}, err
		}
	}
	if err := w.run(ctx, batches); err != nil {
		w.cleanup()
		return rowsOut{}, err
	}
	out := rowsOut{adds: w.adds, changes: changes, marks: w.ident.marks(), from: identityMarks(w.sch), allocated: w.allocated}
	if w.inserts != nil {
		out.cdcs = w.inserts.cdcs
	}
	return out, nil
}

// identityMarks is a key of the high-water marks of sch's identity
// columns, equal for two schemas whose marks are equal.
func identityMarks(sch *schema.StructType) string {
	var b []byte
	for i := range sch.Fields {
		if raw, ok := sch.Fields[i].Metadata.Get(schema.MetadataIdentityHighWaterMark); ok {
			b = fmt.Appendf(b, "%d:%s;", i, raw)
		}
	}
	return string(b)
}

// stale reports whether the rows were allocated values from other
// high-water marks than now's: a concurrent commit allocated values too,
// so these may collide with its own.
func (o *rowsOut) stale(now *snapshot.Snapshot) bool {
	return len(o.marks) > 0 && identityMarks(now.Schema()) != o.from
}

// reallocate writes the rows of o's files again for the table now shows,
// whose high-water marks moved since they were written (a concurrent
// writer allocated values), with the values o allocated allocated anew
// from now's marks, and deletes o's files. Values the rows gave (BY
// DEFAULT) are kept. An append that merged its schema cannot be
// written again on another snapshot: a conflict.
func (o *rowsOut) reallocate(ctx context.Context, now *snapshot.Snapshot, opts Options) (rowsOut, error) {
	if opts.Config != nil {
		return rowsOut{}, fmt.Errorf("write: a concurrent commit allocated identity values while this append merged its schema: %w", txn.ErrConflict)
	}
	ident, err := newIdentityAlloc(now.Schema())
	if err != nil {
		return rowsOut{}, err
	}
	var cols []string
	for _, f := range now.Schema().Fields {
		cols = append(cols, f.Name)
	}
	fr, err := scan.NewFileReader(now, scan.Options{Columns: cols})
	if err != nil {
		return rowsOut{}, err
	}
	defer fr.Close()
	// A generated column may use an identity column: it is computed
	// again for the rows that get new values.
	gen := GeneratedColumns(now.Schema())
	errStop := errors.New("stop")
	batches := func(yield func(Batch, error) bool) {
		for i := range o.adds {
			add := &o.adds[i]
			ranges := o.allocated[add.Path]
			err := fr.ReadFile(ctx, add, func(b *scan.FileBatch) error {
				for k, rs := range ranges {
					if len(rs) == 0 || k >= len(ident.cols) {
						continue
					}
					col := b.Columns[ident.cols[k].idx]
					for j := range b.Len {
						if inRanges(rs, b.Positions[j]) {
							col[j] = schema.Value{} // allocated again
							for _, g := range gen {
								b.Columns[g][j] = schema.Value{}
							}
						}
					}
				}
				if !yield(b.Batch, nil) {
					return errStop
				}
				return nil
			})
			if errors.Is(err, errStop) {
				return
			}
			if err != nil {
				yield(Batch{}, err)
				return
			}
		}
	}
	out, err := writeRows(ctx, now, batches, opts, o.changes)
	if err != nil {
		return rowsOut{}, err
	}
	o.drop(now)
	return out, nil
}

// drop deletes o's files, best effort.
func (o *rowsOut) drop(snap *snapshot.Snapshot) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	keys := make([]string, 0, len(o.adds)+len(o.cdcs))
	for _, a := range o.adds {
		keys = append(keys, a.Path)
	}
	for _, c := range o.cdcs {
		keys = append(keys, c.Path)
	}
	for _, p := range keys {
		if key, err := snap.Location().Key(p); err == nil {
			_ = snap.Store().Delete(ctx, key)
		}
	}
}

// withHighWaterMarks returns m with the identity high-water marks of its
// schema moved to marks (columns by logical name): each to the furthest,
// in its step's direction, of its own and the one given, as Spark's
// IdentityColumn.updateToValidHighWaterMark never lowers a mark. changed
// is false when no mark moved.
func withHighWaterMarks(m actions.Metadata, marks HighWaterMarks) (actions.Metadata, bool, error) {
	if len(marks) == 0 {
		return m, false, nil
	}
	sch, err := schema.Parse(m.SchemaString)
	if err != nil {
		return m, false, err
	}
	changed := false
	for i := range sch.Fields {
		f := &sch.Fields[i]
		v, ok := marks[f.Name]
		if !ok {
			continue
		}
		def, ok, err := f.Identity()
		if err != nil {
			return m, false, err
		}
		if !ok {
			continue // not an identity column here (RESTORE of an older schema)
		}
		if def.HasHighWaterMark && (def.Step > 0 && def.HighWaterMark >= v || def.Step < 0 && def.HighWaterMark <= v) {
			continue
		}
		f.Metadata = setMeta(f.Metadata, schema.MetadataIdentityHighWaterMark, fmt.Appendf(nil, "%d", v))
		changed = true
	}
	if !changed {
		return m, false, nil
	}
	raw, err := sch.MarshalJSON()
	if err != nil {
		return m, false, err
	}
	m.SchemaString = string(raw)
	return m, true, nil
}

// KeepHighWaterMarks returns m with each identity column's high-water
// mark moved forward to the one the column of the same name has in sch,
// the table's current schema: what a commit that puts older metadata
// back (RESTORE) must do so that no value generated before is generated
// again, as Spark's RestoreTableCommand does with
// IdentityColumn.copySchemaWithMergedHighWaterMarks.
func KeepHighWaterMarks(m actions.Metadata, sch *schema.StructType) (actions.Metadata, error) {
	out, _, err := withHighWaterMarks(m, marksOf(sch))
	return out, err
}

// currentMarks returns the high-water marks snap's schema holds.
func currentMarks(snap *snapshot.Snapshot) HighWaterMarks { return marksOf(snap.Schema()) }

// marksOf returns the high-water marks sch holds.
func marksOf(sch *schema.StructType) HighWaterMarks {
	var m HighWaterMarks
	for i := range sch.Fields {
		f := &sch.Fields[i]
		if def, ok, err := f.Identity(); err == nil && ok && def.HasHighWaterMark {
			if m == nil {
				m = HighWaterMarks{}
			}
			m[f.Name] = def.HighWaterMark
		}
	}
	return m
}

// StageHighWaterMarks stages in tx the metadata that records marks, the
// identity values rows written for tx's snapshot were allocated (see
// Rewritten.HighWaterMarks): the metadata the commit has (tx.Metadata:
// the staged one, as a MERGE that evolves the schema stages, else the
// snapshot's) with each mark moved forward, in the same commit as the
// rows, as Spark commits them. It stages nothing when no mark moves. The rows must have been
// written for tx.Snapshot() itself: a concurrent commit that allocated
// values too is then a conflict (txn's metadata rule), and the operation
// is planned again on the new version, so values are allocated again
// from its marks.
func StageHighWaterMarks(tx *txn.Transaction, marks HighWaterMarks) error {
	if len(marks) == 0 {
		return nil
	}
	m, changed, err := withHighWaterMarks(tx.Metadata(), marks) // over a schema the commit evolves too
	if err != nil || !changed {
		return err
	}
	tx.SetMetadata(m)
	return nil
}

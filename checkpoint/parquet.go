package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/parquet-go/parquet-go"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/logstore"
)

// readAhead is the smallest range fetched from the store by storeReaderAt.
const readAhead = 1 << 20

// storeReaderAt is an io.ReaderAt over one object of a Store. It keeps the
// last range it fetched, since column chunks are read sequentially in small
// pieces.
type storeReaderAt struct {
	ctx   context.Context
	store logstore.Store
	key   string
	size  int64

	mu     sync.Mutex
	bufOff int64
	buf    []byte
	err    error // first store error, reported by Read
}

func (r *storeReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("checkpoint: negative offset")
	}
	if off >= r.size {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for n < len(p) {
		pos := off + int64(n)
		if pos >= r.size {
			return n, io.EOF
		}
		if pos >= r.bufOff && pos < r.bufOff+int64(len(r.buf)) {
			n += copy(p[n:], r.buf[pos-r.bufOff:])
			continue
		}
		length := max(int64(len(p)-n), readAhead)
		length = min(length, r.size-pos)
		b, err := r.store.GetRange(r.ctx, r.key, pos, length)
		if err != nil {
			if r.err == nil {
				r.err = err
			}
			return n, err
		}
		if len(b) == 0 {
			return n, io.EOF
		}
		r.bufOff, r.buf = pos, b
	}
	return n, nil
}

// storeErr returns the first error the store gave, if any.
func (r *storeReaderAt) storeErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Top-level checkpoint columns, by action kind.
var topColumns = []struct {
	set  ActionSet
	name string
}{
	{Protocol, "protocol"},
	{Metadata, "metaData"},
	{Txn, "txn"},
	{DomainMetadata, "domainMetadata"},
	{CheckpointMetadata, "checkpointMetadata"},
	{Sidecar, "sidecar"},
	{Remove, "remove"},
	{Add, "add"},
}

// readParquet reads one Parquet checkpoint file (a classic checkpoint, a
// part, a V2 checkpoint or a sidecar), yielding the kinds in want. When
// follow is set, the sidecar actions found are returned.
func readParquet(ctx context.Context, store logstore.Store, key string, want ActionSet, follow bool, fn func([]actions.Action) error) ([]actions.Sidecar, error) {
	info, err := store.Stat(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: reading %s: %w", key, err)
	}
	ra := &storeReaderAt{ctx: ctx, store: store, key: key, size: info.Size}
	// wrap turns a decoding error into the right kind: a store failure is
	// returned as such, anything else means the bytes are bad.
	wrap := func(err error, what string) error {
		if serr := ra.storeErr(); serr != nil {
			return fmt.Errorf("checkpoint: reading %s: %w", key, serr)
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		var ce *deltaerr.CorruptError
		if errors.As(err, &ce) {
			return err
		}
		return &deltaerr.CorruptError{Path: key, Reason: what, Err: err}
	}

	var file *parquet.File
	err = guard(key, func() error {
		var err error
		file, err = parquet.OpenFile(ra, info.Size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
		return err
	})
	if err != nil {
		return nil, wrap(err, "not a valid parquet file")
	}

	var root *node
	if err := guard(key, func() error {
		counter := 0
		root = buildNode(file.Root(), nil, &counter)
		return nil
	}); err != nil {
		return nil, wrap(err, "bad parquet schema")
	}

	// The top-level columns to read.
	var tops []topCol
	for _, tc := range topColumns {
		yield := want&tc.set != 0
		need := yield || (tc.set == Sidecar && follow)
		if !need {
			continue
		}
		n := root.child(tc.name)
		if n == nil || n.kind != structKind {
			continue // absent (or not an action struct): nothing of this kind
		}
		tops = append(tops, topCol{set: tc.set, node: n, yield: yield})
	}
	if len(tops) == 0 {
		return nil, nil
	}

	var sidecars []actions.Sidecar
	batch := make([]actions.Action, 0, 256)
	for _, rg := range file.RowGroups() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		batch = batch[:0]
		var flushErr error
		err := guard(key, func() error {
			d := newRowGroupData(rg, root.numLeaves)
			return d.decode(tops, func(a actions.Action, isSidecar bool) error {
				if isSidecar && follow {
					sidecars = append(sidecars, *a.Sidecar)
					if want&Sidecar == 0 {
						return nil
					}
				}
				batch = append(batch, a)
				if len(batch) >= batchSize {
					if err := callFn(fn, batch); err != nil {
						flushErr = err
						return errStop
					}
					batch = batch[:0]
				}
				return nil
			})
		})
		if flushErr != nil {
			return nil, flushErr
		}
		if err != nil {
			return nil, wrap(err, "bad parquet data")
		}
		if len(batch) > 0 {
			if err := fn(batch); err != nil {
				return nil, err
			}
		}
	}
	return sidecars, nil
}

// errStop stops decoding after fn returned an error.
var errStop = errors.New("checkpoint: stopped")

type topCol struct {
	set   ActionSet
	node  *node
	yield bool
}

// rowGroupData holds the values of the loaded leaf columns of one row group.
//
// Only the rows where a column's top-level action is present are kept: a
// checkpoint row holds one action, so most values of most columns are nulls
// of their top-level struct, and keeping them would cost memory for nothing.
type rowGroupData struct {
	rg      parquet.RowGroup
	numRows int
	cols    []*leafData // per leaf; nil until loaded
	scratch [][]parquet.Value
}

// leafData is one loaded leaf column: the values of the rows in which its
// top-level struct is present.
type leafData struct {
	vals   []parquet.Value
	rows   []int32 // row number of each kept row, increasing
	starts []int32 // index in vals of each kept row's first value, plus the end
}

func newRowGroupData(rg parquet.RowGroup, numLeaves int) *rowGroupData {
	n := rg.NumRows()
	if n < 0 || n > 1<<31-1 {
		fail("row group has %d rows", n)
	}
	return &rowGroupData{
		rg:      rg,
		numRows: int(n),
		cols:    make([]*leafData, numLeaves),
	}
}

// load reads every leaf column under n that is not loaded yet, except those
// under the children named in skip. topDef is the definition level at which
// the top-level struct is present.
func (d *rowGroupData) load(n *node, topDef int, skip map[string]bool) error {
	if n.kind == leafKind {
		if d.cols[n.first] == nil {
			return d.loadLeaf(n.first, topDef)
		}
		return nil
	}
	for _, c := range n.children {
		if skip[c.name] {
			continue
		}
		if err := d.load(c, topDef, nil); err != nil {
			return err
		}
	}
	return nil
}

func (d *rowGroupData) loadLeaf(leaf, topDef int) error {
	chunks := d.rg.ColumnChunks()
	if leaf >= len(chunks) {
		fail("row group has %d columns, schema has more", len(chunks))
	}
	pages := chunks[leaf].Pages()
	defer pages.Close()
	ld := &leafData{}
	buf := make([]parquet.Value, 1024)
	row := -1
	keep := false
	for {
		p, err := pages.ReadPage()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		vr := p.Values()
		for {
			n, err := vr.ReadValues(buf)
			for _, v := range buf[:n] {
				if v.RepetitionLevel() == 0 {
					row++
					keep = v.DefinitionLevel() >= topDef
					if keep {
						ld.rows = append(ld.rows, int32(row))
						ld.starts = append(ld.starts, int32(len(ld.vals)))
					}
				} else if row < 0 {
					fail("column %d starts inside a row", leaf)
				}
				if !keep {
					continue
				}
				if k := v.Kind(); (k == parquet.ByteArray || k == parquet.FixedLenByteArray) && !v.IsNull() {
					v = v.Clone()
				}
				ld.vals = append(ld.vals, v)
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			if n == 0 {
				fail("column %d: page reader made no progress", leaf)
			}
		}
	}
	if row+1 != d.numRows {
		fail("column %d holds %d rows, the row group %d", leaf, row+1, d.numRows)
	}
	ld.starts = append(ld.starts, int32(len(ld.vals)))
	d.cols[leaf] = ld
	return nil
}

// present returns the rows, in order, in which top-level node n is present,
// checking that all its loaded leaves agree.
func (d *rowGroupData) present(n *node) []int32 {
	var rows []int32
	first := true
	for j := n.first; j < n.first+n.numLeaves; j++ {
		ld := d.cols[j]
		if ld == nil {
			continue
		}
		if first {
			rows, first = ld.rows, false
			continue
		}
		if !slices.Equal(rows, ld.rows) {
			fail("columns of %s disagree on which rows hold it", n.name)
		}
	}
	return rows
}

// rowCols returns the values of kept row k (an index into present(n)) for
// the leaves under n, relative to n.first; leaves not loaded have nil
// slices.
func (d *rowGroupData) rowCols(n *node, k int) [][]parquet.Value {
	if cap(d.scratch) < n.numLeaves {
		d.scratch = make([][]parquet.Value, n.numLeaves)
	}
	cols := d.scratch[:n.numLeaves]
	for j := range cols {
		ld := d.cols[n.first+j]
		if ld == nil {
			cols[j] = nil
			continue
		}
		if k+1 >= len(ld.starts) {
			fail("column %d of %s has too few rows", j, n.name)
		}
		cols[j] = ld.vals[ld.starts[k]:ld.starts[k+1]]
	}
	return cols
}

var lazyAddFields = map[string]bool{"stats_parsed": true, "partitionValues_parsed": true}

// decode converts the rows of the row group to actions, in row order.
func (d *rowGroupData) decode(tops []topCol, emit func(a actions.Action, isSidecar bool) error) error {
	rows := make([][]int32, len(tops))
	for ti, t := range tops {
		var skip map[string]bool
		if t.set == Add || t.set == Remove {
			skip = lazyAddFields
		}
		if err := d.load(t.node, t.node.def, skip); err != nil {
			return err
		}
		rows[ti] = d.present(t.node)
	}
	next := make([]int, len(tops))
	for {
		// The top-level column whose next present row comes first.
		best := -1
		for ti := range tops {
			if next[ti] < len(rows[ti]) && (best < 0 || rows[ti][next[ti]] < rows[best][next[best]]) {
				best = ti
			}
		}
		if best < 0 {
			return nil
		}
		t, k := tops[best], next[best]
		next[best]++
		cols := d.rowCols(t.node, k)
		m, _ := t.node.decodeStruct(cols).(map[string]any)
		if m == nil {
			continue
		}
		var a actions.Action
		switch t.set {
		case Protocol:
			a.Protocol = toProtocol(m)
		case Metadata:
			a.Metadata = toMetadata(m)
		case Txn:
			a.Txn = toTxn(m)
		case DomainMetadata:
			a.DomainMetadata = toDomainMetadata(m)
		case CheckpointMetadata:
			a.CheckpointMetadata = toCheckpointMetadata(m)
		case Sidecar:
			a.Sidecar = toSidecar(m)
		case Add, Remove:
			if err := d.fillParsed(t.node, k, m); err != nil {
				return err
			}
			if t.set == Add {
				a.Add = toAdd(m)
			} else {
				a.Remove = toRemove(m)
			}
		}
		if err := emit(a, t.set == Sidecar); err != nil {
			return err
		}
	}
}

// fillParsed decodes stats_parsed and partitionValues_parsed of kept row k
// of top-level node n into m when the string forms are missing, loading
// their columns on first use.
func (d *rowGroupData) fillParsed(n *node, k int, m map[string]any) error {
	for _, f := range [...]struct{ str, parsed string }{{"stats", "stats_parsed"}, {"partitionValues", "partitionValues_parsed"}} {
		if m[f.str] != nil {
			continue
		}
		c := n.child(f.parsed)
		if c == nil {
			continue
		}
		if d.cols[c.first] == nil {
			if err := d.load(c, n.def, nil); err != nil {
				return err
			}
			d.present(n) // the new columns must agree on the rows
		}
		cols := n.subCols(c, d.rowCols(n, k))
		v := c.decodeValue(cols)
		if pm, ok := v.(map[string]any); ok && f.parsed == "partitionValues_parsed" {
			// A null partition value is still a partition value.
			for _, cc := range c.children {
				if _, ok := pm[cc.name]; !ok {
					pm[cc.name] = nil
				}
			}
		}
		if v != nil {
			m[f.parsed] = v
		}
	}
	return nil
}

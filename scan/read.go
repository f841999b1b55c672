package scan

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/internal/datafile"
	"github.com/godelta/delta/internal/dv"
	"github.com/godelta/delta/location"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
)

// readPlan says which physical columns to read from each data file and
// how to build the output columns from them and from partition values.
type readPlan struct {
	table   *schema.StructType // logical schema the plan was made from
	read    *schema.StructType // physical fields read from files
	readIdx map[string]int     // logical top-level name -> column of read
	out     []outColumn
	parts   map[string]partColumn
}

// outColumn is where an output column comes from: a column read from the
// file, a partition value, or a row tracking metadata column.
type outColumn struct {
	name string
	// read is the index into the read columns: of the column itself, or,
	// for a metadata column, of its materialized column (-1 when the table
	// names none); -1 for a partition column.
	read int
	meta metaColumn
}

// metaColumn says which row tracking metadata column an output column is.
type metaColumn uint8

const (
	notMeta metaColumn = iota
	metaRowID
	metaRowCommitVersion
)

// rowTracking are the names of the hidden columns that hold materialized
// row ids and row commit versions (empty when the table names none).
type rowTracking struct{ idColumn, versionColumn string }

// newReadPlan plans reading the output fields plus the top-level columns in
// extra (the predicate's) from files written with table's schema, whose
// physical form (column mapping applied) is physical, field for field.
// Partition columns are never read. Output fields named MetadataRowID or
// MetadataRowCommitVersion (that are not table columns) read the hidden
// column rt names, if any, to compute stable row ids and versions from.
func newReadPlan(table, physical *schema.StructType, parts map[string]partColumn, out []schema.StructField, extra []string, rt rowTracking) readPlan {
	need := map[string]bool{}
	for _, f := range out {
		need[f.Name] = true
	}
	for _, n := range extra {
		need[n] = true
	}
	p := readPlan{table: table, read: &schema.StructType{}, readIdx: map[string]int{}, parts: parts}
	for i, f := range table.Fields {
		if !need[f.Name] {
			continue
		}
		if _, isPart := parts[f.Name]; isPart {
			continue
		}
		p.readIdx[f.Name] = len(p.read.Fields)
		p.read.Fields = append(p.read.Fields, physical.Fields[i])
	}
	hidden := map[string]int{} // materialized column -> column of read
	readHidden := func(name string) int {
		if name == "" {
			return -1
		}
		if i, ok := hidden[name]; ok {
			return i
		}
		i := len(p.read.Fields)
		p.read.Fields = append(p.read.Fields, schema.StructField{Name: name, Type: schema.Long, Nullable: true})
		hidden[name] = i
		return i
	}
	for _, f := range out {
		if _, isPart := parts[f.Name]; isPart {
			p.out = append(p.out, outColumn{name: f.Name, read: -1})
			continue
		}
		if _, isCol := table.Field(f.Name); !isCol {
			switch f.Name {
			case MetadataRowID:
				p.out = append(p.out, outColumn{name: f.Name, read: readHidden(rt.idColumn), meta: metaRowID})
				continue
			case MetadataRowCommitVersion:
				p.out = append(p.out, outColumn{name: f.Name, read: readHidden(rt.versionColumn), meta: metaRowCommitVersion})
				continue
			}
		}
		p.out = append(p.out, outColumn{name: f.Name, read: p.readIdx[f.Name]})
	}
	return p
}

// reader is the planned reading of the data files of one snapshot: what
// Scan, Changes and FileReader share. Every data file the library reads
// goes through reader.readFile (fileRead.run): the one place that turns a
// log path into a store key, loads deletion vectors, opens the Parquet
// file, maps columns and injects partition values.
type reader struct {
	store logstore.Store
	opts  Options
	table *schema.StructType // logical table schema
	// physical is table with column mapping applied, field for field.
	physical *schema.StructType
	out      *schema.StructType // logical output schema
	mode     schema.ColumnMappingMode
	byID     bool
	parts    map[string]partColumn // logical partition column -> its type and key
	plan     readPlan
	pred     expr.Expr
	statsC   []string // predicate columns that have statistics (not partitions)
	m        counters
}

// FileReader reads single data files of a snapshot as logical rows: the
// reading a scan does for each file it keeps, for code that chooses the
// files itself and must know where each row sits in its file (rewrites of
// files: overwrite, and the DELETE, UPDATE, MERGE and OPTIMIZE to come).
//
// The file's path is resolved as the log gives it: a relative path is
// percent-decoded and must stay under the table root; an absolute one must
// lie under the table root or a root the table trusts (see package
// location; ErrPathEscapesRoot otherwise). Its deletion
// vector (inline, relative or absolute) removes rows. Partition values are
// parsed to their column types (physical keys under column mapping);
// columns are matched by physical name, or by field id under id mapping;
// narrower Parquet types are widened to the table's type (typeWidening).
// Options.Columns choose and order the output columns, and
// Options.Predicate keeps the rows on which it is TRUE. RowGroups and
// ReadFileRowGroups read a file in parts, a range of row groups at a time,
// with the same rows and positions (a distributed read splits files so).
// A FileReader is safe for concurrent use.
//
// A FileReader opens the store of a trusted outside root (a shallow
// clone's source) the first time a file needs it and keeps it for
// the next files; it owns those stores, and Close closes them. Close it
// when done: a FileReader that reads no file outside the table root holds
// nothing, but one that did holds a client per external root (an SDK
// client and its connections, on a cloud store) until Close.
type FileReader struct {
	r   *reader
	ext *location.Stores // the outside roots' stores, closed by Close
}

// NewFileReader plans reading data files of snap with opts (Concurrency
// is not used). It fails as New does. The caller closes the FileReader.
func NewFileReader(snap *snapshot.Snapshot, opts Options) (*FileReader, error) {
	r, err := newReader(snap, opts)
	if err != nil {
		return nil, err
	}
	return &FileReader{r: r, ext: snap.Location().NewStores()}, nil
}

// Close closes the stores of external roots the FileReader opened. A
// ReadFile of a file under an external root after Close fails with
// logstore.ErrClosed; the table's own store is the snapshot's and stays
// open. A second Close returns nil. Close must not be called while a
// ReadFile is running.
func (fr *FileReader) Close() error { return fr.ext.Close() }

// Schema returns the logical schema of the batches ReadFile gives.
func (fr *FileReader) Schema() *schema.StructType { return fr.r.out }

// FileBatch is a run of rows read from one data file: the rows in the
// reader's column order, and where each sits in the file.
type FileBatch struct {
	schema.Batch
	// Positions[i] is the position in the file of row i: its index among
	// all the file's rows, from 0 and in file order, as deletion vectors
	// count them. Rows a deletion vector or the predicate drop leave gaps.
	Positions []int64
}

// fileBatch is a FileBatch with the pooled memory of its columns.
type fileBatch struct {
	FileBatch
	backing [][]schema.Value // pooled memory of Columns, see recycle
}

// release returns the batch's memory to the pool.
func (b *fileBatch) release() {
	recycle(b.backing...)
	b.backing, b.Columns, b.Len, b.Positions = nil, nil, 0, nil
}

// ReadFile reads the live rows of the data file add (those its deletion
// vector keeps and the predicate matches) and calls fn with each batch of
// them, in file order. A batch and its slices are valid until fn returns;
// the Values may be kept. An error from fn stops the read and is returned.
// A file the log names but storage lacks is deltaerr.ErrCorrupt.
func (fr *FileReader) ReadFile(ctx context.Context, add *actions.Add, fn func(*FileBatch) error) error {
	return fr.readFile(ctx, add, datafile.RowGroupRange{}, fn)
}

// RowGroups returns the number of row groups of the data file add, by
// its footer (which it reads): the parts ReadFileRowGroups reads one
// range at a time, so that a file can be read in parts by several
// readers (a distributed read). Errors are those of ReadFile.
func (fr *FileReader) RowGroups(ctx context.Context, add *actions.Add) (int, error) {
	f, err := openData(ctx, fr.ext, add.Path, add.Size)
	if err != nil {
		return 0, err
	}
	return f.NumRowGroups(), nil
}

// ReadFileRowGroups is ReadFile of the row groups from to to-1 of the
// file only (from 0, in file order; to past the last is the last). The
// rows of a file's row groups, read range by range, are the rows ReadFile
// gives, with the same positions: the deletion vector and the predicate
// apply as they do to the whole file. A range with from < 0 or to < from
// is deltaerr.ErrInvalidArgument.
func (fr *FileReader) ReadFileRowGroups(ctx context.Context, add *actions.Add, from, to int, fn func(*FileBatch) error) error {
	if from < 0 || to < from {
		return fmt.Errorf("scan: row groups %d to %d of %s: %w", from, to, add.Path, deltaerr.ErrInvalidArgument)
	}
	return fr.readFile(ctx, add, datafile.RowGroupRange{Set: true, From: from, To: to}, fn)
}

// readFile reads the row groups rg of add (all when rg is not set).
func (fr *FileReader) readFile(ctx context.Context, add *actions.Add, rg datafile.RowGroupRange, fn func(*FileBatch) error) error {
	pv, err := fr.r.partitionValues(add)
	if err != nil {
		return err
	}
	t := &fileRead{r: fr.r, ext: fr.ext, out: fr.r.out, add: add, pv: pv, dv: add.DeletionVector, filter: fr.r.pred, positions: true, rowGroups: rg}
	return t.run(ctx, func(b *fileBatch) error {
		defer b.release()
		return fn(&b.FileBatch)
	})
}

// fileRead is the reading of one data file.
type fileRead struct {
	r      *reader
	ext    *location.Stores   // where outside roots' stores come from; its reading owns it
	out    *schema.StructType // output schema
	plan   *readPlan
	add    *actions.Add
	path   string // the file's path as the log gives it
	size   int64
	pv     map[string]schema.Value
	dv     *actions.DeletionVector
	filter expr.Expr
	// keepFrom, if set, is called once before reading and returns which
	// row positions to keep, besides the deletion vector (the change data
	// feed keeps only the rows a new deletion vector deletes, say).
	keepFrom func(ctx context.Context, ext *location.Stores) (func(pos int64) bool, error)
	// extra are constant columns appended to every output row.
	extra []schema.Value
	// positions fills FileBatch.Positions.
	positions bool
	// rowGroups, when set, limits the reading to those row groups.
	rowGroups datafile.RowGroupRange
}

// run reads the file and emits one output batch per batch read.
func (t *fileRead) run(ctx context.Context, emit func(*fileBatch) error) error {
	s := t.r
	if t.plan == nil {
		t.plan = &s.plan
	}
	if t.add != nil && t.path == "" {
		t.path, t.size = t.add.Path, t.add.Size
	}
	f, err := openData(ctx, t.ext, t.path, t.size)
	if err != nil {
		return err
	}
	var deleted *dv.Bitmap
	if t.dv != nil {
		deleted, err = s.loadDV(ctx, t.ext, t.dv)
		if errors.Is(err, deltaerr.ErrFileNotFound) {
			return err // names the file, and says what to do
		}
		if err != nil {
			return fmt.Errorf("deletion vector of %s: %w", t.path, err)
		}
	}
	var keep func(int64) bool
	if t.keepFrom != nil {
		if keep, err = t.keepFrom(ctx, t.ext); err != nil {
			return fmt.Errorf("deletion vectors of %s: %w", t.path, err)
		}
	}
	// Fresh batches: when every row of a batch is kept, its columns become
	// the output's without a copy.
	// Each batch's memory comes from the pool; lastAlloc is the memory of
	// the batch being handed to the callback below.
	var lastAlloc []schema.Value
	alloc := func(n int) []schema.Value {
		lastAlloc = allocValues(n)[:n]
		return lastAlloc
	}
	opts := datafile.ReadOptions{ByFieldID: s.byID, BatchSize: s.opts.BatchSize, Fresh: true, Alloc: alloc, RowGroups: t.rowGroups}
	sel := make([]int, 0, 1024)
	var filter *rowFilter
	if t.filter != nil {
		filter = newRowFilter(t.filter, t.plan, t.pv)
	}
	var emitted error // the consumer's error: not the file's, so not named by it
	err = readBatches(ctx, f, t.plan.read, opts, func(b *datafile.Batch) error {
		s.m.rowsRead.Add(int64(b.Len))
		sel = sel[:0]
		for i := range b.Len {
			pos := b.FirstRow + int64(i)
			if deleted != nil && deleted.Contains(uint64(pos)) {
				s.m.rowsDeleted.Add(1)
				continue
			}
			if keep != nil && !keep(pos) {
				continue
			}
			if filter != nil {
				ok, err := filter.keeps(b.Columns, i)
				if err != nil {
					return err
				}
				if !ok {
					s.m.rowsFiltered.Add(1)
					continue
				}
			}
			sel = append(sel, i)
		}
		if len(sel) == 0 {
			recycle(lastAlloc)
			return nil
		}
		out := t.project(b, sel, lastAlloc)
		if t.positions {
			out.Positions = make([]int64, len(sel))
			for k, i := range sel {
				out.Positions[k] = b.FirstRow + int64(i)
			}
		}
		emitted = emit(out)
		return emitted
	})
	if emitted != nil && errors.Is(err, emitted) {
		return emitted
	}
	if err != nil {
		return fileErr(t.path, err)
	}
	return nil
}

// readBatches is f.Read, except that a read of no columns (a count, or
// only partition columns) yields batches of empty rows without reading any
// column chunk.
func readBatches(ctx context.Context, f *datafile.File, want *schema.StructType, opts datafile.ReadOptions, fn func(*datafile.Batch) error) error {
	if len(want.Fields) > 0 {
		return f.Read(ctx, want, opts, fn)
	}
	size := int64(opts.BatchSize)
	if size <= 0 {
		size = 8192
	}
	start, rows := f.RowGroupRows(opts.RowGroups)
	for first := start; first < start+rows; first += size {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(size, start+rows-first)
		if err := fn(&datafile.Batch{Len: int(n), FirstRow: first}); err != nil {
			return err
		}
	}
	return nil
}

// openData opens the data file at path (as the log gives it; size 0 when
// unknown), resolved by ext's location, and parses its footer.
func openData(ctx context.Context, ext *location.Stores, path string, size int64) (*datafile.File, error) {
	store, key, err := ext.Locate(ctx, path)
	if err != nil {
		return nil, err
	}
	if size <= 0 {
		info, err := store.Stat(ctx, key)
		if err != nil {
			return nil, fileErr(path, err)
		}
		size = info.Size
	}
	f, err := datafile.OpenObject(ctx, store, key, size)
	if err != nil {
		return nil, fileErr(path, err)
	}
	return f, nil
}

// fileErr is the error of reading the data file at path: a
// *deltaerr.MissingFileError when storage lacks it (the store's error
// reachable, its text, which names the path again, left out), else err
// with the path.
func fileErr(path string, err error) error {
	if errors.Is(err, logstore.ErrNotFound) && !errors.Is(err, deltaerr.ErrCorrupt) {
		return &deltaerr.MissingFileError{What: "data file", Path: path, Err: err}
	}
	return fmt.Errorf("data file %s: %w", path, err)
}

// project builds the output batch from the selected rows of b, whose
// columns are fresh (see ReadOptions.Fresh) and live in mem: a column of
// which every row is kept is taken as it is, and the output batch then owns
// mem; otherwise mem is recycled once copied from.
func (r *fileRead) project(b *datafile.Batch, sel []int, mem []schema.Value) *fileBatch {
	n := len(sel)
	cols := make([][]schema.Value, len(r.plan.out)+len(r.extra))
	// One allocation for every output column that needs one.
	need := len(r.extra)
	for _, oc := range r.plan.out {
		if oc.read < 0 || n != b.Len || oc.meta != notMeta {
			need++
		}
	}
	var all []schema.Value
	out := &fileBatch{FileBatch: FileBatch{Batch: schema.Batch{Len: n, Columns: cols}}}
	if need > 0 {
		all = allocValues(n * need)[:n*need]
		out.backing = append(out.backing, all)
	}
	if n == b.Len {
		out.backing = append(out.backing, mem) // taken over, zero copy
	} else {
		defer recycle(mem) // copied out of
	}
	next := func() []schema.Value {
		col := all[:n:n]
		all = all[n:]
		return col
	}
	for j, oc := range r.plan.out {
		if oc.read >= 0 && n == b.Len && oc.meta == notMeta {
			cols[j] = b.Columns[oc.read][:n:n]
			continue
		}
		col := next()
		if oc.meta != notMeta {
			r.rowTracking(oc, b, sel, col)
		} else if oc.read < 0 {
			v := r.pv[oc.name]
			for k := range col {
				col[k] = v
			}
		} else {
			src := b.Columns[oc.read]
			for k, i := range sel {
				col[k] = src[i]
			}
		}
		cols[j] = col
	}
	for e, v := range r.extra {
		j := len(r.plan.out) + e
		col := next()
		for k := range col {
			col[k] = v
		}
		cols[j] = col
	}
	return out
}

// rowTracking fills col with the stable row ids or row commit versions
// (as oc asks) of the rows sel of b: the materialized value where the
// file's hidden column holds one, else the default one the add gives
// (baseRowId plus the row's position, or defaultRowCommitVersion), else
// null (a file without row tracking fields, a change data file).
func (r *fileRead) rowTracking(oc outColumn, b *datafile.Batch, sel []int, col []schema.Value) {
	var mat []schema.Value
	if oc.read >= 0 {
		mat = b.Columns[oc.read]
	}
	var def *int64
	if r.add != nil {
		if oc.meta == metaRowID {
			def = r.add.BaseRowID
		} else {
			def = r.add.DefaultRowCommitVersion
		}
	}
	for k, i := range sel {
		switch {
		case mat != nil && !mat[i].IsNull():
			col[k] = mat[i]
		case def == nil:
			col[k] = schema.Value{}
		case oc.meta == metaRowID:
			col[k] = schema.LongValue(*def + b.FirstRow + int64(i))
		default:
			col[k] = schema.LongValue(*def)
		}
	}
}

// Batch memory is recycled: the scan hands a batch to its caller, and once
// the caller's loop body returns, the batch's values go back to this pool
// for the next file read. Pooled slices hold len 0 and their capacity.
var valuePool sync.Pool

// allocValues returns a slice with room for at least n values.
func allocValues(n int) []schema.Value {
	if p, ok := valuePool.Get().(*[]schema.Value); ok && cap(*p) >= n {
		return (*p)[:0]
	} else if ok {
		valuePool.Put(p)
	}
	return make([]schema.Value, 0, n)
}

// recycle returns allocations made by allocValues to the pool. Nothing
// may refer to them afterwards.
func recycle(mems ...[]schema.Value) {
	for _, m := range mems {
		if cap(m) == 0 {
			continue
		}
		m = m[:0]
		valuePool.Put(&m)
	}
}

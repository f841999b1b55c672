package write

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/internal/datafile"
	"github.com/godelta/delta/location"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/tableconfig"
)

// DefaultMaxBuffered is Options.MaxBuffered when it is 0: 64 MiB, so that
// an append of any size stays within a few hundred MB of memory (see
// bench/RESULTS.md, "Issue 12: streaming writes").
const DefaultMaxBuffered = 64 << 20

// DefaultTargetFileSize is the size at which Rows starts a new data file
// when Options.TargetFileSize is 0: 128 MiB, as Spark's default Parquet
// block size and delta-rs's target file size.
const DefaultTargetFileSize = 128 << 20

// Batch is a run of logical rows, column by column (schema.Batch, the
// form a scan yields too): Columns holds one slice per field of the table
// schema, in schema order, partition columns included, each at least Len
// long. Nested values are schema.Values of kind struct, array or map. Rows
// does not modify the slices.
type Batch = schema.Batch

// Options tune Rows. The zero value is usable.
type Options struct {
	// TargetFileSize is the size in bytes at which a data file is closed
	// and the next one begun; 0 means DefaultTargetFileSize. A file may
	// exceed it by up to one batch's share.
	TargetFileSize int64
	// Compression is the Parquet codec, as datafile.WriteOptions takes it;
	// empty means snappy.
	Compression string
	// RowGroupSize is datafile.WriteOptions.RowGroupSize: the row group
	// size of each file, at most.
	RowGroupSize int64
	// MaxBuffered bounds the bytes that the data files one call has open
	// (one per partition written to) buffer together, in the row groups
	// they have not written yet; 0 means DefaultMaxBuffered. When the
	// files together hold more, the largest writes its row group early.
	// Change data files have a budget of their own. This, with the
	// store's upload buffers, is what a write holds in memory, however
	// large its files and however many partitions it writes, as Spark's
	// Parquet memory manager shrinks row groups when many writers are open.
	MaxBuffered int64
	// Require is a predicate every row must satisfy (TRUE; FALSE or NULL
	// is a *ConstraintError of kind KindPredicate): the replaceWhere of an
	// overwrite.
	Require expr.Expr
	// Now gives the files' modificationTime; nil means time.Now.
	Now func() time.Time
	// Config, when set, is the table configuration to write for instead
	// of the snapshot's: an append that merges its schema writes its rows
	// under the metadata it commits with them (see CommitOptions.MergeSchema).
	Config *tableconfig.Config
}

// Rows writes the rows of batches as data files of the table snap shows,
// under its root in snap.Store(), and returns their add actions
// (dataChange true, stats set), for a transaction to commit. See the
// package doc for the checks and the layout. It writes no log entry: until
// a commit names them, the files are invisible.
//
// On any error (a constraint, a malformed batch, an error yielded by
// batches, storage) Rows deletes, best effort, the files it wrote, and
// returns the error with no adds. Constraint violations are
// *ConstraintError; a batch whose shape does not fit the schema, or a
// partition value whose type is not its column's, is ErrBatch.
//
// Rows allocates the values of identity columns (see the package doc) but
// does not record the new high-water marks, which must land in the same
// commit: on a table with identity columns, write rows with Append,
// Overwrite or Rewrite's Insert, which do. (A transaction of txn alone
// refuses such a table: see tableconfig.WriteCheckedRows.)
func Rows(ctx context.Context, snap *snapshot.Snapshot, batches iter.Seq2[Batch, error], opts Options) ([]actions.Add, error) {
	out, err := writeRows(ctx, snap, batches, opts, false)
	return out.adds, err
}

// Change types of the change data feed, the values of the _change_type
// column of change-data files.
const (
	ChangeInsert     = "insert"
	ChangeDelete     = "delete"
	ChangeUpdatePre  = "update_preimage"
	ChangeUpdatePost = "update_postimage"
)

// changeTypeColumn is the column change-data files add to the data
// columns.
const changeTypeColumn = "_change_type"

// changeDataDir is the directory, under the table root, of change-data
// files.
const changeDataDir = "_change_data/"

// RowsWithChanges is Rows that also writes every row, as checked and
// completed (generated columns), to change-data files of change type
// insert, and returns their cdc actions too. A commit that holds any cdc
// action is read from its cdc actions alone by the change data feed, so an
// operation that writes change data for some rows (the deleted rows of an
// overwrite) must write its new rows this way.
func RowsWithChanges(ctx context.Context, snap *snapshot.Snapshot, batches iter.Seq2[Batch, error], opts Options) ([]actions.Add, []actions.CDC, error) {
	out, err := writeRows(ctx, snap, batches, opts, true)
	return out.adds, out.cdcs, err
}

// rowWriter is the state of one Rows call.
type rowWriter struct {
	store    logstore.Store
	sch      *schema.StructType
	checks   *checks
	partIdx  []int    // schema indexes of the partition columns
	partPhys []string // their physical names
	dataIdx  []int    // schema indexes of the data columns
	physical *schema.StructType
	wopts    datafile.WriteOptions
	target   int64
	// maxBuffered is Options.MaxBuffered, defaulted.
	maxBuffered int64
	now         func() time.Time
	ext         string

	open    map[string]*openFile // by partition directory
	order   []string             // directories in first-seen order
	adds    []actions.Add
	written []string // keys put, for cleanup
	fileNo  int
	row     int64

	// change is the change type of the rows when this writer writes
	// change-data files (cdc actions go to cdcs), empty for data files.
	change string
	cdcs   []actions.CDC
	// inserts, when set, also gets every row, as insert change data.
	inserts *rowWriter
	// tracked: the files have, after the data columns, the hidden columns
	// of materialized row ids and row commit versions (see materialize),
	// and rows come with their values (addTracked).
	tracked bool

	// newRows is set while the rows given are new ones (an insert, not a
	// row a rewrite keeps or updates): only they get column defaults and
	// identity values. ident allocates identity values (nil: the table has
	// no identity column); allocated holds, per data file written, the
	// positions of the rows that got values, per identity column.
	// defaults are the column defaults.
	newRows   bool
	ident     *identityAlloc
	allocated map[string][][]posRange
	defaults  []colDefault
}

// openFile is the data file being written for one partition, and the rows
// staged for it from the current batch.
type openFile struct {
	dir   string
	pv    map[string]string
	out   *sink // where the file being written goes; nil between files
	w     *datafile.Writer
	stage [][]schema.Value
	n     int
	// written is the rows the file being written holds already; alloc
	// the positions of its rows that got identity values, per column.
	written int64
	alloc   [][]posRange
}

// newRowWriter returns a writer of data files, or of change-data files
// of change type change when it is not empty. A change-data file holds the
// data columns and _change_type, has no statistics, and lives under
// _change_data/. Only a writer of data files checks rows: inserted rows
// reach change data through it (inserts), already checked and completed,
// and other changes are of rows the table held.
func newRowWriter(snap *snapshot.Snapshot, opts Options, change string) (*rowWriter, error) {
	cfg := snap.Config()
	if opts.Config != nil {
		cfg = opts.Config
	}
	sch := cfg.Schema()
	m := cfg.Metadata()
	mode := cfg.ColumnMappingMode()
	var c *checks
	var ident *identityAlloc
	var defaults []colDefault
	if change == "" {
		var err error
		if c, err = compileChecks(sch, cfg.Constraints(), opts.Require); err != nil {
			return nil, err
		}
		if ident, err = newIdentityAlloc(sch); err != nil {
			return nil, err
		}
		if defaults, err = columnDefaults(sch); err != nil {
			return nil, err
		}
	}
	w := &rowWriter{store: snap.Store(), sch: sch, checks: c, target: opts.TargetFileSize, now: opts.Now, open: map[string]*openFile{}, change: change, ident: ident, defaults: defaults}
	w.maxBuffered = opts.MaxBuffered
	if w.maxBuffered <= 0 {
		w.maxBuffered = DefaultMaxBuffered
	}
	if w.target <= 0 {
		w.target = DefaultTargetFileSize
	}
	if w.now == nil {
		w.now = time.Now
	}
	data := &schema.StructType{}
	for i := range sch.Fields {
		f := &sch.Fields[i]
		if slices.Contains(m.PartitionColumns, f.Name) {
			w.partIdx = append(w.partIdx, i)
			w.partPhys = append(w.partPhys, f.PhysicalName(mode))
			continue
		}
		w.dataIdx = append(w.dataIdx, i)
		data.Fields = append(data.Fields, *f)
	}
	if len(w.partIdx) != len(m.PartitionColumns) {
		return nil, fmt.Errorf("write: partition columns %v are not all in the schema: %w", m.PartitionColumns, ErrInvalidSpec)
	}
	if cfg.IcebergCompatV2() && change == "" {
		// icebergCompatV2: partition values are materialized in the data
		// files, after the data columns (Iceberg readers read them there).
		for _, j := range w.partIdx {
			w.dataIdx = append(w.dataIdx, j)
			data.Fields = append(data.Fields, sch.Fields[j])
		}
	}
	var err error
	if w.physical, err = data.PhysicalSchema(mode); err != nil {
		return nil, err
	}
	w.wopts = datafile.WriteOptions{
		ByFieldID:    mode != schema.ColumnMappingNone,
		Compression:  opts.Compression,
		RowGroupSize: opts.RowGroupSize,
		Stats:        statsOptions(data, mode, cfg),
	}
	if change != "" {
		w.physical.Fields = append(w.physical.Fields[:len(w.physical.Fields):len(w.physical.Fields)],
			schema.StructField{Name: changeTypeColumn, Type: schema.String, Nullable: true})
		w.wopts.Stats = datafile.StatsOptions{StatsColumns: []string{}}
	}
	switch strings.ToLower(opts.Compression) {
	case "", "snappy":
		w.ext = ".snappy.parquet"
	case "none", "uncompressed":
		w.ext = ".parquet"
	default:
		w.ext = "." + strings.ToLower(opts.Compression) + ".parquet"
	}
	return w, nil
}

// materialize makes w, a writer of data files, write after the data
// columns the hidden columns of materialized row ids and row commit
// versions, when the table has row tracking enabled and names them
// (delta.rowTracking.materializedRowIdColumnName and
// materializedRowCommitVersionColumnName): both nullable LONG, without
// field ids and without statistics, as Spark writes them. Rows then go
// through addTracked. A table that names no columns (a writer that
// enabled row tracking without them broke the protocol) gets none, and
// its rewritten rows fresh ids. A name that is also a column of the table
// (Spark refuses to assign one) is deltaerr.ErrCorrupt.
func (w *rowWriter) materialize(cfg *tableconfig.Config) error {
	if w.change != "" || !cfg.RowTracking() {
		return nil
	}
	id, ok := cfg.MaterializedRowIDColumn()
	version, ok2 := cfg.MaterializedRowCommitVersionColumn()
	if !ok || !ok2 {
		return nil
	}
	for _, name := range []string{id, version} {
		if _, clash := w.physical.Field(name); clash {
			return fmt.Errorf("write: the hidden row tracking column %q is also a column of the table: %w", name, deltaerr.ErrCorrupt)
		}
	}
	n := len(w.physical.Fields)
	w.physical = &schema.StructType{Fields: append(w.physical.Fields[:n:n],
		schema.StructField{Name: id, Type: schema.Long, Nullable: true},
		schema.StructField{Name: version, Type: schema.Long, Nullable: true})}
	w.wopts.Stats.Exclude = []string{id, version}
	w.tracked = true
	return nil
}

// statsOptions applies delta.dataSkippingNumIndexedCols and
// delta.dataSkippingStatsColumns (logical names, mapped to physical ones;
// names that match no column are skipped).
func statsOptions(data *schema.StructType, mode schema.ColumnMappingMode, cfg *tableconfig.Config) datafile.StatsOptions {
	// tightBounds where Spark writes it: on tables that support deletion
	// vectors (the checkpoint's stats_parsed has it there too).
	so := datafile.StatsOptions{TightBounds: cfg.IsFeatureSupported(actions.FeatureDeletionVectors)}
	switch n := cfg.NumIndexedCols(); {
	case n == 0:
		so.StatsColumns = []string{}
	case n < 0:
		so.NumIndexedCols = -1
	default:
		so.NumIndexedCols = n
	}
	if names, ok := cfg.StatsColumns(); ok {
		so.StatsColumns = []string{}
		for _, name := range names {
			path := splitColumn(name)
			if len(path) == 0 {
				continue
			}
			if phys, err := data.PhysicalPath(path, mode); err == nil {
				so.StatsColumns = append(so.StatsColumns, joinColumn(phys))
			} else if f, ok := data.FieldFold(path[0]); ok {
				path[0] = f.Name
				if phys, err := data.PhysicalPath(path, mode); err == nil {
					so.StatsColumns = append(so.StatsColumns, joinColumn(phys))
				}
			}
		}
	}
	return so
}

// splitColumn splits a dotted column name; a part in backticks may hold
// dots.
func splitColumn(s string) []string {
	var out []string
	var cur strings.Builder
	quoted := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '`':
			if quoted && i+1 < len(s) && s[i+1] == '`' {
				cur.WriteByte('`')
				i++
				continue
			}
			quoted = !quoted
		case c == '.' && !quoted:
			out = append(out, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	if s != "" {
		out = append(out, cur.String())
	}
	return out
}

// joinColumn joins physical names with dots, quoting those that hold one.
func joinColumn(path []string) string {
	parts := make([]string, len(path))
	for i, p := range path {
		if strings.ContainsAny(p, ".`") {
			p = "`" + strings.ReplaceAll(p, "`", "``") + "`"
		}
		parts[i] = p
	}
	return strings.Join(parts, ".")
}

func (w *rowWriter) run(ctx context.Context, batches iter.Seq2[Batch, error]) error {
	if err := w.feed(ctx, batches, w.add, func() error { return w.flush(ctx, false) }); err != nil {
		return err
	}
	return w.flush(ctx, true)
}

// feed passes each row of batches, checked for shape, to add, and calls
// flush after each batch, so that staging holds no more than a batch.
func (w *rowWriter) feed(ctx context.Context, batches iter.Seq2[Batch, error], add func([]schema.Value) error, flush func() error) error {
	vals := make([]schema.Value, len(w.sch.Fields))
	for b, err := range batches {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := w.checkShape(b); err != nil {
			return err
		}
		for i := range b.Len {
			for j := range vals {
				vals[j] = b.Columns[j][i]
			}
			if err := add(vals); err != nil {
				return err
			}
		}
		if err := flush(); err != nil {
			return err
		}
	}
	return nil
}

// add checks and completes one row (when the writer checks rows) and
// stages it for its partition's file, and for the insert change data.
func (w *rowWriter) add(vals []schema.Value) error { return w.addAs(vals, w.change) }

// addAs is add, for a writer of change data, of a row of change type
// change.
func (w *rowWriter) addAs(vals []schema.Value, change string) error {
	f, err := w.stage(vals)
	if err != nil {
		return err
	}
	if w.change != "" {
		f.stage[len(w.dataIdx)] = append(f.stage[len(w.dataIdx)], schema.StringValue(change))
	}
	if w.tracked { // a row without row tracking values: fresh ids
		f.stage[len(w.dataIdx)] = append(f.stage[len(w.dataIdx)], schema.Value{})
		f.stage[len(w.dataIdx)+1] = append(f.stage[len(w.dataIdx)+1], schema.Value{})
	}
	return w.added(f, vals)
}

// addTracked is add, for a writer that materializes row tracking, of a
// row whose stable row id and row commit version are id and version: a
// copied row keeps both, an updated row its id with a null version (the
// new file's defaultRowCommitVersion). A null keeps the default.
func (w *rowWriter) addTracked(vals []schema.Value, id, version schema.Value) error {
	if !w.tracked {
		return w.add(vals)
	}
	f, err := w.stage(vals)
	if err != nil {
		return err
	}
	f.stage[len(w.dataIdx)] = append(f.stage[len(w.dataIdx)], id)
	f.stage[len(w.dataIdx)+1] = append(f.stage[len(w.dataIdx)+1], version)
	return w.added(f, vals)
}

// stage checks and completes one row (when the writer checks rows) and
// stages its data columns for its partition's file, which it returns.
func (w *rowWriter) stage(vals []schema.Value) (*openFile, error) {
	if w.newRows {
		for _, d := range w.defaults {
			if vals[d.idx].IsNull() {
				vals[d.idx] = d.value
			}
		}
	}
	alloc := w.newRows && w.ident != nil
	if alloc {
		if err := w.ident.fill(vals, w.row, func() string { return showRow(w.sch, vals) }); err != nil {
			return nil, err
		}
	}
	if w.checks != nil {
		if err := w.checks.apply(vals, w.row); err != nil {
			return nil, err
		}
	}
	f, err := w.fileFor(vals)
	if err != nil {
		return nil, err
	}
	if alloc {
		pos := f.written + int64(f.n)
		for k, got := range w.ident.now {
			if got {
				if f.alloc == nil {
					f.alloc = make([][]posRange, len(w.ident.now))
				}
				f.alloc[k] = addPos(f.alloc[k], pos)
			}
		}
	}
	for k, j := range w.dataIdx {
		f.stage[k] = append(f.stage[k], vals[j])
	}
	return f, nil
}

// added counts the row just staged in f, and passes it on to the insert
// change data.
func (w *rowWriter) added(f *openFile, vals []schema.Value) error {
	f.n++
	w.row++
	if w.inserts != nil {
		return w.inserts.add(vals)
	}
	return nil
}

func (w *rowWriter) checkShape(b Batch) error {
	if b.Len < 0 || len(b.Columns) != len(w.sch.Fields) {
		return fmt.Errorf("%w: %d columns for a schema of %d fields (Len %d)", ErrBatch, len(b.Columns), len(w.sch.Fields), b.Len)
	}
	for j, c := range b.Columns {
		if len(c) < b.Len {
			return fmt.Errorf("%w: column %s has %d values for %d rows", ErrBatch, w.sch.Fields[j].Name, len(c), b.Len)
		}
	}
	return nil
}

// fileFor returns the open file of the row's partition, creating it.
func (w *rowWriter) fileFor(vals []schema.Value) (*openFile, error) {
	var dir strings.Builder
	var raws []string
	for k, j := range w.partIdx {
		v := vals[j]
		f := &w.sch.Fields[j]
		if !v.IsNull() && !sameType(v.Type(), f.Type) {
			return nil, fmt.Errorf("%w: row %d: partition column %s holds a %s, not a %s", ErrBatch, w.row, f.Name, v.Kind(), f.Type)
		}
		raw := schema.FormatPartitionValue(v)
		raws = append(raws, raw)
		dir.WriteString(partitionDir(w.partPhys[k], raw))
		dir.WriteByte('/')
	}
	key := dir.String()
	if f, ok := w.open[key]; ok {
		return f, nil
	}
	f := &openFile{dir: key, stage: make([][]schema.Value, len(w.physical.Fields))}
	if len(w.partIdx) > 0 {
		f.pv = make(map[string]string, len(w.partIdx))
		for k, raw := range raws {
			f.pv[w.partPhys[k]] = raw
		}
	} else {
		f.pv = map[string]string{}
	}
	w.open[key] = f
	w.order = append(w.order, key)
	return f, nil
}

func sameType(a, b schema.DataType) bool {
	return a != nil && b != nil && a.String() == b.String()
}

// flush writes the staged rows of every partition, closing files that
// reached the target size, or all of them when final.
func (w *rowWriter) flush(ctx context.Context, final bool) error {
	for _, key := range w.order {
		f := w.open[key]
		if f.n > 0 {
			if f.w == nil {
				if err := w.start(ctx, f); err != nil {
					return err
				}
			}
			if err := f.w.Write(f.stage, f.n); err != nil {
				return fmt.Errorf("rows %d to %d: %w", w.row-int64(f.n), w.row-1, err)
			}
			f.written += int64(f.n)
			for k := range f.stage {
				clear(f.stage[k])
				f.stage[k] = f.stage[k][:0]
			}
			f.n = 0
		}
		if f.w != nil && (final || f.w.Size() >= w.target) {
			if err := w.finish(ctx, f); err != nil {
				return err
			}
		}
	}
	if final {
		clear(w.open)
		w.order = w.order[:0]
	} else if err := w.bound(); err != nil {
		return err
	}
	if w.inserts != nil {
		return w.inserts.flush(ctx, final)
	}
	return nil
}

// bound writes the row groups of the open files that buffer the most,
// until what they buffer together is within the budget (MaxBuffered).
func (w *rowWriter) bound() error {
	for {
		var total int64
		var largest *openFile
		for _, key := range w.order {
			f := w.open[key]
			if f.w == nil {
				continue
			}
			b := f.w.Buffered()
			total += b
			if largest == nil || b > largest.w.Buffered() {
				largest = f
			}
		}
		if total <= w.maxBuffered || largest == nil || largest.w.Buffered() == 0 {
			return nil
		}
		if err := largest.w.Flush(); err != nil {
			return err
		}
	}
}

// start begins a new data file for f: it names the file and opens its
// sink in the store, which the datafile.Writer streams into.
func (w *rowWriter) start(ctx context.Context, f *openFile) error {
	key := f.dir + fmt.Sprintf("part-%05d-%s.c000%s", w.fileNo, uuid.NewString(), w.ext)
	if w.change != "" {
		key = changeDataDir + f.dir + fmt.Sprintf("cdc-%05d-%s.c000%s", w.fileNo, uuid.NewString(), w.ext)
	}
	w.fileNo++
	out, err := openSink(ctx, w.store, key)
	if err != nil {
		return fmt.Errorf("write: data file %s: %w", key, err)
	}
	dw, err := datafile.NewWriter(out, w.physical, w.wopts)
	if err != nil {
		out.Abort()
		return err
	}
	f.out, f.w = out, dw
	return nil
}

// finish closes the data file of f, closes its sink (only then is the
// file known to be whole in the store) and records its add, whose size is
// the bytes the sink took; f is then ready for a new file. On failure the
// sink is aborted.
func (w *rowWriter) finish(ctx context.Context, f *openFile) error {
	stats, err := f.w.Close()
	out := f.out
	alloc := f.alloc
	f.w, f.out, f.written, f.alloc = nil, nil, 0, nil
	if err != nil {
		out.Abort()
		return err
	}
	key := out.key
	// Recorded before Close: a Close that fails may still have landed.
	w.written = append(w.written, key)
	if err := out.Close(); err != nil {
		return fmt.Errorf("write: data file %s: %w", key, err)
	}
	if w.change != "" {
		w.cdcs = append(w.cdcs, actions.CDC{Path: location.EncodePath(key), PartitionValues: maps.Clone(f.pv), Size: out.n})
		return nil
	}
	if alloc != nil {
		if w.allocated == nil {
			w.allocated = map[string][][]posRange{}
		}
		w.allocated[location.EncodePath(key)] = alloc
	}
	w.adds = append(w.adds, actions.Add{
		Path:             location.EncodePath(key),
		PartitionValues:  maps.Clone(f.pv),
		Size:             out.n,
		ModificationTime: w.now().UnixMilli(),
		DataChange:       true,
		Stats:            stats.JSON(),
	})
	return nil
}

// cleanup, on a failed call, aborts the files being written and deletes,
// best effort, the files finished.
func (w *rowWriter) cleanup() {
	for _, f := range w.open {
		if f.out != nil {
			f.out.Abort()
			f.w, f.out = nil, nil
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, key := range w.written {
		_ = w.store.Delete(ctx, key)
	}
	if w.inserts != nil {
		w.inserts.cleanup()
	}
}

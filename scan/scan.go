package scan

import (
	"context"
	"fmt"
	"iter"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/tableconfig"
)

// The row tracking metadata columns, as Spark names them: a scan returns
// them when Options.Columns names them, on a table with row tracking
// enabled (delta.enableRowTracking). Both are LONG. MetadataRowID is each
// row's stable row id and MetadataRowCommitVersion its stable row commit
// version (PROTOCOL.md "Row Tracking"): the value materialized in the
// file's hidden column (delta.rowTracking.materializedRowIdColumnName,
// materializedRowCommitVersionColumnName) when it holds one, else the
// add's baseRowId plus the row's position in its file, or its
// defaultRowCommitVersion. A table column of the same name wins over them.
const (
	MetadataRowID            = "_metadata.row_id"
	MetadataRowCommitVersion = "_metadata.row_commit_version"
)

// Options choose what a scan returns. The zero Options reads every column
// of every row.
type Options struct {
	// Columns are the top-level logical column names to return, in order;
	// nil returns all columns in schema order. Names are matched exactly,
	// then case-insensitively. MetadataRowID and MetadataRowCommitVersion
	// may be named too.
	Columns []string
	// Predicate keeps the rows for which it is true; nil keeps all rows.
	// Its columns may be any top-level column or nested struct field
	// ("a.b"), whether returned or not.
	Predicate expr.Expr
	// Concurrency is how many files are read at once; 0 means GOMAXPROCS.
	Concurrency int
	// BatchSize is the most rows a batch holds; 0 means 8192.
	BatchSize int
	// PartitionTimeZone is the zone in which to read timestamp partition
	// values written without an offset ("2021-09-08 11:11:11"). The
	// protocol and delta-rs take them as UTC, the default (nil); Spark
	// writes them in its session time zone, so a table written by a Spark
	// session set to another zone reads right only with that zone here.
	// Values with "Z" or an offset are exact either way.
	PartitionTimeZone *time.Location
}

// Metrics count what a scan did. Files* are known once planning has run
// (after the first batch, or after Files is drained); Rows* grow as rows are
// read.
type Metrics struct {
	FilesTotal       int64 // live files in the snapshot
	FilesSkippedPart int64 // skipped on partition values
	FilesSkippedStat int64 // skipped on statistics
	FilesRead        int64 // opened and read
	RowsRead         int64 // rows read from data files
	RowsDeleted      int64 // dropped by deletion vectors
	RowsFiltered     int64 // dropped by the predicate
	RowsReturned     int64
}

// FilesSkipped returns the files the scan did not read.
func (m Metrics) FilesSkipped() int64 { return m.FilesSkippedPart + m.FilesSkippedStat }

// File is a data file a scan will read: its add action and its partition
// values, parsed to their column types and keyed by logical column name.
type File struct {
	Add             *actions.Add
	PartitionValues map[string]schema.Value
}

// Scan is a planned read of a snapshot. Create it with New. A Scan is safe
// for concurrent use, and each call of Rows, Batches or Files runs the scan
// anew; it holds no resource between calls, so there is nothing to close:
// the stores of outside roots (a shallow clone's source) a run opens are closed when the run
// ends (the loop finishes, stops early, or meets an error).
// Metrics add up what its runs have done so far.
type Scan struct {
	*reader // the per-file reading, shared with FileReader
	snap    *snapshot.Snapshot
	stats   *expr.StatsDecoder // decodes the statistics of statsC; nil when none
}

// counters are the atomic counts behind Metrics.
type counters struct {
	filesTotal, skippedPart, skippedStat, filesRead   atomic.Int64
	rowsRead, rowsDeleted, rowsFiltered, rowsReturned atomic.Int64
}

type partColumn struct {
	typ      schema.DataType
	physical string // key in add.partitionValues
}

// New plans a scan of snap. It fails with deltaerr.ErrInvalidArgument when
// a column or a predicate column is not in the table, and with
// deltaerr.ErrUnsupportedFeature when the table needs a reader feature the
// data path does not support.
func New(snap *snapshot.Snapshot, opts Options) (*Scan, error) {
	r, err := newReader(snap, opts)
	if err != nil {
		return nil, err
	}
	s := &Scan{reader: r, snap: snap}
	if len(s.statsC) > 0 {
		s.stats = expr.NewStatsDecoder(s.table, s.mode, s.statsC)
	}
	return s, nil
}

// newReader plans the reading of data files of snap: the output columns,
// the columns the predicate needs, partition columns and column mapping.
func newReader(snap *snapshot.Snapshot, opts Options) (*reader, error) {
	p := snap.Protocol()
	if err := tableconfig.ReadSupported(&p); err != nil {
		return nil, err
	}
	s := &reader{store: snap.Store(), opts: opts, table: snap.Schema(), pred: opts.Predicate}
	if s.table == nil {
		return nil, fmt.Errorf("snapshot %d has no schema: %w", snap.Version(), deltaerr.ErrCorrupt)
	}
	s.mode = columnMappingMode(snap)
	s.byID = s.mode == schema.ColumnMappingByID
	s.parts = map[string]partColumn{}
	for _, name := range snap.Metadata().PartitionColumns {
		f, ok := s.table.Field(name)
		if !ok {
			if f, ok = s.table.FieldFold(name); !ok {
				return nil, fmt.Errorf("partition column %q is not in the schema: %w", name, deltaerr.ErrCorrupt)
			}
		}
		s.parts[f.Name] = partColumn{typ: f.Type, physical: f.PhysicalName(s.mode)}
	}

	// Output columns.
	var outFields []schema.StructField
	if opts.Columns == nil {
		outFields = slices.Clone(s.table.Fields)
	} else {
		for _, c := range opts.Columns {
			f, err := s.field(c)
			if err != nil && (c == MetadataRowID || c == MetadataRowCommitVersion) {
				if !snap.Config().RowTracking() {
					return nil, fmt.Errorf("column %q: the table does not have row tracking enabled: %w", c, deltaerr.ErrInvalidArgument)
				}
				f, err = &schema.StructField{Name: c, Type: schema.Long, Nullable: true}, nil
			}
			if err != nil {
				return nil, err
			}
			outFields = append(outFields, *f)
		}
	}
	s.out = &schema.StructType{Fields: outFields}

	// Predicate columns must exist; the top-level ones are read too.
	var predTop []string
	if s.pred != nil {
		types := map[string]schema.DataType{}
		for _, c := range expr.Columns(s.pred) {
			top, typ, err := s.resolvePredColumn(c)
			if err != nil {
				return nil, err
			}
			types[c] = typ
			predTop = append(predTop, top)
			if _, isPart := s.parts[top]; !isPart {
				s.statsC = append(s.statsC, c)
			}
		}
		// A predicate that is Unknown on every row by its form matches
		// nothing: say so instead of returning no rows.
		if err := expr.CheckPredicate(s.pred, func(c string) (schema.DataType, bool) {
			t, ok := types[c]
			return t, ok
		}); err != nil {
			return nil, fmt.Errorf("scan: predicate %s: %w", s.pred, err)
		}
	}
	physical, err := s.table.PhysicalSchema(s.mode)
	if err != nil {
		return nil, fmt.Errorf("physical schema: %w", err)
	}
	s.physical = physical
	var rt rowTracking
	if cfg := snap.Config(); cfg.RowTracking() {
		rt.idColumn, _ = cfg.MaterializedRowIDColumn()
		rt.versionColumn, _ = cfg.MaterializedRowCommitVersionColumn()
	}
	s.plan = newReadPlan(s.table, physical, s.parts, outFields, predTop, rt)
	return s, nil
}

func columnMappingMode(snap *snapshot.Snapshot) schema.ColumnMappingMode {
	return snap.Config().ColumnMappingMode()
}

// field resolves a top-level output column by name, exactly or ignoring
// case.
func (s *reader) field(name string) (*schema.StructField, error) {
	if f, ok := s.table.Field(name); ok {
		return f, nil
	}
	if f, ok := s.table.FieldFold(name); ok {
		return f, nil
	}
	return nil, fmt.Errorf("column %q is not in the table schema: %w", name, deltaerr.ErrInvalidArgument)
}

// resolvePredColumn checks a predicate column ("a" or "a.b.c") and returns
// its top-level column's name. A name that is itself a top-level column
// (even with dots in it) wins over a nested path.
func (s *reader) resolvePredColumn(name string) (string, schema.DataType, error) {
	if f, err := s.field(name); err == nil {
		return f.Name, f.Type, nil
	}
	path := strings.Split(name, ".")
	f, err := s.field(path[0])
	if err != nil {
		return "", nil, fmt.Errorf("predicate column %q is not in the table schema: %w", name, deltaerr.ErrInvalidArgument)
	}
	t := f.Type
	for _, seg := range path[1:] {
		st, ok := t.(*schema.StructType)
		if !ok {
			return "", nil, fmt.Errorf("predicate column %q: %q is not a struct: %w", name, seg, deltaerr.ErrInvalidArgument)
		}
		sf, ok := st.Field(seg)
		if !ok {
			if sf, ok = st.FieldFold(seg); !ok {
				return "", nil, fmt.Errorf("predicate column %q is not in the table schema: %w", name, deltaerr.ErrInvalidArgument)
			}
		}
		t = sf.Type
	}
	return f.Name, t, nil
}

// Schema returns the logical schema of the rows the scan returns.
func (s *Scan) Schema() *schema.StructType { return s.out }

// Snapshot returns the snapshot the scan reads.
func (s *Scan) Snapshot() *snapshot.Snapshot { return s.snap }

// Metrics returns the counts so far of this Scan's runs.
func (s *Scan) Metrics() Metrics {
	return Metrics{
		FilesTotal:       s.m.filesTotal.Load(),
		FilesSkippedPart: s.m.skippedPart.Load(),
		FilesSkippedStat: s.m.skippedStat.Load(),
		FilesRead:        s.m.filesRead.Load(),
		RowsRead:         s.m.rowsRead.Load(),
		RowsDeleted:      s.m.rowsDeleted.Load(),
		RowsFiltered:     s.m.rowsFiltered.Load(),
		RowsReturned:     s.m.rowsReturned.Load(),
	}
}

// Files yields the files the scan reads, after partition pruning and
// statistics-based skipping, in the snapshot's order. A partition value
// that cannot be parsed as its column's type is an error wrapping
// deltaerr.ErrCorrupt. A scan without a predicate has the snapshot read
// its checkpoint's files on first use, under ctx; a scan with one, on a
// snapshot that has not read them, streams them instead
// (snapshot.Snapshot.StreamFiles: the same files in the same order, memory
// following the files yielded, the checkpoint read again by each call).
// An error reading them is yielded too.
func (s *Scan) Files(ctx context.Context) iter.Seq2[File, error] {
	return func(yield func(File, error) bool) {
		var perr error
		var keep func(map[string]string) bool
		if s.pred != nil && len(s.parts) > 0 {
			// Prune on the partition values as the log has them, before the
			// snapshot builds the file's add action.
			keep = func(raw map[string]string) bool {
				s.m.filesTotal.Add(1)
				pv, err := s.partitionValuesOf(raw, "")
				if err != nil {
					if perr == nil {
						perr = err
					}
					return true // reported below
				}
				if expr.ExcludesPartition(s.pred, s.partitionLookup(pv)) {
					s.m.skippedPart.Add(1)
					return false
				}
				return true
			}
		}
		files := s.snap.FilesMatching
		if s.pred != nil {
			// A selective plan of a snapshot that has not read its files
			// streams the checkpoint and keeps only what it yields.
			files = s.snap.StreamFiles
		}
		for add, err := range files(ctx, keep) {
			if err != nil {
				yield(File{}, err)
				return
			}
			if keep == nil {
				s.m.filesTotal.Add(1)
			}
			pv, err := s.partitionValues(add)
			if err == nil {
				err = perr
			}
			if err != nil {
				yield(File{}, err)
				return
			}
			if s.pred != nil && !s.mightMatch(add, pv) {
				continue
			}
			if !yield(File{Add: add, PartitionValues: pv}, nil) {
				return
			}
		}
		if perr != nil {
			yield(File{}, perr)
		}
	}
}

func (s *reader) partitionValues(add *actions.Add) (map[string]schema.Value, error) {
	return s.partitionValuesOf(add.PartitionValues, add.Path)
}

// partitionValuesOf parses the partition values of a file (raw, as in the
// log) to their column types, keyed by logical name. path is for errors.
func (s *reader) partitionValuesOf(raw map[string]string, path string) (map[string]schema.Value, error) {
	if len(s.parts) == 0 {
		return nil, nil
	}
	pv := make(map[string]schema.Value, len(s.parts))
	for name, pc := range s.parts {
		text, ok := raw[pc.physical]
		if !ok {
			pv[name] = schema.Value{} // absent: null
			continue
		}
		v, err := s.parsePartitionValue(pc.typ, text)
		if err != nil {
			return nil, fmt.Errorf("file %s: partition column %q: %w", path, name, err)
		}
		pv[name] = v
	}
	return pv, nil
}

// partitionLookup gives the predicate a file's partition values.
func (s *reader) partitionLookup(pv map[string]schema.Value) expr.Lookup {
	return func(col string) (schema.DataType, schema.Value, bool) {
		pc, ok := s.parts[col]
		if !ok {
			return nil, schema.Value{}, false
		}
		return pc.typ, pv[col], true
	}
}

// parsePartitionValue is schema.ParsePartitionValue, reading timestamps
// without an offset in Options.PartitionTimeZone.
func (s *reader) parsePartitionValue(t schema.DataType, raw string) (schema.Value, error) {
	if loc := s.opts.PartitionTimeZone; loc != nil && t == schema.Timestamp {
		if wall, err := schema.ParsePartitionValue(schema.TimestampNTZ, raw); err == nil && !wall.IsNull() {
			w := time.UnixMicro(wall.Int64()).UTC()
			at := time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), loc)
			return schema.TimestampValue(at.UnixMicro()), nil
		}
	}
	return schema.ParsePartitionValue(t, raw)
}

// mightMatch decides, on its statistics with its partition values folded
// in, whether a file that partition pruning kept can hold a matching row.
func (s *Scan) mightMatch(add *actions.Add, pv map[string]schema.Value) bool {
	// Partition pruning ran in Files, before the add was built.
	if s.stats == nil || add.Stats == "" {
		return true
	}
	st, err := s.stats.Decode(add.Stats)
	if err != nil {
		return true // unreadable statistics never skip a file
	}
	if len(pv) > 0 {
		st = st.WithPartitionValues(pv)
	}
	if !st.MightMatch(s.pred) {
		s.m.skippedStat.Add(1)
		return false
	}
	return true
}

// Batches yields the scan's rows in column-wise batches. A batch is valid
// until the loop body returns (see Batch; Clone keeps one). Iteration stops
// at the first error, which is yielded with a nil batch.
func (s *Scan) Batches(ctx context.Context) iter.Seq2[*Batch, error] {
	return s.run(ctx, func(yield func(*fileRead, error) bool) {
		for f, err := range s.Files(ctx) {
			if err != nil {
				yield(nil, err)
				return
			}
			r := &fileRead{r: s.reader, out: s.out, add: f.Add, pv: f.PartitionValues, dv: f.Add.DeletionVector, filter: s.pred}
			if !yield(r, nil) {
				return
			}
		}
	})
}

// run reads the files tasks yields, up to Options.Concurrency at once, and
// yields their batches in task order.
//
// The run owns the stores of external roots its reads open: they are
// closed when it returns, on every path, after runOrdered has waited for
// the reads still in flight. A failure to close a store that was only read
// loses nothing and is not reported.
func (s *Scan) run(ctx context.Context, tasks iter.Seq2[*fileRead, error]) iter.Seq2[*Batch, error] {
	return func(yield func(*Batch, error) bool) {
		ext := s.snap.Location().NewStores()
		defer func() { _ = ext.Close() }()
		conc := s.opts.Concurrency
		if conc <= 0 {
			conc = runtime.GOMAXPROCS(0)
		}
		work := func(ctx context.Context, r *fileRead, emit func(*fileBatch) error) error {
			s.m.filesRead.Add(1)
			r.ext = ext
			return r.run(ctx, emit)
		}
		for b, err := range runOrdered(ctx, conc, tasks, work) {
			if err != nil {
				yield(nil, err)
				return
			}
			s.m.rowsReturned.Add(int64(b.Len))
			more := yield(&b.Batch, nil)
			b.release()
			if !more {
				return
			}
		}
	}
}

// Rows yields the scan's rows one by one. Iteration stops at the first
// error, which is yielded with a zero Row.
func (s *Scan) Rows(ctx context.Context) iter.Seq2[Row, error] {
	return rowsOf(s.out, s.Batches(ctx))
}

func rowsOf(sch *schema.StructType, batches iter.Seq2[*Batch, error]) iter.Seq2[Row, error] {
	return func(yield func(Row, error) bool) {
		for b, err := range batches {
			if err != nil {
				yield(Row{}, err)
				return
			}
			for i := range b.Len {
				if !yield(NewRow(sch, b.Row(i)), nil) {
					return
				}
			}
		}
	}
}

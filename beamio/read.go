package beamio

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/godelta/delta"
	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/scan"
)

// ReadOptions choose what Read reads. The zero value reads every row of
// the latest version.
type ReadOptions struct {
	// AtVersion reads the table as of Version; otherwise, a non-zero
	// Timestamp reads the newest version committed at or before it; with
	// neither, the latest version (the one the planning step finds).
	AtVersion bool
	Version   int64
	Timestamp time.Time
	// Columns are the logical columns to read, in order (scan.Options);
	// nil reads every column in table schema order.
	Columns []string
	// Predicate, in the text form of package expr ("year = 2020 AND id
	// > 5"), keeps the rows for which it is true. The planning step prunes
	// partitions and skips files by statistics with it, and the reader
	// drops the other rows, exactly as a scan does.
	Predicate string
	// TrustRoots are roots outside the table its log may name (the source
	// of a shallow clone Spark wrote), as delta.OpenOptions.
	TrustRoots []string
	// SplitFileSize is the size from which a data file is read in parts,
	// one row group per task, rather than whole by one task; 0 means
	// DefaultSplitFileSize.
	SplitFileSize int64
}

// DefaultSplitFileSize is ReadOptions.SplitFileSize when it is 0: 64 MiB.
const DefaultSplitFileSize = 64 << 20

// readTask is one unit of reading: a data file of the planned version,
// its add action encoded as in a commit (actions.EncodeCommit), whole or,
// when Part is set, its row groups From to To-1.
type readTask struct {
	Version  int64
	Add      []byte
	Part     bool
	From, To int
}

func init() {
	register.DoFn3x1[context.Context, []byte, func(readTask), error](&planReadFn{})
	register.DoFn3x1[context.Context, readTask, func(Row), error](&readFn{})
	register.DoFn3x1[context.Context, readTask, func(readTask), error](&splitFn{})
	register.Emitter1[readTask]()
	register.Emitter1[Row]()
}

// Read reads the rows of the Delta table at table (a path or URI that
// delta.Open accepts; every worker must reach it) as a PCollection of Row.
//
// The read is planned once, by one step: it opens the snapshot (at the
// version or time opts ask for, else the latest), and lists the files a
// scan of it would read: partition pruning and statistics skipping by
// opts.Predicate are the library's own (scan.Scan.Files). Each file is a
// task; the tasks are reshuffled so that the runner spreads them over its
// workers, and each worker reads its files with the library's one file
// reader (scan.FileReader), which applies deletion vectors, column
// mapping, type widening and partition values, and the predicate to each
// row. The rows are exactly those a scan of the same snapshot with the
// same columns and predicate returns, in no particular order.
//
// A file of at least opts.SplitFileSize bytes is split by row group: a
// worker reads its footer and makes one task of each row group, and the
// tasks are reshuffled again (scan.FileReader.ReadFileRowGroups reads a
// range of row groups with the rows and positions of the whole file, so
// deletion vectors apply as they do to the file). Smaller files are read
// whole, by one task each.
//
// Errors (a table that cannot be opened, a bad predicate, a version that
// does not exist, a corrupt file) fail the step that meets them, and with
// it the pipeline, with the library's error.
func Read(s beam.Scope, table string, opts ReadOptions) beam.PCollection {
	s = s.Scope("delta.Read")
	imp := beam.Impulse(s)
	tasks := beam.ParDo(s, &planReadFn{Table: table, Opts: opts}, imp)
	tasks = beam.Reshuffle(s, tasks)
	tasks = beam.ParDo(s, &splitFn{Table: table, Opts: opts}, tasks)
	tasks = beam.Reshuffle(s, tasks)
	return beam.ParDo(s, &readFn{Table: table, Opts: opts}, tasks)
}

// openTable opens table with the trusted roots of opts.
func openTable(ctx context.Context, table string, trust []string) (*delta.Table, error) {
	return delta.OpenWith(ctx, table, delta.OpenOptions{TrustRoots: trust})
}

// scanOptions are the scan options of opts: its columns and its parsed
// predicate.
func scanOptions(opts ReadOptions) (scan.Options, error) {
	so := scan.Options{Columns: opts.Columns}
	if opts.Predicate != "" {
		p, err := expr.Parse(opts.Predicate)
		if err != nil {
			return scan.Options{}, fmt.Errorf("beamio: predicate %q: %w", opts.Predicate, err)
		}
		so.Predicate = p
	}
	return so, nil
}

// planReadFn plans the read: one task per file the scan keeps.
type planReadFn struct {
	Table string
	Opts  ReadOptions
}

func (f *planReadFn) ProcessElement(ctx context.Context, _ []byte, emit func(readTask)) error {
	t, err := openTable(ctx, f.Table, f.Opts.TrustRoots)
	if err != nil {
		return err
	}
	defer t.Close()
	var snap *delta.Snapshot
	switch {
	case f.Opts.AtVersion:
		snap, err = t.SnapshotAt(ctx, f.Opts.Version)
	case !f.Opts.Timestamp.IsZero():
		snap, err = t.SnapshotAtTimestamp(ctx, f.Opts.Timestamp)
	default:
		snap, err = t.Snapshot(ctx)
	}
	if err != nil {
		return err
	}
	so, err := scanOptions(f.Opts)
	if err != nil {
		return err
	}
	sc, err := scan.New(snap, so)
	if err != nil {
		return err
	}
	for file, err := range sc.Files(ctx) {
		if err != nil {
			return err
		}
		data, err := actions.EncodeCommit([]actions.Action{{Add: file.Add}})
		if err != nil {
			return err
		}
		emit(readTask{Version: snap.Version(), Add: data})
	}
	return nil
}

// readerCache keeps the table, the snapshot and the file reader of the
// version a DoFn instance last read, between bundles.
type readerCache struct {
	table   *delta.Table
	version int64
	reader  *scan.FileReader
}

// readerFor returns the file reader of version, loading it on first use.
func (c *readerCache) readerFor(ctx context.Context, table string, opts ReadOptions, version int64) (*scan.FileReader, error) {
	if c.reader != nil && c.version == version {
		return c.reader, nil
	}
	if c.table == nil {
		t, err := openTable(ctx, table, opts.TrustRoots)
		if err != nil {
			return nil, err
		}
		c.table = t
	}
	snap, err := c.table.SnapshotAt(ctx, version)
	if err != nil {
		return nil, err
	}
	so, err := scanOptions(opts)
	if err != nil {
		return nil, err
	}
	fr, err := scan.NewFileReader(snap, so)
	if err != nil {
		return nil, err
	}
	if c.reader != nil {
		_ = c.reader.Close()
	}
	c.reader, c.version = fr, version
	return fr, nil
}

// close closes the reader and the table.
func (c *readerCache) close() error {
	var err error
	if c.reader != nil {
		err = c.reader.Close()
		c.reader = nil
	}
	if c.table != nil {
		if cerr := c.table.Close(); err == nil {
			err = cerr
		}
		c.table = nil
	}
	return err
}

// taskAdd decodes the add action of a task.
func taskAdd(t readTask) (*actions.Add, error) {
	acts, err := actions.DecodeCommit("read task", t.Add)
	if err != nil {
		return nil, err
	}
	if len(acts) != 1 || acts[0].Add == nil {
		return nil, fmt.Errorf("beamio: a read task holds %d actions, not one add: %w", len(acts), deltaerr.ErrCorrupt)
	}
	return acts[0].Add, nil
}

// splitFn splits the tasks of large files into one task per row group.
type splitFn struct {
	Table string
	Opts  ReadOptions
	cache readerCache
}

func (f *splitFn) ProcessElement(ctx context.Context, t readTask, emit func(readTask)) error {
	limit := f.Opts.SplitFileSize
	if limit <= 0 {
		limit = DefaultSplitFileSize
	}
	add, err := taskAdd(t)
	if err != nil {
		return err
	}
	if add.Size < limit {
		emit(t)
		return nil
	}
	fr, err := f.cache.readerFor(ctx, f.Table, f.Opts, t.Version)
	if err != nil {
		return err
	}
	n, err := fr.RowGroups(ctx, add)
	if err != nil {
		return err
	}
	if n <= 1 {
		emit(t)
		return nil
	}
	if h := hook(func(h *testHooks) func(string, int) error { return h.afterSplit }); h != nil {
		if err := h(f.Table, n); err != nil {
			return err
		}
	}
	for g := range n {
		emit(readTask{Version: t.Version, Add: t.Add, Part: true, From: g, To: g + 1})
	}
	return nil
}

// Teardown closes the reader and the table.
func (f *splitFn) Teardown() error { return f.cache.close() }

// readFn reads the files, or parts of files, of tasks with the library's
// file reader.
type readFn struct {
	Table string
	Opts  ReadOptions
	cache readerCache
}

func (f *readFn) ProcessElement(ctx context.Context, t readTask, emit func(Row)) error {
	add, err := taskAdd(t)
	if err != nil {
		return err
	}
	fr, err := f.cache.readerFor(ctx, f.Table, f.Opts, t.Version)
	if err != nil {
		return err
	}
	fn := func(b *scan.FileBatch) error {
		for i := range b.Len {
			emit(Row{Values: b.Row(i)})
		}
		return nil
	}
	if t.Part {
		return fr.ReadFileRowGroups(ctx, add, t.From, t.To, fn)
	}
	return fr.ReadFile(ctx, add, fn)
}

// Teardown closes the reader and the table.
func (f *readFn) Teardown() error { return f.cache.close() }

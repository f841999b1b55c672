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
}

// readTask is one unit of reading: a data file of the planned version,
// its add action encoded as in a commit (actions.EncodeCommit).
type readTask struct {
	Version int64
	Add     []byte
}

func init() {
	register.DoFn3x1[context.Context, []byte, func(readTask), error](&planReadFn{})
	register.DoFn3x1[context.Context, readTask, func(Row), error](&readFn{})
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
// A file is the unit of work: a file is not split by row groups (the
// file reader reads whole files), so a table of few large files reads
// with as many workers as it has files.
//
// Errors (a table that cannot be opened, a bad predicate, a version that
// does not exist, a corrupt file) fail the step that meets them, and with
// it the pipeline, with the library's error.
func Read(s beam.Scope, table string, opts ReadOptions) beam.PCollection {
	s = s.Scope("delta.Read")
	imp := beam.Impulse(s)
	tasks := beam.ParDo(s, &planReadFn{Table: table, Opts: opts}, imp)
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

// readFn reads the files of tasks with the library's file reader. It keeps
// the table, the snapshot and the reader of the version it last read
// between bundles.
type readFn struct {
	Table string
	Opts  ReadOptions

	table   *delta.Table
	version int64
	reader  *scan.FileReader
}

// readerFor returns the file reader of version, loading it on first use.
func (f *readFn) readerFor(ctx context.Context, version int64) (*scan.FileReader, error) {
	if f.reader != nil && f.version == version {
		return f.reader, nil
	}
	if f.table == nil {
		t, err := openTable(ctx, f.Table, f.Opts.TrustRoots)
		if err != nil {
			return nil, err
		}
		f.table = t
	}
	snap, err := f.table.SnapshotAt(ctx, version)
	if err != nil {
		return nil, err
	}
	so, err := scanOptions(f.Opts)
	if err != nil {
		return nil, err
	}
	fr, err := scan.NewFileReader(snap, so)
	if err != nil {
		return nil, err
	}
	if f.reader != nil {
		_ = f.reader.Close()
	}
	f.reader, f.version = fr, version
	return fr, nil
}

func (f *readFn) ProcessElement(ctx context.Context, t readTask, emit func(Row)) error {
	acts, err := actions.DecodeCommit("read task", t.Add)
	if err != nil {
		return err
	}
	if len(acts) != 1 || acts[0].Add == nil {
		return fmt.Errorf("beamio: a read task holds %d actions, not one add: %w", len(acts), deltaerr.ErrCorrupt)
	}
	fr, err := f.readerFor(ctx, t.Version)
	if err != nil {
		return err
	}
	return fr.ReadFile(ctx, acts[0].Add, func(b *scan.FileBatch) error {
		for i := range b.Len {
			emit(Row{Values: b.Row(i)})
		}
		return nil
	})
}

// Teardown closes the reader and the table.
func (f *readFn) Teardown() error {
	var err error
	if f.reader != nil {
		err = f.reader.Close()
		f.reader = nil
	}
	if f.table != nil {
		if cerr := f.table.Close(); err == nil {
			err = cerr
		}
		f.table = nil
	}
	return err
}

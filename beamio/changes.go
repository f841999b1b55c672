package beamio

import (
	"context"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/godelta/delta/scan"
)

// ChangesOptions choose the columns of ReadChanges.
type ChangesOptions struct {
	// Columns are the table columns to read, before the three change
	// columns; nil reads them all.
	Columns []string
	// TrustRoots are as ReadOptions'.
	TrustRoots []string
}

// changeTask is one file read of a change data feed over [Start, End].
type changeTask struct {
	Start, End int64
	File       scan.ChangeFile
}

func init() {
	register.DoFn3x1[context.Context, []byte, func(changeTask), error](&planChangesFn{})
	register.DoFn3x1[context.Context, changeTask, func(Row), error](&readChangesFn{})
	register.Emitter1[changeTask]()
}

// ReadChanges reads the change data feed of the table from startVersion
// to endVersion (both included; an endVersion below 0 means the latest,
// as the planning step finds it) as a PCollection of Row: the columns of
// opts (else every table column), then _change_type, _commit_version and
// _commit_timestamp, exactly as the library's change reader
// (delta.Table.Changes, scan.Changes) gives them: rows from the commits'
// change data files, else from the adds and removes that change data
// (deletion vector changes included).
//
// One step plans the feed (scan.Changes.Files: a task per file read of
// each commit); the tasks are reshuffled over the workers, and each
// worker plans the same feed and reads its files (scan.Changes.ReadFile).
// Errors are the library's: a range over which the change data feed was
// off is scan.ErrChangeDataFeedDisabled, a version not in the log
// deltaerr.ErrVersionNotFound.
func ReadChanges(s beam.Scope, table string, startVersion, endVersion int64, opts ChangesOptions) beam.PCollection {
	s = s.Scope("delta.ReadChanges")
	tasks := beam.ParDo(s, &planChangesFn{Table: table, Start: startVersion, End: endVersion, Opts: opts}, beam.Impulse(s))
	return beam.ParDo(s, &readChangesFn{Table: table, Opts: opts}, beam.Reshuffle(s, tasks))
}

// openChanges plans the feed [start, end] (end < 0: the latest).
func openChanges(ctx context.Context, table string, start, end int64, opts ChangesOptions) (*scan.Changes, func() error, error) {
	t, err := openTable(ctx, table, opts.TrustRoots)
	if err != nil {
		return nil, nil, err
	}
	snap, err := t.Snapshot(ctx)
	if err != nil {
		t.Close()
		return nil, nil, err
	}
	co := scan.ChangeOptions{Start: start, Columns: opts.Columns}
	if end >= 0 {
		co.End = scan.UpTo(end)
	}
	c, err := scan.NewChanges(ctx, snap, co)
	if err != nil {
		t.Close()
		return nil, nil, err
	}
	return c, t.Close, nil
}

// planChangesFn makes a task per file read of the feed.
type planChangesFn struct {
	Table      string
	Start, End int64
	Opts       ChangesOptions
}

func (f *planChangesFn) ProcessElement(ctx context.Context, _ []byte, emit func(changeTask)) error {
	c, closeFn, err := openChanges(ctx, f.Table, f.Start, f.End, f.Opts)
	if err != nil {
		return err
	}
	defer closeFn()
	start, end := c.Range()
	for cf, err := range c.Files(ctx) {
		if err != nil {
			return err
		}
		emit(changeTask{Start: start, End: end, File: cf})
	}
	return nil
}

// readChangesFn reads the files of its tasks, keeping the planned feed
// between bundles.
type readChangesFn struct {
	Table string
	Opts  ChangesOptions

	c          *scan.Changes
	closeFn    func() error
	start, end int64
}

func (f *readChangesFn) ProcessElement(ctx context.Context, t changeTask, emit func(Row)) error {
	if f.c == nil || f.start != t.Start || f.end != t.End {
		if f.closeFn != nil {
			_ = f.closeFn()
		}
		c, closeFn, err := openChanges(ctx, f.Table, t.Start, t.End, f.Opts)
		if err != nil {
			return err
		}
		f.c, f.closeFn, f.start, f.end = c, closeFn, t.Start, t.End
	}
	for b, err := range f.c.ReadFile(ctx, t.File) {
		if err != nil {
			return err
		}
		for i := range b.Len {
			emit(Row{Values: b.Row(i)})
		}
	}
	return nil
}

// Teardown closes the table.
func (f *readChangesFn) Teardown() error {
	if f.closeFn == nil {
		return nil
	}
	err := f.closeFn()
	f.c, f.closeFn = nil, nil
	return err
}

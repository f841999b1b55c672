package scan

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/internal/dv"
	"github.com/godelta/delta/location"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/tableconfig"
)

// The change data feed's extra columns, and the change types it reports.
// These names are part of the Delta protocol.
const (
	ChangeTypeColumn      = "_change_type"
	CommitVersionColumn   = "_commit_version"
	CommitTimestampColumn = "_commit_timestamp"

	ChangeInsert          = "insert"
	ChangeDelete          = "delete"
	ChangeUpdatePreimage  = "update_preimage"
	ChangeUpdatePostimage = "update_postimage"
)

// EndVersion is where a range of versions ends: the zero value is the
// latest version (as the table is when the range is planned), UpTo(v) is
// version v. It is the one way to say "latest" for a range end, as
// Option<Version> is in delta-kernel-rs: a version number never stands for
// it.
type EndVersion struct {
	version int64
	set     bool
}

// UpTo ends a range at version v, which is included.
func UpTo(v int64) EndVersion { return EndVersion{version: v, set: true} }

// Version returns the version the range ends at, and false for the latest.
func (e EndVersion) Version() (int64, bool) { return e.version, e.set }

// String returns the version, or "latest".
func (e EndVersion) String() string {
	if !e.set {
		return "latest"
	}
	return strconv.FormatInt(e.version, 10)
}

// ChangeOptions choose the commits and columns of a change data feed. The
// zero value reads every change, from version 0 to the latest;
// ChangeOptions{Start: 1} those from version 1 to the latest.
type ChangeOptions struct {
	// Start is the first version whose changes are returned.
	Start int64
	// End is the last version whose changes are returned: the latest
	// when zero, else UpTo(v).
	End EndVersion
	// Since, when set, leaves out the commits whose timestamp is before
	// it, as delta-rs does for a starting timestamp (in-commit timestamps
	// are not always monotonic in tables written before they were).
	Since time.Time
	// Columns are the table columns to return, before the three change
	// columns; nil returns them all.
	Columns []string
	// Concurrency and BatchSize are as in Options.
	Concurrency int
	BatchSize   int
}

// Changes is the change data feed of a range of commits: the rows each
// commit inserted, deleted or updated, with the table's columns followed by
// _change_type, _commit_version and _commit_timestamp.
//
// A commit that wrote change data files (cdc actions) is read from them;
// otherwise its changes are derived from its add and remove actions that
// change data: the rows of an added file are inserts, those of a removed
// file deletes, and when a commit replaces a file's deletion vector the
// rows the new vector removes are deletes (and those it restores inserts).
type Changes struct {
	s     *Scan
	start int64
	end   int64
	since time.Time
}

// NewChanges plans the change data feed from opts.Start to opts.End of the
// table whose latest snapshot is latest (the end, when opts.End is zero).
// Errors: a negative start, or a range whose end is before its start, is
// deltaerr.ErrInvalidArgument; a start after the latest version, or an end
// beyond it, deltaerr.ErrVersionNotFound; a range over which the table did
// not have delta.enableChangeDataFeed set is ErrChangeDataFeedDisabled.
func NewChanges(ctx context.Context, latest *snapshot.Snapshot, opts ChangeOptions) (*Changes, error) {
	start := opts.Start
	end, ok := opts.End.Version()
	if !ok {
		end = latest.Version()
	}
	switch {
	case start < 0:
		return nil, fmt.Errorf("change data feed from version %d: %w", start, deltaerr.ErrInvalidArgument)
	case start > latest.Version():
		return nil, fmt.Errorf("start version %d after last table version %d: %w", start, latest.Version(), deltaerr.ErrVersionNotFound)
	case end < start:
		return nil, fmt.Errorf("invalid range: end version %d before start version %d: %w", end, start, deltaerr.ErrInvalidArgument)
	case end > latest.Version():
		return nil, fmt.Errorf("end version %d after last table version %d: %w", end, latest.Version(), deltaerr.ErrVersionNotFound)
	}
	store := latest.Store()
	endSnap := latest
	if end != latest.Version() {
		var err error
		if endSnap, err = snapshot.Load(ctx, store, end); err != nil {
			return nil, err
		}
	}
	startSnap := endSnap
	if start != end {
		var err error
		if startSnap, err = snapshot.Load(ctx, store, start); err != nil {
			return nil, err
		}
	}
	if !startSnap.Config().ChangeDataFeed() {
		return nil, fmt.Errorf("version %d: %w", start, ErrChangeDataFeedDisabled)
	}
	for _, c := range opts.Columns {
		if c == MetadataRowID || c == MetadataRowCommitVersion {
			if _, ok := endSnap.Schema().Field(c); !ok {
				return nil, fmt.Errorf("column %q: change data has no row tracking metadata: %w", c, deltaerr.ErrInvalidArgument)
			}
		}
	}
	s, err := New(endSnap, Options{Columns: opts.Columns, Concurrency: opts.Concurrency, BatchSize: opts.BatchSize})
	if err != nil {
		return nil, err
	}
	fields := append(s.out.Fields[:len(s.out.Fields):len(s.out.Fields)],
		schema.StructField{Name: ChangeTypeColumn, Type: schema.String, Nullable: false},
		schema.StructField{Name: CommitVersionColumn, Type: schema.Long, Nullable: false},
		schema.StructField{Name: CommitTimestampColumn, Type: schema.Timestamp, Nullable: false},
	)
	s.out = &schema.StructType{Fields: fields}
	return &Changes{s: s, start: start, end: end, since: opts.Since}, nil
}

// ErrChangeDataFeedDisabled is returned for a range of versions over which
// the table did not record its change data feed
// (delta.enableChangeDataFeed was not true). It wraps
// deltaerr.ErrInvalidArgument.
var ErrChangeDataFeedDisabled = fmt.Errorf("change data feed is not enabled (table property %s): %w", tableconfig.KeyEnableChangeDataFeed, deltaerr.ErrInvalidArgument)

// Schema returns the schema of the rows: the table columns asked for, then
// _change_type, _commit_version and _commit_timestamp.
func (c *Changes) Schema() *schema.StructType { return c.s.out }

// Range returns the first and last versions of the feed.
func (c *Changes) Range() (start, end int64) { return c.start, c.end }

// Batches yields the changes commit by commit, in column-wise batches.
func (c *Changes) Batches(ctx context.Context) iter.Seq2[*Batch, error] {
	return c.s.run(ctx, c.tasks(ctx))
}

// Rows yields the changes one row at a time.
func (c *Changes) Rows(ctx context.Context) iter.Seq2[Row, error] {
	return rowsOf(c.s.out, c.Batches(ctx))
}

// tasks yields, commit by commit, the files to read and how.
func (c *Changes) tasks(ctx context.Context) iter.Seq2[*fileRead, error] {
	return func(yield func(*fileRead, error) bool) {
		for v := c.start; v <= c.end; v++ {
			reads, err := c.commitTasks(ctx, v)
			if err != nil {
				yield(nil, err)
				return
			}
			for _, r := range reads {
				if !yield(r, nil) {
					return
				}
			}
		}
	}
}

// commitTasks returns the file reads of commit v, in the order tasks
// yields them; none for a commit before Since.
func (c *Changes) commitTasks(ctx context.Context, v int64) ([]*fileRead, error) {
	s := c.s
	ictFrom, ict := s.snap.InCommitTimestampsFrom()
	key := deltalog.CommitKey(v)
	acts, err := actions.DecodeCommitReader(key, logstore.NewWindowReader(ctx, s.store, key, 0))
	if errors.Is(err, logstore.ErrNotFound) {
		err = fmt.Errorf("commit %d is no longer in the log: %w: %w", v, deltaerr.ErrVersionNotFound, err)
	}
	if err != nil {
		return nil, err
	}
	ts, err := commitTime(ctx, s.store, key, acts, ict && v >= ictFrom)
	if err != nil {
		return nil, err
	}
	if !c.since.IsZero() && ts.Before(c.since) {
		return nil, nil
	}
	return c.commitReads(v, ts, acts)
}

// commitTime is a commit's timestamp for _commit_timestamp: its in-commit
// timestamp when the table records them, else the commit file's
// modification time in whole milliseconds, as Spark takes it (a file
// system's finer time would give a _commit_timestamp that history and
// Spark never show).
func commitTime(ctx context.Context, store logstore.Store, key string, acts []actions.Action, useICT bool) (time.Time, error) {
	if useICT {
		for i := range acts {
			if ci := acts[i].CommitInfo; ci != nil && ci.InCommitTimestamp != nil {
				return time.UnixMilli(*ci.InCommitTimestamp), nil
			}
		}
		return time.Time{}, fmt.Errorf("commit %s has no in-commit timestamp: %w", key, deltaerr.ErrCorrupt)
	}
	info, err := store.Stat(ctx, key)
	if err != nil {
		return time.Time{}, err
	}
	return time.UnixMilli(info.ModTime.UnixMilli()), nil
}

// commitReads plans the reads that give one commit's changes.
func (c *Changes) commitReads(v int64, ts time.Time, acts []actions.Action) ([]*fileRead, error) {
	s := c.s
	version := schema.LongValue(v)
	stamp := schema.TimestampValue(ts.UnixMicro())
	var cdcs []*actions.CDC
	for i := range acts {
		a := &acts[i]
		if a.Metadata != nil {
			cfg, err := tableconfig.New(c.s.snap.Protocol(), *a.Metadata)
			if err != nil {
				return nil, fmt.Errorf("version %d: %w", v, err)
			}
			if !cfg.ChangeDataFeed() {
				return nil, fmt.Errorf("version %d: %w", v, ErrChangeDataFeedDisabled)
			}
		}
		if a.CDC != nil {
			cdcs = append(cdcs, a.CDC)
		}
	}
	var reads []*fileRead
	if len(cdcs) > 0 {
		plan, err := c.cdcPlan()
		if err != nil {
			return nil, err
		}
		for _, f := range cdcs {
			pv, err := s.partitionValues(&actions.Add{Path: f.Path, PartitionValues: f.PartitionValues})
			if err != nil {
				return nil, err
			}
			reads = append(reads, &fileRead{r: s.reader, out: s.out, plan: plan, path: f.Path, size: f.Size, pv: pv,
				extra: []schema.Value{version, stamp}})
		}
		return reads, nil
	}
	// Derived from adds and removes. A path both removed and added in one
	// commit had its deletion vector replaced.
	removed := map[string]*actions.Remove{}
	for i := range acts {
		if r := acts[i].Remove; r != nil && r.DataChange {
			removed[snapshot.CanonicalPath(r.Path)] = r
		}
	}
	change := func(t string) []schema.Value {
		return []schema.Value{schema.StringValue(t), version, stamp}
	}
	paired := map[string]bool{}
	for i := range acts {
		add := acts[i].Add
		if add == nil || !add.DataChange {
			continue
		}
		pv, err := s.partitionValues(add)
		if err != nil {
			return nil, err
		}
		p := snapshot.CanonicalPath(add.Path)
		if rm, ok := removed[p]; ok {
			paired[p] = true
			oldDV, newDV := rm.DeletionVector, add.DeletionVector
			// Rows the new vector deletes and the old did not.
			reads = append(reads, &fileRead{r: s.reader, out: s.out, add: add, pv: pv,
				keepFrom: s.dvDiff(newDV, oldDV), extra: change(ChangeDelete)})
			// Rows the old vector deleted and the new one keeps.
			reads = append(reads, &fileRead{r: s.reader, out: s.out, add: add, pv: pv,
				keepFrom: s.dvDiff(oldDV, newDV), extra: change(ChangeInsert)})
			continue
		}
		reads = append(reads, &fileRead{r: s.reader, out: s.out, add: add, pv: pv, dv: add.DeletionVector, extra: change(ChangeInsert)})
	}
	for i := range acts {
		rm := acts[i].Remove
		if rm == nil || !rm.DataChange || paired[snapshot.CanonicalPath(rm.Path)] {
			continue
		}
		var size int64
		if rm.Size != nil {
			size = *rm.Size
		}
		pv, err := s.partitionValues(&actions.Add{Path: rm.Path, PartitionValues: rm.PartitionValues})
		if err != nil {
			return nil, err
		}
		reads = append(reads, &fileRead{r: s.reader, out: s.out, path: rm.Path, size: size, pv: pv, dv: rm.DeletionVector, extra: change(ChangeDelete)})
	}
	return reads, nil
}

// dvDiff returns a keepFrom that keeps the rows in deletion vector in and
// not in deletion vector out (a nil vector deletes nothing).
func (s *Scan) dvDiff(in, out *actions.DeletionVector) func(ctx context.Context, ext *location.Stores) (func(int64) bool, error) {
	return func(ctx context.Context, ext *location.Stores) (func(int64) bool, error) {
		if in == nil {
			return func(int64) bool { return false }, nil
		}
		a, err := s.loadDV(ctx, ext, in)
		if err != nil {
			return nil, err
		}
		var b *dv.Bitmap
		if out != nil {
			if b, err = s.loadDV(ctx, ext, out); err != nil {
				return nil, err
			}
		}
		return func(pos int64) bool {
			return a.Contains(uint64(pos)) && (b == nil || !b.Contains(uint64(pos)))
		}, nil
	}
}

// cdcPlan is the read plan of change data files: the table's columns plus
// the _change_type column they carry.
func (c *Changes) cdcPlan() (*readPlan, error) {
	s := c.s
	table := &schema.StructType{Fields: append(s.table.Fields[:len(s.table.Fields):len(s.table.Fields)],
		schema.StructField{Name: ChangeTypeColumn, Type: schema.String, Nullable: true})}
	n := len(s.out.Fields) - 3
	out := append(s.out.Fields[:n:n], schema.StructField{Name: ChangeTypeColumn, Type: schema.String})
	physical := &schema.StructType{Fields: append(s.physical.Fields[:len(s.physical.Fields):len(s.physical.Fields)],
		schema.StructField{Name: ChangeTypeColumn, Type: schema.String, Nullable: true})}
	plan := newReadPlan(table, physical, s.parts, out, nil, rowTracking{})
	return &plan, nil
}

package stream

import (
	"errors"
	"fmt"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/tableconfig"
)

// Error kinds of this package, matched with errors.Is.
var (
	// ErrVersionsCleanedUp is returned when a commit the stream has still
	// to read is no longer in the log: log cleanup deleted it
	// (delta.logRetentionDuration) while the stream was stopped or behind.
	// Rows were lost to the stream; it must be restarted from a version
	// still in the log, or from the latest snapshot. It matches
	// deltaerr.ErrVersionNotFound.
	ErrVersionsCleanedUp = fmt.Errorf("stream: a version the stream needs was removed by log cleanup (table property %s): %w",
		tableconfig.KeyLogRetentionDuration, deltaerr.ErrVersionNotFound)

	// ErrChangeCommit is matched by every *ChangeCommitError.
	ErrChangeCommit = errors.New("stream: a commit changed or deleted rows")

	// ErrSchemaChanged is matched by every *SchemaChangeError.
	ErrSchemaChanged = errors.New("stream: the table's schema changed in a way the stream cannot carry")

	// ErrOffset is returned for an offset that cannot be parsed or packed.
	// It matches deltaerr.ErrInvalidArgument.
	ErrOffset = fmt.Errorf("stream: invalid offset: %w", deltaerr.ErrInvalidArgument)
)

// ChangeCommitError is the error of a commit that removed rows (a remove
// with dataChange=true) in a stream that reads added rows only. Spark's
// source fails the same way (DELTA_SOURCE_TABLE_IGNORE_CHANGES,
// DELTA_SOURCE_IGNORE_DELETE). errors.Is(err, ErrChangeCommit) reports true.
type ChangeCommitError struct {
	// Version is the commit's version.
	Version int64
	// Path is one file it removed.
	Path string
	// DeleteOnly is true when the commit only removed files (a DELETE of
	// whole files); false when it also added some (an UPDATE, a MERGE, an
	// overwrite, a deletion vector).
	DeleteOnly bool
}

func (e *ChangeCommitError) Error() string {
	if e.DeleteOnly {
		return fmt.Sprintf("stream: commit %d deleted data (file %s); a stream of appended rows cannot carry it: "+
			"set IgnoreDeletes (Spark's ignoreDeletes) to pass over commits that only delete, SkipChangeCommits "+
			"(skipChangeCommits) to pass over every commit that removes rows, or ReadChangeFeed to read them as changes",
			e.Version, e.Path)
	}
	return fmt.Sprintf("stream: commit %d updated data (file %s rewritten); a stream of appended rows cannot carry it: "+
		"set SkipChangeCommits (Spark's skipChangeCommits) to pass over commits that change rows, or ReadChangeFeed "+
		"to read them as changes", e.Version, e.Path)
}

// Is reports whether target is ErrChangeCommit.
func (e *ChangeCommitError) Is(target error) bool { return target == ErrChangeCommit }

// TableReplacedError is the error of a stream whose table is no longer
// the table at its location: the log there now carries another table id
// (the table directory was deleted and a table created there again), or
// the offset a stream resumes at was taken on another table. Reading on
// would mix the rows of two tables and skip some of each; Spark's source
// fails the same way (DIFFERENT_DELTA_TABLE_READ_BY_STREAMING_SOURCE).
// errors.Is(err, deltaerr.ErrTableReplaced) reports true.
type TableReplacedError struct {
	// Was is the table id the stream began with, or the one its offset
	// carries.
	Was string
	// Now is the table id found at the location.
	Now string
	// Version is the commit whose metaData carries Now, or -1 when the
	// table was found replaced as a whole (its log loaded again).
	Version int64
	// Resumed is true when the id came from the offset the stream was
	// resumed at (FromOffset), not from a table the stream read.
	Resumed bool
}

func (e *TableReplacedError) Error() string {
	switch {
	case e.Resumed:
		return fmt.Sprintf("stream: the offset was taken on table %s, not on this table (%s): "+
			"an offset resumes only the stream of its own table; start a new stream", e.Was, e.Now)
	case e.Version >= 0:
		return fmt.Sprintf("stream: commit %d replaced the table by a different one (table id %s, was %s): "+
			"restart the stream from the latest snapshot", e.Version, e.Now, e.Was)
	}
	return fmt.Sprintf("stream: the table was replaced by a different table at the same location "+
		"(table id %s, was %s: deleted and created again?); the stream stops rather than mix the rows "+
		"of two tables: start a new stream", e.Now, e.Was)
}

// Is reports whether target is deltaerr.ErrTableReplaced.
func (e *TableReplacedError) Is(target error) bool { return target == deltaerr.ErrTableReplaced }

// SchemaChangeError is the error of a metaData action whose schema does not
// hold a column the stream reads as the stream began with it: same name,
// type and physical name (column mapping). errors.Is(err, ErrSchemaChanged)
// reports true.
type SchemaChangeError struct {
	// Version is the commit of the metaData action.
	Version int64
	// Column is the column that was dropped, renamed or retyped.
	Column string
	// Reason says what changed.
	Reason string
}

func (e *SchemaChangeError) Error() string {
	if e.Column == "" {
		return fmt.Sprintf("stream: commit %d: %s; restart the stream from the latest snapshot", e.Version, e.Reason)
	}
	return fmt.Sprintf("stream: commit %d: column %q %s; a stream cannot carry a dropped, renamed or retyped column: "+
		"restart it, from the latest snapshot or a later version", e.Version, e.Column, e.Reason)
}

// Is reports whether target is ErrSchemaChanged.
func (e *SchemaChangeError) Is(target error) bool { return target == ErrSchemaChanged }

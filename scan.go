package delta

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/snapshot"
)

// Reading rows; see package scan.
type (
	// Scan is a planned read of a snapshot's rows.
	Scan = scan.Scan
	// ScanOptions choose a scan's columns and predicate.
	ScanOptions = scan.Options
	// ScanMetrics count the files a scan skipped and read.
	ScanMetrics = scan.Metrics
	// Row is one row of a scan.
	Row = scan.Row
	// Batch is a column-wise run of rows.
	Batch = scan.Batch
	// Changes is a change data feed.
	Changes = scan.Changes
	// ChangeOptions choose a change data feed's range and columns; the
	// zero End is the latest version.
	ChangeOptions = scan.ChangeOptions
	// EndVersion ends a range of versions: the latest (the zero value),
	// or UpTo(v).
	EndVersion = scan.EndVersion
)

// UpTo ends a range of versions at v, included:
// ChangeOptions{Start: 2, End: delta.UpTo(5)}.
func UpTo(v int64) EndVersion { return scan.UpTo(v) }

// ErrChangeDataFeedDisabled is returned for a change data feed over
// versions at which the table did not record one.
var ErrChangeDataFeedDisabled = scan.ErrChangeDataFeedDisabled

// Scan plans a read of the rows of snap, a snapshot of t:
//
//	s, err := t.Scan(snap, delta.ScanOptions{Predicate: pred})
//	for row, err := range s.Rows(ctx) { ... }
func (t *Table) Scan(snap *Snapshot, opts ScanOptions) (*Scan, error) {
	return scan.New(snap, opts)
}

// Changes plans the change data feed of t from version opts.Start to
// opts.End (the latest when zero): ChangeOptions{Start: 1} is every change
// from version 1 to the latest.
func (t *Table) Changes(ctx context.Context, opts ChangeOptions) (*Changes, error) {
	latest, err := t.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	return scan.NewChanges(ctx, latest, opts)
}

// ChangesSince is Changes starting at the first version committed at or
// after ts, up to opts.End; opts.Start is ignored. A time after the latest
// commit is ErrTimestampOutOfRange.
func (t *Table) ChangesSince(ctx context.Context, ts time.Time, opts ChangeOptions) (*Changes, error) {
	latest, err := t.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	at, err := snapshot.LoadAtTimestamp(ctx, latest, ts)
	switch {
	case errors.Is(err, ErrTimestampOutOfRange) && ts.Before(latest.Timestamp()):
		// Before the first commit: from the earliest that can still be
		// read, as Spark's change data feed starts, also after log cleanup
		// removed the first commits.
		if opts.Start, err = snapshot.EarliestVersion(ctx, t.store); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, err
	case at.Timestamp().Equal(ts):
		opts.Start = at.Version()
	case at.Version() == latest.Version():
		return nil, fmt.Errorf("no commit at or after %s (the latest, version %d, is at %s): %w",
			ts.UTC().Format(time.RFC3339Nano), latest.Version(), latest.Timestamp().UTC().Format(time.RFC3339Nano), ErrTimestampOutOfRange)
	default:
		opts.Start = at.Version() + 1
	}
	opts.Since = ts
	return scan.NewChanges(ctx, latest, opts)
}

package stream

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
)

// Batch is one step of a stream: the files of one or more consecutive
// commits (or of the initial snapshot) between Start and End. It is a
// plan; Batches and Rows read the files, one at a time, as they are
// iterated, and may be called more than once.
type Batch struct {
	// Start is the position the batch begins at, End the one after it:
	// store End once the batch is processed, and resume with
	// FromOffset(End).
	Start, End Offset

	schema *schema.StructType
	src    *Source
	units  []unit
	files  int
}

// unit is one read of a batch: a data file (with the reader for its
// version), or the change data feed of a commit.
type unit struct {
	r       *scan.FileReader
	add     *actions.Add
	version int64
	ts      time.Time // the snapshot's, for change columns of its rows
	change  string    // non-empty: append change columns (snapshot rows of a change feed)
	changes bool      // read the change data feed of commit version
}

// Schema returns the schema of the batch's rows.
func (b *Batch) Schema() *schema.StructType { return b.schema }

// NumFiles returns the number of files in the batch: data files, or, with
// the change data feed, the data-changing file actions of its commits.
func (b *Batch) NumFiles() int { return b.files }

// Versions returns the first and last versions the batch reads from.
func (b *Batch) Versions() (first, last int64) {
	return b.units[0].version, b.units[len(b.units)-1].version
}

var errStop = errors.New("stream: stop")

// Batches yields the batch's rows column-wise, file by file in stream
// order. A yielded batch is valid until the loop body returns.
func (b *Batch) Batches(ctx context.Context) iter.Seq2[*schema.Batch, error] {
	return func(yield func(*schema.Batch, error) bool) {
		for i := 0; i < len(b.units); i++ {
			u := b.units[i]
			if u.changes {
				// Consecutive commits of a change feed are read as one range.
				j := i
				for j+1 < len(b.units) && b.units[j+1].changes && b.units[j+1].version == b.units[j].version+1 {
					j++
				}
				if !b.readChanges(ctx, u.version, b.units[j].version, yield) {
					return
				}
				i = j
				continue
			}
			var extra []schema.Value
			if u.change != "" && b.src.opts.ReadChangeFeed {
				extra = []schema.Value{schema.StringValue(u.change), schema.LongValue(u.version), schema.TimestampValue(u.ts.UnixMicro())}
			}
			var out schema.Batch
			err := u.r.ReadFile(ctx, u.add, func(fb *scan.FileBatch) error {
				out = fb.Batch
				if extra != nil {
					out.Columns = append(out.Columns[:len(out.Columns):len(out.Columns)], constant(extra[0], fb.Len), constant(extra[1], fb.Len), constant(extra[2], fb.Len))
				}
				if !yield(&out, nil) {
					return errStop
				}
				return nil
			})
			if errors.Is(err, errStop) {
				return
			}
			if err != nil {
				yield(nil, err)
				return
			}
		}
	}
}

// readChanges yields the change data feed of commits from to to; false
// when the iteration ended.
func (b *Batch) readChanges(ctx context.Context, from, to int64, yield func(*schema.Batch, error) bool) bool {
	s := b.src
	end, err := snapshot.Load(ctx, s.store, to)
	if err == nil {
		var ch *scan.Changes
		ch, err = scan.NewChanges(ctx, end, scan.ChangeOptions{Start: from, End: scan.UpTo(to), Columns: s.cols,
			BatchSize: s.opts.BatchSize, Concurrency: 1})
		if err == nil {
			for cb, err := range ch.Batches(ctx) {
				if err != nil {
					yield(nil, err)
					return false
				}
				if !yield(cb, nil) {
					return false
				}
			}
			return true
		}
	}
	if errors.Is(err, deltaerr.ErrVersionNotFound) || errors.Is(err, deltaerr.ErrMissingLogFile) {
		err = fmt.Errorf("change data feed of versions %d to %d: %w: %w", from, to, ErrVersionsCleanedUp, err)
	}
	yield(nil, err)
	return false
}

func constant(v schema.Value, n int) []schema.Value {
	c := make([]schema.Value, n)
	for i := range c {
		c[i] = v
	}
	return c
}

// Rows yields the batch's rows one at a time.
func (b *Batch) Rows(ctx context.Context) iter.Seq2[scan.Row, error] {
	return func(yield func(scan.Row, error) bool) {
		for cb, err := range b.Batches(ctx) {
			if err != nil {
				yield(scan.Row{}, err)
				return
			}
			for i := range cb.Len {
				if !yield(scan.NewRow(b.schema, cb.Row(i)), nil) {
					return
				}
			}
		}
	}
}

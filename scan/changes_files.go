package scan

import (
	"context"
	"fmt"
	"iter"

	"github.com/godelta/delta/deltaerr"
)

// ChangeFile names one file read of a change data feed: the Index-th read
// of commit Version, in the order Batches reads them (a change data file,
// or the added or removed data file whose rows are a commit's inserts or
// deletes). It is how an engine spreads a feed over workers: each worker
// plans the same feed (NewChanges with the same range) and reads the
// files it is given with ReadFile; together they give exactly the rows
// Batches gives, in no particular order.
type ChangeFile struct {
	Version int64
	Index   int
}

// Files yields the file reads of the feed, commit by commit. Each commit
// is read from the log once.
func (c *Changes) Files(ctx context.Context) iter.Seq2[ChangeFile, error] {
	return func(yield func(ChangeFile, error) bool) {
		for v := c.start; v <= c.end; v++ {
			reads, err := c.commitTasks(ctx, v)
			if err != nil {
				yield(ChangeFile{}, err)
				return
			}
			for i := range reads {
				if !yield(ChangeFile{Version: v, Index: i}, nil) {
					return
				}
			}
		}
	}
}

// ReadFile yields the change rows of one file read of the feed, in
// column-wise batches of Schema's columns. A ChangeFile outside the
// feed's range, or past its commit's reads, is deltaerr.ErrInvalidArgument.
func (c *Changes) ReadFile(ctx context.Context, f ChangeFile) iter.Seq2[*Batch, error] {
	one := func(yield func(*fileRead, error) bool) {
		if f.Version < c.start || f.Version > c.end {
			yield(nil, fmt.Errorf("change file of version %d outside the feed's range [%d, %d]: %w", f.Version, c.start, c.end, deltaerr.ErrInvalidArgument))
			return
		}
		reads, err := c.commitTasks(ctx, f.Version)
		if err != nil {
			yield(nil, err)
			return
		}
		if f.Index < 0 || f.Index >= len(reads) {
			yield(nil, fmt.Errorf("change file %d of version %d, which has %d: %w", f.Index, f.Version, len(reads), deltaerr.ErrInvalidArgument))
			return
		}
		yield(reads[f.Index], nil)
	}
	return c.s.run(ctx, iter.Seq2[*fileRead, error](one))
}

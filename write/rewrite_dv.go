package write

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/internal/dv"
	"github.com/godelta/delta/internal/statsjson"
	"github.com/godelta/delta/schema"
)

// DefaultInlineDVMax is RewriteOptions.InlineDVMax when it is 0: a
// deletion vector whose serialized bitmap takes at most 128 bytes (a few
// dozen scattered positions) is written inline in the log, Z85 encoded;
// a larger one goes to a deletion_vector_<uuid>.bin file.
const DefaultInlineDVMax = 128

// ErrDVMode is returned by Rewrite for options that cannot go with
// deletion vectors (Copy, NoDataChange), or for a table whose protocol
// does not support them. It matches deltaerr.ErrInvalidArgument.
var ErrDVMode = fmt.Errorf("write: deletion vectors cannot be used here: %w", deltaerr.ErrInvalidArgument)

// touchedDV is a file of a deletion-vector rewrite in which rows change:
// the positions now deleted (the file's old vector and the new ones) and
// its physical row count.
type touchedDV struct {
	add      *actions.Add
	deleted  *dv.Bitmap
	physical int64
}

// runDV is the merge-on-read form of run (RewriteOptions.DeletionVectors):
// each file is read once; the positions of the rows fn drops or updates,
// with those the file's deletion vector already held, make its new
// vector; updated rows go to new data files through the row writer, and
// change data is written as run writes it. Kept rows are not written.
//
// The new vector is computed from what the reader gives, not by decoding
// the old one a second time: the reader yields the live rows with their
// positions, so every position it skips below the file's physical row
// count (live rows plus the old vector's cardinality) is one the old
// vector deletes. That is the union the protocol asks for, by the very
// reader that applied the old vector.
func (rw *rewriter) runDV(ctx context.Context, files []*actions.Add, opts RewriteOptions, out *Rewritten) error {
	now := time.Now().UnixMilli()
	if opts.Now != nil {
		now = opts.Now().UnixMilli()
	}
	var touched []touchedDV
	for _, a := range files {
		out.Read = append(out.Read, a.Path)
		t, changed, err := rw.markDV(ctx, a)
		if err != nil {
			return err
		}
		if changed {
			touched = append(touched, t)
		}
	}
	if err := rw.insert(ctx, opts); err != nil {
		return err
	}
	if err := rw.flush(ctx, true); err != nil {
		return err
	}
	// Files whose rows are all gone are removed outright; the others are
	// removed and added again under their new vector.
	var partial []touchedDV
	for _, t := range touched {
		hadDV := t.add.DeletionVector != nil
		out.Removes = append(out.Removes, removeOf(t.add, now, true))
		if int64(t.deleted.Cardinality()) >= t.physical {
			if hadDV {
				out.DVsRemoved++
			}
			continue
		}
		if hadDV {
			out.DVsUpdated++
		} else {
			out.DVsAdded++
		}
		partial = append(partial, t)
	}
	descs, err := rw.storeDVs(ctx, partial, opts.InlineDVMax)
	if err != nil {
		return err
	}
	for i, t := range partial {
		add := *t.add
		add.DataChange = true
		add.DeletionVector = descs[i]
		if add.Stats, err = statsjson.Widen(add.Stats, t.physical); err != nil {
			return fmt.Errorf("write: statistics of %s: %w", t.add.Path, err)
		}
		out.DVAdds = append(out.DVAdds, add)
	}
	return nil
}

// markDV reads the live rows of a, applies fn to each, and returns the
// positions deleted once fn's drops and updates are added, and whether fn
// changed any row.
func (rw *rewriter) markDV(ctx context.Context, a *actions.Add) (touchedDV, bool, error) {
	t := touchedDV{add: a, deleted: &dv.Bitmap{}}
	var next, live int64 // next: the position after the last live row seen
	changed := false
	err := rw.each(ctx, a, func(pos int64, row []schema.Value) error {
		for p := next; p < pos; p++ { // skipped: deleted by the old vector
			t.deleted.Add(uint64(p))
		}
		next = pos + 1
		live++
		v, vals, err := rw.fn(a, pos, row)
		if err != nil {
			return err
		}
		if v != Keep {
			changed = true
			t.deleted.Add(uint64(pos))
		}
		return rw.apply(a, pos, v, row, vals, false)
	}, func() error { return rw.flush(ctx, false) })
	if err != nil || !changed {
		return t, false, err
	}
	var oldCard int64
	if a.DeletionVector != nil {
		oldCard = a.DeletionVector.Cardinality
	}
	t.physical = live + oldCard
	if n, ok := numRecords(a.Stats); ok && n != t.physical {
		return t, false, fmt.Errorf("write: %s: statistics say %d rows, the file has %d live and its deletion vector %d deleted: %w",
			a.Path, n, live, oldCard, deltaerr.ErrCorrupt)
	}
	for p := next; p < t.physical; p++ { // deleted rows after the last live one
		t.deleted.Add(uint64(p))
	}
	if int64(t.deleted.Cardinality()) > t.physical {
		return t, false, fmt.Errorf("write: %s: the deletion vector's cardinality %d does not match the file's rows: %w",
			a.Path, oldCard, deltaerr.ErrCorrupt)
	}
	return t, true, nil
}

// storeDVs returns the descriptor of each file's new vector: inline when
// its bitmap serializes to at most inlineMax bytes (0: DefaultInlineDVMax,
// negative: never), the others together in one DV file, as Spark writes
// the vectors of one operation, which is put in the store before
// returning (and deleted again by cleanup if the rewrite fails later).
func (rw *rewriter) storeDVs(ctx context.Context, ts []touchedDV, inlineMax int) ([]*actions.DeletionVector, error) {
	if inlineMax == 0 {
		inlineMax = DefaultInlineDVMax
	}
	descs := make([]*actions.DeletionVector, len(ts))
	var inFile []int
	var bitmaps []*dv.Bitmap
	for i, t := range ts {
		if inlineMax > 0 {
			raw, err := t.deleted.MarshalBinary()
			if err != nil {
				return nil, err
			}
			if len(raw) <= inlineMax {
				if descs[i], err = dv.NewInline(t.deleted); err != nil {
					return nil, err
				}
				continue
			}
		}
		inFile = append(inFile, i)
		bitmaps = append(bitmaps, t.deleted)
	}
	if len(bitmaps) > 0 {
		f, err := dv.EncodeFile("", uuid.New(), bitmaps...)
		if err != nil {
			return nil, err
		}
		rw.dvFiles = append(rw.dvFiles, f.Key) // before the put: a failed put may land
		if err := rw.store.PutIfAbsent(ctx, f.Key, f.Data); err != nil {
			return nil, fmt.Errorf("write: deletion vector file %s: %w", f.Key, err)
		}
		rw.dvBytes += int64(len(f.Data))
		for k, i := range inFile {
			descs[i] = f.Descriptors[k]
		}
	}
	// maxRowIndex is not a field of the protocol's descriptor: Spark keeps
	// it in memory only and never writes it to the log, so neither do we.
	for _, d := range descs {
		d.MaxRowIndex = nil
	}
	return descs, nil
}

// numRecords returns the numRecords of stats JSON, if it has one (and the
// JSON is well formed).
func numRecords(stats string) (int64, bool) {
	n, ok, err := statsjson.NumRecords(stats)
	return n, ok && err == nil
}

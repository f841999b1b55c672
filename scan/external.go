package scan

import (
	"context"
	"fmt"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/internal/dv"
	"github.com/godelta/delta/location"
)

// Who owns the stores of outside roots: the reading that made the
// location.Stores, and it alone, closes it, once every read that may use it
// has stopped. A run of a Scan or Changes (one call of Rows or Batches)
// makes its own set and closes it when the run returns, whatever the exit
// (the end, the loop stopped early, an error, a cancelled context):
// runOrdered has waited for its workers by then. A FileReader makes one
// set for its life and closes it in Close. Every path is resolved by the
// snapshot's Location, the one resolver.

// loadDV loads a deletion vector: a file-backed one from the store its
// path resolves to (the table's, or a trusted outside root's from ext),
// an inline one from the descriptor.
func (s *reader) loadDV(ctx context.Context, ext *location.Stores, d *actions.DeletionVector) (*dv.Bitmap, error) {
	if d != nil && d.StorageType == dv.StorageAbsolute {
		st, key, err := ext.Locate(ctx, d.PathOrInlineDv)
		if err != nil {
			return nil, fmt.Errorf("deletion vector %q: %w", d.PathOrInlineDv, err)
		}
		return dv.Load(ctx, st, d, func(string) (string, error) { return key, nil })
	}
	return dv.Load(ctx, s.store, d, nil)
}

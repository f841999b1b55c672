package txn

import (
	"encoding/json"
	"fmt"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/internal/statsjson"
)

// rowTrackingDomain holds the row-id high-water mark. Its name and JSON key
// are part of the on-disk format: never change them.
const rowTrackingDomain = "delta.rowTracking"

type rowTrackingConfig struct {
	RowIDHighWaterMark *int64 `json:"rowIdHighWaterMark"`
}

// noHighWaterMark is the mark of a table that never assigned a row id.
const noHighWaterMark = -1

// parseHighWaterMark decodes the configuration of the row-tracking domain;
// where names the commit or snapshot it came from, for errors.
func parseHighWaterMark(config, where string) (int64, error) {
	var c rowTrackingConfig
	if err := json.Unmarshal([]byte(config), &c); err != nil {
		return 0, &deltaerr.CorruptError{Path: where, Reason: "domain " + rowTrackingDomain + " is not valid JSON", Err: err}
	}
	if c.RowIDHighWaterMark == nil || *c.RowIDHighWaterMark < noHighWaterMark {
		return 0, deltaerr.Corruptf(where, "domain %s has no valid rowIdHighWaterMark", rowTrackingDomain)
	}
	return *c.RowIDHighWaterMark, nil
}

func highWaterMarkDomain(mark int64) actions.DomainMetadata {
	return actions.DomainMetadata{
		Domain:        rowTrackingDomain,
		Configuration: fmt.Sprintf(`{"rowIdHighWaterMark":%d}`, mark),
	}
}

// numRecords reads numRecords from an add's stats.
func numRecords(a *actions.Add) (int64, error) {
	n, ok, err := statsjson.NumRecords(a.Stats)
	if err != nil {
		return 0, fmt.Errorf("add %s: stats are not valid JSON (%v): %w", a.Path, err, deltaerr.ErrInvalidArgument)
	}
	if !ok {
		return 0, fmt.Errorf("add %s: row tracking needs numRecords in its stats: %w", a.Path, deltaerr.ErrInvalidArgument)
	}
	return n, nil
}

// assignRowIDs returns a copy of adds where every add staged without a
// baseRowId gets fresh row ids above mark, and every add without a
// defaultRowCommitVersion gets version; fresh[i] says which adds get new
// ids (they are reassigned on every attempt). It returns the new mark and
// whether any id was assigned.
func assignRowIDs(adds []actions.Add, fresh []bool, mark, version int64) ([]actions.Add, int64, error) {
	out := make([]actions.Add, len(adds))
	for i := range adds {
		a := adds[i]
		if fresh[i] {
			n, err := numRecords(&a)
			if err != nil {
				return nil, 0, err
			}
			base := mark + 1
			a.BaseRowID = &base
			mark += n
		}
		if a.DefaultRowCommitVersion == nil || fresh[i] {
			v := version
			a.DefaultRowCommitVersion = &v
		}
		out[i] = a
	}
	return out, mark, nil
}

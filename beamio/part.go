package beamio

import (
	"encoding/json"
	"fmt"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/write"
)

// partMsg is a worker's part of a rewrite's commit (OPTIMIZE, DELETE,
// UPDATE, MERGE), as it travels to the committer: its removes, adds and
// change data files (encoded as in a commit), the paths it read, and its
// counts. One codec for every pipeline that rewrites files.
type partMsg struct {
	Actions                          []byte
	Read                             []string
	Dropped, Updated, Copied         int64
	DVsRemoved, DVsAdded, DVsUpdated int64
	Rows                             int64
	SortRuns                         int
}

// encodePart encodes r for the committer. Copy-on-write rewrites have no
// deletion vector adds and insert no rows: a part with either is refused.
func encodePart(r write.Rewritten) ([]byte, error) {
	if len(r.DVAdds) > 0 || r.Inserted > 0 {
		return nil, fmt.Errorf("beamio: a rewritten part with deletion vector adds or inserted rows: %w", deltaerr.ErrInvalidArgument)
	}
	var acts []actions.Action
	for i := range r.Removes {
		acts = append(acts, actions.Action{Remove: &r.Removes[i]})
	}
	for i := range r.Adds {
		acts = append(acts, actions.Action{Add: &r.Adds[i]})
	}
	for i := range r.CDC {
		acts = append(acts, actions.Action{CDC: &r.CDC[i]})
	}
	var data []byte
	if len(acts) > 0 {
		var err error
		if data, err = actions.EncodeCommit(acts); err != nil {
			return nil, err
		}
	}
	return json.Marshal(partMsg{Actions: data, Read: r.Read,
		Dropped: r.Dropped, Updated: r.Updated, Copied: r.Copied,
		DVsRemoved: r.DVsRemoved, DVsAdded: r.DVsAdded, DVsUpdated: r.DVsUpdated,
		Rows: r.Rows, SortRuns: r.SortRuns})
}

// decodePart decodes what encodePart made; anything else from a worker
// is deltaerr.ErrCorrupt.
func decodePart(b []byte) (write.Rewritten, error) {
	var m partMsg
	if err := json.Unmarshal(b, &m); err != nil {
		return write.Rewritten{}, fmt.Errorf("beamio: a rewritten part: %v: %w", err, deltaerr.ErrCorrupt)
	}
	r := write.Rewritten{Read: m.Read, Dropped: m.Dropped, Updated: m.Updated, Copied: m.Copied,
		DVsRemoved: m.DVsRemoved, DVsAdded: m.DVsAdded, DVsUpdated: m.DVsUpdated,
		Rows: m.Rows, SortRuns: m.SortRuns}
	if len(m.Actions) == 0 {
		return r, nil
	}
	acts, err := actions.DecodeCommit("a rewritten part", m.Actions)
	if err != nil {
		return r, err
	}
	for _, a := range acts {
		switch {
		case a.Add != nil:
			r.Adds = append(r.Adds, *a.Add)
		case a.Remove != nil:
			r.Removes = append(r.Removes, *a.Remove)
		case a.CDC != nil:
			r.CDC = append(r.CDC, *a.CDC)
		default:
			return r, fmt.Errorf("beamio: a worker sent a %s action: %w", actionKind(a), deltaerr.ErrCorrupt)
		}
	}
	return r, nil
}

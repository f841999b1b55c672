package iceberg

import (
	"context"
	"strconv"

	"github.com/godelta/delta/logstore"
)

// Status is the state of a table's Iceberg metadata, as the latest
// vN.metadata.json records it.
type Status struct {
	// MetadataVersion is N of the latest vN.metadata.json; 0 when there is
	// no Iceberg metadata.
	MetadataVersion int `json:"metadataVersion"`
	// MetadataLocation is its URI (what an Iceberg reader opens).
	MetadataLocation string `json:"metadataLocation,omitempty"`
	// ConvertedVersion is the Delta version the current Iceberg snapshot
	// was converted from; -1 when none.
	ConvertedVersion int64 `json:"convertedVersion"`
	// SnapshotID is the current Iceberg snapshot's id (0 when none), and
	// Snapshots the number of snapshots the metadata keeps.
	SnapshotID int64 `json:"snapshotId,omitempty"`
	Snapshots  int   `json:"snapshots"`
	// DataFiles and Records are the totals of the current snapshot's
	// summary.
	DataFiles int64 `json:"dataFiles"`
	Records   int64 `json:"records"`
}

// ReadStatus reads the state of the Iceberg metadata of the table in
// store. A table without Iceberg metadata gives a zero Status with
// ConvertedVersion -1 and no error; metadata that cannot be decoded gives
// ErrCorruptMetadata.
func ReadStatus(ctx context.Context, store logstore.Store) (Status, error) {
	cur, err := readCurrent(ctx, store)
	if err != nil {
		return Status{}, err
	}
	st := Status{ConvertedVersion: -1, MetadataVersion: cur.n}
	if cur.meta == nil {
		return st, nil
	}
	st.MetadataLocation = (&conv{root: trimSlash(store.URI())}).location(MetadataKey(cur.n))
	if v, ok := cur.meta.convertedVersion(); ok {
		st.ConvertedVersion = v
	}
	st.Snapshots = len(cur.meta.Snapshots)
	if s := cur.meta.currentSnapshot(); s != nil {
		st.SnapshotID = s.SnapshotID
		st.DataFiles, _ = strconv.ParseInt(s.Summary["total-data-files"], 10, 64)
		st.Records, _ = strconv.ParseInt(s.Summary["total-records"], 10, 64)
	}
	return st, nil
}

func trimSlash(s string) string {
	for len(s) > 0 && s[len(s)-1] == '/' {
		s = s[:len(s)-1]
	}
	return s
}

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

// Metadata is the latest Iceberg table metadata of a table, as written:
// what an Iceberg REST catalog serves when a client loads the table.
type Metadata struct {
	// Version is N of vN.metadata.json.
	Version int
	// Location is the file's URI (the catalog's metadata-location).
	Location string
	// JSON is the file's content, unchanged: a JSON object of format
	// version 2.
	JSON []byte
}

// ReadMetadata reads the latest vN.metadata.json of the table in store,
// found as Status is. A table without Iceberg metadata gives ErrNoMetadata;
// a file larger than the package's limit, or one that does not decode as
// Iceberg metadata of format version 2, gives ErrCorruptMetadata.
func ReadMetadata(ctx context.Context, store logstore.Store) (Metadata, error) {
	n, info, err := findCurrent(ctx, store)
	if err != nil {
		return Metadata{}, err
	}
	if n == 0 {
		return Metadata{}, ErrNoMetadata
	}
	key := MetadataKey(n)
	data, err := readSized(ctx, store, key, key, info.Size, maxMetadataSize)
	if err != nil {
		return Metadata{}, err
	}
	if _, err := decodeMetadata(key, data); err != nil {
		return Metadata{}, err
	}
	return Metadata{Version: n, Location: (&conv{root: trimSlash(store.URI())}).location(key), JSON: data}, nil
}

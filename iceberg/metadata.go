package iceberg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/godelta/delta/logstore"
)

// Metadata layout beside the Delta log. The names are those Iceberg's
// Hadoop-style tables use and readers look for: never change them.
const (
	// MetadataDir is the directory of the Iceberg metadata, relative to
	// the table root.
	MetadataDir = "metadata/"
	// VersionHintKey holds the number N of the latest vN.metadata.json, as
	// decimal text. It is a hint: readers and this package check it by
	// looking for v(N+1).
	VersionHintKey = MetadataDir + "version-hint.text"

	// Keys of the table properties and snapshot summaries that record the
	// Delta version and commit time a snapshot was converted from.
	PropDeltaVersion   = "delta-version"
	PropDeltaTimestamp = "delta-timestamp"
)

// MetadataKey returns the key of vN.metadata.json.
func MetadataKey(n int) string { return fmt.Sprintf("%sv%d.metadata.json", MetadataDir, n) }

// tableMetadata is an Iceberg v2 table metadata file (spec: "Table
// Metadata Fields"); fields in the spec's order. Every field the spec
// requires for v2 is always written.
type tableMetadata struct {
	FormatVersion      int               `json:"format-version"`
	TableUUID          string            `json:"table-uuid"`
	Location           string            `json:"location"`
	LastSequenceNumber int64             `json:"last-sequence-number"`
	LastUpdatedMs      int64             `json:"last-updated-ms"`
	LastColumnID       int               `json:"last-column-id"`
	Schemas            []schemaJSON      `json:"schemas"`
	CurrentSchemaID    int               `json:"current-schema-id"`
	PartitionSpecs     []partitionSpec   `json:"partition-specs"`
	DefaultSpecID      int               `json:"default-spec-id"`
	LastPartitionID    int               `json:"last-partition-id"`
	Properties         map[string]string `json:"properties"`
	CurrentSnapshotID  *int64            `json:"current-snapshot-id"`
	Snapshots          []snapshotJSON    `json:"snapshots"`
	SnapshotLog        []snapshotLog     `json:"snapshot-log"`
	MetadataLog        []metadataLog     `json:"metadata-log"`
	SortOrders         []sortOrder       `json:"sort-orders"`
	DefaultSortOrderID int               `json:"default-sort-order-id"`
	Refs               map[string]ref    `json:"refs"`
}

type schemaJSON struct {
	Type     string          `json:"type"` // "struct"
	SchemaID int             `json:"schema-id"`
	Fields   json.RawMessage `json:"fields"`
}

type partitionSpec struct {
	SpecID int              `json:"spec-id"`
	Fields []partitionField `json:"fields"`
}

type partitionField struct {
	SourceID  int    `json:"source-id"`
	FieldID   int    `json:"field-id"`
	Name      string `json:"name"`
	Transform string `json:"transform"`
}

type sortOrder struct {
	OrderID int   `json:"order-id"`
	Fields  []any `json:"fields"`
}

type snapshotJSON struct {
	SnapshotID       int64             `json:"snapshot-id"`
	ParentSnapshotID *int64            `json:"parent-snapshot-id,omitempty"`
	SequenceNumber   int64             `json:"sequence-number"`
	TimestampMs      int64             `json:"timestamp-ms"`
	ManifestList     string            `json:"manifest-list"`
	Summary          map[string]string `json:"summary"`
	SchemaID         int               `json:"schema-id"`

	// raw is the snapshot's JSON once encoded or decoded: a snapshot never
	// changes, and every metadata version repeats every snapshot, so
	// encoding them anew each time would make a conversion's cost grow
	// with the history.
	raw json.RawMessage
}

type plainSnapshot snapshotJSON

// MarshalJSON returns the snapshot's JSON, encoded once.
func (s *snapshotJSON) MarshalJSON() ([]byte, error) {
	if s.raw == nil {
		raw, err := json.Marshal((*plainSnapshot)(s))
		if err != nil {
			return nil, err
		}
		s.raw = raw
	}
	return s.raw, nil
}

// UnmarshalJSON decodes a snapshot and keeps its JSON.
func (s *snapshotJSON) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, (*plainSnapshot)(s)); err != nil {
		return err
	}
	s.raw = append(json.RawMessage(nil), b...)
	return nil
}

type snapshotLog struct {
	TimestampMs int64 `json:"timestamp-ms"`
	SnapshotID  int64 `json:"snapshot-id"`
}

type metadataLog struct {
	TimestampMs  int64  `json:"timestamp-ms"`
	MetadataFile string `json:"metadata-file"`
}

type ref struct {
	SnapshotID int64  `json:"snapshot-id"`
	Type       string `json:"type"`
}

// currentSnapshot returns the current snapshot, or nil.
func (m *tableMetadata) currentSnapshot() *snapshotJSON {
	if m.CurrentSnapshotID == nil {
		return nil
	}
	for i := range m.Snapshots {
		if m.Snapshots[i].SnapshotID == *m.CurrentSnapshotID {
			return &m.Snapshots[i]
		}
	}
	return nil
}

// convertedVersion returns the Delta version the metadata describes, and
// false when it records none.
func (m *tableMetadata) convertedVersion() (int64, bool) {
	v, err := strconv.ParseInt(m.Properties[PropDeltaVersion], 10, 64)
	return v, err == nil
}

// current is the latest Iceberg metadata found: its number N and its
// content (nil when there is none), and, when known, the decoded manifest
// list of its current snapshot. A current is never modified once built:
// converters build the next metadata on a copy.
type current struct {
	n         int
	meta      *tableMetadata
	manifests []map[string]any    // nil: not known yet
	info      logstore.ObjectInfo // of vN.metadata.json, for the cache
}

// The metadata this process published last, per table: vN.metadata.json
// and manifest lists are written once and never changed, so the next
// conversion of the same table, in the same process, can skip reading and
// decoding them when N is still the latest. That keeps a conversion's cost
// independent of the number of snapshots the metadata holds (the reading
// and decoding of which grows with it). Bounded to cacheTables tables.
var (
	cacheMu sync.Mutex
	cache   = map[string]current{}
	order   []string
)

const cacheTables = 16

// recall returns the metadata remembered for the table at root, if it is
// vN and the file there is the one remembered (same size and time: two
// unnamed stores may share a URI).
func recall(root string, n int, info logstore.ObjectInfo) (current, bool) {
	cacheMu.Lock()
	defer cacheMu.Unlock()
	c, ok := cache[root]
	return c, ok && c.n == n && c.info.Size == info.Size && c.info.ModTime.Equal(info.ModTime)
}

func remember(root string, c current) {
	cacheMu.Lock()
	defer cacheMu.Unlock()
	if _, ok := cache[root]; !ok {
		order = append(order, root)
		if len(order) > cacheTables {
			delete(cache, order[0])
			order = order[1:]
		}
	}
	cache[root] = c
}

// readCurrent finds the latest vN.metadata.json: from the version hint,
// then forward while v(N+1) exists (the hint lags after a crash between
// the metadata and the hint). The hint is only a hint: when there is none,
// when it is not a number, or when it names a file that does not exist
// (metadata lost or removed, a hint written by hand), the newest
// vN.metadata.json is found by listing the directory instead. Files
// larger than the package's limits are not read (ErrCorruptMetadata).
func readCurrent(ctx context.Context, store logstore.Store) (current, error) {
	n, info, err := findCurrent(ctx, store)
	if err != nil || n == 0 {
		return current{}, err
	}
	if cur, ok := recall(store.URI(), n, info); ok {
		return cur, nil
	}
	data, err := readSized(ctx, store, MetadataKey(n), MetadataKey(n), info.Size, maxMetadataSize)
	if err != nil {
		return current{}, err
	}
	m, err := decodeMetadata(MetadataKey(n), data)
	if err != nil {
		return current{}, err
	}
	return current{n: n, meta: m}, nil
}

// decodeMetadata decodes the metadata file name holds, which must be of
// format version 2.
func decodeMetadata(name string, data []byte) (*tableMetadata, error) {
	var m tableMetadata
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorruptMetadata, name, err)
	}
	if m.FormatVersion != 2 {
		return nil, fmt.Errorf("%w: %s: format-version %d, want 2", ErrCorruptMetadata, name, m.FormatVersion)
	}
	return &m, nil
}

// findCurrent returns N of the latest vN.metadata.json and its ObjectInfo,
// as readCurrent describes; N is 0 when there is none.
func findCurrent(ctx context.Context, store logstore.Store) (int, logstore.ObjectInfo, error) {
	n, err := readHint(ctx, store)
	if err != nil {
		return 0, logstore.ObjectInfo{}, err
	}
	hinted := n > 0
	if !hinted {
		if n, err = listNewest(ctx, store); err != nil {
			return 0, logstore.ObjectInfo{}, err
		}
	}
	if n, err = probeForward(ctx, store, n); err != nil {
		return 0, logstore.ObjectInfo{}, err
	}
	if n == 0 {
		return 0, logstore.ObjectInfo{}, nil
	}
	info, err := store.Stat(ctx, MetadataKey(n))
	if errors.Is(err, logstore.ErrNotFound) && hinted {
		// The hint points past the metadata there is.
		if n, err = listNewest(ctx, store); err != nil {
			return 0, logstore.ObjectInfo{}, err
		}
		if n, err = probeForward(ctx, store, n); err != nil || n == 0 {
			return 0, logstore.ObjectInfo{}, err
		}
		info, err = store.Stat(ctx, MetadataKey(n))
	}
	if err != nil {
		return 0, logstore.ObjectInfo{}, err
	}
	return n, info, nil
}

// readHint returns N of the version hint, or 0 when there is no usable
// hint: none, one that is not a positive decimal number, or one longer
// than any number (it is not read whole).
func readHint(ctx context.Context, store logstore.Store) (int, error) {
	hint, err := store.GetRange(ctx, VersionHintKey, 0, maxHintSize+1)
	switch {
	case errors.Is(err, logstore.ErrNotFound):
		return 0, nil
	case err != nil:
		return 0, err
	case len(hint) > maxHintSize:
		return 0, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(hint)))
	if err != nil || n < 0 {
		return 0, nil
	}
	return n, nil
}

// listNewest returns the largest N of the vN.metadata.json files under
// metadata/, 0 for none.
func listNewest(ctx context.Context, store logstore.Store) (int, error) {
	n := 0
	for info, err := range store.List(ctx, MetadataDir, "") {
		if err != nil {
			if errors.Is(err, logstore.ErrNotFound) {
				break
			}
			return 0, err
		}
		name := strings.TrimPrefix(info.Key, MetadataDir)
		if s, ok := strings.CutSuffix(strings.TrimPrefix(name, "v"), ".metadata.json"); ok && strings.HasPrefix(name, "v") {
			if k, err := strconv.Atoi(s); err == nil && k > n {
				n = k
			}
		}
	}
	return n, nil
}

// probeForward returns the last N from n on such that every v(n+1) .. vN
// exists.
func probeForward(ctx context.Context, store logstore.Store, n int) (int, error) {
	for {
		_, err := store.Stat(ctx, MetadataKey(n+1))
		if errors.Is(err, logstore.ErrNotFound) {
			return n, nil
		}
		if err != nil {
			return 0, err
		}
		n++
	}
}

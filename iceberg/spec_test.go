package iceberg_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hamba/avro/v2/ocf"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/iceberg"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/schema"
)

// The required fields of the Iceberg table spec (format/spec.md) for
// format version 2, written out from its tables, independently of the
// package's types.
var (
	// "Table Metadata Fields", v2 column "required".
	requiredTableFields = []string{"format-version", "table-uuid", "location", "last-sequence-number",
		"last-updated-ms", "last-column-id", "schemas", "current-schema-id", "partition-specs",
		"default-spec-id", "last-partition-id", "sort-orders", "default-sort-order-id"}
	// "Snapshots", v2 required.
	requiredSnapshotFields = []string{"snapshot-id", "sequence-number", "timestamp-ms", "manifest-list", "summary"}
	// "Schemas" / struct fields.
	requiredSchemaFields = []string{"type", "schema-id", "fields"}
	requiredFieldFields  = []string{"id", "name", "required", "type"}
	// "Partition Specs".
	requiredSpecFields      = []string{"spec-id", "fields"}
	requiredPartFieldFields = []string{"source-id", "field-id", "name", "transform"}
	// "Sort Orders".
	requiredSortFields = []string{"order-id", "fields"}
	// "Snapshot References".
	requiredRefFields = []string{"snapshot-id", "type"}
)

// Avro field ids of the spec's "Manifest Lists" and "Manifests" tables:
// name -> id, and whether v2 requires the field (required fields are not
// unions with null).
type avroField struct {
	id       int
	required bool
}

var manifestListFields = map[string]avroField{
	"manifest_path": {500, true}, "manifest_length": {501, true}, "partition_spec_id": {502, true},
	"content": {517, true}, "sequence_number": {515, true}, "min_sequence_number": {516, true},
	"added_snapshot_id": {503, true}, "added_files_count": {504, true}, "existing_files_count": {505, true},
	"deleted_files_count": {506, true}, "added_rows_count": {512, true}, "existing_rows_count": {513, true},
	"deleted_rows_count": {514, true}, "partitions": {507, false}, "key_metadata": {519, false},
}

var manifestEntryFields = map[string]avroField{
	"status": {0, true}, "snapshot_id": {1, false}, "sequence_number": {3, false},
	"file_sequence_number": {4, false}, "data_file": {2, true},
}

var dataFileFields = map[string]avroField{
	"content": {134, true}, "file_path": {100, true}, "file_format": {101, true}, "partition": {102, true},
	"record_count": {103, true}, "file_size_in_bytes": {104, true}, "column_sizes": {108, false},
	"value_counts": {109, false}, "null_value_counts": {110, false}, "nan_value_counts": {137, false},
	"lower_bounds": {125, false}, "upper_bounds": {128, false}, "key_metadata": {131, false},
	"split_offsets": {132, false}, "equality_ids": {135, false}, "sort_order_id": {140, false},
}

func requireKeys(t *testing.T, what string, obj map[string]any, keys []string) {
	t.Helper()
	for _, k := range keys {
		if _, ok := obj[k]; !ok {
			t.Errorf("%s: required field %q missing", what, k)
		}
	}
}

func objects(t *testing.T, what string, v any) []map[string]any {
	t.Helper()
	arr, ok := v.([]any)
	if !ok {
		t.Fatalf("%s: not an array: %v", what, v)
	}
	var out []map[string]any
	for _, x := range arr {
		m, ok := x.(map[string]any)
		if !ok {
			t.Fatalf("%s: element not an object: %v", what, x)
		}
		out = append(out, m)
	}
	return out
}

// latestMetadata reads the latest vN.metadata.json as generic JSON.
func latestMetadata(t *testing.T, ctx context.Context, store logstore.Store) map[string]any {
	t.Helper()
	st, err := iceberg.ReadStatus(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	data, err := store.Get(ctx, iceberg.MetadataKey(st.MetadataVersion))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// checkMetadata checks a metadata file against the spec's required fields.
func checkMetadata(t *testing.T, m map[string]any) {
	t.Helper()
	requireKeys(t, "table metadata", m, requiredTableFields)
	if m["format-version"] != float64(2) {
		t.Errorf("format-version %v", m["format-version"])
	}
	for _, s := range objects(t, "schemas", m["schemas"]) {
		requireKeys(t, "schema", s, requiredSchemaFields)
		for _, f := range objects(t, "schema fields", s["fields"]) {
			requireKeys(t, "schema field", f, requiredFieldFields)
		}
	}
	for _, s := range objects(t, "partition-specs", m["partition-specs"]) {
		requireKeys(t, "partition spec", s, requiredSpecFields)
		for _, f := range objects(t, "partition fields", s["fields"]) {
			requireKeys(t, "partition field", f, requiredPartFieldFields)
		}
	}
	for _, s := range objects(t, "sort-orders", m["sort-orders"]) {
		requireKeys(t, "sort order", s, requiredSortFields)
	}
	for _, s := range objects(t, "snapshots", m["snapshots"]) {
		requireKeys(t, "snapshot", s, requiredSnapshotFields)
		if sum, _ := s["summary"].(map[string]any); sum["operation"] == nil {
			t.Errorf("snapshot %v: summary without operation", s["snapshot-id"])
		}
	}
	refs, _ := m["refs"].(map[string]any)
	for name, r := range refs {
		requireKeys(t, "ref "+name, r.(map[string]any), requiredRefFields)
	}
}

// checkAvroSchema checks the writer schema of an Avro file: each field of
// want has its field id and is optional or not as the spec says.
func checkAvroSchema(t *testing.T, what string, fields []any, want map[string]avroField) map[string]map[string]any {
	t.Helper()
	byName := map[string]map[string]any{}
	for _, x := range fields {
		f := x.(map[string]any)
		byName[f["name"].(string)] = f
	}
	for name, w := range want {
		f, ok := byName[name]
		if !ok {
			if w.required {
				t.Errorf("%s: required field %s missing", what, name)
			}
			continue
		}
		if id, _ := f["field-id"].(float64); int(id) != w.id {
			t.Errorf("%s: field %s has field-id %v, want %d", what, name, f["field-id"], w.id)
		}
		_, union := f["type"].([]any)
		if union == w.required {
			t.Errorf("%s: field %s optional=%v, want %v", what, name, union, !w.required)
		}
	}
	return byName
}

func avroHeader(t *testing.T, data []byte) (map[string]any, map[string][]byte) {
	t.Helper()
	dec, err := ocf.NewDecoder(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	meta := dec.Metadata()
	var sch map[string]any
	if err := json.Unmarshal(meta["avro.schema"], &sch); err != nil {
		t.Fatal(err)
	}
	return sch, meta
}

// manifestPaths returns the manifest paths of a snapshot's manifest list,
// checking the list's schema against the spec on the way.
func manifestPaths(t *testing.T, ctx context.Context, store logstore.Store, list string) []string {
	t.Helper()
	data, err := store.Get(ctx, keyOf(store, list))
	if err != nil {
		t.Fatal(err)
	}
	sch, meta := avroHeader(t, data)
	checkAvroSchema(t, "manifest list", sch["fields"].([]any), manifestListFields)
	if string(meta["format-version"]) != "2" {
		t.Errorf("manifest list format-version %q", meta["format-version"])
	}
	dec, _ := ocf.NewDecoder(bytes.NewReader(data))
	var out []string
	for dec.HasNext() {
		var rec map[string]any
		if err := dec.Decode(&rec); err != nil {
			t.Fatal(err)
		}
		out = append(out, rec["manifest_path"].(string))
	}
	return out
}

func keyOf(store logstore.Store, loc string) string {
	return strings.TrimPrefix(strings.TrimPrefix(loc, strings.TrimSuffix(store.URI(), "/")), "/")
}

// manifestEntries reads a manifest, checking its schema and metadata.
func manifestEntries(t *testing.T, ctx context.Context, store logstore.Store, path string) []map[string]any {
	t.Helper()
	data, err := store.Get(ctx, keyOf(store, path))
	if err != nil {
		t.Fatal(err)
	}
	sch, meta := avroHeader(t, data)
	byName := checkAvroSchema(t, "manifest entry", sch["fields"].([]any), manifestEntryFields)
	df := byName["data_file"]["type"].(map[string]any)
	checkAvroSchema(t, "data_file", df["fields"].([]any), dataFileFields)
	for _, k := range []string{"schema", "partition-spec", "partition-spec-id", "format-version", "content"} {
		if len(meta[k]) == 0 {
			t.Errorf("manifest %s: metadata key %s missing", path, k)
		}
	}
	dec, _ := ocf.NewDecoder(bytes.NewReader(data))
	var out []map[string]any
	for dec.HasNext() {
		var rec map[string]any
		if err := dec.Decode(&rec); err != nil {
			t.Fatal(err)
		}
		out = append(out, rec)
	}
	return out
}

// checkOneSnapshotPerVersion checks that the metadata has one snapshot per
// Delta version 0..latest, in order, each the parent of the next, with
// increasing sequence numbers.
func checkOneSnapshotPerVersion(t *testing.T, ctx context.Context, store logstore.Store, latest int64) {
	t.Helper()
	m := latestMetadata(t, ctx, store)
	checkMetadata(t, m)
	snaps := objects(t, "snapshots", m["snapshots"])
	if int64(len(snaps)) != latest+1 {
		t.Fatalf("%d snapshots for Delta versions 0..%d", len(snaps), latest)
	}
	var prevID, prevSeq float64
	for i, s := range snaps {
		sum := s["summary"].(map[string]any)
		if sum[iceberg.PropDeltaVersion] != strconv.Itoa(i) {
			t.Errorf("snapshot %d converts Delta version %v", i, sum[iceberg.PropDeltaVersion])
		}
		if i > 0 && (s["parent-snapshot-id"] != prevID || s["sequence-number"].(float64) <= prevSeq) {
			t.Errorf("snapshot %d: parent %v (want %v), sequence %v after %v", i, s["parent-snapshot-id"], prevID, s["sequence-number"], prevSeq)
		}
		prevID, prevSeq = s["snapshot-id"].(float64), s["sequence-number"].(float64)
	}
	if m["current-snapshot-id"] != prevID {
		t.Errorf("current snapshot %v, want the last %v", m["current-snapshot-id"], prevID)
	}
}

// TestMetadataFollowsSpec writes a table through appends and an
// overwrite, then checks every metadata file version against the spec's
// required fields, the Avro schemas' field ids, the incremental scheme
// (an append reuses every earlier manifest and adds one; the overwrite
// rewrites only the manifests holding removed files, marking them
// deleted), and the record counts and bounds against the rows written.
func TestMetadataFollowsSpec(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	tbl, err := delta.CreateStore(ctx, "spec", store, uniformSpec())
	if err != nil {
		t.Fatal(err)
	}
	var lists [][]string
	snapList := func() []string {
		m := latestMetadata(t, ctx, store)
		checkMetadata(t, m)
		snaps := objects(t, "snapshots", m["snapshots"])
		return manifestPaths(t, ctx, store, snaps[len(snaps)-1]["manifest-list"].(string))
	}
	lists = append(lists, snapList())
	// Three appends of ids [10k, 10k+10), one day each.
	for k := range 3 {
		var rows [][]schema.Value
		for i := range 10 {
			id := int64(10*k + i)
			rows = append(rows, []schema.Value{schema.LongValue(id), schema.StringValue("x"), schema.DateValue(int32(19000 + k))})
		}
		if _, err := tbl.AppendRows(ctx, rows, delta.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		lists = append(lists, snapList())
	}
	for v := 1; v < len(lists); v++ {
		if len(lists[v]) != v || !slices.Equal(lists[v][1:], lists[v-1]) {
			t.Fatalf("version %d: manifests %v do not reuse %v and add one", v, lists[v], lists[v-1])
		}
	}
	// Each append's manifest: one ADDED file of 10 records, id bounds
	// [10k, 10k+9] as little-endian longs, no nulls.
	for k := range 3 {
		entries := manifestEntries(t, ctx, store, lists[k+1][0])
		if len(entries) != 1 {
			t.Fatalf("append %d: %d entries", k, len(entries))
		}
		e := entries[0]
		df := e["data_file"].(map[string]any)
		if num(e["status"]) != 1 || num(df["record_count"]) != 10 {
			t.Errorf("append %d: status %v, record_count %v", k, e["status"], df["record_count"])
		}
		lo, hi := bound(t, df["lower_bounds"], 1), bound(t, df["upper_bounds"], 1)
		if got := int64(binary.LittleEndian.Uint64(lo)); got != int64(10*k) {
			t.Errorf("append %d: id lower bound %d", k, got)
		}
		if got := int64(binary.LittleEndian.Uint64(hi)); got != int64(10*k+9) {
			t.Errorf("append %d: id upper bound %d", k, got)
		}
		part := df["partition"].(map[string]any)
		if _, ok := part["day"]; !ok {
			t.Errorf("append %d: partition %v has no day", k, part)
		}
	}
	// Overwrite the first day's partition: only the first append's
	// manifest is rewritten, with its file DELETED.
	pred, err := delta.ParsePredicate("day = '2022-01-08'")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.OverwriteRows(ctx, [][]schema.Value{{schema.LongValue(99), schema.StringValue("y"), schema.DateValue(19000)}},
		delta.OverwriteOptions{ReplaceWhere: pred}); err != nil {
		t.Fatal(err)
	}
	last := snapList()
	// lists[3] is newest first: the first day's manifest is the last.
	var fresh []string
	for _, p := range last {
		if !slices.Contains(lists[3], p) {
			fresh = append(fresh, p)
		}
	}
	if len(last) != 4 || len(fresh) != 2 || slices.Contains(last, lists[3][2]) ||
		!slices.Contains(last, lists[3][0]) || !slices.Contains(last, lists[3][1]) {
		t.Fatalf("overwrite: manifests %v, before %v", last, lists[3])
	}
	var statuses []int
	for _, p := range fresh {
		for _, e := range manifestEntries(t, ctx, store, p) {
			statuses = append(statuses, int(num(e["status"])))
		}
	}
	slices.Sort(statuses)
	if !slices.Equal(statuses, []int{1, 2}) { // the new file ADDED, the old one DELETED
		t.Fatalf("overwrite entries have statuses %v", statuses)
	}
	st, err := tbl.IcebergStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Records != 21 || st.DataFiles != 3 {
		t.Fatalf("status after overwrite %+v", st)
	}
	checkOneSnapshotPerVersion(t, ctx, store, 4)
	// Converting again converts nothing.
	res, err := tbl.SyncIceberg(ctx)
	if err != nil || res.Snapshots != 0 {
		t.Fatalf("second sync: %+v, %v", res, err)
	}
}

// num returns a decoded Avro int or long.
func num(v any) int64 {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case int64:
		return x
	}
	return -1
}

// bound returns the bound of column id from a decoded bounds map.
func bound(t *testing.T, m any, id int) []byte {
	t.Helper()
	arr, ok := m.([]any)
	if !ok {
		if u, ok := m.(map[string]any); ok {
			arr, _ = u["array"].([]any)
		}
	}
	for _, x := range arr {
		kv := x.(map[string]any)
		if num(kv["key"]) == int64(id) {
			return kv["value"].([]byte)
		}
	}
	t.Fatalf("no bound for column %d in %v", id, m)
	return nil
}

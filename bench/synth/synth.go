// Package synth builds synthetic Delta tables for benchmarks: N live files
// in one classic Parquet checkpoint, then K JSON commits of 10 adds and 5
// removes each, with stats JSON on every file, partitioned by one string
// column. The shape is the one bench/RESULTS.md measures.
package synth

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/parquet-go/parquet-go"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
)

// Checkpoint row types, shaped like Spark's checkpoint schema.
type (
	row struct {
		Add      *addRow   `parquet:"add,optional"`
		MetaData *metaRow  `parquet:"metaData,optional"`
		Protocol *protoRow `parquet:"protocol,optional"`
	}
	addRow struct {
		Path             *string            `parquet:"path,optional"`
		PartitionValues  map[string]*string `parquet:"partitionValues,optional"`
		Size             *int64             `parquet:"size,optional"`
		ModificationTime *int64             `parquet:"modificationTime,optional"`
		DataChange       *bool              `parquet:"dataChange,optional"`
		Stats            *string            `parquet:"stats,optional"`
	}
	formatRow struct {
		Provider *string            `parquet:"provider,optional"`
		Options  map[string]*string `parquet:"options,optional"`
	}
	metaRow struct {
		ID               *string            `parquet:"id,optional"`
		Format           *formatRow         `parquet:"format,optional"`
		SchemaString     *string            `parquet:"schemaString,optional"`
		PartitionColumns []string           `parquet:"partitionColumns,optional,list"`
		Configuration    map[string]*string `parquet:"configuration,optional"`
		CreatedTime      *int64             `parquet:"createdTime,optional"`
	}
	protoRow struct {
		MinReaderVersion *int32 `parquet:"minReaderVersion,optional"`
		MinWriterVersion *int32 `parquet:"minWriterVersion,optional"`
	}
)

func ptr[T any](v T) *T { return &v }

const schemaString = `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"value","type":"double","nullable":true,"metadata":{}},{"name":"name","type":"string","nullable":true,"metadata":{}},{"name":"ts","type":"timestamp","nullable":true,"metadata":{}},{"name":"date","type":"string","nullable":true,"metadata":{}}]}`

// File returns the add action of synthetic file i.
func File(i int) actions.Add {
	date := fmt.Sprintf("2026-%02d-%02d", i%12+1, i%28+1)
	stats := fmt.Sprintf(`{"numRecords":%d,"minValues":{"id":%d,"value":%d.5,"name":"a%07d","ts":"2026-01-01T00:00:00.000Z"},"maxValues":{"id":%d,"value":%d.5,"name":"z%07d","ts":"2026-01-02T00:00:00.000Z"},"nullCount":{"id":0,"value":0,"name":%d,"ts":0}}`,
		1000, i*1000, i, i, i*1000+999, i+1, i, i%3)
	return actions.Add{
		Path:             fmt.Sprintf("date=%s/part-%08d-6e7e9d44-5b6a-4bd4-8d6f-0a0d7b5c3b27.c000.snappy.parquet", date, i),
		PartitionValues:  map[string]string{"date": date},
		Size:             int64(100_000 + i%1000),
		ModificationTime: 1_700_000_000_000 + int64(i),
		DataChange:       true,
		Stats:            stats,
	}
}

// Build writes the table into store: a checkpoint at version 0 with files
// 0..n-1, then commits 1..k, each adding 10 new files and removing 5 of the
// checkpoint's. It returns the number of live files at the end.
func Build(ctx context.Context, store logstore.Store, n, k int) (int, error) {
	rows := []row{
		{Protocol: &protoRow{MinReaderVersion: ptr[int32](1), MinWriterVersion: ptr[int32](2)}},
		{MetaData: &metaRow{
			ID: ptr("6e7e9d44-5b6a-4bd4-8d6f-0a0d7b5c3b27"), Format: &formatRow{Provider: ptr("parquet"), Options: map[string]*string{}},
			SchemaString: ptr(schemaString), PartitionColumns: []string{"date"}, Configuration: map[string]*string{}, CreatedTime: ptr[int64](1_700_000_000_000),
		}},
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[row](&buf, parquet.Compression(&parquet.Snappy))
	if _, err := w.Write(rows); err != nil {
		return 0, err
	}
	batch := make([]row, 0, 4096)
	for i := 0; i < n; i++ {
		a := File(i)
		batch = append(batch, row{Add: &addRow{
			Path: &a.Path, PartitionValues: map[string]*string{"date": ptr(a.PartitionValues["date"])},
			Size: &a.Size, ModificationTime: &a.ModificationTime, DataChange: ptr(true), Stats: &a.Stats,
		}})
		if len(batch) == cap(batch) || i == n-1 {
			if _, err := w.Write(batch); err != nil {
				return 0, err
			}
			batch = batch[:0]
		}
	}
	if err := w.Close(); err != nil {
		return 0, err
	}
	// Commit 0 holds the same state as the checkpoint, as a real log would;
	// readers never open it because the checkpoint covers version 0.
	commit0, err := actions.EncodeCommit([]actions.Action{
		{Protocol: &actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}},
		{Metadata: &actions.Metadata{ID: "6e7e9d44-5b6a-4bd4-8d6f-0a0d7b5c3b27", Format: actions.Format{Provider: "parquet", Options: map[string]string{}}, SchemaString: schemaString, PartitionColumns: []string{"date"}, Configuration: map[string]string{}}},
	})
	if err != nil {
		return 0, err
	}
	if err := store.Put(ctx, deltalog.CommitKey(0), commit0); err != nil {
		return 0, err
	}
	if err := store.Put(ctx, deltalog.ClassicCheckpointKey(0), buf.Bytes()); err != nil {
		return 0, err
	}
	last, _ := json.Marshal(deltalog.LastCheckpoint{Version: 0, Size: int64(n + 2)})
	if err := store.Put(ctx, deltalog.LastCheckpointKey, last); err != nil {
		return 0, err
	}
	live := n
	for v := 1; v <= k; v++ {
		if err := Commit(ctx, store, int64(v), n); err != nil {
			return 0, err
		}
		live += 10 - min(5, n)
	}
	return live, nil
}

// Commit writes commit v of a table built by Build with n checkpoint files:
// 10 new files, 5 removes of checkpoint files.
func Commit(ctx context.Context, store logstore.Store, v int64, n int) error {
	var acts []actions.Action
	ts := int64(1_700_000_000_000) + v
	acts = append(acts, actions.Action{CommitInfo: &actions.CommitInfo{Timestamp: &ts, Operation: "WRITE"}})
	for j := range 10 {
		a := File(n + int(v)*10 + j)
		acts = append(acts, actions.Action{Add: &a})
	}
	for j := range min(5, n) {
		a := File((int(v)*5 + j) % n)
		acts = append(acts, actions.Action{Remove: &actions.Remove{Path: a.Path, DeletionTimestamp: &ts, DataChange: true}})
	}
	data, err := actions.EncodeCommit(acts)
	if err != nil {
		return err
	}
	return store.PutIfAbsent(ctx, deltalog.CommitKey(v), data)
}

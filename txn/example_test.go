package txn_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/txn"
)

func exampleTable(ctx context.Context) *logstore.Portable {
	store := memory.New()
	store.PutIfAbsent(ctx, deltalog.CommitKey(0), []byte(`{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}
{"metaData":{"id":"ex","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"year\",\"type\":\"integer\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":["year"],"configuration":{}}}
{"add":{"path":"year=2024/a.parquet","partitionValues":{"year":"2024"},"size":100,"modificationTime":1,"dataChange":true}}
`))
	return store
}

// A blind append: files already written are committed as the next version.
func ExampleTransaction_Commit() {
	ctx := context.Background()
	store := exampleTable(ctx)
	snap, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		fmt.Println(err)
		return
	}
	tx := txn.Begin(snap, txn.Options{Operation: "WRITE", EngineInfo: "example"})
	tx.Add(actions.Add{Path: "year=2025/b.parquet", PartitionValues: map[string]string{"year": "2025"},
		Size: 200, ModificationTime: 2, DataChange: true})
	res, err := tx.Commit(ctx)
	var ce *txn.ConflictError
	switch {
	case errors.As(err, &ce):
		fmt.Println("conflict:", ce.Kind, "at version", ce.Version)
	case err != nil:
		fmt.Println(err)
	default:
		fmt.Println("committed version", res.Version)
	}
	// Output: committed version 1
}

// Exactly-once: a streaming writer records its batch number with the data;
// Update runs the function again if another writer for the same application
// got there first.
func ExampleUpdate() {
	ctx := context.Background()
	store := exampleTable(ctx)
	snap, _ := snapshot.Load(ctx, store, deltalog.Latest)
	const batch = 7
	res, err := txn.Update(ctx, snap, txn.Options{Operation: "STREAMING UPDATE"}, func(tx *txn.Transaction) error {
		last, ok, err := tx.TxnVersion(ctx, "ingest")
		if err != nil {
			return err
		}
		if ok && last >= batch {
			return errors.New("batch already committed")
		}
		tx.SetTransaction("ingest", batch)
		tx.Add(actions.Add{Path: "year=2025/c.parquet", PartitionValues: map[string]string{"year": "2025"},
			Size: 300, ModificationTime: 3, DataChange: true})
		return nil
	})
	fmt.Println(res.Version, err)
	// Output: 1 <nil>
}

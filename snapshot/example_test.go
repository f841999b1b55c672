package snapshot_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/txn"
)

// exampleTable commits version 0 (a partitioned table with one file) and
// version 1 (a second file) to a new memory store, through package txn.
func exampleTable(ctx context.Context) (logstore.Store, error) {
	store := memory.New()
	create := txn.BeginCreate(store, txn.Options{EngineInfo: "example"})
	create.SetProtocol(actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2})
	create.SetMetadata(actions.Metadata{
		ID:               "example",
		Format:           actions.Format{Provider: "parquet", Options: map[string]string{}},
		SchemaString:     `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"year","type":"integer","nullable":true,"metadata":{}}]}`,
		PartitionColumns: []string{"year"},
		Configuration:    map[string]string{"delta.appendOnly": "true"},
	})
	create.Add(actions.Add{Path: "year=2024/a.parquet", PartitionValues: map[string]string{"year": "2024"},
		Size: 100, ModificationTime: 1, DataChange: true})
	if _, err := create.Commit(ctx); err != nil {
		return nil, err
	}
	snap, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		return nil, err
	}
	tx := txn.Begin(snap, txn.Options{Operation: "WRITE"})
	tx.Add(actions.Add{Path: "year=2025/b.parquet", PartitionValues: map[string]string{"year": "2025"},
		Size: 200, ModificationTime: 2, DataChange: true})
	if _, err := tx.Commit(ctx); err != nil {
		return nil, err
	}
	return store, nil
}

// Load replays the log up to a version. Protocol, metadata and configuration
// are at hand at once; the file state is replayed on first use, so the file
// accessors take a context and return an error.
func ExampleLoad() {
	ctx := context.Background()
	store, err := exampleTable(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()

	snap, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("version", snap.Version(), "columns", len(snap.Schema().Fields))
	fmt.Println("append-only", snap.Config().AppendOnly(), "partitioned by", snap.Config().PartitionColumns())
	for add, err := range snap.Files(ctx) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(add.Path, add.Size)
	}

	// Time travel: the table as it was at version 0.
	old, err := snapshot.Load(ctx, store, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	n, err := old.NumFiles(ctx)
	fmt.Println("version", old.Version(), "files", n, err)

	// A version the log does not have.
	_, err = snapshot.Load(ctx, store, 7)
	fmt.Println(errors.Is(err, deltaerr.ErrVersionNotFound))
	// Output:
	// version 1 columns 2
	// append-only true partitioned by [year]
	// year=2024/a.parquet 100
	// year=2025/b.parquet 200
	// version 0 files 1 <nil>
	// true
}

// FilesMatching keeps the files whose partition values pass a test, without
// reading any data file.
func ExampleSnapshot_FilesMatching() {
	ctx := context.Background()
	store, err := exampleTable(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	snap, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		fmt.Println(err)
		return
	}
	for add, err := range snap.FilesMatching(ctx, func(pv map[string]string) bool { return pv["year"] == "2025" }) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(add.Path)
	}
	// Output:
	// year=2025/b.parquet
}

package delta_test

import (
	"context"
	"fmt"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/deltalog"
)

// A table in memory, written as a Delta writer would write it.
func exampleTable(ctx context.Context, name string) {
	store, _ := delta.Resolve("memory://" + name)
	store.PutIfAbsent(ctx, deltalog.CommitKey(0), []byte(`{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}
{"metaData":{"id":"ex","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"year\",\"type\":\"integer\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":["year"],"configuration":{}}}
{"add":{"path":"year=2024/a.parquet","partitionValues":{"year":"2024"},"size":100,"modificationTime":1,"dataChange":true}}
{"add":{"path":"year=2025/b.parquet","partitionValues":{"year":"2025"},"size":200,"modificationTime":2,"dataChange":true}}
{"txn":{"appId":"ingest","version":41}}
`))
}

func ExampleOpen() {
	ctx := context.Background()
	exampleTable(ctx, "example-open")

	tbl, err := delta.Open(ctx, "memory://example-open")
	if err != nil {
		fmt.Println(err)
		return
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	// The checkpoint's files (none here) are read on first use, so the
	// accessors that need them take ctx and may fail.
	n, err := snap.NumFiles(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	size, err := snap.SizeInBytes(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("version", snap.Version(), "files", n, "bytes", size)
	for f, err := range snap.Files(ctx) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(f.Path)
	}
	v, ok, err := snap.TxnVersion(ctx, "ingest")
	fmt.Println("ingest at", v, ok, err)
	// Output:
	// version 0 files 2 bytes 300
	// year=2024/a.parquet
	// year=2025/b.parquet
	// ingest at 41 true <nil>
}

func ExampleSnapshot_FilesWhere() {
	ctx := context.Background()
	exampleTable(ctx, "example-where")
	tbl, _ := delta.Open(ctx, "memory://example-where")
	snap, _ := tbl.Snapshot(ctx)

	pred, err := delta.ParsePredicate("year >= 2025")
	if err != nil {
		fmt.Println(err)
		return
	}
	files, err := snap.FilesWhere(ctx, pred)
	if err != nil {
		fmt.Println(err)
		return
	}
	for f, err := range files {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(f.Path)
	}
	// Output:
	// year=2025/b.parquet
}

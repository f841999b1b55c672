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
	fmt.Println("version", snap.Version(), "files", snap.NumFiles(), "bytes", snap.SizeInBytes())
	for f := range snap.Files() {
		fmt.Println(f.Path)
	}
	v, ok := snap.TxnVersion("ingest")
	fmt.Println("ingest at", v, ok)
	// Output:
	// version 0 files 2 bytes 300
	// year=2024/a.parquet
	// year=2025/b.parquet
	// ingest at 41 true
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
	files, err := snap.FilesWhere(pred)
	if err != nil {
		fmt.Println(err)
		return
	}
	for f := range files {
		fmt.Println(f.Path)
	}
	// Output:
	// year=2025/b.parquet
}

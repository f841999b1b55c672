package delta_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/schema"
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
	defer tbl.Close()
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
	tbl, err := delta.Open(ctx, "memory://example-where")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tbl.Close()
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}

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

// Create a table, append rows, and read what the commit returned; every
// delta.checkpointInterval versions (2 here) the append also checkpoints.
func ExampleTable_AppendRows() {
	ctx := context.Background()
	tbl, err := delta.Create(ctx, "memory://example-append", delta.TableSpec{
		Schema:     &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long, Nullable: true}}},
		Properties: map[string]string{"delta.checkpointInterval": "2"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tbl.Close()
	for i := range int64(2) {
		res, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(i)}}, delta.WriteOptions{})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("version", res.Version, "attempts", res.Attempts, "checkpointed", res.PostCommit.Checkpointed)
	}
	// Output:
	// version 1 attempts 1 checkpointed false
	// version 2 attempts 1 checkpointed true
}

// The lower-level path commits files of your own and then runs the work
// the commit made due.
func ExampleTable_Begin() {
	ctx := context.Background()
	exampleTable(ctx, "example-begin")
	tbl, err := delta.Open(ctx, "memory://example-begin")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tbl.Close()
	tx, err := tbl.Begin(ctx, delta.TxnOptions{Operation: "WRITE"})
	if err != nil {
		fmt.Println(err)
		return
	}
	tx.Add(actions.Add{Path: "year=2026/c.parquet", PartitionValues: map[string]string{"year": "2026"},
		Size: 300, ModificationTime: 3, DataChange: true})
	res, err := tx.Commit(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	tbl.PostCommit(ctx, &res)
	fmt.Println("version", res.Version, "checkpoint due", res.PostCommit.Checkpoint)
	// Output: version 1 checkpoint due false
}

// A predicate in text form, for FilesWhere, ScanOptions.Predicate and
// OverwriteOptions.ReplaceWhere.
func ExampleParsePredicate() {
	pred, err := delta.ParsePredicate("year = 2020 AND month >= 2 OR name IS NULL")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(pred)
	fmt.Println(expr.Columns(pred))

	_, err = delta.ParsePredicate("year = ")
	fmt.Println("incomplete:", errors.Is(err, delta.ErrInvalidArgument))
	// Output:
	// ((`year` = 2020) AND (`month` >= 2)) OR (`name` IS NULL)
	// [year month name]
	// incomplete: true
}

// Resolve gives the store behind a location; Open and Create use it. Every
// Resolve of the same memory:// name shares its objects.
func ExampleResolve() {
	ctx := context.Background()
	store, err := delta.Resolve("memory://example-resolve")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	if err := store.Put(ctx, "notes/hello.txt", []byte("hello")); err != nil {
		fmt.Println(err)
		return
	}
	other, err := delta.Resolve("memory://example-resolve")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer other.Close()
	data, err := other.Get(ctx, "notes/hello.txt")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(data))

	// A scheme with no backend imported is refused.
	_, err = delta.Resolve("ftp://host/table")
	fmt.Println("ftp:", errors.Is(err, delta.ErrUnsupportedScheme))
	// Output:
	// hello
	// ftp: true
}

// CreateStore creates a table on a store the program made itself (here a
// private in-memory one); the program, not the Table, closes the store.
func ExampleCreateStore() {
	ctx := context.Background()
	store := memory.New()
	defer store.Close()
	tbl, err := delta.CreateStore(ctx, "events", store, delta.TableSpec{
		Schema: &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long}}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(1)}}, delta.WriteOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("version", res.Version)
	// Output: version 1
}

// OpenStore opens the table at the root of a store the program holds; the
// name is for messages only.
func ExampleOpenStore() {
	ctx := context.Background()
	store, err := delta.Resolve("memory://example-open-store")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	exampleTable(ctx, "example-open-store")
	tbl, err := delta.OpenStore(ctx, "events", store)
	if err != nil {
		fmt.Println(err)
		return
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("version", snap.Version())

	_, err = delta.OpenStore(ctx, "empty", memory.New())
	fmt.Println("no log:", errors.Is(err, delta.ErrTableNotFound))
	// Output:
	// version 0
	// no log: true
}

// ResolveContext is Resolve under a context: a cloud store checks its
// bucket under it.
func ExampleResolveContext() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	store, err := delta.ResolveContext(ctx, "memory://example-resolve-context/")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	fmt.Println(store.URI())
	// Output: memory://example-resolve-context
}

// URI is the location a table was opened at; Store is the store under it,
// for the table's own files.
func ExampleTable_URI() {
	ctx := context.Background()
	exampleTable(ctx, "example-uri")
	tbl, err := delta.Open(ctx, "memory://example-uri")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tbl.Close()
	fmt.Println(tbl.URI())
	// Output: memory://example-uri
}

func ExampleTable_Store() {
	ctx := context.Background()
	exampleTable(ctx, "example-store")
	tbl, err := delta.Open(ctx, "memory://example-store")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tbl.Close()
	for obj, err := range tbl.Store().List(ctx, deltalog.LogDir, "") {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(obj.Key, obj.Size > 0)
	}
	// Output: _delta_log/00000000000000000000.json true
}

// Close releases the store of a Table from Open or Create; the Table is
// then unusable.
func ExampleTable_Close() {
	ctx := context.Background()
	exampleTable(ctx, "example-close")
	tbl, err := delta.Open(ctx, "memory://example-close")
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := tbl.Close(); err != nil {
		fmt.Println(err)
		return
	}
	_, err = tbl.Snapshot(ctx)
	fmt.Println("after Close:", errors.Is(err, logstore.ErrClosed))
	fmt.Println("second Close:", tbl.Close())
	// Output:
	// after Close: true
	// second Close: <nil>
}

// CanonicalPath is the form in which the log's paths identify files.
func ExampleCanonicalPath() {
	fmt.Println(delta.CanonicalPath("year=2024/part%20one.parquet"))
	fmt.Println(delta.CanonicalPath("file:/data/t/part-0.parquet"))
	fmt.Println(delta.CanonicalPath("/data/t/part%200.parquet"))
	fmt.Println(delta.CanonicalPath("s3a://bucket/t/part-0.parquet"))
	// Output:
	// year=2024/part one.parquet
	// file:///data/t/part-0.parquet
	// file:///data/t/part 0.parquet
	// s3://bucket/t/part-0.parquet
}

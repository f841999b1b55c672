package vacuum_test

import (
	"context"
	"fmt"
	"time"

	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/vacuum"
)

// An orphan of a failed write (a data file no commit names) is deleted by
// a full VACUUM once it is older than the retention; here the clock is
// moved 8 days ahead.
func Example() {
	ctx := context.Background()
	store := memory.New()
	commit := `{"commitInfo":{"timestamp":1,"operation":"CREATE TABLE"}}
{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}
{"metaData":{"id":"x","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":[],"configuration":{}}}
`
	_ = store.Put(ctx, "_delta_log/00000000000000000000.json", []byte(commit))
	_ = store.Put(ctx, "part-00000-orphan.parquet", []byte("PAR1"))
	snap, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		fmt.Println(err)
		return
	}
	later := time.Now().Add(8 * 24 * time.Hour)
	res, err := vacuum.Vacuum(ctx, snap, vacuum.Options{Now: func() time.Time { return later }})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("deleted", res.Deleted, "file:", res.Files[0].Key)
	fmt.Println("recorded at versions", res.StartVersion, "and", res.EndVersion)
	// Output:
	// deleted 1 file: part-00000-orphan.parquet
	// recorded at versions 1 and 2
}

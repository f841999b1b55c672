package stream_test

import (
	"context"
	"fmt"
	"os"

	"github.com/godelta/delta"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/stream"
)

// A producer commits numbered batches exactly once; a consumer tails the
// table from its stored offset.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "queue")
	defer os.RemoveAll(dir)
	sch, _ := schema.ParseDDL("batch BIGINT, msg STRING")
	tbl, err := delta.Create(ctx, dir, delta.TableSpec{Schema: sch})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tbl.Close()

	// The producer: batch 1 is written twice (a retry after a crash, say)
	// and committed once.
	sink, _ := tbl.Sink("producer", stream.SinkOptions{})
	for _, b := range []int64{0, 1, 1} {
		rows := [][]schema.Value{{schema.LongValue(b), schema.StringValue(fmt.Sprint("hello ", b))}}
		res, err := sink.Write(ctx, b, delta.Rows(rows))
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("batch %d skipped: %v\n", b, res.Skipped)
	}
	last, _, _ := sink.LastVersion(ctx)
	fmt.Println("last batch:", last)

	// The consumer: everything from the start, then its offset is saved.
	cursor := stream.FileCursor{Path: dir + ".offset"}
	defer os.Remove(cursor.Path)
	src, _ := tbl.Stream(ctx, delta.StreamOptions{Start: stream.FromVersion(0)})
	for {
		b, ok, err := src.TryNext(ctx)
		if err != nil || !ok {
			break
		}
		for r, err := range b.Rows(ctx) {
			if err != nil {
				fmt.Println(err)
				return
			}
			msg, _ := r.Get("msg")
			fmt.Println("read:", msg)
		}
		_ = cursor.Save(ctx, b.End)
	}
	off, _, _ := cursor.Load(ctx)
	// The offset names the table it was taken on (off.TableID): resumed
	// on another table, the stream would be refused.
	fmt.Printf("resume at: version %d, file %d\n", off.Version, off.Index)
	// Output:
	// batch 0 skipped: false
	// batch 1 skipped: false
	// batch 1 skipped: true
	// last batch: 1
	// read: hello 0
	// read: hello 1
	// resume at: version 3, file 0
}

package delta_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/parquet-go/parquet-go"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
)

// Rows as a program holds them: fields go to columns by tag, else by name
// ignoring case, both when writing and when reading back.
type Measurement struct {
	Sensor string    `parquet:"sensor"`
	At     time.Time `parquet:"at"`
	Value  *float64  // null when nil
	Debug  string    `parquet:"-"` // not a column
}

func ExampleAppendStructs() {
	ctx := context.Background()
	tbl, err := delta.Create(ctx, "memory://example-append-structs", delta.TableSpec{Schema: &schema.StructType{Fields: []schema.StructField{
		{Name: "sensor", Type: schema.String},
		{Name: "at", Type: schema.Timestamp},
		{Name: "value", Type: schema.Double, Nullable: true},
	}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tbl.Close()
	v := 21.5
	rows := []Measurement{
		{Sensor: "a", At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Value: &v},
		{Sensor: "b", At: time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC)},
	}
	res, err := delta.AppendStructs(ctx, tbl, slices.Values(rows), delta.WriteOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("version", res.Version)

	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := tbl.Scan(snap, delta.ScanOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for m, err := range scan.All[Measurement](ctx, s) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Print(m.Sensor, " ", m.At.Format(time.RFC3339), " ")
		if m.Value != nil {
			fmt.Println(*m.Value)
		} else {
			fmt.Println("null")
		}
	}
	// Output:
	// version 1
	// a 2026-01-02T03:04:05Z 21.5
	// b 2026-01-02T03:04:06Z null
}

func ExampleFileStats() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "example-file-stats")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	tbl, err := delta.Create(ctx, filepath.Join(dir, "t"), delta.TableSpec{Schema: &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.Long},
		{Name: "name", Type: schema.String, Nullable: true},
	}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tbl.Close()

	// The program writes a Parquet file of its own, with parquet-go, under
	// the table root.
	type row struct {
		ID   int64   `parquet:"id"`
		Name *string `parquet:"name,optional"`
	}
	ada := "ada"
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[row](&buf)
	if _, err := w.Write([]row{{ID: 1, Name: &ada}, {ID: 2}}); err != nil {
		fmt.Println(err)
		return
	}
	if err := w.Close(); err != nil {
		fmt.Println(err)
		return
	}
	if err := tbl.Store().Put(ctx, "part-00000.parquet", buf.Bytes()); err != nil {
		fmt.Println(err)
		return
	}

	// FileStats checks the file against the table and computes its stats;
	// the add action goes into a transaction.
	add, err := delta.FileStats(ctx, tbl, "part-00000.parquet")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(add.Path, add.Stats)
	tx, err := tbl.Begin(ctx, delta.TxnOptions{Operation: "WRITE"})
	if err != nil {
		fmt.Println(err)
		return
	}
	tx.Add(add)
	if _, err := tx.Commit(ctx); err != nil {
		fmt.Println(err)
		return
	}

	// A scan for id > 2 skips the file on its stats.
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	pred, err := delta.ParsePredicate("id > 2")
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := tbl.Scan(snap, delta.ScanOptions{Predicate: pred})
	if err != nil {
		fmt.Println(err)
		return
	}
	n := 0
	for _, err := range s.Rows(ctx) {
		if err != nil {
			fmt.Println(err)
			return
		}
		n++
	}
	fmt.Println("rows", n, "files skipped on stats", s.Metrics().FilesSkippedStat)
	// Output:
	// part-00000.parquet {"numRecords":2,"minValues":{"id":1,"name":"ada"},"maxValues":{"id":2,"name":"ada"},"nullCount":{"id":0,"name":1}}
	// rows 0 files skipped on stats 1
}

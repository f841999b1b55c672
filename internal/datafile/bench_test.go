package datafile_test

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/godelta/delta/internal/datafile"
	"github.com/godelta/delta/schema"
)

// benchRow is the row of the benchmark file: the column types of a
// typical fact table.
type benchRow struct {
	ID    int64     `parquet:"id"`
	Value float64   `parquet:"value"`
	Name  string    `parquet:"name,dict"`
	TS    time.Time `parquet:"ts,timestamp(microsecond)"`
	N     *int32    `parquet:"n,optional"`
}

const benchRows = 1 << 20

var benchFile = sync.OnceValue(func() []byte {
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[benchRow](&buf, parquet.MaxRowsPerRowGroup(256<<10))
	rows := make([]benchRow, 0, 4096)
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range benchRows {
		r := benchRow{ID: int64(i), Value: float64(i) * 0.5, Name: "name-" + strconv.Itoa(i%1000),
			TS: base.Add(time.Duration(i) * time.Second)}
		if i%3 != 0 {
			n := int32(i)
			r.N = &n
		}
		rows = append(rows, r)
		if len(rows) == cap(rows) {
			if _, err := w.Write(rows); err != nil {
				panic(err)
			}
			rows = rows[:0]
		}
	}
	if _, err := w.Write(rows); err != nil {
		panic(err)
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	return buf.Bytes()
})

var benchSchema = st(fld("id", schema.Long), fld("value", schema.Double), fld("name", schema.String),
	fld("ts", schema.Timestamp), fld("n", schema.Integer))

// BenchmarkRead reads the benchmark file with Read, and with parquet-go's
// own readers for comparison: the project's target is Read within 1.3x
// of a bare parquet-go read.
func BenchmarkRead(b *testing.B) {
	data := benchFile()
	b.Run("datafile", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			f, err := datafile.Open(bytes.NewReader(data), int64(len(data)))
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			err = f.Read(context.Background(), benchSchema, datafile.ReadOptions{}, func(bt *datafile.Batch) error {
				n += bt.Len
				return nil
			})
			if err != nil || n != benchRows {
				b.Fatal(n, err)
			}
		}
	})
	b.Run("parquet-go-generic", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		buf := make([]benchRow, 8192)
		for b.Loop() {
			r := parquet.NewGenericReader[benchRow](bytes.NewReader(data))
			n := 0
			for {
				k, err := r.Read(buf)
				n += k
				if err == io.EOF {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			r.Close()
			if n != benchRows {
				b.Fatal(n)
			}
		}
	})
	b.Run("parquet-go-rows", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		rows := make([]parquet.Row, 8192)
		for b.Loop() {
			f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for _, rg := range f.RowGroups() {
				rr := rg.Rows()
				for {
					k, err := rr.ReadRows(rows)
					n += k
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				rr.Close()
			}
			if n != benchRows {
				b.Fatal(n)
			}
		}
	})
}

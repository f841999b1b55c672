package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/snapshot"
)

// scanRow is the row of the scan benchmark table.
type scanRow struct {
	ID    int64     `parquet:"id"`
	Value float64   `parquet:"value"`
	Name  string    `parquet:"name"`
	TS    time.Time `parquet:"ts,timestamp(microsecond)"`
	Opt   *int32    `parquet:"opt,optional"`
}

const scanSchema = `{"type":"struct","fields":[` +
	`{"name":"id","type":"long","nullable":false,"metadata":{}},` +
	`{"name":"value","type":"double","nullable":false,"metadata":{}},` +
	`{"name":"name","type":"string","nullable":false,"metadata":{}},` +
	`{"name":"ts","type":"timestamp","nullable":false,"metadata":{}},` +
	`{"name":"opt","type":"integer","nullable":true,"metadata":{}}]}`

const (
	scanFiles       = 8
	scanRowsPerFile = 250_000
)

var scanTableOnce struct {
	sync.Once
	dir   string
	files []string
	bytes int64
	err   error
}

// scanTable writes (once per process) a table of scanFiles Parquet files
// of scanRowsPerFile rows each, written by parquet-go directly.
func scanTable(b *testing.B) (dir string, files []string, size int64) {
	b.Helper()
	s := &scanTableOnce
	s.Do(func() { s.dir, s.files, s.bytes, s.err = writeScanTable(scanFiles, scanRowsPerFile) })
	if s.err != nil {
		b.Fatal(s.err)
	}
	return s.dir, s.files, s.bytes
}

// writeScanTable writes a table of nfiles Parquet files of rowsPerFile
// rows of scanRow each, written by parquet-go directly, in a new
// temporary directory.
func writeScanTable(nfiles, rowsPerFile int) (dir string, files []string, size int64, err error) {
	dir, err = os.MkdirTemp("", "godelta-scan-bench-*")
	if err != nil {
		return "", nil, 0, err
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	acts := []actions.Action{
		{Protocol: &actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}},
		{Metadata: &actions.Metadata{ID: "bench", Format: actions.Format{Provider: "parquet"}, SchemaString: scanSchema, Configuration: map[string]string{}}},
	}
	rows := make([]scanRow, rowsPerFile)
	for f := range nfiles {
		for i := range rows {
			id := int64(f*rowsPerFile + i)
			rows[i] = scanRow{ID: id, Value: float64(id) * 0.5, Name: fmt.Sprintf("name-%d", id%1000),
				TS: base.Add(time.Duration(id) * time.Millisecond)}
			if id%3 != 0 {
				v := int32(id)
				rows[i].Opt = &v
			}
		}
		var buf bytes.Buffer
		w := parquet.NewGenericWriter[scanRow](&buf, parquet.Compression(&parquet.Snappy))
		if _, err = w.Write(rows); err != nil {
			return "", nil, 0, err
		}
		if err = w.Close(); err != nil {
			return "", nil, 0, err
		}
		name := fmt.Sprintf("part-%05d.snappy.parquet", f)
		if err = os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
			return "", nil, 0, err
		}
		files = append(files, filepath.Join(dir, name))
		size += int64(buf.Len())
		acts = append(acts, actions.Action{Add: &actions.Add{Path: name, Size: int64(buf.Len()), DataChange: true,
			Stats: fmt.Sprintf(`{"numRecords":%d}`, rowsPerFile)}})
	}
	store, err := local.New(dir)
	if err != nil {
		return "", nil, 0, err
	}
	data, err := actions.EncodeCommit(acts)
	if err != nil {
		return "", nil, 0, err
	}
	err = store.PutIfAbsent(context.Background(), deltalog.CommitKey(0), data)
	return dir, files, size, err
}

// BenchmarkScan reads every row of the table through package scan, with
// one file at a time (the fair comparison with the bare read below) and
// with the default concurrency.
func BenchmarkScan(b *testing.B) {
	dir, _, size := scanTable(b)
	store, err := local.New(dir)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, conc := range []int{1, 0} {
		name := "files-at-once=1"
		if conc == 0 {
			name = "files-at-once=GOMAXPROCS"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				snap, err := snapshot.Load(ctx, store, deltalog.Latest)
				if err != nil {
					b.Fatal(err)
				}
				s, err := scan.New(snap, scan.Options{Concurrency: conc})
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for batch, err := range s.Batches(ctx) {
					if err != nil {
						b.Fatal(err)
					}
					n += batch.Len
				}
				if n != scanFiles*scanRowsPerFile {
					b.Fatalf("%d rows", n)
				}
			}
			b.ReportMetric(float64(scanFiles*scanRowsPerFile)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkBareParquetGo reads the same files with parquet-go alone, one
// after another: every value decoded into parquet.Row buffers, the
// cheapest complete read parquet-go offers.
func BenchmarkBareParquetGo(b *testing.B) {
	_, files, size := scanTable(b)
	b.SetBytes(size)
	b.ReportAllocs()
	buf := make([]parquet.Row, 1024)
	for b.Loop() {
		n := 0
		for _, name := range files {
			f, err := os.Open(name)
			if err != nil {
				b.Fatal(err)
			}
			st, _ := f.Stat()
			pf, err := parquet.OpenFile(f, st.Size())
			if err != nil {
				b.Fatal(err)
			}
			for _, rg := range pf.RowGroups() {
				rows := rg.Rows()
				for {
					k, err := rows.ReadRows(buf)
					n += k
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				rows.Close()
			}
			f.Close()
		}
		if n != scanFiles*scanRowsPerFile {
			b.Fatalf("%d rows", n)
		}
	}
	b.ReportMetric(float64(scanFiles*scanRowsPerFile)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

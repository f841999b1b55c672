package write

import (
	"bytes"
	"context"
	"fmt"
	"iter"
	"net/url"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/schema"
)

// TestRowsMaxBuffered: the data files one write has open (one a partition)
// buffer at most Options.MaxBuffered together; past it the largest writes
// its row group early. Every file then has several row groups, and the
// rows read back complete.
func TestRowsMaxBuffered(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	spec := TableSpec{
		Schema:           st(field("id", schema.Long), field("p", schema.String), field("pad", schema.String)),
		PartitionColumns: []string{"p"},
	}
	snap := snapshotOn(t, store, spec)
	const parts, batches, rowsPer = 8, 20, 64
	pad := strings.Repeat("x", 1000)
	rows := func(yield func(Batch, error) bool) {
		id := int64(0)
		for range batches {
			b := Batch{Len: rowsPer, Columns: make([][]schema.Value, 3)}
			for range rowsPer {
				b.Columns[0] = append(b.Columns[0], l(id))
				b.Columns[1] = append(b.Columns[1], s(fmt.Sprintf("p%d", id%parts)))
				b.Columns[2] = append(b.Columns[2], s(fmt.Sprintf("%d%s", id, pad))) // distinct: no dictionary
				id++
			}
			if !yield(b, nil) {
				return
			}
		}
	}
	// About 1.3 MB of rows into 8 files, with a 128 KiB budget.
	adds, err := Rows(ctx, snap, iter.Seq2[Batch, error](rows), Options{MaxBuffered: 128 << 10, Compression: "none"})
	if err != nil {
		t.Fatal(err)
	}
	if len(adds) != parts {
		t.Fatalf("%d files, want %d", len(adds), parts)
	}
	total := int64(0)
	for _, a := range adds {
		key, _ := url.PathUnescape(a.Path)
		data, err := store.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		if n := len(f.RowGroups()); n < 2 {
			t.Errorf("%s: %d row group(s) for %d bytes, want several under a 128 KiB budget", a.Path, n, len(data))
		}
		total += f.NumRows()
	}
	if total != batches*rowsPer {
		t.Errorf("%d rows in the files, want %d", total, batches*rowsPer)
	}

	// With the default budget the same rows are one row group a file.
	snap2 := snapshotOn(t, memory.New(), spec)
	adds, err = Rows(ctx, snap2, iter.Seq2[Batch, error](rows), Options{Compression: "none"})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range adds {
		key, _ := url.PathUnescape(a.Path)
		data, _ := snap2.Store().Get(ctx, key)
		f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		if n := len(f.RowGroups()); n != 1 {
			t.Errorf("%s: %d row groups with the default budget, want 1", a.Path, n)
		}
	}
}

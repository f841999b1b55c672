package logstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
)

func TestReaderAt(t *testing.T) {
	ctx := t.Context()
	s := memory.New()
	const content = "0123456789"
	if err := s.Put(ctx, "obj", []byte(content)); err != nil {
		t.Fatal(err)
	}
	r := logstore.ReaderAt(ctx, s, "obj", int64(len(content)))
	tests := []struct {
		name    string
		off     int64
		n       int
		want    string
		wantErr error
	}{
		{"start", 0, 4, "0123", nil},
		{"middle", 3, 4, "3456", nil},
		{"up to the end", 6, 4, "6789", nil},
		{"whole", 0, 10, content, nil},
		{"past the end", 8, 4, "89", io.EOF},
		{"at the end", 10, 4, "", io.EOF},
		{"beyond the end", 50, 4, "", io.EOF},
		{"empty buffer", 3, 0, "", nil},
		{"empty buffer at the end", 10, 0, "", nil},
		{"negative offset", -1, 4, "", logstore.ErrInvalidRange},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := make([]byte, tc.n)
			n, err := r.ReadAt(p, tc.off)
			if string(p[:n]) != tc.want || !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Errorf("ReadAt(%d bytes, %d) = %d %q, %v; want %q, %v", tc.n, tc.off, n, p[:n], err, tc.want, tc.wantErr)
			}
		})
	}
	t.Run("SectionReader", func(t *testing.T) {
		b, err := io.ReadAll(io.NewSectionReader(r, 0, int64(len(content))))
		if err != nil || string(b) != content {
			t.Errorf("ReadAll = %q, %v", b, err)
		}
	})
	t.Run("parallel", func(t *testing.T) {
		var wg sync.WaitGroup
		for i := range 10 {
			wg.Go(func() {
				p := make([]byte, 1)
				if n, err := r.ReadAt(p, int64(i)); n != 1 || err != nil || p[0] != content[i] {
					t.Errorf("ReadAt(1, %d) = %d %q, %v", i, n, p[:n], err)
				}
			})
		}
		wg.Wait()
	})
	t.Run("object shorter than size", func(t *testing.T) {
		r := logstore.ReaderAt(ctx, s, "obj", 20)
		p := make([]byte, 8)
		n, err := r.ReadAt(p, 6)
		if n != 4 || string(p[:n]) != "6789" || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("ReadAt = %d %q, %v; want 4 \"6789\", io.ErrUnexpectedEOF", n, p[:n], err)
		}
	})
	t.Run("missing object", func(t *testing.T) {
		r := logstore.ReaderAt(ctx, s, "missing", 10)
		if _, err := r.ReadAt(make([]byte, 4), 0); !errors.Is(err, logstore.ErrNotFound) {
			t.Errorf("ReadAt of a missing object = %v, want ErrNotFound", err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		r := logstore.ReaderAt(cctx, s, "obj", 10)
		cancel()
		if _, err := r.ReadAt(make([]byte, 4), 0); !errors.Is(err, context.Canceled) {
			t.Errorf("ReadAt after cancel = %v, want context.Canceled", err)
		}
	})
}

// TestReaderAtParquet opens a Parquet file through ReaderAt, the use it is
// made for.
func TestReaderAtParquet(t *testing.T) {
	type row struct {
		ID   int64  `parquet:"id"`
		Name string `parquet:"name"`
	}
	rows := make([]row, 1000)
	for i := range rows {
		rows[i] = row{ID: int64(i), Name: fmt.Sprint("name-", i)}
	}
	var buf bytes.Buffer
	if err := parquet.Write(&buf, rows); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	s := memory.New()
	if err := s.Put(ctx, "part-00000.parquet", buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	info, err := s.Stat(ctx, "part-00000.parquet")
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(logstore.ReaderAt(ctx, s, info.Key, info.Size), info.Size)
	if err != nil {
		t.Fatal(err)
	}
	if f.NumRows() != int64(len(rows)) {
		t.Fatalf("NumRows = %d, want %d", f.NumRows(), len(rows))
	}
	got := make([]row, len(rows))
	rd := parquet.NewGenericReader[row](f)
	n, err := rd.Read(got)
	if err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	if n != len(rows) || got[0] != rows[0] || got[len(rows)-1] != rows[len(rows)-1] {
		t.Errorf("read %d rows, first %+v, last %+v", n, got[0], got[n-1])
	}
}

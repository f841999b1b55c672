package parquetio

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync/atomic"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/format"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
)

type countingStore struct {
	logstore.Store
	ranges atomic.Int64
}

func (s *countingStore) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	s.ranges.Add(1)
	return s.Store.GetRange(ctx, key, off, n)
}

func meta(off, length int64) *format.ColumnChunk {
	return &format.ColumnChunk{MetaData: format.ColumnMetaData{DataPageOffset: off, TotalCompressedSize: length}}
}

// TestPrefetch checks which chunks one request fetches: adjacent small
// ones together, a gap or a large chunk apart, and that each reader then
// reads its own bytes and finds io.EOF at its end.
func TestPrefetch(t *testing.T) {
	ctx := context.Background()
	size := int64(3*Window + 100)
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i * 7)
	}
	tests := []struct {
		name     string
		chunks   [][2]int64 // offset, length
		requests int64      // made by Prefetch
	}{
		{"adjacent", [][2]int64{{4, 10}, {14, 20}, {34, 5}}, 1},
		{"unordered adjacent", [][2]int64{{34, 5}, {4, 10}, {14, 20}}, 1},
		{"gap", [][2]int64{{4, 10}, {20, 10}}, 2},
		{"large chunk left to its windows", [][2]int64{{4, 10}, {14, Window + 1}}, 1},
		{"empty chunk", [][2]int64{{4, 0}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := &countingStore{Store: memory.New()}
			if err := store.PutIfAbsent(ctx, "f", data); err != nil {
				t.Fatal(err)
			}
			o := NewObject(ctx, store, "f", size)
			var readers []*ChunkReader
			for _, c := range tt.chunks {
				r, err := o.Chunk(ctx, meta(c[0], c[1]), "c")
				if err != nil {
					t.Fatal(err)
				}
				readers = append(readers, r)
			}
			if err := Prefetch(readers); err != nil {
				t.Fatal(err)
			}
			if got := store.ranges.Load(); got != tt.requests {
				t.Errorf("Prefetch made %d requests, want %d", got, tt.requests)
			}
			for i, c := range tt.chunks {
				got := make([]byte, c[1])
				if n, err := readers[i].ReadAt(got, c[0]); int64(n) != c[1] || (err != nil && err != io.EOF) {
					t.Fatalf("chunk %d: read %d, %v", i, n, err)
				}
				if !bytes.Equal(got, data[c[0]:c[0]+c[1]]) {
					t.Errorf("chunk %d: wrong bytes", i)
				}
				if n, err := readers[i].ReadAt(make([]byte, 1), c[0]+c[1]); n != 0 || err != io.EOF {
					t.Errorf("chunk %d: read past the end: %d, %v", i, n, err)
				}
			}
		})
	}
}

// TestChunkOutsideFile checks that a footer putting a chunk outside the
// file is corrupt.
func TestChunkOutsideFile(t *testing.T) {
	o := NewReaderObject(bytes.NewReader(make([]byte, 100)), "f", 100)
	for _, c := range [][2]int64{{0, 10}, {90, 11}, {101, 0}, {4, -1}} {
		if _, err := o.Chunk(context.Background(), meta(c[0], c[1]), "c"); !errors.Is(err, deltaerr.ErrCorrupt) {
			t.Errorf("chunk [%d, +%d): %v, want ErrCorrupt", c[0], c[1], err)
		}
	}
}

// TestEncodingKind checks the mapping from parquet-go's physical kinds to
// those of its encoding package, which count differently.
func TestEncodingKind(t *testing.T) {
	for k, want := range map[parquet.Kind]encoding.Kind{
		parquet.Boolean: encoding.Boolean, parquet.Int32: encoding.Int32, parquet.Int64: encoding.Int64,
		parquet.Int96: encoding.Int96, parquet.Float: encoding.Float, parquet.Double: encoding.Double,
		parquet.ByteArray: encoding.ByteArray, parquet.FixedLenByteArray: encoding.FixedLenByteArray,
	} {
		if got := encodingKind(k); got != want {
			t.Errorf("encodingKind(%s) = %s, want %s", k, got, want)
		}
	}
}

// TestGuards checks the two guards: Catch returns an abort's error and
// lets any other panic go on; Decode turns any panic into ErrCorrupt.
func TestGuards(t *testing.T) {
	errBad := errors.New("bad")
	if err := Catch(func() error { Fail(errBad); return nil }); err != errBad {
		t.Errorf("Catch of an abort: %v", err)
	}
	func() {
		defer func() {
			if v := recover(); v != "bug" {
				t.Errorf("Catch let through %v, want the panic \"bug\"", v)
			}
		}()
		_ = Catch(func() error { panic("bug") })
		t.Error("Catch recovered a panic that is not an abort")
	}()
	err := Decode("f", "column c", func() error { panic("decoder") })
	var ce *deltaerr.CorruptError
	if !errors.As(err, &ce) || ce.Path != "f" {
		t.Errorf("Decode of a panic: %v, want a CorruptError naming f", err)
	}
}

package iceberg

import (
	"bytes"
	"compress/flate"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/hamba/avro/v2"
	"github.com/hamba/avro/v2/ocf"

	"github.com/godelta/delta/deltaerr"
)

func zigzag(b []byte, v int64) []byte {
	u := uint64(v<<1) ^ uint64(v>>63)
	for u >= 0x80 {
		b = append(b, byte(u)|0x80)
		u >>= 7
	}
	return append(b, byte(u))
}

// container returns an Avro container file of the manifest list schema
// with the given codec and blocks (count, raw data), each followed by the
// sync marker (or by a wrong one when badSync).
func container(t *testing.T, codec string, badSync bool, blocks ...any) []byte {
	t.Helper()
	sync := [16]byte{9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6}
	out, err := avro.Marshal(ocf.HeaderSchema, ocf.Header{
		Magic: [4]byte{'O', 'b', 'j', 1},
		Meta:  map[string][]byte{"avro.schema": []byte(manifestListSchema()), "avro.codec": []byte(codec)},
		Sync:  sync,
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(blocks); i += 2 {
		data := blocks[i+1].([]byte)
		out = zigzag(zigzag(out, blocks[i].(int64)), int64(len(data)))
		out = append(out, data...)
		if badSync {
			sync[0]++
		}
		out = append(out, sync[:]...)
	}
	return out
}

func deflated(t *testing.T, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.BestCompression)
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestDecodeOCFRefuses: files whose framing lies (a block larger than the
// file, more records than bytes, a wrong sync marker, truncation), whose
// blocks inflate past the limit, or whose records are empty are refused
// with ErrCorruptMetadata naming the file, before anything large is
// allocated; a good file still reads.
func TestDecodeOCFRefuses(t *testing.T) {
	good, err := encodeOCF(manifestListSchema(), map[string]string{"format-version": "2"}, []any{map[string]any{
		"manifest_path": "file:///t/metadata/m.avro", "manifest_length": int64(10), "partition_spec_id": int32(0), "content": int32(0),
		"sequence_number": int64(1), "min_sequence_number": int64(1), "added_snapshot_id": int64(1),
		"added_files_count": int32(1), "existing_files_count": int32(0), "deleted_files_count": int32(0),
		"added_rows_count": int64(1), "existing_rows_count": int64(0), "deleted_rows_count": int64(0),
		"partitions": nil, "key_metadata": nil,
	}})
	if err != nil {
		t.Fatal(err)
	}
	if recs, _, err := decodeOCF("good.avro", good, checkManifestFile); err != nil || len(recs) != 1 {
		t.Fatalf("a good file: %d records, %v", len(recs), err)
	}
	zeros := make([]byte, 1<<20)
	cases := []struct {
		name string
		data []byte
	}{
		{"not avro", []byte("PAR1 and more")},
		{"truncated header", good[:10]},
		{"truncated block", good[:len(good)-3]},
		{"block larger than the file", append(zigzag(zigzag(container(t, "null", false), 1), 100), 1, 2, 3)},
		{"a terabyte block", append(zigzag(zigzag(container(t, "null", false), 1), 1<<40), make([]byte, 64)...)},
		{"more records than bytes", container(t, "null", false, int64(1000), make([]byte, 10))},
		{"wrong sync marker", container(t, "null", true, int64(1), make([]byte, 20))},
		{"unknown codec", container(t, "lzma", false, int64(1), make([]byte, 20))},
		{"deflate bomb", container(t, "deflate", false, int64(1), deflateRepeat(t, 2<<30))},
		{"snappy claiming 2 GB", container(t, "snappy", false, int64(1), append(zigzagU(2<<30), 0, 0, 0, 0))},
		{"empty records", container(t, "deflate", false, int64(len(zeros)/16), deflated(t, zeros))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var err error
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, _, err = decodeOCF("bad.avro", c.data, checkManifestFile)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrCorruptMetadata) || !errors.Is(err, deltaerr.ErrCorrupt) || strings.Count(err.Error(), "bad.avro") != 1 {
				t.Fatalf("got %v", err)
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > 32<<20 {
				t.Fatalf("allocated %d bytes", n)
			}
			t.Log(err)
		})
	}
}

func zigzagU(u uint64) []byte {
	var b []byte
	for u >= 0x80 {
		b = append(b, byte(u)|0x80)
		u >>= 7
	}
	return append(b, byte(u))
}

// deflateRepeat is a raw deflate stream of n zero bytes (n a multiple of
// 1 MiB), about 1 KiB per MiB.
func deflateRepeat(t *testing.T, n int64) []byte {
	t.Helper()
	var seg bytes.Buffer
	w, _ := flate.NewWriter(&seg, flate.BestCompression)
	if _, err := w.Write(make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return append(bytes.Repeat(seg.Bytes(), int(n>>20)), 0x03, 0x00)
}

// TestInflateLimit: the limit follows the file's size between its bounds.
func TestInflateLimit(t *testing.T) {
	for _, c := range []struct {
		size int
		want int64
	}{
		{0, minAvroInflated}, {1 << 20, minAvroInflated}, {8 << 20, 128 << 20}, {maxAvroSize, maxAvroInflated},
	} {
		if got := inflateLimit(c.size); got != c.want {
			t.Errorf("inflateLimit(%d) = %d, want %d", c.size, got, c.want)
		}
	}
}

// TestConvKeyStaysInRoot: a manifest or manifest list is read only from
// beneath the table root; a location elsewhere, or the root itself, is
// ErrPathEscapesRoot rather than a key the store would read.
func TestConvKeyStaysInRoot(t *testing.T) {
	c := &conv{root: "file:///data/t"}
	tests := []struct {
		loc, key string
	}{
		{"file:///data/t/metadata/snap-1.avro", "metadata/snap-1.avro"},
		{"file:///data/t/metadata/a b%41.avro", "metadata/a b%41.avro"}, // Iceberg locations are not percent-decoded
		{"file:///data/other/metadata/snap-1.avro", ""},
		{"file:///data/t2/metadata/snap-1.avro", ""},
		{"file:///data/t", ""},
		{"s3://bucket/data/t/metadata/snap-1.avro", ""},
		{"metadata/snap-1.avro", ""},
	}
	for _, tt := range tests {
		key, err := c.key(tt.loc)
		if tt.key == "" {
			if !errors.Is(err, deltaerr.ErrPathEscapesRoot) {
				t.Errorf("key(%q) = %q, %v; want ErrPathEscapesRoot", tt.loc, key, err)
			}
			continue
		}
		if err != nil || key != tt.key {
			t.Errorf("key(%q) = %q, %v; want %q", tt.loc, key, err, tt.key)
		}
	}
}

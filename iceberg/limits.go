package iceberg

import (
	"bytes"
	"compress/flate"
	"context"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/godelta/delta/logstore"
)

// Limits on the Iceberg files this package reads. They are far above what
// a table's metadata needs (see the package doc), and exist so that a
// damaged or hostile file (a sparse 40 GB vN.metadata.json, a manifest
// list whose deflate blocks inflate to gigabytes) fails the reading with
// ErrCorruptMetadata, naming the file, instead of the process with an
// out-of-memory: every file is read whole, so its size is checked (Stat)
// before it is read, and read with no more than the limit asked for.
const (
	// maxMetadataSize bounds a vN.metadata.json. The file grows by about
	// 1 KiB per snapshot kept; 100,000 snapshots are 100 MiB.
	maxMetadataSize = 256 << 20
	// maxAvroSize bounds a manifest list or manifest file. Iceberg writers
	// aim at 8 MiB manifests (commit.manifest.target-size-bytes); the first
	// conversion of a table of a million files writes one of about 100 MiB.
	maxAvroSize = 256 << 20
	// An Avro file's blocks may inflate to avroInflateRatio times the
	// file's size, and always to minAvroInflated, never to more than
	// maxAvroInflated. Manifests compress about threefold.
	avroInflateRatio = 16
	minAvroInflated  = 64 << 20
	maxAvroInflated  = 1 << 30
	// maxHintSize bounds version-hint.text, a decimal number: a larger
	// one is no hint, and set aside.
	maxHintSize = 64
)

// inflateLimit is the most the blocks of an Avro file of size bytes may
// inflate to.
func inflateLimit(size int) int64 {
	return min(max(avroInflateRatio*int64(size), minAvroInflated), maxAvroInflated)
}

// readCapped returns the content of the object at key, which name
// designates in errors: a corruption error when it is larger than limit,
// found from its size before it is read, the store's error otherwise.
func readCapped(ctx context.Context, store logstore.Store, key, name string, limit int64) ([]byte, error) {
	info, err := store.Stat(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("iceberg: reading %s: %w", name, err)
	}
	return readSized(ctx, store, key, name, info.Size, limit)
}

// readSized is readCapped for an object whose size is known.
func readSized(ctx context.Context, store logstore.Store, key, name string, size, limit int64) ([]byte, error) {
	if size > limit {
		return nil, tooLarge(name, size, limit)
	}
	// At most limit+1 bytes, should the object have grown since its size
	// was taken.
	data, err := store.GetRange(ctx, key, 0, limit+1)
	if err != nil {
		return nil, fmt.Errorf("iceberg: reading %s: %w", name, err)
	}
	if int64(len(data)) > limit {
		return nil, tooLarge(name, int64(len(data)), limit)
	}
	return data, nil
}

func tooLarge(name string, size, limit int64) error {
	return fmt.Errorf("%w: %s: %d bytes, more than the %d this package reads", ErrCorruptMetadata, name, size, limit)
}

// errAvro is the reason an Avro object container file is refused by
// checkOCF; the caller names the file.
type errAvro string

func (e errAvro) Error() string { return string(e) }

// checkOCF checks the framing of an Avro object container file (spec:
// "Object Container Files") before the decoder reads it, and the bytes its
// blocks inflate to: the decoder takes a block's size from the file and
// allocates it, and inflates a block whole, so a file that says a block
// holds a terabyte, or whose blocks inflate to gigabytes, must not reach
// it. It returns the header's metadata. The codecs are those Iceberg
// writes: null, deflate and snappy.
//
// The blocks are inflated into nothing, up to limit bytes in all: a
// deflate bomb costs the time of inflating limit bytes, not the memory.
// A block must hold at least one byte per record (no Iceberg record is
// empty), so that its count bounds the records decoded.
func checkOCF(data []byte, limit int64) error {
	r := ocfReader{b: data}
	if magic := r.next(4); !bytes.Equal(magic, []byte{'O', 'b', 'j', 1}) {
		return errAvro("not an Avro object container file")
	}
	codec := "null"
	for {
		n := r.long()
		if n == 0 || r.err != nil {
			break
		}
		if n < 0 {
			n = -n
			r.long() // the block's size in bytes
		}
		for range n {
			k := r.bytes()
			v := r.bytes()
			if r.err != nil {
				break
			}
			if string(k) == "avro.codec" {
				codec = string(v)
			}
		}
	}
	sync := r.next(16)
	if r.err != nil {
		return r.err
	}
	var inflated int64
	for len(r.b) > 0 {
		count := r.long()
		size := r.long()
		if r.err != nil {
			return r.err
		}
		if count < 0 || size < 0 || size > int64(len(r.b)) {
			return errAvro(fmt.Sprintf("block of %d records in %d bytes, with %d bytes left in the file", count, size, len(r.b)))
		}
		block := r.next(int(size))
		n, err := inflatedSize(codec, block, limit-inflated)
		if err == errOver {
			return errAvro(fmt.Sprintf("blocks inflate to more than %d bytes, the limit for a file of %d bytes", limit, len(data)))
		}
		if err != nil {
			return err
		}
		inflated += n
		if count > n {
			return errAvro(fmt.Sprintf("block of %d records in %d bytes", count, n))
		}
		if s := r.next(16); r.err != nil || !bytes.Equal(s, sync) {
			return errAvro("block not followed by the file's sync marker")
		}
	}
	return nil
}

// errOver says a block inflates to more than the room left.
var errOver = errAvro("over the limit")

// inflatedSize returns the size of a block once decompressed with codec,
// or errOver when it exceeds room.
func inflatedSize(codec string, block []byte, room int64) (int64, error) {
	var n int64
	switch codec {
	case "null", "":
		n = int64(len(block))
	case "deflate":
		fr := flate.NewReader(bytes.NewReader(block))
		defer fr.Close()
		var err error
		n, err = io.Copy(io.Discard, io.LimitReader(fr, room+1))
		if err != nil {
			return 0, errAvro(fmt.Sprintf("deflate block: %v", err))
		}
	case "snappy":
		// The block's uncompressed length leads it, then a CRC-32 ends it.
		u, k := binary.Uvarint(block)
		if k <= 0 || u > uint64(room) {
			return 0, errOver
		}
		n = int64(u)
	default:
		return 0, errAvro(fmt.Sprintf("codec %q is not one this package reads (null, deflate, snappy)", codec))
	}
	if n > room {
		return 0, errOver
	}
	return n, nil
}

// ocfReader reads the primitive encodings of an Avro container's framing
// from a byte slice; the first error sticks.
type ocfReader struct {
	b   []byte
	err error
}

var errTruncated = errAvro("truncated")

func (r *ocfReader) next(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.err = errTruncated
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *ocfReader) long() int64 {
	if r.err != nil {
		return 0
	}
	u, k := binary.Uvarint(r.b)
	if k <= 0 {
		r.err = errTruncated
		return 0
	}
	r.b = r.b[k:]
	return int64(u>>1) ^ -int64(u&1)
}

func (r *ocfReader) bytes() []byte {
	n := r.long()
	if n < 0 || n > int64(len(r.b)) {
		if r.err == nil {
			r.err = errTruncated
		}
		return nil
	}
	return r.next(int(n))
}

// checkManifestFile checks a record of a manifest list names a manifest.
func checkManifestFile(rec map[string]any) error {
	if strOf(rec, "manifest_path") == "" {
		return errAvro("a manifest list entry without manifest_path")
	}
	return nil
}

// checkEntry checks a manifest entry names a data file.
func checkEntry(rec map[string]any) error {
	if df, _ := rec["data_file"].(map[string]any); strOf(df, "file_path") == "" {
		return errAvro("a manifest entry without data_file.file_path")
	}
	return nil
}

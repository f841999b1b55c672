package dv

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"strings"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/logstore"
)

// Descriptor storage types and DV file constants. They are part of the
// format and must not change.
const (
	// StorageRelative ("u"): a file under the table root named from a UUID.
	StorageRelative = "u"
	// StorageInline ("i"): the serialized bitmap, Z85 encoded, in the log.
	StorageInline = "i"
	// StorageAbsolute ("p"): a file named by an absolute URI.
	StorageAbsolute = "p"

	// FileVersion is the first byte of a DV file.
	FileVersion byte = 1
	// FilePrefix and FileSuffix frame the canonical UUID in a DV file name.
	FilePrefix = "deletion_vector_"
	FileSuffix = ".bin"

	// uuidZ85Len is the length of a Z85-encoded 16-byte UUID, the tail of
	// pathOrInlineDv for storage type "u".
	uuidZ85Len = 20
	// frameOverhead is the dataSize and checksum around each vector.
	frameOverhead = 8
)

// headReadLimit is how far into a file a vector may start for Load to read
// from byte 0 in the same request and so check the version byte too. Farther
// vectors are read alone, without that check.
const headReadLimit = 4096

// RelativePath returns the store key, relative to the table root, of the DV
// file a descriptor of storage type "u" names:
// "<prefix>/deletion_vector_<uuid>.bin", or without "<prefix>/" when the
// prefix is empty. A descriptor of another type is ErrInvalidArgument; a
// pathOrInlineDv that is too short, not Z85, or whose prefix makes an
// invalid key is ErrCorrupt.
func RelativePath(d *actions.DeletionVector) (string, error) {
	if d == nil || d.StorageType != StorageRelative {
		return "", fmt.Errorf("dv: relative path of a descriptor that is not of storage type %q: %w", StorageRelative, deltaerr.ErrInvalidArgument)
	}
	p := d.PathOrInlineDv
	if len(p) < uuidZ85Len {
		return "", deltaerr.Corruptf("deletion vector descriptor", "pathOrInlineDv %q is shorter than a Z85 UUID", p)
	}
	prefix := p[:len(p)-uuidZ85Len]
	id, err := Z85Decode(p[len(p)-uuidZ85Len:])
	if err != nil {
		return "", &deltaerr.CorruptError{Path: "deletion vector descriptor", Reason: fmt.Sprintf("pathOrInlineDv %q", p), Err: err}
	}
	key := FilePrefix + formatUUID(id) + FileSuffix
	if prefix != "" {
		key = prefix + "/" + key
	}
	if err := logstore.CheckKey(key); err != nil {
		return "", &deltaerr.CorruptError{Path: "deletion vector descriptor", Reason: fmt.Sprintf("prefix %q", prefix), Err: err}
	}
	return key, nil
}

// RelativePathOrInline is the inverse of RelativePath: the pathOrInlineDv
// of a descriptor of storage type "u" that names the file at key, when key
// has that form ("[<prefix>/]deletion_vector_<uuid>.bin", the prefix one
// segment); false when it has not, and the file can only be named by an
// absolute path.
func RelativePathOrInline(key string) (string, bool) {
	prefix, name := "", key
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		prefix, name = key[:i], key[i+1:]
		if prefix == "" || strings.Contains(prefix, "/") {
			return "", false
		}
	}
	id, ok := strings.CutPrefix(name, FilePrefix)
	if !ok {
		return "", false
	}
	if id, ok = strings.CutSuffix(id, FileSuffix); !ok || len(id) != 36 {
		return "", false
	}
	raw, err := hex.DecodeString(strings.ReplaceAll(id, "-", ""))
	if err != nil || len(raw) != 16 || formatUUID(raw) != id {
		return "", false
	}
	return prefix + Z85Encode(raw), true
}

// formatUUID renders 16 bytes in the canonical 8-4-4-4-12 lower-case form.
func formatUUID(b []byte) string {
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:36], b[10:16])
	return string(s[:])
}

// Load reads the deletion vector a descriptor names and checks it against
// the descriptor: the file's format version (when the vector starts within
// its first 4 KiB), dataSize against sizeInBytes, the CRC-32, and the
// bitmap's cardinality against cardinality (and, when present, its largest
// index against maxRowIndex). Any mismatch, a file too short, or bad bitmap
// bytes give an error wrapping deltaerr.ErrCorrupt; a missing file gives
// a *deltaerr.MissingFileError, which matches deltaerr.ErrFileNotFound and
// logstore.ErrNotFound. Other store errors are returned wrapped.
//
// resolveAbs turns the absolute URI of storage type "p" into a store key
// relative to the table root, or refuses it with an error, which Load
// returns wrapped; a nil resolveAbs refuses every such descriptor with
// deltaerr.ErrUnsupportedFeature. An unknown storage type is also
// ErrUnsupportedFeature.
func Load(ctx context.Context, store logstore.Store, d *actions.DeletionVector, resolveAbs func(uri string) (string, error)) (*Bitmap, error) {
	if d == nil {
		return nil, fmt.Errorf("dv: nil descriptor: %w", deltaerr.ErrInvalidArgument)
	}
	var (
		b   *Bitmap
		err error
	)
	switch d.StorageType {
	case StorageInline:
		b, err = loadInline(d)
	case StorageRelative:
		var key string
		if key, err = RelativePath(d); err == nil {
			b, err = loadFile(ctx, store, key, d)
		}
	case StorageAbsolute:
		if resolveAbs == nil {
			return nil, &deltaerr.FeatureError{Feature: "deletion vectors at absolute paths", Op: "read"}
		}
		key, rerr := resolveAbs(d.PathOrInlineDv)
		if rerr != nil {
			return nil, fmt.Errorf("dv: deletion vector %q: %w", d.PathOrInlineDv, rerr)
		}
		b, err = loadFile(ctx, store, key, d)
	default:
		return nil, &deltaerr.FeatureError{Feature: fmt.Sprintf("deletion vector storage type %q", d.StorageType), Op: "read"}
	}
	if err != nil {
		return nil, err
	}
	if got := b.Cardinality(); got > math.MaxInt64 || int64(got) != d.Cardinality {
		return nil, deltaerr.Corruptf(describe(d), "bitmap holds %d rows, descriptor cardinality is %d", got, d.Cardinality)
	}
	if m, ok := b.Max(); ok && d.MaxRowIndex != nil && (m > math.MaxInt64 || int64(m) > *d.MaxRowIndex) {
		return nil, deltaerr.Corruptf(describe(d), "bitmap holds row %d, descriptor maxRowIndex is %d", m, *d.MaxRowIndex)
	}
	return b, nil
}

// describe names a descriptor in errors: its unique id, shortened.
func describe(d *actions.DeletionVector) string {
	id := d.UniqueID()
	if len(id) > 64 {
		id = id[:64] + "..."
	}
	return "deletion vector " + id
}

func loadInline(d *actions.DeletionVector) (*Bitmap, error) {
	data, err := Z85Decode(d.PathOrInlineDv)
	if err != nil {
		return nil, &deltaerr.CorruptError{Path: describe(d), Err: err}
	}
	size := int(d.SizeInBytes)
	if size < 0 || size > len(data) || len(data)-size >= 4 {
		return nil, deltaerr.Corruptf(describe(d), "inline data decodes to %d bytes, sizeInBytes is %d", len(data), size)
	}
	b, err := decode(data[:size])
	if err != nil {
		return nil, &deltaerr.CorruptError{Path: describe(d), Err: err}
	}
	return b, nil
}

func loadFile(ctx context.Context, store logstore.Store, key string, d *actions.DeletionVector) (*Bitmap, error) {
	var offset int64 // the protocol reads an absent offset as 0
	if d.Offset != nil {
		offset = int64(*d.Offset)
	}
	if offset < 1 {
		return nil, deltaerr.Corruptf(key, "deletion vector offset %d is inside the file header", offset)
	}
	size := int64(d.SizeInBytes)
	if size < 0 {
		return nil, deltaerr.Corruptf(key, "negative sizeInBytes %d", size)
	}
	start := offset
	if offset <= headReadLimit {
		start = 0
	}
	length := offset - start + frameOverhead + size
	buf, err := store.GetRange(ctx, key, start, length)
	if err != nil {
		if errors.Is(err, logstore.ErrNotFound) {
			return nil, &deltaerr.MissingFileError{What: "deletion vector file", Path: key, Err: err}
		}
		return nil, fmt.Errorf("dv: read %s: %w", key, err)
	}
	if int64(len(buf)) < length {
		return nil, deltaerr.Corruptf(key, "file ends at %d, before the end of the deletion vector at %d (%d bytes)", start+int64(len(buf)), offset, size)
	}
	if start == 0 && buf[0] != FileVersion {
		return nil, deltaerr.Corruptf(key, "deletion vector file version %d, want %d", buf[0], FileVersion)
	}
	p := buf[offset-start:]
	if got := binary.BigEndian.Uint32(p); int64(got) != size {
		return nil, deltaerr.Corruptf(key, "deletion vector at %d: dataSize %d, descriptor sizeInBytes %d", offset, got, size)
	}
	data := p[4 : 4+size]
	if want, got := binary.BigEndian.Uint32(p[4+size:]), crc32.ChecksumIEEE(data); got != want {
		return nil, deltaerr.Corruptf(key, "deletion vector at %d: CRC-32 %#08x, stored %#08x", offset, got, want)
	}
	b, err := decode(data)
	if err != nil {
		return nil, &deltaerr.CorruptError{Path: key, Reason: fmt.Sprintf("deletion vector at %d", offset), Err: err}
	}
	return b, nil
}

// File is a DV file ready to be written: its bytes, its store key, and the
// descriptor of each vector in it, to attach to add actions.
type File struct {
	Key         string                    // store key, relative to the table root
	Data        []byte                    // the whole file
	Descriptors []*actions.DeletionVector // one per bitmap, in the order given
}

// EncodeFile lays out bitmaps as one DV file named by prefix and id (see
// RelativePath; prefix is usually "" or a few random alphanumerics) and
// returns it with a descriptor of storage type "u" for each bitmap, with
// offset, sizeInBytes, cardinality and maxRowIndex filled in. The caller
// writes File.Data at File.Key before committing the descriptors.
//
// It fails with deltaerr.ErrInvalidArgument for no bitmaps, a prefix that
// makes an invalid key, an index of 2^63 or more, or a file over 2 GiB (the
// protocol's offsets are 32-bit).
func EncodeFile(prefix string, id [16]byte, bitmaps ...*Bitmap) (*File, error) {
	if len(bitmaps) == 0 {
		return nil, fmt.Errorf("dv: a deletion vector file needs at least one bitmap: %w", deltaerr.ErrInvalidArgument)
	}
	path := prefix + Z85Encode(id[:])
	key, err := RelativePath(&actions.DeletionVector{StorageType: StorageRelative, PathOrInlineDv: path})
	if err != nil {
		return nil, fmt.Errorf("dv: prefix %q: %w: %w", prefix, deltaerr.ErrInvalidArgument, err)
	}
	f := &File{Key: key, Data: []byte{FileVersion}}
	for _, b := range bitmaps {
		ser, err := b.MarshalBinary()
		if err != nil {
			return nil, err
		}
		offset := len(f.Data)
		if int64(offset)+int64(len(ser))+frameOverhead > math.MaxInt32 {
			return nil, fmt.Errorf("dv: deletion vector file over %d bytes: %w", math.MaxInt32, deltaerr.ErrInvalidArgument)
		}
		f.Data = binary.BigEndian.AppendUint32(f.Data, uint32(len(ser)))
		f.Data = append(f.Data, ser...)
		f.Data = binary.BigEndian.AppendUint32(f.Data, crc32.ChecksumIEEE(ser))
		d := descriptor(b, len(ser))
		d.StorageType, d.PathOrInlineDv = StorageRelative, path
		off := int32(offset)
		d.Offset = &off
		f.Descriptors = append(f.Descriptors, d)
	}
	return f, nil
}

// NewInline returns a descriptor of storage type "i" that carries b in the
// log itself, Z85 encoded. Inline vectors suit a few rows: the text is 5/4
// of the serialized size.
func NewInline(b *Bitmap) (*actions.DeletionVector, error) {
	ser, err := b.MarshalBinary()
	if err != nil {
		return nil, err
	}
	if len(ser) > math.MaxInt32 {
		return nil, fmt.Errorf("dv: inline deletion vector of %d bytes: %w", len(ser), deltaerr.ErrInvalidArgument)
	}
	d := descriptor(b, len(ser))
	d.StorageType, d.PathOrInlineDv = StorageInline, Z85Encode(ser)
	return d, nil
}

func descriptor(b *Bitmap, size int) *actions.DeletionVector {
	d := &actions.DeletionVector{SizeInBytes: int32(size), Cardinality: int64(b.Cardinality())}
	if m, ok := b.Max(); ok {
		mi := int64(m)
		d.MaxRowIndex = &mi
	}
	return d
}

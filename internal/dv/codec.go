package dv

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/godelta/delta/deltaerr"
)

// Serialization constants. They are part of the on-disk format and must
// never change.
const (
	// MagicPortable starts a serialized RoaringBitmapArray in the portable
	// 64-bit format, the only one Delta writes (little-endian on disk).
	MagicPortable uint32 = 1681511377
	// magicNative starts Spark's older "native" RoaringBitmapArray layout,
	// which the protocol does not allow; it is recognised to name it in the
	// error.
	magicNative uint32 = 1681511376

	cookieNoRun = 12346 // 32-bit roaring without run containers
	cookieRun   = 12347 // 32-bit roaring with a run-flag bitset

	// noOffsetThreshold is the container count from which a bitmap with
	// run containers also carries the offsets section.
	noOffsetThreshold = 4

	// maxBucketKey bounds a bucket key: its most significant bit must be 0.
	maxBucketKey = 1<<31 - 1
)

// MarshalBinary returns the serialized form of b: the portable
// RoaringBitmapArray with its magic number, as stored in a DV file or, Z85
// encoded, inline in the log. It fails, with an error wrapping
// deltaerr.ErrInvalidArgument, only when b holds an index of 2^63 or more.
func (b *Bitmap) MarshalBinary() ([]byte, error) {
	if m, ok := b.Max(); ok && m>>32 > maxBucketKey {
		return nil, fmt.Errorf("dv: row index %d has its top bit set: %w", m, deltaerr.ErrInvalidArgument)
	}
	out := make([]byte, 0, b.serializedSizeHint())
	out = binary.LittleEndian.AppendUint32(out, MagicPortable)
	nb := 0
	for i := 0; i < len(b.keys); {
		j := i + 1
		for j < len(b.keys) && b.keys[j]>>16 == b.keys[i]>>16 {
			j++
		}
		nb++
		i = j
	}
	out = binary.LittleEndian.AppendUint64(out, uint64(nb))
	for i := 0; i < len(b.keys); {
		high := b.keys[i] >> 16
		j := i + 1
		for j < len(b.keys) && b.keys[j]>>16 == high {
			j++
		}
		out = binary.LittleEndian.AppendUint32(out, uint32(high))
		out = append32(out, b.keys[i:j], b.cs[i:j])
		i = j
	}
	return out, nil
}

func (b *Bitmap) serializedSizeHint() int {
	n := 12
	for i := range b.cs {
		switch b.cs[i].kind {
		case kindArray:
			n += 2*b.cs[i].n + 8
		case kindBitmap:
			n += bitmapBytes + 8
		default:
			n += 4*len(b.cs[i].runs) + 10
		}
	}
	return n
}

// append32 appends the portable 32-bit roaring serialization of the
// containers of one bucket, choosing for each the smallest kind.
func append32(out []byte, keys []uint64, cs []container) []byte {
	n := len(cs)
	kinds := make([]kind, n)
	hasRun := false
	for i := range cs {
		kinds[i] = bestKind(&cs[i])
		hasRun = hasRun || kinds[i] == kindRun
	}
	start := len(out)
	if hasRun {
		out = binary.LittleEndian.AppendUint32(out, cookieRun|uint32(n-1)<<16)
		flags := make([]byte, (n+7)/8)
		for i, k := range kinds {
			if k == kindRun {
				flags[i/8] |= 1 << (i % 8)
			}
		}
		out = append(out, flags...)
	} else {
		out = binary.LittleEndian.AppendUint32(out, cookieNoRun)
		out = binary.LittleEndian.AppendUint32(out, uint32(n))
	}
	for i := range cs {
		out = binary.LittleEndian.AppendUint16(out, uint16(keys[i]))
		out = binary.LittleEndian.AppendUint16(out, uint16(cs[i].n-1))
	}
	if !hasRun || n >= noOffsetThreshold {
		off := len(out) - start + 4*n
		for i := range cs {
			out = binary.LittleEndian.AppendUint32(out, uint32(off))
			off += containerSize(&cs[i], kinds[i])
		}
	}
	for i := range cs {
		out = appendContainer(out, &cs[i], kinds[i])
	}
	return out
}

// bestKind picks the kind with the smallest serialized size; the array and
// bitmap choice is forced by the cardinality, as readers infer it from that.
func bestKind(c *container) kind {
	k := kindBitmap
	size := bitmapBytes
	if c.n <= arrayMaxCard {
		k, size = kindArray, 2*c.n
	}
	if runSize := 2 + 4*c.numRuns(); runSize < size {
		return kindRun
	}
	return k
}

func containerSize(c *container, k kind) int {
	switch k {
	case kindArray:
		return 2 * c.n
	case kindBitmap:
		return bitmapBytes
	default:
		return 2 + 4*c.numRuns()
	}
}

func appendContainer(out []byte, c *container, k kind) []byte {
	switch k {
	case kindArray:
		c.each(0, func(v uint64) bool {
			out = binary.LittleEndian.AppendUint16(out, uint16(v))
			return true
		})
	case kindBitmap:
		if c.kind == kindBitmap {
			for _, w := range c.bits {
				out = binary.LittleEndian.AppendUint64(out, w)
			}
			break
		}
		cp := *c
		cp.toBitmap()
		return appendContainer(out, &cp, k)
	default:
		out = binary.LittleEndian.AppendUint16(out, uint16(c.numRuns()))
		if c.kind == kindRun {
			for _, r := range c.runs {
				out = binary.LittleEndian.AppendUint16(out, r.start)
				out = binary.LittleEndian.AppendUint16(out, r.last)
			}
			break
		}
		var cur run
		open := false
		c.each(0, func(x uint64) bool {
			v := uint16(x)
			if open && uint32(v) == cur.end()+1 {
				cur.last++
				return true
			}
			if open {
				out = binary.LittleEndian.AppendUint16(out, cur.start)
				out = binary.LittleEndian.AppendUint16(out, cur.last)
			}
			cur, open = run{start: v}, true
			return true
		})
		out = binary.LittleEndian.AppendUint16(out, cur.start)
		out = binary.LittleEndian.AppendUint16(out, cur.last)
	}
	return out
}

// Unmarshal decodes a serialized RoaringBitmapArray (see the package doc).
// data must hold exactly one bitmap: trailing bytes are an error. Bad bytes
// give an error wrapping deltaerr.ErrCorrupt. The Bitmap does not keep data.
func Unmarshal(data []byte) (*Bitmap, error) {
	b, err := decode(data)
	if err != nil {
		return nil, &deltaerr.CorruptError{Path: "deletion vector", Err: err}
	}
	return b, nil
}

// decodeError is a reason bytes do not decode; callers wrap it in a
// *deltaerr.CorruptError naming where the bytes came from.
type decodeError string

func (e decodeError) Error() string { return string(e) }

func errorf(format string, args ...any) error { return decodeError(fmt.Sprintf(format, args...)) }

var errTruncated = decodeError("bitmap truncated")

// reader walks a byte slice, failing on any read past its end.
type reader struct {
	b   []byte
	pos int
}

func (r *reader) take(n int) ([]byte, error) {
	if n < 0 || n > len(r.b)-r.pos {
		return nil, errTruncated
	}
	s := r.b[r.pos : r.pos+n]
	r.pos += n
	return s, nil
}

func (r *reader) u16() (uint16, error) {
	s, err := r.take(2)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint16(s), nil
}

func (r *reader) u32() (uint32, error) {
	s, err := r.take(4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(s), nil
}

func (r *reader) u64() (uint64, error) {
	s, err := r.take(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(s), nil
}

func decode(data []byte) (*Bitmap, error) {
	r := &reader{b: data}
	magic, err := r.u32()
	if err != nil {
		return nil, err
	}
	switch magic {
	case MagicPortable:
	case magicNative:
		return nil, errorf("native RoaringBitmapArray format (magic %d) is not allowed by the protocol", magic)
	default:
		return nil, errorf("bad magic number %d, want %d", magic, MagicPortable)
	}
	nb, err := r.u64()
	if err != nil {
		return nil, err
	}
	// A bucket takes at least 12 bytes (key, cookie, count): bound the count
	// by the input before trusting it.
	if nb > uint64(len(data)-r.pos)/12 {
		return nil, errorf("%d buckets cannot fit in %d bytes", nb, len(data)-r.pos)
	}
	b := &Bitmap{}
	prev := int64(-1)
	for range nb {
		key, err := r.u32()
		if err != nil {
			return nil, err
		}
		if key > maxBucketKey {
			return nil, errorf("bucket key %d has its top bit set", key)
		}
		if int64(key) <= prev {
			return nil, errorf("bucket key %d after %d: keys must increase", key, prev)
		}
		prev = int64(key)
		if err := b.decode32(r, uint64(key)<<16); err != nil {
			return nil, fmt.Errorf("bucket %d: %w", key, err)
		}
	}
	if r.pos != len(data) {
		return nil, errorf("%d trailing bytes after the bitmap", len(data)-r.pos)
	}
	return b, nil
}

// decode32 reads one portable 32-bit roaring bitmap, appending its
// containers under the bucket base (the bucket key << 16).
func (b *Bitmap) decode32(r *reader, base uint64) error {
	cookie, err := r.u32()
	if err != nil {
		return err
	}
	var n int
	var runFlags []byte
	switch {
	case cookie == cookieNoRun:
		c, err := r.u32()
		if err != nil {
			return err
		}
		if c > containerRange {
			return errorf("%d containers, at most %d allowed", c, containerRange)
		}
		n = int(c)
	case cookie&0xFFFF == cookieRun:
		n = int(cookie>>16) + 1
		if runFlags, err = r.take((n + 7) / 8); err != nil {
			return err
		}
	default:
		return errorf("bad roaring cookie %#x", cookie)
	}
	header, err := r.take(4 * n)
	if err != nil {
		return err
	}
	if runFlags == nil || n >= noOffsetThreshold {
		if _, err := r.take(4 * n); err != nil { // offsets: not needed
			return err
		}
	}
	prev := -1
	for i := range n {
		key := int(binary.LittleEndian.Uint16(header[4*i:]))
		card := int(binary.LittleEndian.Uint16(header[4*i+2:])) + 1
		if key <= prev {
			return errorf("container key %d after %d: keys must increase", key, prev)
		}
		prev = key
		var c container
		switch {
		case runFlags != nil && runFlags[i/8]&(1<<(i%8)) != 0:
			c, err = decodeRun(r)
		case card <= arrayMaxCard:
			c, err = decodeArray(r, card)
		default:
			c, err = decodeBitmap(r, card)
		}
		if err != nil {
			return fmt.Errorf("container %d: %w", key, err)
		}
		b.keys = append(b.keys, base|uint64(key))
		b.cs = append(b.cs, c)
		b.card += uint64(c.n)
	}
	return nil
}

func decodeArray(r *reader, card int) (container, error) {
	s, err := r.take(2 * card)
	if err != nil {
		return container{}, err
	}
	arr := make([]uint16, card)
	for i := range arr {
		arr[i] = binary.LittleEndian.Uint16(s[2*i:])
		if i > 0 && arr[i] <= arr[i-1] {
			return container{}, errorf("array values not increasing (%d after %d)", arr[i], arr[i-1])
		}
	}
	return container{kind: kindArray, n: card, arr: arr}, nil
}

func decodeBitmap(r *reader, card int) (container, error) {
	s, err := r.take(bitmapBytes)
	if err != nil {
		return container{}, err
	}
	bm := new([bitmapWords]uint64)
	pop := 0
	for i := range bm {
		bm[i] = binary.LittleEndian.Uint64(s[8*i:])
		pop += bits.OnesCount64(bm[i])
	}
	if pop != card {
		return container{}, errorf("bitmap container holds %d values, header says %d", pop, card)
	}
	return container{kind: kindBitmap, n: card, bits: bm}, nil
}

// decodeRun reads a run container. Its cardinality is taken from the runs,
// not the header, as the reference readers do.
func decodeRun(r *reader) (container, error) {
	nr, err := r.u16()
	if err != nil {
		return container{}, err
	}
	if nr == 0 {
		return container{}, decodeError("run container without runs")
	}
	s, err := r.take(4 * int(nr))
	if err != nil {
		return container{}, err
	}
	runs := make([]run, nr)
	n := 0
	for i := range runs {
		rn := run{start: binary.LittleEndian.Uint16(s[4*i:]), last: binary.LittleEndian.Uint16(s[4*i+2:])}
		if rn.end() >= containerRange {
			return container{}, errorf("run %d+%d passes the container end", rn.start, rn.last)
		}
		if i > 0 && uint32(rn.start) <= runs[i-1].end() {
			return container{}, errorf("run at %d overlaps or precedes the run ending at %d", rn.start, runs[i-1].end())
		}
		runs[i] = rn
		n += int(rn.last) + 1
	}
	return container{kind: kindRun, n: n, runs: runs}, nil
}

// Package variant builds and takes apart values of the Variant binary
// encoding (Parquet's VariantEncoding.md): the bytes a variant column
// holds, a metadata (the dictionary of field names) and a value.
//
// It exists for the reader of shredded variants (internal/datafile): a
// shredded file stores parts of each variant as typed Parquet columns,
// and a reader puts the value back together. That needs exactly what is
// here: primitives encoded from typed values, objects and arrays built
// from encoded parts, the fields of an object value listed, and field
// names looked up in a metadata. AppendJSON renders a value as JSON text,
// for people reading a table (delta scan). It is not a general variant
// library: no parsing of JSON, no path access, no casts.
//
// # Canonical form
//
// Builders write the smallest form the encoding allows, as Spark's
// VariantBuilder does: a string under 64 bytes as a short string, object
// and array headers with the narrowest field id and offset widths and a
// 1-byte element count up to 255 elements. An object's fields are written
// in the order of their names (unsigned byte order, as the encoding
// requires of field ids), values in that order too, so offsets ascend.
// Two builds of the same content give the same bytes.
//
// # Errors
//
// Values and metadata come from data files: every decoder checks lengths
// and offsets before reading and returns an error matching ErrMalformed
// (and deltaerr.ErrCorrupt) instead of panicking. The package keeps no
// state; everything in it is safe for concurrent use.
package variant

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"

	"github.com/godelta/delta/deltaerr"
)

// ErrMalformed marks bytes that are not a valid variant value or
// metadata. Errors matching it also match deltaerr.ErrCorrupt.
var ErrMalformed = &malformed{}

type malformed struct{ msg string }

func (e *malformed) Error() string {
	if e.msg == "" {
		return "variant: malformed value"
	}
	return "variant: malformed value: " + e.msg
}

func (e *malformed) Is(target error) bool {
	return target == ErrMalformed || target == deltaerr.ErrCorrupt
}

func malformedf(format string, args ...any) error {
	return &malformed{msg: fmt.Sprintf(format, args...)}
}

// Basic types: the low 2 bits of a value's first byte. Part of the
// on-disk format: never change.
const (
	basicPrimitive   = 0
	basicShortString = 1
	basicObject      = 2
	basicArray       = 3
)

// Type is a primitive type id of the encoding's "Variant primitive types"
// table. The values are part of the on-disk format: never change them.
type Type uint8

// The primitive types.
const (
	TypeNull              Type = 0
	TypeTrue              Type = 1
	TypeFalse             Type = 2
	TypeInt8              Type = 3
	TypeInt16             Type = 4
	TypeInt32             Type = 5
	TypeInt64             Type = 6
	TypeDouble            Type = 7
	TypeDecimal4          Type = 8
	TypeDecimal8          Type = 9
	TypeDecimal16         Type = 10
	TypeDate              Type = 11
	TypeTimestamp         Type = 12 // microseconds, UTC
	TypeTimestampNTZ      Type = 13 // microseconds, wall clock
	TypeFloat             Type = 14
	TypeBinary            Type = 15
	TypeString            Type = 16
	TypeTime              Type = 17 // microseconds of the day
	TypeTimestampNanos    Type = 18 // nanoseconds, UTC
	TypeTimestampNTZNanos Type = 19 // nanoseconds, wall clock
	TypeUUID              Type = 20
)

// Null is the encoded variant null: the value of a variant that is
// present but null, and what a reader returns for a missing top-level
// variant.
var Null = []byte{0}

// maxShortString is the longest string a short string holds.
const maxShortString = 63

func primitiveHeader(t Type) byte { return byte(t)<<2 | basicPrimitive }

// AppendNull appends a variant null.
func AppendNull(dst []byte) []byte { return append(dst, primitiveHeader(TypeNull)) }

// AppendBool appends a boolean.
func AppendBool(dst []byte, b bool) []byte {
	if b {
		return append(dst, primitiveHeader(TypeTrue))
	}
	return append(dst, primitiveHeader(TypeFalse))
}

// fixedWidth is the width of the data of the fixed-width integer-like
// primitives, 0 for the other types.
func fixedWidth(t Type) int {
	switch t {
	case TypeInt8:
		return 1
	case TypeInt16:
		return 2
	case TypeInt32, TypeDate, TypeFloat:
		return 4
	case TypeInt64, TypeDouble, TypeTimestamp, TypeTimestampNTZ, TypeTime, TypeTimestampNanos, TypeTimestampNTZNanos:
		return 8
	}
	return 0
}

// AppendInt appends x as primitive t, which must be one of the integer
// types (int8 to int64), date (days), time, or a timestamp type
// (microseconds or nanoseconds, as t says): little-endian in t's width.
// x must fit t's width; it is truncated to it otherwise.
func AppendInt(dst []byte, t Type, x int64) []byte {
	w := fixedWidth(t)
	if w == 0 || t == TypeFloat || t == TypeDouble {
		panic(fmt.Sprintf("variant: AppendInt with type %d", t))
	}
	dst = append(dst, primitiveHeader(t))
	for i := range w {
		dst = append(dst, byte(x>>(8*i)))
	}
	return dst
}

// AppendFloat appends a float.
func AppendFloat(dst []byte, f float32) []byte {
	return binary.LittleEndian.AppendUint32(append(dst, primitiveHeader(TypeFloat)), math.Float32bits(f))
}

// AppendDouble appends a double.
func AppendDouble(dst []byte, f float64) []byte {
	return binary.LittleEndian.AppendUint64(append(dst, primitiveHeader(TypeDouble)), math.Float64bits(f))
}

// AppendDecimal appends the decimal unscaled * 10^-scale as type t
// (TypeDecimal4, 8 or 16): the scale byte, then the unscaled value
// little-endian in 4, 8 or 16 bytes, two's complement. It reports false,
// appending nothing, when the value does not fit t or the scale is not
// 0 to 38.
func AppendDecimal(dst []byte, t Type, unscaled *big.Int, scale int) ([]byte, bool) {
	var w int
	switch t {
	case TypeDecimal4:
		w = 4
	case TypeDecimal8:
		w = 8
	case TypeDecimal16:
		w = 16
	default:
		return dst, false
	}
	mag := unscaled
	if unscaled.Sign() < 0 {
		mag = new(big.Int).Add(unscaled, big.NewInt(1)) // -2^k fits as well as 2^k-1
	}
	if scale < 0 || scale > 38 || mag.BitLen() > 8*w-1 {
		return dst, false
	}
	dst = append(dst, primitiveHeader(t), byte(scale))
	if unscaled.IsInt64() {
		x := unscaled.Int64()
		for i := range w {
			if i < 8 {
				dst = append(dst, byte(x>>(8*i)))
			} else {
				dst = append(dst, byte(x>>63)) // sign extension
			}
		}
		return dst, true
	}
	// Two's complement of a value wider than 64 bits, big-endian, then
	// reversed.
	var be [16]byte
	u := new(big.Int).Set(unscaled)
	if u.Sign() < 0 {
		u.Add(u, new(big.Int).Lsh(big.NewInt(1), 128))
	}
	u.FillBytes(be[:])
	for i := range w {
		dst = append(dst, be[15-i])
	}
	return dst, true
}

// AppendString appends a string: a short string under 64 bytes, else the
// string primitive with its 4-byte length.
func AppendString(dst []byte, s string) []byte {
	if len(s) <= maxShortString {
		return append(append(dst, byte(len(s))<<2|basicShortString), s...)
	}
	dst = binary.LittleEndian.AppendUint32(append(dst, primitiveHeader(TypeString)), uint32(len(s)))
	return append(dst, s...)
}

// AppendBinary appends a binary value.
func AppendBinary(dst []byte, b string) []byte {
	dst = binary.LittleEndian.AppendUint32(append(dst, primitiveHeader(TypeBinary)), uint32(len(b)))
	return append(dst, b...)
}

// AppendUUID appends a UUID: its 16 bytes as they are (big-endian).
func AppendUUID(dst []byte, u [16]byte) []byte {
	return append(append(dst, primitiveHeader(TypeUUID)), u[:]...)
}

// intSize is the fewest bytes (1 to 4) that hold x.
func intSize(x int) int {
	switch {
	case x <= 0xff:
		return 1
	case x <= 0xffff:
		return 2
	case x <= 0xffffff:
		return 3
	}
	return 4
}

func appendUint(dst []byte, x, size int) []byte {
	for i := range size {
		dst = append(dst, byte(x>>(8*i)))
	}
	return dst
}

func readUint(b []byte, size int) int {
	x := 0
	for i := range size {
		x |= int(b[i]) << (8 * i)
	}
	return x
}

// AppendArray appends an array of the encoded values elems.
func AppendArray(dst []byte, elems [][]byte) []byte {
	total := 0
	for _, e := range elems {
		total += len(e)
	}
	offSize := intSize(total)
	large := len(elems) > 0xff
	header := byte(offSize - 1)
	countSize := 1
	if large {
		header |= 1 << 2
		countSize = 4
	}
	dst = append(dst, header<<2|basicArray)
	dst = appendUint(dst, len(elems), countSize)
	off := 0
	for _, e := range elems {
		dst = appendUint(dst, off, offSize)
		off += len(e)
	}
	dst = appendUint(dst, off, offSize)
	for _, e := range elems {
		dst = append(dst, e...)
	}
	return dst
}

// Field is one field of an object: its name, its id in the metadata's
// dictionary, and its encoded value.
type Field struct {
	Name  string
	ID    int
	Value []byte
}

// AppendObject appends an object of fields, sorting fields by name (the
// caller's slice is reordered). Two fields of one name are an error
// matching ErrMalformed.
func AppendObject(dst []byte, fields []Field) ([]byte, error) {
	slices.SortFunc(fields, func(a, b Field) int { return strings.Compare(a.Name, b.Name) })
	total, maxID := 0, 0
	for i, f := range fields {
		if i > 0 && fields[i-1].Name == f.Name {
			return dst, malformedf("object has field %q twice", f.Name)
		}
		total += len(f.Value)
		maxID = max(maxID, f.ID)
	}
	offSize, idSize := intSize(total), intSize(maxID)
	header := byte(idSize-1)<<2 | byte(offSize-1)
	countSize := 1
	if len(fields) > 0xff {
		header |= 1 << 4
		countSize = 4
	}
	dst = append(dst, header<<2|basicObject)
	dst = appendUint(dst, len(fields), countSize)
	for _, f := range fields {
		dst = appendUint(dst, f.ID, idSize)
	}
	off := 0
	for _, f := range fields {
		dst = appendUint(dst, off, offSize)
		off += len(f.Value)
	}
	dst = appendUint(dst, off, offSize)
	for _, f := range fields {
		dst = append(dst, f.Value...)
	}
	return dst, nil
}

// container is the parsed header of an object or array value.
type container struct {
	n         int // elements
	idSize    int // objects: bytes per field id
	offSize   int
	ids, offs int // where the field ids and the offsets start
	data      int // where the values start
	end       int // the byte after the last value
}

func parseContainer(v []byte) (container, error) {
	if len(v) == 0 {
		return container{}, malformedf("empty value")
	}
	h := v[0] >> 2
	var c container
	countSize := 1
	switch v[0] & 3 {
	case basicObject:
		c.offSize, c.idSize = int(h&3)+1, int(h>>2&3)+1
		if h&(1<<4) != 0 {
			countSize = 4
		}
	case basicArray:
		c.offSize = int(h&3) + 1
		if h&(1<<2) != 0 {
			countSize = 4
		}
	default:
		return container{}, malformedf("not an object or array")
	}
	if len(v) < 1+countSize {
		return container{}, malformedf("truncated element count")
	}
	c.n = readUint(v[1:], countSize)
	c.ids = 1 + countSize
	c.offs = c.ids + c.n*c.idSize
	c.data = c.offs + (c.n+1)*c.offSize
	if c.n > len(v) || c.data > len(v) || c.data < 0 {
		return container{}, malformedf("%d elements do not fit %d bytes", c.n, len(v))
	}
	c.end = c.data + readUint(v[c.offs+c.n*c.offSize:], c.offSize)
	if c.end > len(v) {
		return container{}, malformedf("values end at %d past %d bytes", c.end, len(v))
	}
	return c, nil
}

// element returns the value of element i of c in v.
func (c container) element(v []byte, i int) ([]byte, error) {
	start := c.data + readUint(v[c.offs+i*c.offSize:], c.offSize)
	if start >= c.end {
		return nil, malformedf("element %d starts at %d, past the values' end %d", i, start, c.end)
	}
	n, err := Size(v[start:c.end])
	if err != nil {
		return nil, err
	}
	return v[start : start+n], nil
}

// Size returns the length of the encoded value at the start of v.
func Size(v []byte) (int, error) {
	if len(v) == 0 {
		return 0, malformedf("empty value")
	}
	var n int
	switch v[0] & 3 {
	case basicPrimitive:
		switch t := Type(v[0] >> 2); t {
		case TypeNull, TypeTrue, TypeFalse:
			n = 1
		case TypeDecimal4:
			n = 6
		case TypeDecimal8:
			n = 10
		case TypeDecimal16:
			n = 18
		case TypeBinary, TypeString:
			if len(v) < 5 {
				return 0, malformedf("truncated length")
			}
			n = 5 + int(binary.LittleEndian.Uint32(v[1:]))
		case TypeUUID:
			n = 17
		default:
			w := fixedWidth(t)
			if w == 0 {
				return 0, malformedf("unknown primitive type %d", t)
			}
			n = 1 + w
		}
	case basicShortString:
		n = 1 + int(v[0]>>2)
	default:
		c, err := parseContainer(v)
		if err != nil {
			return 0, err
		}
		n = c.end
	}
	if n > len(v) || n < 1 {
		return 0, malformedf("value of %d bytes in %d", n, len(v))
	}
	return n, nil
}

// IsObject reports whether v is an object value.
func IsObject(v []byte) bool { return len(v) > 0 && v[0]&3 == basicObject }

// ObjectFields appends to dst the fields of object v, in the order of its
// field ids, names looked up in m.
func ObjectFields(dst []Field, m Metadata, v []byte) ([]Field, error) {
	if !IsObject(v) {
		return dst, malformedf("not an object")
	}
	c, err := parseContainer(v)
	if err != nil {
		return dst, err
	}
	for i := range c.n {
		id := readUint(v[c.ids+i*c.idSize:], c.idSize)
		name, ok := m.Key(id)
		if !ok {
			return dst, malformedf("field id %d past the metadata's %d names", id, m.Len())
		}
		fv, err := c.element(v, i)
		if err != nil {
			return dst, err
		}
		dst = append(dst, Field{Name: name, ID: id, Value: fv})
	}
	return dst, nil
}

// Metadata is a parsed variant metadata: its dictionary of field names.
// It refers to the bytes it was parsed from.
type Metadata struct {
	raw     []byte
	offSize int
	n       int
	offs    int // where the offsets start
	strs    int // where the strings start
	sorted  bool
}

// ParseMetadata checks and parses a metadata: version 1, the dictionary's
// offsets in order and inside the bytes.
func ParseMetadata(b []byte) (Metadata, error) {
	if len(b) == 0 {
		return Metadata{}, malformedf("empty metadata")
	}
	if v := b[0] & 0x0f; v != 1 {
		return Metadata{}, malformedf("metadata version %d", v)
	}
	m := Metadata{raw: b, offSize: int(b[0]>>6) + 1, sorted: b[0]&(1<<4) != 0}
	if len(b) < 1+m.offSize {
		return Metadata{}, malformedf("truncated metadata")
	}
	m.n = readUint(b[1:], m.offSize)
	m.offs = 1 + m.offSize
	if m.n > len(b) || m.offs+(m.n+1)*m.offSize > len(b) {
		return Metadata{}, malformedf("metadata of %d names in %d bytes", m.n, len(b))
	}
	m.strs = m.offs + (m.n+1)*m.offSize
	prev := 0
	for i := range m.n + 1 {
		o := readUint(b[m.offs+i*m.offSize:], m.offSize)
		if o < prev || m.strs+o > len(b) || (i == 0 && o != 0) {
			return Metadata{}, malformedf("metadata offset %d of name %d out of order or range", o, i)
		}
		prev = o
	}
	return m, nil
}

// Len returns the number of names in the dictionary.
func (m Metadata) Len() int { return m.n }

// Key returns the name of field id.
func (m Metadata) Key(id int) (string, bool) {
	if id < 0 || id >= m.n {
		return "", false
	}
	lo := readUint(m.raw[m.offs+id*m.offSize:], m.offSize)
	hi := readUint(m.raw[m.offs+(id+1)*m.offSize:], m.offSize)
	return string(m.raw[m.strs+lo : m.strs+hi]), true
}

// keyBytes is Key without the copy.
func (m Metadata) keyBytes(id int) []byte {
	lo := readUint(m.raw[m.offs+id*m.offSize:], m.offSize)
	hi := readUint(m.raw[m.offs+(id+1)*m.offSize:], m.offSize)
	return m.raw[m.strs+lo : m.strs+hi]
}

// Find returns the id of name in the dictionary: by binary search when
// the metadata says its names are sorted, else the first match.
func (m Metadata) Find(name string) (int, bool) {
	if m.sorted {
		lo, hi := 0, m.n
		for lo < hi {
			mid := int(uint(lo+hi) >> 1)
			switch c := bytes.Compare(m.keyBytes(mid), []byte(name)); {
			case c == 0:
				return mid, true
			case c < 0:
				lo = mid + 1
			default:
				hi = mid
			}
		}
		return 0, false
	}
	for id := range m.n {
		if string(m.keyBytes(id)) == name {
			return id, true
		}
	}
	return 0, false
}

// AppendMetadata appends a metadata of names, in the order given, with
// sorted_strings set when they are sorted and unique: for tests and for
// writers that build variants.
func AppendMetadata(dst []byte, names []string) []byte {
	total := 0
	sorted := true
	for i, s := range names {
		total += len(s)
		if i > 0 && names[i-1] >= s {
			sorted = false
		}
	}
	offSize := intSize(max(total, len(names)))
	h := byte(1) | byte(offSize-1)<<6
	if sorted && len(names) > 0 {
		h |= 1 << 4
	}
	dst = append(dst, h)
	dst = appendUint(dst, len(names), offSize)
	off := 0
	for _, s := range names {
		dst = appendUint(dst, off, offSize)
		off += len(s)
	}
	dst = appendUint(dst, off, offSize)
	for _, s := range names {
		dst = append(dst, s...)
	}
	return dst
}

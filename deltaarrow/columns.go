package deltaarrow

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/godelta/delta/schema"
)

// column converts one column of a scan batch to an Arrow array of type at
// (arrowType(t)). Primitive columns are written straight into Arrow
// buffers sized once: a validity bitmap (dropped when nothing is null) and
// the values; nested columns go through b, a builder of type at.
func column(mem memory.Allocator, t schema.DataType, at arrow.DataType, b array.Builder, vals []schema.Value) (arrow.Array, error) {
	n := len(vals)
	switch t {
	case schema.Boolean:
		bits := newBuffer(mem, int(bitutil.BytesForBits(int64(n))))
		clear(bits.Bytes())
		return fixed(mem, at, vals, bits, func(i int, v schema.Value) {
			if v.Bool() {
				bitutil.SetBit(bits.Bytes(), i)
			}
		}), nil
	case schema.Byte:
		return ints[int8](mem, at, vals), nil
	case schema.Short:
		return ints[int16](mem, at, vals), nil
	case schema.Integer, schema.Date:
		return ints[int32](mem, at, vals), nil
	case schema.Long, schema.Timestamp, schema.TimestampNTZ:
		return ints[int64](mem, at, vals), nil
	case schema.Float:
		return floats[float32](mem, at, vals), nil
	case schema.Double:
		return floats[float64](mem, at, vals), nil
	case schema.String, schema.Binary:
		return binaryColumn(mem, at, vals)
	}
	if _, ok := t.(schema.DecimalType); ok {
		buf, dst := values[decimal128.Num](mem, n)
		clear(dst) // the slots of nulls; an allocator need not zero memory
		return fixed(mem, at, vals, buf, func(i int, v schema.Value) { dst[i] = decimal(v) }), nil
	}
	appendColumn(b, t, vals)
	return b.NewArray(), nil
}

// ints makes an integer, date or timestamp array: the loop is typed, with
// no call per value.
func ints[T int8 | int16 | int32 | int64](mem memory.Allocator, at arrow.DataType, vals []schema.Value) arrow.Array {
	buf, dst := values[T](mem, len(vals))
	var nb nullBits
	for i, v := range vals {
		if v.IsNull() {
			nb.null(mem, i, len(vals))
		}
		dst[i] = T(v.Int64()) // 0 for a null
	}
	return makeArray(at, len(vals), nb.nulls, nb.buf, buf)
}

// floats makes a float or double array.
func floats[T float32 | float64](mem memory.Allocator, at arrow.DataType, vals []schema.Value) arrow.Array {
	buf, dst := values[T](mem, len(vals))
	var nb nullBits
	for i, v := range vals {
		if v.IsNull() {
			nb.null(mem, i, len(vals))
		}
		dst[i] = T(v.Float64()) // 0 for a null
	}
	return makeArray(at, len(vals), nb.nulls, nb.buf, buf)
}

// makeArray makes an array of bufs (validity first), which it takes over.
func makeArray(at arrow.DataType, n, nulls int, bufs ...*memory.Buffer) arrow.Array {
	data := array.NewData(at, n, bufs, nil, nulls, 0)
	defer data.Release()
	release(bufs...)
	return array.MakeFromData(data)
}

func newBuffer(mem memory.Allocator, size int) *memory.Buffer {
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(size)
	return buf
}

// values returns a buffer for n values of T and the values as a slice.
func values[T any](mem memory.Allocator, n int) (*memory.Buffer, []T) {
	var zero T
	buf := newBuffer(mem, n*int(unsafe.Sizeof(zero)))
	if n == 0 {
		return buf, nil
	}
	return buf, unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(buf.Bytes()))), n)
}

// nullBits builds a validity bitmap in the same pass as the values: none
// until the first null, then one with every earlier bit set.
type nullBits struct {
	buf   *memory.Buffer
	nulls int
}

// null records that value i of n is null.
func (nb *nullBits) null(mem memory.Allocator, i, n int) {
	if nb.buf == nil {
		nb.buf = newBuffer(mem, int(bitutil.BytesForBits(int64(n))))
		bits := nb.buf.Bytes()
		clear(bits)
		bitutil.SetBitsTo(bits, 0, int64(n), true)
	}
	bitutil.ClearBit(nb.buf.Bytes(), i)
	nb.nulls++
}

// validity returns the validity bitmap of vals and the number of nulls; the
// bitmap is nil when there is none.
func validity(mem memory.Allocator, vals []schema.Value) (*memory.Buffer, int) {
	nulls := 0
	for _, v := range vals {
		if v.IsNull() {
			nulls++
		}
	}
	if nulls == 0 {
		return nil, 0
	}
	bm := newBuffer(mem, int(bitutil.BytesForBits(int64(len(vals)))))
	bits := bm.Bytes()
	clear(bits) // an allocator need not zero memory
	for i, v := range vals {
		if !v.IsNull() {
			bitutil.SetBit(bits, i)
		}
	}
	return bm, nulls
}

// fixed makes a fixed-width array: set writes value i (not null) into buf.
func fixed(mem memory.Allocator, at arrow.DataType, vals []schema.Value, buf *memory.Buffer, set func(int, schema.Value)) arrow.Array {
	bm, nulls := validity(mem, vals)
	for i, v := range vals {
		if !v.IsNull() {
			set(i, v)
		}
	}
	return makeArray(at, len(vals), nulls, bm, buf)
}

func release(bufs ...*memory.Buffer) {
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
}

// binaryColumn makes a String or Binary array: int32 offsets and the bytes.
func binaryColumn(mem memory.Allocator, at arrow.DataType, vals []schema.Value) (arrow.Array, error) {
	total := 0
	for _, v := range vals {
		total += len(v.Raw())
	}
	if total > math.MaxInt32 {
		return nil, fmt.Errorf("a batch of %d bytes of %s overflows Arrow's 32-bit offsets: %w", total, at, ErrUnsupportedType)
	}
	bm, nulls := validity(mem, vals)
	obuf, offs := values[int32](mem, len(vals)+1)
	dbuf := newBuffer(mem, total)
	data := dbuf.Bytes()
	pos := 0
	for i, v := range vals {
		offs[i] = int32(pos)
		pos += copy(data[pos:], v.Raw())
	}
	offs[len(vals)] = int32(pos)
	return makeArray(at, len(vals), nulls, bm, obuf, dbuf), nil
}

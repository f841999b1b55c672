package dv

import (
	"iter"
	"math/bits"
	"slices"
)

// Container kinds and limits of the 32-bit roaring format. These are part
// of the format and must not change.
const (
	arrayMaxCard   = 4096 // an array container holds at most this many values
	bitmapWords    = 1024 // a bitmap container is 65536 bits
	bitmapBytes    = bitmapWords * 8
	containerRange = 1 << 16 // values per container
)

type kind uint8

const (
	kindArray kind = iota
	kindBitmap
	kindRun
)

// run is a closed interval [start, start+last] of a run container.
type run struct {
	start, last uint16 // last is length-1, as serialized
}

func (r run) end() uint32 { return uint32(r.start) + uint32(r.last) }

// container holds the low 16 bits of the values that share one 48-bit key.
// Exactly one of arr, bits, runs is in use, as kind says. n is never 0.
type container struct {
	kind kind
	n    int // cardinality, 1..65536
	arr  []uint16
	bits *[bitmapWords]uint64
	runs []run
}

// Bitmap is a set of 64-bit row indexes, stored as roaring containers keyed
// by the high 48 bits of each index. The zero value is an empty set ready to
// use. Adding indexes in ascending order, as a scan that finds deleted rows
// does, is the fast path.
type Bitmap struct {
	keys []uint64 // index >> 16, strictly increasing
	cs   []container
	card uint64
}

// New returns a Bitmap holding the given row indexes.
func New(rows ...uint64) *Bitmap {
	b := &Bitmap{}
	for _, r := range rows {
		b.Add(r)
	}
	return b
}

// find returns the position of key in b.keys, or where it would go.
func (b *Bitmap) find(key uint64) (int, bool) {
	n := len(b.keys)
	if n > 0 && b.keys[n-1] == key { // ascending adds hit the last container
		return n - 1, true
	}
	if n == 0 || b.keys[n-1] < key {
		return n, false
	}
	return slices.BinarySearch(b.keys, key)
}

// Add puts row index i in the set. Indexes of 2^63 and above can be held
// but not serialized: the format requires a 0 top bit (see MarshalBinary).
func (b *Bitmap) Add(i uint64) {
	key, lo := i>>16, uint16(i)
	pos, ok := b.find(key)
	if !ok {
		b.keys = slices.Insert(b.keys, pos, key)
		b.cs = slices.Insert(b.cs, pos, container{kind: kindArray, n: 1, arr: []uint16{lo}})
		b.card++
		return
	}
	if b.cs[pos].add(lo) {
		b.card++
	}
}

// Contains reports whether row index i is in the set.
func (b *Bitmap) Contains(i uint64) bool {
	pos, ok := b.find(i >> 16)
	return ok && b.cs[pos].contains(uint16(i))
}

// Cardinality returns the number of row indexes in the set.
func (b *Bitmap) Cardinality() uint64 { return b.card }

// IsEmpty reports whether the set holds no index.
func (b *Bitmap) IsEmpty() bool { return b.card == 0 }

// Max returns the largest index in the set, and false if the set is empty.
func (b *Bitmap) Max() (uint64, bool) {
	if len(b.cs) == 0 {
		return 0, false
	}
	last := len(b.cs) - 1
	return b.keys[last]<<16 | uint64(b.cs[last].max()), true
}

// All yields the indexes of the set in ascending order. The set must not be
// changed while the iteration runs.
func (b *Bitmap) All() iter.Seq[uint64] {
	return func(yield func(uint64) bool) {
		for ci := range b.cs {
			if !b.cs[ci].each(b.keys[ci]<<16, yield) {
				return
			}
		}
	}
}

// Or adds every index of o to b.
func (b *Bitmap) Or(o *Bitmap) {
	for i := range o.All() {
		b.Add(i)
	}
}

// Equal reports whether b and o hold the same indexes.
func (b *Bitmap) Equal(o *Bitmap) bool {
	if b.card != o.card || !slices.Equal(b.keys, o.keys) {
		return false
	}
	next, stop := iter.Pull(o.All())
	defer stop()
	for i := range b.All() {
		j, ok := next()
		if !ok || i != j {
			return false
		}
	}
	return true
}

func (c *container) contains(v uint16) bool {
	switch c.kind {
	case kindArray:
		_, ok := slices.BinarySearch(c.arr, v)
		return ok
	case kindBitmap:
		return c.bits[v>>6]&(1<<(v&63)) != 0
	default:
		// The last run starting at or before v.
		i, _ := slices.BinarySearchFunc(c.runs, v, func(r run, v uint16) int {
			if r.start <= v {
				return -1
			}
			return 1
		})
		return i > 0 && uint32(v) <= c.runs[i-1].end()
	}
}

// add puts v in the container and reports whether it was new.
func (c *container) add(v uint16) bool {
	switch c.kind {
	case kindArray:
		if c.n > 0 && c.arr[c.n-1] < v {
			c.arr = append(c.arr, v)
		} else {
			pos, ok := slices.BinarySearch(c.arr, v)
			if ok {
				return false
			}
			c.arr = slices.Insert(c.arr, pos, v)
		}
		c.n++
		if c.n > arrayMaxCard {
			c.toBitmap()
		}
		return true
	case kindBitmap:
		w, m := v>>6, uint64(1)<<(v&63)
		if c.bits[w]&m != 0 {
			return false
		}
		c.bits[w] |= m
		c.n++
		return true
	default:
		if c.contains(v) {
			return false
		}
		if c.n < arrayMaxCard {
			c.toArray()
		} else {
			c.toBitmap()
		}
		return c.add(v)
	}
}

func (c *container) toBitmap() {
	bm := new([bitmapWords]uint64)
	switch c.kind {
	case kindArray:
		for _, v := range c.arr {
			bm[v>>6] |= 1 << (v & 63)
		}
	case kindRun:
		for _, r := range c.runs {
			setRange(bm, uint32(r.start), r.end())
		}
	}
	*c = container{kind: kindBitmap, n: c.n, bits: bm}
}

func (c *container) toArray() {
	arr := make([]uint16, 0, c.n+1)
	c.each(0, func(v uint64) bool {
		arr = append(arr, uint16(v))
		return true
	})
	*c = container{kind: kindArray, n: c.n, arr: arr}
}

// setRange sets bits lo..hi (inclusive) of bm.
func setRange(bm *[bitmapWords]uint64, lo, hi uint32) {
	lw, hw := lo>>6, hi>>6
	lm := ^uint64(0) << (lo & 63)
	hm := ^uint64(0) >> (63 - hi&63)
	if lw == hw {
		bm[lw] |= lm & hm
		return
	}
	bm[lw] |= lm
	for w := lw + 1; w < hw; w++ {
		bm[w] = ^uint64(0)
	}
	bm[hw] |= hm
}

func (c *container) max() uint16 {
	switch c.kind {
	case kindArray:
		return c.arr[len(c.arr)-1]
	case kindBitmap:
		for w := bitmapWords - 1; w >= 0; w-- {
			if x := c.bits[w]; x != 0 {
				return uint16(w*64 + 63 - bits.LeadingZeros64(x))
			}
		}
		return 0
	default:
		return uint16(c.runs[len(c.runs)-1].end())
	}
}

// each yields base|v for every value v of the container, ascending, and
// reports whether the caller wants more.
func (c *container) each(base uint64, yield func(uint64) bool) bool {
	switch c.kind {
	case kindArray:
		for _, v := range c.arr {
			if !yield(base | uint64(v)) {
				return false
			}
		}
	case kindBitmap:
		for w, x := range c.bits {
			for x != 0 {
				t := bits.TrailingZeros64(x)
				if !yield(base | uint64(w*64+t)) {
					return false
				}
				x &= x - 1
			}
		}
	default:
		for _, r := range c.runs {
			for v := uint32(r.start); v <= r.end(); v++ {
				if !yield(base | uint64(v)) {
					return false
				}
			}
		}
	}
	return true
}

// numRuns counts the maximal runs of consecutive values in the container.
func (c *container) numRuns() int {
	switch c.kind {
	case kindArray:
		n := 1
		for i := 1; i < len(c.arr); i++ {
			if c.arr[i] != c.arr[i-1]+1 {
				n++
			}
		}
		return n
	case kindBitmap:
		n, prev := 0, uint64(0)
		for _, x := range c.bits {
			// A run starts at each set bit whose lower neighbour is clear.
			n += bits.OnesCount64(x &^ (x<<1 | prev>>63))
			prev = x
		}
		return n
	default:
		return len(c.runs) // runs may touch; the serialized form keeps them
	}
}

// Package zorder computes space-filling-curve keys over columns of any
// orderable Delta type: the sort keys of OPTIMIZE ZORDER BY, HILBERT BY
// and liquid clustering (package optimize).
//
// A curve needs small unsigned integers per dimension, while columns hold
// strings, skewed numbers, dates, decimals and nulls. So each column is
// first mapped to a rank-preserving fixed-width id, as Spark's
// range_partition_id does: a Ranges holds boundaries taken at the
// quantiles of a sample of the column's values (Sampler), and a value's id
// is the number of boundaries at or below it, plus one; null is id 0, below
// every value. Equal values get equal ids and a smaller value never gets a
// larger id (order preservation, per column); a column with few distinct
// values gets one id per value; a skewed or string column gets ranges of
// equal frequency, so every bit of its id carries information.
//
// The ids of the chosen columns, Bits bits each, are then combined:
//
//   - Morton (Z-order): the bits are interleaved, most significant first,
//     column 0 first: for two columns of 2 bits a=a1a0 and b=b1b0 the key
//     is a1 b1 a0 b0.
//   - Hilbert: the ids are taken as the axes of a point and mapped to its
//     index along the Hilbert curve of that many dimensions and bits
//     (Skilling's transpose algorithm, "Programming the Hilbert curve",
//     2004), whose consecutive indexes are neighbouring cells: a file of
//     consecutive keys spans a compact box in every column, which is what
//     min/max skipping needs.
//
// A Key is Bits*len(columns) bits, packed big-endian into bytes and padded
// with zero bits: keys compare as bytes (bytes.Compare).
//
// Values and types: everything expr.Order compares (numbers of every width,
// decimals, strings, binaries, booleans, dates, timestamps) may be a column;
// NaN sorts above every number, as in Spark. Nested values are refused with
// ErrNotOrderable.
//
// A Keyer and a Ranges are immutable once built and safe for concurrent
// use; a Sampler is not.
package zorder

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/schema"
)

// DefaultRanges is the number of ranges a column is cut into when
// Options.Ranges is 0: 1000, Spark's spark.databricks.io.skipping.mdc.rangeId.max.
const DefaultRanges = 1000

// DefaultSampleSize is the reservoir size of a Sampler built with size 0.
const DefaultSampleSize = 100 * DefaultRanges

// ErrNotOrderable is a value of a kind that has no order (struct, array,
// map), or of a kind other than the column's.
var ErrNotOrderable = fmt.Errorf("zorder: value is not orderable: %w", deltaerr.ErrInvalidArgument)

// Curve is a space-filling curve.
type Curve uint8

// The curves.
const (
	// Morton interleaves the bits of the column ids (Z-order).
	Morton Curve = iota
	// Hilbert takes the index along the Hilbert curve.
	Hilbert
)

func (c Curve) String() string {
	switch c {
	case Morton:
		return "zorder"
	case Hilbert:
		return "hilbert"
	}
	return fmt.Sprintf("Curve(%d)", uint8(c))
}

// Sampler keeps a uniform random sample (reservoir) of the non-null values
// of a column. Its randomness is seeded, so that a sample of the same
// values in the same order is the same. Once the reservoir is full it
// draws how many values to pass over before the next one it keeps (Li's
// algorithm L, 1994), so that a value passed over costs a counter.
type Sampler struct {
	size int
	seen int64
	next int64   // the number (from 1) of the next value kept
	w    float64 // algorithm L's running weight
	vals []schema.Value
	rng  *rand.Rand
}

// NewSampler returns a sampler keeping up to size values (0 means
// DefaultSampleSize), seeded with seed.
func NewSampler(size int, seed uint64) *Sampler {
	if size <= 0 {
		size = DefaultSampleSize
	}
	return &Sampler{size: size, next: 1, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// Add offers v to the sample; nulls are not kept. Most values are
// skipped: that path is small enough to be inlined.
func (s *Sampler) Add(v schema.Value) {
	if v.IsNull() {
		return
	}
	if s.seen++; s.seen == s.next {
		s.keep(v)
	}
}

// keep is Add of a value kept: one the sample fills with (next is then
// the value after it), or one drawn by algorithm L.
func (s *Sampler) keep(v schema.Value) {
	if len(s.vals) < s.size {
		s.vals = append(s.vals, v)
		if len(s.vals) == s.size {
			s.w = math.Exp(math.Log(s.uniform()) / float64(s.size))
			s.skip()
		} else {
			s.next = s.seen + 1
		}
		return
	}
	s.vals[s.rng.IntN(s.size)] = v
	s.w *= math.Exp(math.Log(s.uniform()) / float64(s.size))
	s.skip()
}

// skip draws the number of the next value kept.
func (s *Sampler) skip() {
	g := math.Floor(math.Log(s.uniform()) / math.Log1p(-s.w))
	if !(g < math.MaxInt64/2) { // +Inf or NaN when w rounds to 0 or 1
		g = math.MaxInt64 / 2
	}
	s.next = s.seen + int64(g) + 1
}

// uniform is a random number in (0, 1).
func (s *Sampler) uniform() float64 {
	for {
		if u := s.rng.Float64(); u > 0 {
			return u
		}
	}
}

// Values returns the values sampled.
func (s *Sampler) Values() []schema.Value { return s.vals }

// Ranges maps a column's values to range ids: see the package doc.
type Ranges struct {
	bounds []schema.Value // ascending, distinct
	// The boundaries in a form that compares without expr.Order, when
	// they allow one (see fastBounds): nb, order-preserving integers of
	// values of kind kind (and scale, for decimals); sb, the text of
	// strings or binaries.
	kind  schema.Kind
	scale int
	nb    []uint64
	sb    []string
	// cells narrows ID's search in nb (see cutCells): cells[c] is the
	// index of the last boundary at or below the start of cell c, cell
	// c being the integers nb[0] + [c<<shift, (c+1)<<shift).
	cells []uint32
	shift uint
}

// cellBits is log2 of the most cells cutCells makes (16 KiB of them).
const cellBits = 12

// NewRanges returns the ranges of a column from a sample of its non-null
// values: at most n ranges of about equal frequency (n 0 means
// DefaultRanges), fewer when the sample has fewer distinct values (one
// range per distinct value then). It returns ErrNotOrderable for values
// that do not compare.
func NewRanges(sample []schema.Value, n int) (*Ranges, error) {
	if n <= 0 {
		n = DefaultRanges
	}
	vals := make([]schema.Value, 0, len(sample))
	for _, v := range sample {
		if !v.IsNull() {
			vals = append(vals, v)
		}
	}
	var bad error
	cmpv := func(a, b schema.Value) int {
		c, ok := expr.Order(a, b)
		if !ok && bad == nil {
			bad = fmt.Errorf("%w: %s and %s", ErrNotOrderable, a.Kind(), b.Kind())
		}
		return c
	}
	if !sortNormed(vals) {
		slices.SortFunc(vals, cmpv)
		if bad != nil {
			return nil, bad
		}
	}
	vals = slices.CompactFunc(vals, func(a, b schema.Value) bool { return cmpv(a, b) == 0 })
	r := &Ranges{}
	if len(vals) == 0 {
		return r, nil
	}
	if len(vals) <= n {
		// One range per distinct value: the first value starts range 1.
		r.bounds = vals
		r.fastBounds()
		return r, nil
	}
	// n ranges: n boundaries at the quantiles i/n, i = 0..n-1, the first
	// being the smallest value.
	for i := range n {
		b := vals[i*len(vals)/n]
		if len(r.bounds) == 0 || cmpv(r.bounds[len(r.bounds)-1], b) != 0 {
			r.bounds = append(r.bounds, b)
		}
	}
	r.fastBounds()
	return r, nil
}

// sortNormed sorts vals in expr.Order's order as integers, when they
// are all of one kind (and scale) that norm maps (a sample of 100,000
// values then sorts in a few milliseconds, not tens); false, and vals
// untouched, when they are not.
func sortNormed(vals []schema.Value) bool {
	if len(vals) == 0 {
		return false
	}
	k := vals[0].Kind()
	scale := 0
	if t, ok := vals[0].Type().(schema.DecimalType); ok {
		scale = t.Scale
	}
	type normed struct {
		x uint64
		i int
	}
	ns := make([]normed, len(vals))
	for i, v := range vals {
		x, ok := norm(v, k, scale)
		if !ok {
			return false
		}
		ns[i] = normed{x, i}
	}
	slices.SortFunc(ns, func(a, b normed) int { return cmp.Compare(a.x, b.x) })
	sorted := make([]schema.Value, len(vals))
	for i, n := range ns {
		sorted[i] = vals[n.i]
	}
	copy(vals, sorted)
	return true
}

// fastBounds sets nb or sb when every boundary has the same kind (and
// scale) and that kind has an order-preserving fixed-width form (norm) or
// is a string or binary: ID then finds a value's range by a binary search
// over integers or strings instead of expr.Order over values.
func (r *Ranges) fastBounds() {
	if len(r.bounds) == 0 {
		return
	}
	k := r.bounds[0].Kind()
	scale := 0
	if t, ok := r.bounds[0].Type().(schema.DecimalType); ok {
		scale = t.Scale
	}
	for _, b := range r.bounds {
		if b.Kind() != k {
			return
		}
	}
	r.kind, r.scale = k, scale
	if k == schema.KindString || k == schema.KindBinary {
		r.sb = make([]string, len(r.bounds))
		for i, b := range r.bounds {
			r.sb[i] = b.Raw()
		}
		return
	}
	nb := make([]uint64, len(r.bounds))
	for i, b := range r.bounds {
		x, ok := norm(b, k, scale)
		if !ok {
			return
		}
		nb[i] = x
	}
	r.nb = nb
	r.cutCells()
}

// cutCells cuts [nb[0], nb[len-1]] into at most 1<<cellBits cells of
// equal width and notes, for each, the boundaries a value in it can fall
// between: ID then searches a few boundaries instead of all of them.
// Equal-frequency boundaries of a value spread over a few binades (floats)
// or uniformly (integers) leave a handful in each cell.
func (r *Ranges) cutCells() {
	nb := r.nb
	if len(nb) < 16 {
		return
	}
	span := nb[len(nb)-1] - nb[0]
	r.shift = uint(max(bits.Len64(span)-cellBits, 0))
	n := int(span>>r.shift) + 1
	r.cells = make([]uint32, n+1)
	j := 0
	for c := range n + 1 {
		// The start of cell c, past the last boundary for the one after
		// the last cell.
		if d := uint64(c) << r.shift; c < n && d <= span {
			for j+1 < len(nb) && nb[j+1]-nb[0] <= d {
				j++
			}
		} else {
			j = len(nb) - 1
		}
		r.cells[c] = uint32(j)
	}
}

// norm maps a value of kind k (and scale, for a decimal) to an unsigned
// integer in the order expr.Order gives values of that kind: integers,
// dates and timestamps with the sign bit flipped; floats and doubles by
// their IEEE bits, negatives inverted, -0 as 0 and every NaN above
// +Infinity (as Spark sorts NaN); booleans as 0 and 1; decimals of 64 bits
// by their unscaled value. ok is false for another kind or a decimal of
// another scale or too large for 64 bits.
func norm(v schema.Value, k schema.Kind, scale int) (uint64, bool) {
	if v.Kind() != k {
		return 0, false
	}
	switch k {
	case schema.KindByte, schema.KindShort, schema.KindInteger, schema.KindLong,
		schema.KindDate, schema.KindTimestamp, schema.KindTimestampNTZ:
		return uint64(v.Int64()) ^ 1<<63, true
	case schema.KindFloat, schema.KindDouble:
		f := v.Float64()
		switch {
		case f != f:
			return math.MaxUint64, true
		case f == 0:
			f = 0 // -0 compares equal to 0
		}
		b := math.Float64bits(f)
		if b>>63 != 0 {
			return ^b, true
		}
		return b | 1<<63, true
	case schema.KindBoolean:
		if v.Bool() {
			return 1, true
		}
		return 0, true
	case schema.KindDecimal:
		u, ok := v.DecimalInt64()
		if !ok {
			return 0, false
		}
		if t, _ := v.Type().(schema.DecimalType); t.Scale != scale {
			return 0, false
		}
		return uint64(u) ^ 1<<63, true
	}
	return 0, false
}

// Len is the number of ids, null's included: ids are 0 to Len()-1.
func (r *Ranges) Len() int { return len(r.bounds) + 1 }

// ID returns the range id of v: 0 for null, else the number of boundaries
// at or below v (values below the smallest boundary share id 1 with it).
// A value that does not compare with the boundaries is ErrNotOrderable.
func (r *Ranges) ID(v schema.Value) (uint32, error) {
	if v.IsNull() {
		return 0, nil
	}
	if len(r.bounds) == 0 {
		return 1, nil
	}
	if r.nb != nil {
		if x, ok := norm(v, r.kind, r.scale); ok {
			// The last boundary at or below x (or the first), by a
			// search whose steps the compiler makes branch-free, over
			// the boundaries of x's cell.
			nb := r.nb
			base, n := 0, len(nb)
			if r.cells != nil {
				if x <= nb[0] {
					return 1, nil
				}
				c := (x - nb[0]) >> r.shift
				if c >= uint64(len(r.cells)-1) {
					return uint32(len(nb)), nil
				}
				lo, hi := int(r.cells[c]), int(r.cells[c+1])
				base, n = lo, hi-lo+1
			}
			for n > 1 {
				half := n >> 1
				if nb[base+half] <= x {
					base += half
				}
				n -= half
			}
			// Values below the first boundary share its id 1.
			return uint32(base + 1), nil
		}
	}
	if r.sb != nil && (v.Kind() == schema.KindString || v.Kind() == schema.KindBinary) {
		x := v.Raw()
		lo, hi := 0, len(r.sb)
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if r.sb[m] <= x {
				lo = m + 1
			} else {
				hi = m
			}
		}
		return uint32(max(lo, 1)), nil
	}
	if _, ok := expr.Order(v, r.bounds[0]); !ok {
		return 0, fmt.Errorf("%w: %s", ErrNotOrderable, v.Kind())
	}
	// The first boundary above v.
	i, _ := slices.BinarySearchFunc(r.bounds, v, func(b, x schema.Value) int {
		c, _ := expr.Order(b, x)
		if c <= 0 {
			return -1
		}
		return 1
	})
	return uint32(max(i, 1)), nil
}

// Keyer computes the curve keys of rows over a list of columns.
type Keyer struct {
	curve  Curve
	ranges []*Ranges
	bits   int
}

// NewKeyer returns a keyer of the curve over columns whose ranges are
// given, in order. Each column's id takes the bits its largest id needs
// (the same for all columns: the widest), at least 1.
func NewKeyer(curve Curve, ranges []*Ranges) (*Keyer, error) {
	if len(ranges) == 0 {
		return nil, errors.New("zorder: no columns")
	}
	if curve != Morton && curve != Hilbert {
		return nil, fmt.Errorf("zorder: unknown curve %d", curve)
	}
	b := 1
	for _, r := range ranges {
		b = max(b, bits.Len(uint(r.Len()-1)))
	}
	return &Keyer{curve: curve, ranges: ranges, bits: b}, nil
}

// Bits is the width of each column's id in a key.
func (k *Keyer) Bits() int { return k.bits }

// Key appends to dst the key of the row whose chosen column values are
// vals, in the keyer's column order.
func (k *Keyer) Key(dst []byte, vals []schema.Value) ([]byte, error) {
	if len(vals) != len(k.ranges) {
		return dst, fmt.Errorf("zorder: %d values for %d columns", len(vals), len(k.ranges))
	}
	var buf [8]uint32
	ids := buf[:0]
	for i, v := range vals {
		id, err := k.ranges[i].ID(v)
		if err != nil {
			return dst, err
		}
		ids = append(ids, id)
	}
	switch k.curve {
	case Hilbert:
		return HilbertKey(dst, ids, k.bits), nil
	default:
		return MortonKey(dst, ids, k.bits), nil
	}
}

// Words is the number of 64-bit words of a key as KeyWords writes it.
func (k *Keyer) Words() int { return (k.bits*len(k.ranges) + 63) / 64 }

// KeyWords writes into dst, Words() long, the key Key gives for vals, as
// 64-bit words: the key's bits from the first, most significant first, the
// last word padded with zero bits. Keys compare as their words do, in
// order, as unsigned integers, as Key's bytes compare with bytes.Compare.
// It allocates nothing for up to 8 columns.
func (k *Keyer) KeyWords(dst []uint64, vals []schema.Value) error {
	if len(vals) != len(k.ranges) {
		return fmt.Errorf("zorder: %d values for %d columns", len(vals), len(k.ranges))
	}
	if len(dst) != k.Words() {
		return fmt.Errorf("zorder: %d words for a key of %d", len(dst), k.Words())
	}
	var buf [8]uint32
	ids := buf[:0]
	for i, v := range vals {
		id, err := k.ranges[i].ID(v)
		if err != nil {
			return err
		}
		ids = append(ids, id)
	}
	if k.curve == Hilbert {
		axesToTranspose(ids, k.bits)
	}
	interleaveWords(dst, ids, k.bits)
	return nil
}

// KeyRowWords is KeyWords of the values row[cols[0]], row[cols[1]], ...:
// the key of a row whose curve columns are top-level, without copying
// them out.
func (k *Keyer) KeyRowWords(dst []uint64, row []schema.Value, cols []int) error {
	if len(cols) != len(k.ranges) {
		return fmt.Errorf("zorder: %d columns for %d", len(cols), len(k.ranges))
	}
	if len(dst) != k.Words() {
		return fmt.Errorf("zorder: %d words for a key of %d", len(dst), k.Words())
	}
	var buf [8]uint32
	ids := buf[:0]
	for i, c := range cols {
		if c < 0 || c >= len(row) {
			return fmt.Errorf("zorder: column %d of a row of %d", c, len(row))
		}
		id, err := k.ranges[i].ID(row[c])
		if err != nil {
			return err
		}
		ids = append(ids, id)
	}
	if k.curve == Hilbert {
		axesToTranspose(ids, k.bits)
	}
	interleaveWords(dst, ids, k.bits)
	return nil
}

// interleaveWords writes the interleave MortonKey makes of the low width
// bits of ids into the words of dst, most significant first.
func interleaveWords(dst []uint64, ids []uint32, width int) {
	if len(ids) == 2 && width <= 32 {
		// Two columns, the commonest curve: spread each id's bits
		// apart by the usual masks.
		m := uint64(1)<<uint(width) - 1
		dst[0] = (spread2(uint64(ids[0])&m)<<1 | spread2(uint64(ids[1])&m)) << uint(64-2*width)
		return
	}
	clear(dst)
	w, n := 0, 0
	var acc uint64
	for b := width - 1; b >= 0; b-- {
		for _, id := range ids {
			acc = acc<<1 | uint64(id>>uint(b)&1)
			if n++; n == 64 {
				dst[w] = acc
				w++
				acc, n = 0, 0
			}
		}
	}
	if n > 0 {
		dst[w] = acc << uint(64-n)
	}
}

// spread2 moves bit i of the low 32 bits of x to bit 2i.
func spread2(x uint64) uint64 {
	x = (x | x<<16) & 0x0000ffff0000ffff
	x = (x | x<<8) & 0x00ff00ff00ff00ff
	x = (x | x<<4) & 0x0f0f0f0f0f0f0f0f
	x = (x | x<<2) & 0x3333333333333333
	return (x | x<<1) & 0x5555555555555555
}

// MortonKey appends to dst the interleave of the low width bits of each id,
// most significant bit first, ids[0] first at each bit, packed big-endian
// into ceil(width*len(ids)/8) bytes (zero bits at the end).
func MortonKey(dst []byte, ids []uint32, width int) []byte {
	var acc byte
	n := 0
	for b := width - 1; b >= 0; b-- {
		for _, id := range ids {
			acc = acc<<1 | byte(id>>uint(b)&1)
			if n++; n == 8 {
				dst = append(dst, acc)
				acc, n = 0, 0
			}
		}
	}
	if n > 0 {
		dst = append(dst, acc<<uint(8-n))
	}
	return dst
}

// HilbertKey appends to dst the index along the Hilbert curve of the point
// whose coordinates are the low width bits of ids, packed as MortonKey
// packs: the index is the interleave of the point's transposed form.
func HilbertKey(dst []byte, ids []uint32, width int) []byte {
	var buf [8]uint32
	x := append(buf[:0], ids...)
	mask := uint32(1)<<uint(width) - 1
	if width >= 32 {
		mask = ^uint32(0)
	}
	for i := range x {
		x[i] &= mask
	}
	axesToTranspose(x, width)
	return MortonKey(dst, x, width)
}

// axesToTranspose turns the coordinates x (width bits each) into the
// transposed form of their Hilbert index, in place, after Skilling
// (2004): undo the excess rotations and reflections from the top bit
// down, then Gray-encode.
func axesToTranspose(x []uint32, width int) {
	n := len(x)
	if n == 0 || width == 0 {
		return
	}
	// Without branches: which way each step goes depends on the data's
	// bits, and a mispredicted branch cost more than the step. set is all
	// ones when bit b of x[i] is 1.
	if n == 2 {
		// The same steps, the two coordinates in registers.
		x0, x1 := x[0], x[1]
		for b := width - 1; b >= 1; b-- {
			p := uint32(1)<<uint(b) - 1
			x0 ^= p & uint32(int32(x0<<uint(31-b))>>31)
			set := uint32(int32(x1<<uint(31-b)) >> 31)
			t := (x0 ^ x1) & p &^ set
			x0 ^= p&set | t
			x1 ^= t
		}
		x1 ^= x0
		var t uint32
		for b := width - 1; b >= 1; b-- {
			t ^= (uint32(1)<<uint(b) - 1) & uint32(int32(x1<<uint(31-b))>>31)
		}
		x[0], x[1] = x0^t, x1^t
		return
	}
	for b := width - 1; b >= 1; b-- {
		p := uint32(1)<<uint(b) - 1
		for i := range n {
			set := uint32(int32(x[i]<<uint(31-b)) >> 31)
			// Set: invert the low bits of x[0]; else swap the low bits
			// of x[0] and x[i] (t is 0 for i 0).
			t := (x[0] ^ x[i]) & p &^ set
			x[0] ^= p&set | t
			x[i] ^= t
		}
	}
	for i := 1; i < n; i++ {
		x[i] ^= x[i-1]
	}
	var t uint32
	for b := width - 1; b >= 1; b-- {
		set := uint32(int32(x[n-1]<<uint(31-b)) >> 31)
		t ^= (uint32(1)<<uint(b) - 1) & set
	}
	for i := range n {
		x[i] ^= t
	}
}

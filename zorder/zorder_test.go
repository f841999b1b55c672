package zorder

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/schema"
)

func TestMortonKeyHandComputed(t *testing.T) {
	tests := []struct {
		ids   []uint32
		width int
		want  []byte
	}{
		// a=10, b=01: a1 b1 a0 b0 = 1 0 0 1, padded: 1001 0000.
		{[]uint32{2, 1}, 2, []byte{0b1001_0000}},
		// a=11, b=00 -> 1010.
		{[]uint32{3, 0}, 2, []byte{0b1010_0000}},
		// three columns of 3 bits: a=101 b=010 c=111 ->
		// a2 b2 c2 a1 b1 c1 a0 b0 c0 = 1 0 1 0 1 1 1 0 1.
		{[]uint32{5, 2, 7}, 3, []byte{0b1010_1110, 0b1000_0000}},
		// one column: the id itself.
		{[]uint32{0xAB}, 8, []byte{0xAB}},
		// high bits beyond width are ignored.
		{[]uint32{0xFF, 0}, 1, []byte{0b1000_0000}},
	}
	for _, tt := range tests {
		if got := MortonKey(nil, tt.ids, tt.width); !bytes.Equal(got, tt.want) {
			t.Errorf("MortonKey(%v, %d) = %08b, want %08b", tt.ids, tt.width, got, tt.want)
		}
	}
}

// keyInt reads a key of n bits as an integer.
func keyInt(k []byte, n int) uint64 {
	var v uint64
	for i := range n {
		v = v<<1 | uint64(k[i/8]>>(7-uint(i%8))&1)
	}
	return v
}

func TestHilbertKeyHandComputed(t *testing.T) {
	// The 2-D curve of order 1 visits (0,0), (0,1), (1,1), (1,0).
	for want, p := range [][2]uint32{{0, 0}, {0, 1}, {1, 1}, {1, 0}} {
		k := HilbertKey(nil, p[:], 1)
		if got := keyInt(k, 2); got != uint64(want) {
			t.Errorf("HilbertKey(%v, 1) = %d, want %d", p, got, want)
		}
	}
	// Order 2 (4x4), the first four cells stay in the lower-left quadrant
	// and the curve ends at the lower-right corner (3,0).
	order := [][2]uint32{{0, 0}, {1, 0}, {1, 1}, {0, 1}, {0, 2}, {0, 3}, {1, 3}, {1, 2},
		{2, 2}, {2, 3}, {3, 3}, {3, 2}, {3, 1}, {2, 1}, {2, 0}, {3, 0}}
	for want, p := range order {
		if got := keyInt(HilbertKey(nil, p[:], 2), 4); got != uint64(want) {
			t.Errorf("HilbertKey(%v, 2) = %d, want %d", p, got, want)
		}
	}
}

// TestHilbertAdjacent checks the defining property of the curve: its
// indexes are a bijection onto 0..2^(dims*width)-1 and consecutive indexes
// are cells at distance 1.
func TestHilbertAdjacent(t *testing.T) {
	for _, c := range []struct{ dims, width int }{{2, 1}, {2, 3}, {2, 5}, {3, 2}, {3, 3}, {4, 2}} {
		t.Run(fmt.Sprintf("%dx%d", c.dims, c.width), func(t *testing.T) {
			n := 1 << uint(c.dims*c.width)
			cells := make([][]uint32, n)
			for idx := range n {
				p := make([]uint32, c.dims)
				v := idx
				for d := range c.dims {
					p[d] = uint32(v & (1<<uint(c.width) - 1))
					v >>= uint(c.width)
				}
				h := keyInt(HilbertKey(nil, p, c.width), c.dims*c.width)
				if cells[h] != nil {
					t.Fatalf("index %d for %v and %v", h, cells[h], p)
				}
				cells[h] = p
			}
			for i := 1; i < n; i++ {
				dist := 0
				for d := range c.dims {
					dist += abs(int(cells[i][d]) - int(cells[i-1][d]))
				}
				if dist != 1 {
					t.Fatalf("indexes %d and %d are %v and %v: distance %d", i-1, i, cells[i-1], cells[i], dist)
				}
			}
		})
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func TestRangesOrderPreserving(t *testing.T) {
	dec := func(i int64) schema.Value {
		v, _ := schema.DecimalValue(big.NewInt(i), 20, 2)
		return v
	}
	// Each case draws from its own generator with a fixed seed, so a run
	// is the same whatever the order or selection of cases.
	cases := []struct {
		name string
		gen  func(*rand.Rand) schema.Value
	}{
		{"long", func(rng *rand.Rand) schema.Value { return schema.LongValue(rng.Int64N(1 << 40)) }},
		{"skewed", func(rng *rand.Rand) schema.Value { return schema.LongValue(int64(rng.ExpFloat64() * 10)) }},
		{"string", func(rng *rand.Rand) schema.Value { return schema.StringValue(fmt.Sprintf("k%x", rng.Uint32())) }},
		{"double", func(rng *rand.Rand) schema.Value { return schema.DoubleValue(rng.NormFloat64()) }},
		{"date", func(rng *rand.Rand) schema.Value { return schema.DateValue(rng.Int32N(20000)) }},
		{"decimal", func(rng *rand.Rand) schema.Value { return dec(rng.Int64N(1e6) - 5e5) }},
		{"bool", func(rng *rand.Rand) schema.Value { return schema.BooleanValue(rng.IntN(2) == 1) }},
	}
	for k, tc := range cases {
		name := tc.name
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(k)))
			gen := func() schema.Value { return tc.gen(rng) }
			s := NewSampler(2000, 7)
			var all []schema.Value
			for range 5000 {
				v := gen()
				all = append(all, v)
				s.Add(v)
			}
			s.Add(schema.Value{}) // nulls are not sampled
			r, err := NewRanges(s.Values(), 64)
			if err != nil {
				t.Fatal(err)
			}
			if r.Len() > 65 {
				t.Fatalf("Len() = %d, want at most 65", r.Len())
			}
			all = append(all, schema.Value{})
			ids := map[int]uint32{}
			for i, v := range all {
				id, err := r.ID(v)
				if err != nil {
					t.Fatal(err)
				}
				if int(id) >= r.Len() || (id == 0) != v.IsNull() {
					t.Fatalf("ID(%v) = %d (Len %d)", v, id, r.Len())
				}
				ids[i] = id
			}
			// Order preservation: a < b implies id(a) <= id(b), equal
			// values equal ids, null below everything.
			for range 20000 {
				i, j := rng.IntN(len(all)), rng.IntN(len(all))
				a, b := all[i], all[j]
				var c int
				switch {
				case a.IsNull() && b.IsNull():
					c = 0
				case a.IsNull():
					c = -1
				case b.IsNull():
					c = 1
				default:
					c = cmpValues(a, b)
				}
				if c < 0 && ids[i] > ids[j] || c == 0 && ids[i] != ids[j] || c > 0 && ids[i] < ids[j] {
					t.Fatalf("%v (id %d) vs %v (id %d): compare %d", a, ids[i], b, ids[j], c)
				}
			}
			// Ranges of about equal frequency: no range holds more than
			// three times its share. With about 31 sampled values a range,
			// a range's share varies by about a fifth, so three times is
			// far outside chance, whatever the seed.
			if name == "long" || name == "string" {
				count := map[uint32]int{}
				for _, id := range ids {
					count[id]++
				}
				for id, c := range count {
					if c > 3*len(all)/(r.Len()-1) {
						t.Errorf("range %d holds %d of %d values", id, c, len(all))
					}
				}
			}
		})
	}
}

func cmpValues(a, b schema.Value) int {
	switch a.Kind() {
	case schema.KindString:
		return bytes.Compare(a.Bytes(), b.Bytes())
	case schema.KindDouble:
		return cmp.Compare(a.Float64(), b.Float64())
	case schema.KindDecimal:
		x, _, _ := a.Decimal()
		y, _, _ := b.Decimal()
		return x.Cmp(y)
	case schema.KindBoolean:
		return cmp.Compare(btoi(a.Bool()), btoi(b.Bool()))
	}
	return cmp.Compare(a.Int64(), b.Int64())
}

func btoi(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func TestRangesFewDistinct(t *testing.T) {
	var sample []schema.Value
	for _, x := range []int64{30, 10, 20, 10, 30} {
		sample = append(sample, schema.LongValue(x))
	}
	r, err := NewRanges(sample, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		v    schema.Value
		want uint32
	}{{schema.Value{}, 0}, {schema.LongValue(5), 1}, {schema.LongValue(10), 1}, {schema.LongValue(15), 1},
		{schema.LongValue(20), 2}, {schema.LongValue(30), 3}, {schema.LongValue(99), 3}} {
		if got, _ := r.ID(c.v); got != c.want {
			t.Errorf("ID(%v) = %d, want %d", c.v, got, c.want)
		}
	}
}

func TestKeyer(t *testing.T) {
	mk := func(xs ...int64) *Ranges {
		var s []schema.Value
		for _, x := range xs {
			s = append(s, schema.LongValue(x))
		}
		r, err := NewRanges(s, 0)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// Ids: a in {1,2,3} (null 0), b in {1} -> width 2 bits.
	k, err := NewKeyer(Morton, []*Ranges{mk(10, 20, 30), mk(5)})
	if err != nil {
		t.Fatal(err)
	}
	if k.Bits() != 2 {
		t.Fatalf("Bits() = %d", k.Bits())
	}
	got, err := k.Key(nil, []schema.Value{schema.LongValue(20), schema.LongValue(5)})
	if err != nil {
		t.Fatal(err)
	}
	// a=2=10, b=1=01 -> 1001.
	if !bytes.Equal(got, []byte{0b1001_0000}) {
		t.Errorf("Key = %08b", got)
	}
	if _, err := k.Key(nil, []schema.Value{schema.StringValue("x"), schema.LongValue(5)}); !errors.Is(err, ErrNotOrderable) {
		t.Errorf("string against long ranges: %v", err)
	}
	if _, err := NewRanges([]schema.Value{schema.StructValue(nil), schema.StructValue(nil)}, 0); !errors.Is(err, ErrNotOrderable) {
		t.Errorf("structs: %v", err)
	}
	if _, err := NewKeyer(Curve(9), []*Ranges{mk(1)}); err == nil {
		t.Error("unknown curve accepted")
	}
}

// TestRangesIDCells: the cells that narrow ID's search give every value
// the id a count of the boundaries at or below it gives, for boundaries
// spread evenly, over binades, over the whole int64 range and over a span
// narrower than the cells; at each boundary, next to it and outside.
func TestRangesIDCells(t *testing.T) {
	cases := []struct {
		name string
		gen  func(*rand.Rand) schema.Value
	}{
		{"long", func(rng *rand.Rand) schema.Value { return schema.LongValue(rng.Int64N(3_000_000)) }},
		{"long-full-range", func(rng *rand.Rand) schema.Value { return schema.LongValue(int64(rng.Uint64())) }},
		{"long-narrow", func(rng *rand.Rand) schema.Value { return schema.LongValue(rng.Int64N(1500) - 700) }},
		{"double-binades", func(rng *rand.Rand) schema.Value { return schema.DoubleValue(rng.Float64() * 1000) }},
		{"double-signed", func(rng *rand.Rand) schema.Value { return schema.DoubleValue(rng.NormFloat64() * 1e6) }},
		{"timestamp", func(rng *rand.Rand) schema.Value {
			return schema.TimestampValue(1_700_000_000_000_000 + rng.Int64N(1e12))
		}},
	}
	for k, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(9, uint64(k)))
			var sample []schema.Value
			for range 20000 {
				sample = append(sample, tc.gen(rng))
			}
			r, err := NewRanges(sample, 1000)
			if err != nil {
				t.Fatal(err)
			}
			if r.cells == nil {
				t.Fatalf("%d boundaries and no cells", len(r.bounds))
			}
			want := func(v schema.Value) uint32 {
				n := 0
				for _, b := range r.bounds {
					if cmpValues(b, v) <= 0 {
						n++
					}
				}
				return uint32(max(n, 1))
			}
			probes := slices.Clone(sample[:2000])
			for _, b := range r.bounds {
				probes = append(probes, b)
				switch b.Kind() {
				case schema.KindDouble:
					probes = append(probes, schema.DoubleValue(math.Nextafter(b.Float64(), math.Inf(-1))), schema.DoubleValue(math.Nextafter(b.Float64(), math.Inf(1))))
				case schema.KindTimestamp:
					probes = append(probes, schema.TimestampValue(b.Int64()-1), schema.TimestampValue(b.Int64()+1))
				default:
					probes = append(probes, schema.LongValue(b.Int64()-1), schema.LongValue(b.Int64()+1))
				}
			}
			switch r.bounds[0].Kind() {
			case schema.KindDouble:
				probes = append(probes, schema.DoubleValue(math.Inf(-1)), schema.DoubleValue(math.Inf(1)), schema.DoubleValue(math.MaxFloat64))
			case schema.KindLong:
				probes = append(probes, schema.LongValue(math.MinInt64), schema.LongValue(math.MaxInt64))
			}
			for _, v := range probes {
				got, err := r.ID(v)
				if err != nil {
					t.Fatal(err)
				}
				if w := want(v); got != w {
					t.Fatalf("ID(%v) = %d, want %d", v, got, w)
				}
			}
		})
	}
}

// TestSortNormed: the integer sort of NewRanges orders a sample as
// expr.Order does (equal values may swap), and declines mixed kinds.
func TestSortNormed(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	dec := func(i int64) schema.Value {
		v, _ := schema.DecimalValueInt64(i, 12, 3)
		return v
	}
	cases := []struct {
		name string
		gen  func(i int) schema.Value
		ok   bool
	}{
		{"long", func(int) schema.Value { return schema.LongValue(rng.Int64N(200) - 100) }, true},
		{"double", func(i int) schema.Value {
			return []schema.Value{schema.DoubleValue(math.NaN()), schema.DoubleValue(math.Copysign(0, -1)), schema.DoubleValue(0),
				schema.DoubleValue(math.Inf(-1)), schema.DoubleValue(rng.NormFloat64())}[i%5]
		}, true},
		{"date", func(int) schema.Value { return schema.DateValue(rng.Int32N(1000) - 500) }, true},
		{"decimal", func(int) schema.Value { return dec(rng.Int64N(1e6) - 5e5) }, true},
		{"mixed", func(i int) schema.Value {
			if i == 7 {
				return schema.IntegerValue(3)
			}
			return schema.LongValue(int64(i))
		}, false},
		{"string", func(i int) schema.Value { return schema.StringValue(fmt.Sprint(i)) }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var vals []schema.Value
			for i := range 3000 {
				vals = append(vals, tc.gen(i))
			}
			got := slices.Clone(vals)
			if ok := sortNormed(got); ok != tc.ok {
				t.Fatalf("sortNormed = %v, want %v", ok, tc.ok)
			}
			if !tc.ok {
				if !slices.EqualFunc(got, vals, func(a, b schema.Value) bool { return a.String() == b.String() }) {
					t.Fatal("declined, and changed the values")
				}
				return
			}
			want := slices.Clone(vals)
			slices.SortFunc(want, func(a, b schema.Value) int { c, _ := expr.Order(a, b); return c })
			for i := range want {
				if c, ok := expr.Order(got[i], want[i]); !ok || c != 0 {
					t.Fatalf("value %d: %v, want %v", i, got[i], want[i])
				}
			}
		})
	}
}

// TestKeyWordsFastPaths: the two-column interleave and the branch-free
// Hilbert transposition give the keys a bit-by-bit reference does (Key's
// bytes, and Skilling's transposition as first written), for every width.
func TestKeyWordsFastPaths(t *testing.T) {
	refTranspose := func(x []uint32, width int) {
		n := len(x)
		m := uint32(1) << uint(width-1)
		for q := m; q > 1; q >>= 1 {
			p := q - 1
			for i := range n {
				if x[i]&q != 0 {
					x[0] ^= p
				} else {
					t := (x[0] ^ x[i]) & p
					x[0] ^= t
					x[i] ^= t
				}
			}
		}
		for i := 1; i < n; i++ {
			x[i] ^= x[i-1]
		}
		var t uint32
		for q := m; q > 1; q >>= 1 {
			if x[n-1]&q != 0 {
				t ^= q - 1
			}
		}
		for i := range n {
			x[i] ^= t
		}
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for _, cols := range []int{1, 2, 3, 5} {
		for width := 1; width <= 32; width++ {
			for range 200 {
				ids := make([]uint32, cols)
				for i := range ids {
					ids[i] = uint32(rng.Uint64N(1 << uint(width)))
				}
				got, want := slices.Clone(ids), slices.Clone(ids)
				axesToTranspose(got, width)
				refTranspose(want, width)
				if !slices.Equal(got, want) {
					t.Fatalf("transpose %v width %d: %v, want %v", ids, width, got, want)
				}
				words := make([]uint64, (cols*width+63)/64)
				interleaveWords(words, ids, width)
				var b []byte
				for _, w := range words {
					b = binary.BigEndian.AppendUint64(b, w)
				}
				if key := MortonKey(nil, ids, width); !bytes.Equal(b[:len(key)], key) || slices.ContainsFunc(b[len(key):], func(c byte) bool { return c != 0 }) {
					t.Fatalf("interleave %v width %d: %x, want %x", ids, width, b, key)
				}
			}
		}
	}
}

// TestKeyRowWords: the key of a row's columns read in place is the key of
// those values copied out, for both curves and any column order; a
// column outside the row is an error.
func TestKeyRowWords(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	var rows [][]schema.Value
	s1, s2 := NewSampler(0, 1), NewSampler(0, 2)
	for i := range 3000 {
		r := []schema.Value{schema.StringValue(fmt.Sprint("r", i)), schema.LongValue(rng.Int64N(1e6)), schema.DoubleValue(rng.NormFloat64())}
		if i%7 == 0 {
			r[2] = schema.Value{}
		}
		s1.Add(r[1])
		s2.Add(r[2])
		rows = append(rows, r)
	}
	r1, err := NewRanges(s1.Values(), 0)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := NewRanges(s2.Values(), 0)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		curve  Curve
		cols   []int
		ranges []*Ranges
	}{
		{Morton, []int{1, 2}, []*Ranges{r1, r2}},
		{Hilbert, []int{1, 2}, []*Ranges{r1, r2}},
		{Morton, []int{2, 1}, []*Ranges{r2, r1}},
		{Hilbert, []int{2, 1, 1}, []*Ranges{r2, r1, r1}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.curve, tc.cols), func(t *testing.T) {
			k, err := NewKeyer(tc.curve, tc.ranges)
			if err != nil {
				t.Fatal(err)
			}
			got, want := make([]uint64, k.Words()), make([]uint64, k.Words())
			vals := make([]schema.Value, len(tc.cols))
			for _, r := range rows {
				for i, c := range tc.cols {
					vals[i] = r[c]
				}
				if err := k.KeyWords(want, vals); err != nil {
					t.Fatal(err)
				}
				if err := k.KeyRowWords(got, r, tc.cols); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("row %v: %x, want %x", r, got, want)
				}
			}
			bad := slices.Clone(tc.cols)
			bad[0] = 3
			if err := k.KeyRowWords(got, rows[0], bad); err == nil {
				t.Fatal("a column outside the row keyed")
			}
		})
	}
}

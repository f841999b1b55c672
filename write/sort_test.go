package write

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/godelta/delta/schema"
)

// sortValues are values of every kind, nulls among them.
func sortValues(t *testing.T) []schema.Value {
	bigDec, _ := new(big.Int).SetString("-123456789012345678901234567890", 10)
	dec, err := schema.DecimalValue(bigDec, 38, 4)
	if err != nil {
		t.Fatal(err)
	}
	small, _ := schema.DecimalValueInt64(-1234, 10, 2)
	return []schema.Value{
		{}, schema.BooleanValue(true), schema.BooleanValue(false), schema.ByteValue(-8), schema.ShortValue(300),
		schema.IntegerValue(math.MinInt32), schema.LongValue(math.MaxInt64), schema.FloatValue(1.5),
		schema.DoubleValue(math.NaN()), schema.DoubleValue(math.Inf(-1)), schema.DoubleValue(math.Copysign(0, -1)),
		schema.StringValue("héllo"), schema.StringValue(""), schema.BinaryValue([]byte{0, 1, 255}), schema.DateValue(-3),
		schema.TimestampValue(1700000000123456), schema.TimestampNTZValue(-1), dec, small,
		schema.StructValue([]schema.Value{schema.LongValue(1), {}, schema.StringValue("x")}),
		schema.ArrayValue([]schema.Value{schema.IntegerValue(1), schema.IntegerValue(2)}),
		schema.MapValue([]schema.Value{schema.StringValue("k"), schema.ArrayValue(nil)}),
	}
}

func sameStaged(a, b schema.Value) bool {
	if a.Kind() != b.Kind() || a.String() != b.String() {
		return false
	}
	switch a.Kind() {
	case schema.KindFloat, schema.KindDouble:
		return math.Float64bits(a.Float64()) == math.Float64bits(b.Float64()) || (math.IsNaN(a.Float64()) && math.IsNaN(b.Float64()))
	case schema.KindDecimal:
		u1, p1, s1 := a.Decimal()
		u2, p2, s2 := b.Decimal()
		return u1.Cmp(u2) == 0 && p1 == p2 && s1 == s2
	}
	return true
}

// TestSortChunkRoundTrip: a chunk keeps every value as given, nulls and
// every kind, and reads back the same from its encoding; a truncated
// encoding is an error, never a panic.
func TestSortChunkRoundTrip(t *testing.T) {
	vals := sortValues(t)
	var rows [][]schema.Value
	for i := range 3 * len(vals) {
		r := []schema.Value{vals[i%len(vals)], schema.LongValue(int64(i * 7)), schema.StringValue(fmt.Sprint("s", i)), {}, schema.DoubleValue(float64(i) / 3)}
		if i%4 == 0 {
			r[1], r[2] = schema.Value{}, schema.Value{}
		}
		rows = append(rows, r)
	}
	c := &recChunk{}
	for _, r := range rows {
		c.appendRec(appendRow(nil, r))
	}
	check := func(c *recChunk, what string) {
		t.Helper()
		got := make([]schema.Value, 5)
		off := 0
		var rec []byte
		for i, r := range rows {
			rec, off = c.next(off)
			if err := decodeRow(rec, got); err != nil {
				t.Fatalf("%s: row %d: %v", what, i, err)
			}
			for j, v := range r {
				if g := got[j]; !sameStaged(g, v) {
					t.Fatalf("%s: row %d column %d: %v (%s), want %v (%s)", what, i, j, g, g.Kind(), v, v.Kind())
				}
			}
		}
	}
	check(c, "staged")
	enc := c.encode(nil)
	got, err := decodeChunk(bufio.NewReader(bytes.NewReader(enc)), len(rows), &recChunk{})
	if err != nil {
		t.Fatal(err)
	}
	check(got, "decoded")
	for n := 1; n < len(enc); n++ {
		if _, err := decodeChunk(bufio.NewReader(bytes.NewReader(enc[:n])), len(rows), &recChunk{}); err == nil {
			t.Fatalf("a chunk cut at %d bytes decoded", n)
		}
	}
	// A chunk whose record lengths do not add up to its size is an error;
	// one that decodes is walked to its end without a panic.
	for i := range enc {
		bad := slices.Clone(enc)
		bad[i] ^= 0x81
		c, err := decodeChunk(bufio.NewReader(bytes.NewReader(bad)), len(rows), &recChunk{})
		if err != nil {
			continue
		}
		off := 0
		for range c.n {
			_, off = c.next(off)
		}
		if off != len(c.data) {
			t.Fatalf("byte %d changed: the records end at %d of %d", i, off, len(c.data))
		}
	}
	if _, err := decodeChunk(bufio.NewReader(bytes.NewReader(enc)), len(rows)+1, &recChunk{}); err == nil {
		t.Fatal("a chunk decoded with a row more than it has")
	}
	// Every value cut short is an error.
	for _, v := range vals {
		b := schema.AppendBinary(nil, v)
		for n := range len(b) {
			if _, _, err := schema.DecodeBinary(b[:n]); err == nil {
				t.Fatalf("%v cut at %d bytes decoded", v, n)
			}
		}
	}
}

// TestAppendRowBytes: appendRow, which writes the common kinds itself,
// gives the bytes schema.AppendBinary gives, value by value, for every
// kind and for values at the edges of their varints.
func TestAppendRowBytes(t *testing.T) {
	vals := append(sortValues(t), schema.LongValue(math.MinInt64), schema.LongValue(-1), schema.LongValue(63), schema.LongValue(64),
		schema.IntegerValue(math.MaxInt32), schema.DateValue(0), schema.DoubleValue(-1.25), schema.StringValue(strings.Repeat("x", 200)))
	for _, v := range vals {
		if got, want := appendRow([]byte{7}, []schema.Value{v}), schema.AppendBinary([]byte{7}, v); !bytes.Equal(got, want) {
			t.Errorf("%v (kind %v): appendRow gives % x, AppendBinary % x", v, v.Kind(), got, want)
		}
	}
	var want []byte
	for _, v := range vals {
		want = schema.AppendBinary(want, v)
	}
	if got := appendRow(nil, vals); !bytes.Equal(got, want) {
		t.Error("the record of a row of every kind differs from AppendBinary's bytes")
	}
}

// testKey is a SortKey over the first column, a long: words words, the
// value's low bits in the first, the rest zero; it counts the rows it
// observes.
type testKey struct {
	words, shift int
	seen         int
}

// TestRadixSort: the bucket sort orders packed (key | index) words as
// slices.Sort does, whatever the width of the keys (one pass, several,
// or too wide and left to slices.Sort) and their common top bits.
func TestRadixSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	tests := []struct {
		n, keyBits, at int    // keys of keyBits bits at bit at
		low            int    // bits of the index
		top            uint64 // bits every key shares
	}{
		{0, 10, 4, 4, 0}, {1, 10, 4, 4, 0}, {5000, 0, 13, 13, 1 << 63}, {5000, 6, 13, 13, 0},
		{20000, 20, 15, 15, 0xabc << 52}, {20000, 30, 15, 15, 0}, {3000, 40, 12, 12, 0}, {3000, 50, 12, 12, 0},
		// A curve's key: 20 bits at the top, the index far below.
		{20000, 20, 44, 15, 0}, {20000, 13, 44, 15, 0x7f << 57},
	}
	var tmp []uint64
	for _, tc := range tests {
		t.Run(fmt.Sprintf("n%d-bits%d-at%d", tc.n, tc.keyBits, tc.at), func(t *testing.T) {
			ks := make([]uint64, tc.n)
			for j := range ks {
				k := tc.top
				if tc.keyBits > 0 {
					k |= rng.Uint64N(1<<uint(tc.keyBits)) << uint(tc.at)
				}
				ks[j] = k | uint64(j)
			}
			want := slices.Clone(ks)
			slices.Sort(want)
			tmp = radixSort(ks, tmp, tc.low)
			if !slices.Equal(ks, want) {
				t.Fatal("not in order")
			}
		})
	}
}

func (k *testKey) Observe([]schema.Value) error { k.seen++; return nil }
func (k *testKey) Prepare() (RowKey, error) {
	return RowKey{Words: k.words, Columns: []int{0}, Key: func(dst []uint64, row []schema.Value) error {
		clear(dst)
		dst[0] = uint64(row[0].Int64()) << uint(k.shift)
		if len(row) != 2 {
			return fmt.Errorf("the key sees %d values, not the table row's 2", len(row))
		}
		return nil
	}}, nil
}

// TestColSorterSpillsSameOrder: rows come out by (key, arrival) whatever
// the budget and the key's form (packed with the row index, or not); a
// tiny budget spills runs, and every temporary file is removed.
func TestColSorterSpillsSameOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var rows [][]schema.Value
	for i := range 30000 {
		var s schema.Value
		if i%5 != 0 {
			s = schema.StringValue(fmt.Sprint("r", i))
		}
		rows = append(rows, []schema.Value{schema.LongValue(int64(rng.IntN(64))), s, schema.LongValue(int64(i))}) // many ties
	}
	// The expected order, computed independently: a stable sort by key.
	want := slices.Clone(rows)
	slices.SortStableFunc(want, func(a, b []schema.Value) int { return cmp.Compare(a[0].Int64(), b[0].Int64()) })
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	for _, k := range []testKey{{words: 1, shift: 58}, {words: 1, shift: 0}, {words: 2, shift: 3}, {words: 2, shift: 58}} {
		for _, budget := range []int64{0, 64 << 10} {
			for _, bucket := range []int{0, 512} {
				for _, ahead := range []bool{false, true} {
					t.Run(fmt.Sprintf("words%d-shift%d-budget%d-bucket%d-ahead%v", k.words, k.shift, budget, bucket, ahead), func(t *testing.T) {
						dir := t.TempDir()
						key := k
						s := newColSorter(budget, dir, &key, 2)
						if bucket > 0 {
							// Buckets of a few rows: one a key value.
							s.bucketBytes = bucket
						}
						if ahead {
							// The keys computed ahead, and the rows
							// decoded ahead of fn, on the other core, in
							// groups of chunks and batches that end
							// within the rows.
							s.parallelRows = 1
						}
						for _, r := range rows {
							if err := s.add(r); err != nil {
								t.Fatal(err)
							}
						}
						var got [][]schema.Value
						if err := s.drain(func(row []schema.Value) error {
							got = append(got, slices.Clone(row))
							return nil
						}); err != nil {
							t.Fatal(err)
						}
						if key.seen != len(rows) {
							t.Errorf("observed %d rows of %d", key.seen, len(rows))
						}
						if budget == 0 && s.spills != 0 || budget > 0 && s.spills < 3 {
							t.Errorf("budget %d: %d runs", budget, s.spills)
						}
						if len(got) != len(want) {
							t.Fatalf("%d rows, want %d", len(got), len(want))
						}
						for i := range want {
							for j := range want[i] {
								if !sameStaged(got[i][j], want[i][j]) {
									t.Fatalf("row %d: %v, want %v", i, got[i], want[i])
								}
							}
						}
						if left, _ := os.ReadDir(dir); len(left) != 0 {
							t.Errorf("runs left behind: %d", len(left))
						}
					})
				}
			}
		}
	}
}

package write

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/godelta/delta/schema"
)

func TestSortRunCodecRoundTrip(t *testing.T) {
	bigDec, _ := new(big.Int).SetString("-123456789012345678901234567890", 10)
	dec, err := schema.DecimalValue(bigDec, 38, 4)
	if err != nil {
		t.Fatal(err)
	}
	small, _ := schema.DecimalValueInt64(-1234, 10, 2)
	vals := []schema.Value{
		{}, schema.BooleanValue(true), schema.BooleanValue(false), schema.ByteValue(-8), schema.ShortValue(300),
		schema.IntegerValue(math.MinInt32), schema.LongValue(math.MaxInt64), schema.FloatValue(1.5),
		schema.DoubleValue(math.NaN()), schema.DoubleValue(math.Inf(-1)), schema.StringValue("héllo"),
		schema.StringValue(""), schema.BinaryValue([]byte{0, 1, 255}), schema.DateValue(-3), schema.TimestampValue(1700000000123456),
		schema.TimestampNTZValue(-1), dec, small,
		schema.StructValue([]schema.Value{schema.LongValue(1), {}, schema.StringValue("x")}),
		schema.ArrayValue([]schema.Value{schema.IntegerValue(1), schema.IntegerValue(2)}),
		schema.MapValue([]schema.Value{schema.StringValue("k"), schema.ArrayValue(nil)}),
	}
	r := &sortedRow{key: []byte{1, 2, 3}, seq: 77, row: vals}
	enc := encodeRow(nil, r)
	got, err := decodeRow(bufio.NewReader(bytes.NewReader(enc)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.key, r.key) || got.seq != r.seq || len(got.row) != len(vals) {
		t.Fatalf("decoded %+v", got)
	}
	for i, v := range vals {
		g := got.row[i]
		if g.Kind() != v.Kind() || g.String() != v.String() {
			t.Errorf("value %d: %v (%s), want %v (%s)", i, g, g.Kind(), v, v.Kind())
		}
		if v.Kind() == schema.KindDecimal {
			u1, p1, s1 := v.Decimal()
			u2, p2, s2 := g.Decimal()
			if u1.Cmp(u2) != 0 || p1 != p2 || s1 != s2 {
				t.Errorf("decimal %v: got %v(%d,%d)", v, u2, p2, s2)
			}
		}
	}
	// A truncated run is an error, never a panic.
	for n := 1; n < len(enc); n++ {
		if _, err := decodeRow(bufio.NewReader(bytes.NewReader(enc[:n]))); err == nil {
			t.Fatalf("a run cut at %d bytes decoded", n)
		}
	}
}

// TestRowSorterSpillsSameOrder: rows come out by (key, arrival) whatever
// the budget; a tiny budget spills runs.
func TestRowSorterSpillsSameOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	type in struct {
		key []byte
		row []schema.Value
	}
	var rows []in
	for i := range 3000 {
		k := []byte{byte(rng.IntN(16)), byte(rng.IntN(4))} // many ties
		rows = append(rows, in{k, []schema.Value{schema.LongValue(int64(i)), schema.StringValue(fmt.Sprint("r", i))}})
	}
	run := func(budget int64) ([]string, int) {
		dir := t.TempDir()
		s := newRowSorter(budget, dir)
		for _, r := range rows {
			if err := s.add(r.key, r.row); err != nil {
				t.Fatal(err)
			}
		}
		spills := s.spills
		var out []string
		if err := s.drain(func(row []schema.Value) error {
			out = append(out, row[1].String())
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if left, _ := os.ReadDir(dir); len(left) != 0 {
			t.Errorf("runs left behind: %d", len(left))
		}
		return out, spills
	}
	// The expected order, computed independently: a stable sort by key.
	idx := make([]int, len(rows))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return bytes.Compare(rows[a].key, rows[b].key) })
	var want []string
	for _, i := range idx {
		want = append(want, fmt.Sprint("r", i))
	}
	mem, spills := run(0)
	if spills != 0 || !slices.Equal(mem, want) {
		t.Fatalf("in memory: %d spills, order differs: %v", spills, !slices.Equal(mem, want))
	}
	ext, spills := run(4 << 10)
	if spills < 10 || !slices.Equal(ext, want) {
		t.Fatalf("external: %d spills, order differs: %v", spills, !slices.Equal(ext, want))
	}
}

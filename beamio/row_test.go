package beamio

import (
	"errors"
	"math"
	"math/big"
	"testing"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
)

func mustDecimal(t *testing.T, u *big.Int, p, s int) schema.Value {
	t.Helper()
	v, err := schema.DecimalValue(u, p, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// show is a value's kind and display form, nested values included.
func show(v schema.Value) string { return v.Kind().String() + ":" + v.String() }

// TestRowCoder round-trips values of every kind through Row's coder.
func TestRowCoder(t *testing.T) {
	big38, _ := new(big.Int).SetString("-12345678901234567890123456789012345678", 10)
	tests := []struct {
		name string
		vals []schema.Value
	}{
		{"no values", nil},
		{"null", []schema.Value{{}}},
		{"primitives", []schema.Value{
			schema.BooleanValue(true), schema.BooleanValue(false),
			schema.ByteValue(-128), schema.ShortValue(32767), schema.IntegerValue(math.MinInt32),
			schema.LongValue(math.MaxInt64), schema.FloatValue(1.5), schema.DoubleValue(math.Inf(-1)),
			schema.DoubleValue(math.NaN()), schema.StringValue("héllo"), schema.StringValue(""),
			schema.BinaryValue([]byte{0, 1, 255}), schema.DateValue(-719162),
			schema.TimestampValue(1_700_000_000_123_456), schema.TimestampNTZValue(-1),
		}},
		{"decimals", []schema.Value{
			mustDecimal(t, big.NewInt(-12345), 10, 2), mustDecimal(t, big38, 38, 0), mustDecimal(t, big.NewInt(0), 1, 0),
		}},
		{"nested", []schema.Value{
			schema.StructValue([]schema.Value{schema.LongValue(1), {}, schema.ArrayValue([]schema.Value{schema.StringValue("a"), {}})}),
			schema.ArrayValue(nil),
			schema.MapValue([]schema.Value{schema.StringValue("k"), schema.MapValue(nil), schema.StringValue("k2"), {}}),
			schema.StructValue(nil),
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := encodeRow(Row{Values: tc.vals})
			if err != nil {
				t.Fatal(err)
			}
			got, err := decodeRow(b)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Values) != len(tc.vals) {
				t.Fatalf("%d values, want %d", len(got.Values), len(tc.vals))
			}
			for i, want := range tc.vals {
				if show(got.Values[i]) != show(want) || got.Values[i].Type() != want.Type() {
					t.Errorf("value %d: %s, want %s", i, show(got.Values[i]), show(want))
				}
			}
			again, err := encodeRow(got)
			if err != nil || string(again) != string(b) {
				t.Errorf("encoding the decoded row gives other bytes (%v)", err)
			}
		})
	}
}

// TestRowCoderBadBytes decodes truncated and malformed rows: an error
// matching ErrBadRow and deltaerr.ErrCorrupt, never a panic.
func TestRowCoderBadBytes(t *testing.T) {
	good, err := encodeRow(Row{Values: []schema.Value{
		schema.StructValue([]schema.Value{schema.StringValue("abc"), schema.DoubleValue(2)}),
		mustDecimal(t, new(big.Int).Lsh(big.NewInt(1), 100), 38, 2),
		schema.MapValue([]schema.Value{schema.LongValue(1), schema.BinaryValue([]byte("x"))}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	var cases [][]byte
	for n := range len(good) { // every truncation
		cases = append(cases, good[:n])
	}
	deep := make([]byte, 0, 2*schema.MaxBinaryDepth+10)
	deep = append(deep, 1)
	for range schema.MaxBinaryDepth + 2 {
		deep = append(deep, byte(schema.KindArray), 1)
	}
	cases = append(cases,
		append(append([]byte{}, good...), 0),                           // trailing bytes
		[]byte{1, 200},                                                 // unknown kind
		[]byte{0xff, 0xff, 0xff, 0xff, 0x0f},                           // a count past the bytes
		[]byte{1, byte(schema.KindByte), 0x80, 0x04},                   // a byte out of range
		[]byte{1, byte(schema.KindDecimal), 5, 0, 0, 0xc0, 0x9a, 0x0c}, // more digits than the precision
		deep,
	)
	for i, b := range cases {
		_, err := decodeRow(b)
		if !errors.Is(err, ErrBadRow) || !errors.Is(err, deltaerr.ErrCorrupt) {
			t.Errorf("case %d (%x): %v, want ErrBadRow", i, b, err)
		}
	}
}

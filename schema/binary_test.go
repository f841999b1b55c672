package schema_test

import (
	"errors"
	"math"
	"math/big"
	"testing"

	"github.com/godelta/delta/schema"
)

// TestBinaryRoundTrip: every kind comes back the same, and every value
// cut short is ErrBinary.
func TestBinaryRoundTrip(t *testing.T) {
	big38, _ := new(big.Int).SetString("-12345678901234567890123456789012345678", 10)
	d1, _ := schema.DecimalValue(big.NewInt(-12345), 10, 2)
	d2, _ := schema.DecimalValue(big38, 38, 0)
	vals := []schema.Value{
		{}, schema.BooleanValue(true), schema.ByteValue(-128), schema.ShortValue(32767),
		schema.IntegerValue(math.MinInt32), schema.LongValue(math.MaxInt64), schema.FloatValue(1.5),
		schema.DoubleValue(math.Inf(-1)), schema.StringValue("héllo"), schema.StringValue(""),
		schema.BinaryValue([]byte{0, 1, 255}), schema.DateValue(-719162), schema.TimestampValue(1_700_000_000_123_456),
		schema.TimestampNTZValue(-1), d1, d2,
		schema.StructValue([]schema.Value{schema.LongValue(1), {}, schema.ArrayValue([]schema.Value{schema.StringValue("a")})}),
		schema.MapValue([]schema.Value{schema.StringValue("k"), schema.MapValue(nil)}),
	}
	for _, v := range vals {
		b := schema.AppendBinary(nil, v)
		got, n, err := schema.DecodeBinary(append(b, 7)) // a byte after the value stays
		if err != nil || n != len(b) || got.String() != v.String() || got.Kind() != v.Kind() {
			t.Errorf("%v: got %v (%d of %d bytes, %v)", v, got, n, len(b), err)
		}
		for cut := range len(b) {
			if _, _, err := schema.DecodeBinary(b[:cut]); !errors.Is(err, schema.ErrBinary) {
				t.Errorf("%v cut at %d bytes: %v, want ErrBinary", v, cut, err)
			}
		}
	}
}

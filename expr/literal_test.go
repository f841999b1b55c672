package expr

import (
	"errors"
	"math/big"
	"testing"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
)

// Numeric literals are exact, as Spark SQL types them: a number with a
// fraction and no exponent is a DECIMAL, an integer beyond a long too, and
// only a number with an exponent is a DOUBLE. Before, every literal with a
// decimal point was a float64, so two decimals 0.01 apart compared equal to
// one literal, and a BIGINT one above 2^53 equalled 2^53.0.
func TestExactNumericLiterals(t *testing.T) {
	dec := func(s string) schema.Value {
		u, _ := new(big.Int).SetString(s, 10)
		v, err := schema.DecimalValue(u, 20, 2)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	rows := []map[string]schema.Value{
		{"amt": dec("1234567890123456789"), "id": schema.LongValue(9007199254740992)}, // ...67.89
		{"amt": dec("1234567890123456788"), "id": schema.LongValue(9007199254740993)}, // ...67.88
	}
	types := map[string]schema.DataType{"amt": schema.DecimalType{Precision: 20, Scale: 2}, "id": schema.Long}
	cases := []struct {
		pred string
		want []bool // per row: True?
	}{
		{"amt = 12345678901234567.89", []bool{true, false}},
		{"amt > 12345678901234567.88", []bool{true, false}},
		{"amt >= 12345678901234567.88", []bool{true, true}},
		{"amt IN (12345678901234567.88)", []bool{false, true}},
		{"id = 9007199254740992.0", []bool{true, false}},
		{"id = 9007199254740993", []bool{false, true}},
		{"id < 9223372036854775808", []bool{true, true}},
		{"id = 9223372036854775808", []bool{false, false}},
		{"id > -9223372036854775809", []bool{true, true}},
		{"id > 9.007199254740992e15", []bool{false, false}}, // a double: 2^53+1 rounds to 2^53
	}
	for _, tc := range cases {
		e, err := Parse(tc.pred)
		if err != nil {
			t.Fatalf("%s: %v", tc.pred, err)
		}
		for i, row := range rows {
			lookup := func(c string) (schema.DataType, schema.Value, bool) {
				v, ok := row[c]
				return types[c], v, ok
			}
			if got := Eval(e, lookup) == True; got != tc.want[i] {
				t.Errorf("%s on row %d: %v, want %v", tc.pred, i, got, tc.want[i])
			}
		}
	}
}

func TestNumericLiteralTypes(t *testing.T) {
	cases := []struct {
		text string
		kind schema.Kind
		typ  string
	}{
		{"1", schema.KindLong, "long"},
		{"1.5", schema.KindDecimal, "decimal(2,1)"},
		{"-0.05", schema.KindDecimal, "decimal(2,2)"},
		{"9223372036854775808", schema.KindDecimal, "decimal(19,0)"},
		{"1.5e3", schema.KindDouble, "double"},
		{"1E-2", schema.KindDouble, "double"},
	}
	for _, tc := range cases {
		e, err := Parse("x = " + tc.text)
		if err != nil {
			t.Fatalf("%s: %v", tc.text, err)
		}
		lit := e.(Compare).Right.(Literal)
		if lit.Value.Kind() != tc.kind || lit.Value.Type().String() != tc.typ {
			t.Errorf("%s: %v of type %s, want %s", tc.text, lit.Value.Kind(), lit.Value.Type(), tc.typ)
		}
		if back, err := Parse(e.String()); err != nil || back.String() != e.String() {
			t.Errorf("%s: prints as %s, which parses back as %v (%v)", tc.text, e, back, err)
		}
	}
	for _, bad := range []string{"x = 1.2.3", "x = 123456789012345678901234567890123456789.5", "x = 1e999"} {
		if _, err := Parse(bad); !errors.Is(err, deltaerr.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", bad, err)
		}
	}
}

package expr_test

import (
	"errors"
	"testing"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/schema"
)

func typed(err error) bool {
	return errors.Is(err, deltaerr.ErrCorrupt) || errors.Is(err, deltaerr.ErrInvalidArgument) || errors.Is(err, deltaerr.ErrUnsupportedFeature)
}

// dummyRow gives every column a value of a type picked from its name.
func dummyRow(col string) (schema.DataType, schema.Value, bool) {
	switch len(col) % 4 {
	case 0:
		return schema.PrimitiveType("long"), schema.LongValue(int64(len(col)) - 3), true
	case 1:
		return schema.PrimitiveType("string"), schema.StringValue(col), true
	case 2:
		return schema.PrimitiveType("double"), schema.DoubleValue(1.5), true
	}
	return nil, schema.Value{}, false
}

func FuzzParseExpr(f *testing.F) {
	for _, s := range []string{
		"a = 1 AND ts >= '2026-01-01' AND name IS NOT NULL",
		"year = 2020 OR (month >= 2 AND NOT day IN (1, 2, 3))",
		"upper(name) LIKE 'A%' AND x + 2 * y < 10 / z",
		"CAST(a AS DECIMAL(38, 2)) BETWEEN -1 AND 9223372036854775807",
		"`weird col` <=> NULL",
		"a = -(-(-(-(-(1)))))",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := expr.Parse(s)
		if err != nil {
			if !errors.Is(err, expr.ErrSyntax) && !errors.Is(err, expr.ErrUnknownFunction) {
				t.Fatalf("Parse(%q): untyped error: %v", s, err)
			}
			return
		}
		_ = expr.Eval(e, dummyRow)
		if _, err := expr.EvalValue(e, dummyRow); err != nil && !typed(err) {
			t.Fatalf("EvalValue(%q): untyped error: %v", s, err)
		}
		if _, err := expr.Parse(e.String()); err != nil {
			t.Fatalf("%q prints as %q, which does not parse: %v", s, e.String(), err)
		}
	})
}

func FuzzParseStats(f *testing.F) {
	sch, err := schema.ParseDDL("id BIGINT, name STRING, d DATE, ts TIMESTAMP, x DECIMAL(10,2), s STRUCT<a: INT, b: DOUBLE>")
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		`{"numRecords":3,"minValues":{"id":1,"name":"a","d":"2024-01-01","ts":"2024-01-01T00:00:00.000Z","x":1.25,"s":{"a":1,"b":2.5}},"maxValues":{"id":9},"nullCount":{"id":0,"s":{"a":1}}}`,
		`{"numRecords":-1}`,
		`{"numRecords":1,"tightBounds":false,"minValues":{"x":"NaN"}}`,
		`{}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if _, err := expr.ParseStats(s, sch, schema.ColumnMappingMode("none")); err != nil && !typed(err) {
			t.Fatalf("untyped error: %v", err)
		}
	})
}

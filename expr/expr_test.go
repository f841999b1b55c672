package expr

import (
	"errors"
	"testing"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
)

func TestParseAndEval(t *testing.T) {
	cols := map[string]struct {
		t schema.DataType
		v schema.Value
	}{
		"x":    {schema.Integer, schema.IntegerValue(5)},
		"s":    {schema.String, schema.StringValue("2")},
		"d":    {schema.Date, schema.DateValue(19000)}, // 2022-01-08
		"n":    {schema.Long, schema.Value{}},
		"name": {schema.String, schema.StringValue("it's")},
	}
	lookup := func(c string) (schema.DataType, schema.Value, bool) {
		v, ok := cols[c]
		return v.t, v.v, ok
	}
	for _, tc := range []struct {
		text string
		want Tri
	}{
		{"x = 5", True}, {"x <> 5", False}, {"x < 5.5", True}, {"x >= 6", False},
		{"s = 2", True}, {"s > 1 AND x <= 5", True},
		{"d = '2022-01-08'", True}, {"d < DATE '2022-01-01'", False},
		{"n IS NULL", True}, {"n IS NOT NULL", False}, {"n = 1", Unknown},
		{"n = 1 OR x = 5", True}, {"n = 1 AND x = 5", Unknown}, {"n = 1 AND x = 4", False},
		{"x IN (1, 5)", True}, {"x NOT IN (1, 2)", True}, {"n IN (1)", Unknown},
		{"NOT (x = 5)", False}, {"missing = 1", Unknown}, {"name = 'it''s'", True},
		{"`x` = 5", True},
	} {
		e, err := Parse(tc.text)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.text, err)
			continue
		}
		if got := Eval(e, lookup); got != tc.want {
			t.Errorf("%q = %v, want %v (parsed %s)", tc.text, got, tc.want, e)
		}
	}
	for _, bad := range []string{"", "x =", "x = 'open", "(x = 1", "x ! 1", "x IN 1", "x IS 3", "= 1"} {
		if _, err := Parse(bad); !errors.Is(err, ErrSyntax) || !errors.Is(err, deltaerr.ErrInvalidArgument) {
			t.Errorf("Parse(%q) err = %v, want ErrSyntax", bad, err)
		}
	}
}

package expr

import (
	"errors"
	"testing"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
)

// A predicate that is Unknown on every row by its form ("WHERE id" on a
// BIGINT, a date literal that is no date) is an error, not a scan that
// silently returns nothing.
func TestCheckPredicate(t *testing.T) {
	types := map[string]schema.DataType{
		"id": schema.Long, "name": schema.String, "d": schema.Date, "ts": schema.Timestamp,
		"ok": schema.Boolean, "amt": schema.DecimalType{Precision: 10, Scale: 2},
	}
	typeOf := func(c string) (schema.DataType, bool) { t, ok := types[c]; return t, ok }
	cases := []struct {
		pred string
		bad  bool
	}{
		{"id", true},
		{"name", true},
		{"ok", false},
		{"NOT ok AND id > 1", false},
		{"id > 1 AND name", true},
		{"1", true},
		{"'x'", true},
		{"TRUE", false},
		{"NULL", false},
		{"id + 1", true},
		{"d = '2026-13-45'", true},
		{"d = '2026-01-31'", false},
		{"ts >= '2026-01-01'", false},
		{"ts >= 'yesterday'", true},
		{"'not a date' < d", true},
		{"id = 'abc'", true},
		{"id = '12'", false},
		{"amt IN ('1.50', 'x')", true},
		{"name = 'anything'", false},
		{"ok = 'maybe'", true},
		{"isnull(id)", false},
		{"CAST(id AS BOOLEAN)", false},
		{"unknown_col", false}, // columns the caller does not know are its business
	}
	for _, tc := range cases {
		e, err := Parse(tc.pred)
		if err != nil {
			t.Fatalf("%s: %v", tc.pred, err)
		}
		err = CheckPredicate(e, typeOf)
		if got := err != nil; got != tc.bad {
			t.Errorf("%s: error %v, want an error: %v", tc.pred, err, tc.bad)
		}
		if err != nil && (!errors.Is(err, ErrNotPredicate) || !errors.Is(err, deltaerr.ErrInvalidArgument)) {
			t.Errorf("%s: %v is not ErrNotPredicate and ErrInvalidArgument", tc.pred, err)
		}
	}
}

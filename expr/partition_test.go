package expr

import (
	"testing"

	"github.com/godelta/delta/schema"
)

// A comparison with a NULL partition value is never TRUE, so the file is
// pruned; a term on a column the lookup does not know keeps it.
func TestExcludesPartition(t *testing.T) {
	nullK := func(c string) (schema.DataType, schema.Value, bool) {
		if c == "k" {
			return schema.String, schema.Value{}, true
		}
		return nil, schema.Value{}, false // a data column
	}
	kA := func(c string) (schema.DataType, schema.Value, bool) {
		if c == "k" {
			return schema.String, schema.StringValue("A"), true
		}
		return nil, schema.Value{}, false
	}
	cases := []struct {
		pred        string
		nullK, kIsA bool // excluded?
	}{
		{"k = 'A'", true, false},
		{"k != 'A'", true, true},
		{"k IN ('A', 'B')", true, false},
		{"k IS NULL", false, true},
		{"k IS NOT NULL", true, false},
		{"k = 'A' AND id > 1", true, false},
		{"id > 1 AND k = 'B'", true, true},
		{"k = 'A' OR id > 1", false, false}, // the OR depends on a data column
		{"NOT (k = 'A')", true, true},
		{"id > 1", false, false},
		{"coalesce(k, 'A') = 'A'", false, false},
	}
	for _, tc := range cases {
		e, err := Parse(tc.pred)
		if err != nil {
			t.Fatal(err)
		}
		if got := ExcludesPartition(e, nullK); got != tc.nullK {
			t.Errorf("%s on k NULL: excluded %v, want %v", tc.pred, got, tc.nullK)
		}
		if got := ExcludesPartition(e, kA); got != tc.kIsA {
			t.Errorf("%s on k = 'A': excluded %v, want %v", tc.pred, got, tc.kIsA)
		}
	}
}

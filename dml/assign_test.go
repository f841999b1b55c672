package dml_test

import (
	"errors"
	"testing"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/dml"
)

func TestParseAssignments(t *testing.T) {
	cases := []struct {
		in   string
		want []string // Assignment.String of each, or nil for an error
	}{
		{"a = 1", []string{"a = 1"}},
		{" a=1 , b = a + 2 ", []string{"a = 1", "b = (`a` + 2)"}},
		{"s = concat(s, ', x'), n = coalesce(n, 0)", []string{"s = concat(`s`, ', x')", "n = coalesce(`n`, 0)"}},
		{"`odd, name` = 'a=b'", []string{"`odd, name` = 'a=b'"}},
		{"f = if(n <= 3, 'lo', 'hi')", []string{"f = if(`n` <= 3, 'lo', 'hi')"}},
		{"b = n >= 3", []string{"b = `n` >= 3"}},
		{"it = 'it''s, ok'", []string{"it = 'it''s, ok'"}},
		{"", nil},
		{"a", nil},
		{"= 1", nil},
		{"a = 1,", nil},
	}
	for _, c := range cases {
		got, err := dml.ParseAssignments(c.in)
		if c.want == nil {
			if err == nil || !errors.Is(err, deltaerr.ErrInvalidArgument) {
				t.Errorf("%q: %v, want an error", c.in, got)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		var s []string
		for _, a := range got {
			s = append(s, a.String())
		}
		if len(s) != len(c.want) {
			t.Errorf("%q: %q, want %q", c.in, s, c.want)
			continue
		}
		for i := range s {
			if s[i] != c.want[i] {
				t.Errorf("%q: %q, want %q", c.in, s, c.want)
				break
			}
		}
	}
}

package expr

import (
	"testing"
)

func TestParseQualifiedNames(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"t.id = s.id", "t.id"},
		{"t.`a b` = s.x", "t.a b"},
		{"`t`.`a b` = s.x", "t.a b"},
		{"`t`.id = s.x", "t.id"},
		{"`t.id` = s.x", "t.id"},
	} {
		e, err := Parse(tc.in)
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		c := e.(Compare)
		if got := c.Left.(Column).Name; got != tc.want {
			t.Errorf("%s: left column %q, want %q", tc.in, got, tc.want)
		}
		if got := c.Right.(Column).Name; got != "s.id" && got != "s.x" {
			t.Errorf("%s: right column %q", tc.in, got)
		}
	}
	if _, err := Parse("`t`. = 1"); err == nil {
		t.Error("a dangling dot parsed")
	}
}

func TestMapColumns(t *testing.T) {
	e, err := Parse("t.a + 1 > s.b AND length(t.c) IN (1, t.d) AND CAST(t.e AS INT) IS NOT NULL AND NOT (-t.f < 0)")
	if err != nil {
		t.Fatal(err)
	}
	got, err := MapColumns(e, func(c Column) (Expr, error) {
		if len(c.Name) > 2 && c.Name[:2] == "t." {
			return Column{Name: c.Name[2:]}, nil
		}
		return Literal{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "((`a` + 1) > NULL) AND (length(`c`) IN (1, `d`)) AND (CAST(`e` AS INT) IS NOT NULL) AND (NOT (-(`f`) < 0))"
	if got.String() != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

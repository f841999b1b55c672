package expr

import (
	"errors"
	"strings"
	"testing"
)

// SQL comments are skipped as Spark SQL's lexer skips them: -- to the end
// of the line (a backslash before the line end continues it), /* ... */
// nested. Before, "a = 1 -- note" parsed as a = 1 - (-note), a column
// named note. (Issue 30, item 11.)
func TestParseComments(t *testing.T) {
	for _, tc := range []struct{ text, same string }{
		{"a = 1 -- the first", "a = 1"},
		{"a = 1 --", "a = 1"},
		{"a = 1--1", "a = 1"},
		{"-- leading\na = 1", "a = 1"},
		{"a = 1 -- note\r\nAND b = 2", "a = 1 AND b = 2"},
		{"a = 1 -- note \\\n AND b = 2", "a = 1"},
		{"a = /* one */ 1", "a = 1"},
		{"a = 1/**/", "a = 1"},
		{"a/**/= 1", "a = 1"},
		{"/* a /* nested */ still comment */ a = 1", "a = 1"},
		{"a = 1 /* -- inside */ AND b = 2", "a = 1 AND b = 2"},
		{"a = 1 -- /* not opened\nAND b = 2", "a = 1 AND b = 2"},
		{"s = '-- /* */'", "s = '-- /* */'"},
		{"`a--b` = 1", "`a--b` = 1"},
		{"a - -1 = 0", "a - (-1) = 0"},
		{"a * 2 / 3 = 0", "(a * 2) / 3 = 0"},
	} {
		got, err := Parse(tc.text)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.text, err)
			continue
		}
		want, err := Parse(tc.same)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.same, err)
		}
		if got.String() != want.String() {
			t.Errorf("Parse(%q) = %s, want %s", tc.text, got, want)
		}
	}
	for _, tc := range []struct{ text, want string }{
		{"a = 1 /* open", "unclosed /* comment"},
		{"a = 1 /* a /* b */", "unclosed /* comment"},
		{"a = 1 /*+ BROADCAST(t) */", "hint"},
		{"-- only a comment", "at end"},
	} {
		_, err := Parse(tc.text)
		if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want ErrSyntax with %q", tc.text, err, tc.want)
		}
	}
}

package actions

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/godelta/delta/deltaerr"
)

// zeros is an endless stream of NUL bytes: a sparse file of any size.
type zeros struct{ n int64 }

func (z *zeros) Read(p []byte) (int, error) {
	clear(p)
	z.n += int64(len(p))
	return len(p), nil
}

func TestReadActions(t *testing.T) {
	add := `{"add":{"path":"a","partitionValues":{},"size":1,"modificationTime":1,"dataChange":true}}`
	long := `{"commitInfo":{"operation":"` + strings.Repeat("x", 200<<10) + `"}}`
	cases := []struct {
		name    string
		in      string
		maxLine int
		want    int    // actions decoded
		wantErr string // "" for none; else a substring of the ErrCorrupt error
	}{
		{name: "empty", in: "", want: 0},
		{name: "one line, no newline", in: add, want: 1},
		{name: "blank lines and CRLF", in: "\n" + add + "\r\n\n  \n" + add + "\n", want: 2},
		{name: "unknown kind skipped", in: `{"future":{}}` + "\n" + add, want: 1},
		{name: "a line longer than the buffer", in: add + "\n" + long + "\n" + add, want: 3},
		{name: "a line over the cap", in: add + "\n" + long, maxLine: 100 << 10, wantErr: "line 2 is longer than 102400 bytes"},
		{name: "NUL bytes after the last line", in: add + "\n\x00\x00\x00", wantErr: "line 2 is not a valid action: it does not start with '{'"},
		{name: "not JSON", in: add + "\n{oops}\n", wantErr: "line 2 is not a valid action"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			maxLine := tc.maxLine
			if maxLine == 0 {
				maxLine = MaxLineBytes
			}
			// Whole, and one byte at a time, so that every line spans reads.
			for _, r := range []io.Reader{strings.NewReader(tc.in), iotest.OneByteReader(strings.NewReader(tc.in))} {
				n := 0
				err := readActions("c.json", r, maxLine, func(*Action) error { n++; return nil })
				if tc.wantErr == "" {
					if err != nil || n != tc.want {
						t.Errorf("got %d actions, %v; want %d, no error", n, err, tc.want)
					}
					continue
				}
				if !errors.Is(err, deltaerr.ErrCorrupt) || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "c.json") {
					t.Errorf("error = %v, want ErrCorrupt naming c.json with %q", err, tc.wantErr)
				}
			}
			// The same bytes through EachAction decode alike.
			if tc.maxLine == 0 {
				n := 0
				err := EachAction("c.json", []byte(tc.in), func(*Action) error { n++; return nil })
				if (err == nil) != (tc.wantErr == "") || (err == nil && n != tc.want) {
					t.Errorf("EachAction: %d actions, %v", n, err)
				}
			}
		})
	}
}

// TestReadActionsEndless checks that an endless stream of NUL bytes (a
// huge sparse commit file) is refused at its first bytes, and that an
// endless line of spaces is refused at the cap, not read on.
func TestReadActionsEndless(t *testing.T) {
	z := &zeros{}
	err := ReadActions("c.json", z, func(*Action) error { return nil })
	if !errors.Is(err, deltaerr.ErrCorrupt) {
		t.Fatalf("error = %v, want ErrCorrupt", err)
	}
	if z.n > 1<<20 {
		t.Errorf("read %d bytes of NULs before refusing them", z.n)
	}
	endless := io.MultiReader(strings.NewReader(`{"a":"`), &repeat{b: 'x'})
	err = readActions("c.json", endless, 1<<20, func(*Action) error { return nil })
	if !errors.Is(err, deltaerr.ErrCorrupt) || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("endless line: error = %v, want ErrCorrupt, longer than the cap", err)
	}
}

type repeat struct{ b byte }

func (r *repeat) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = r.b
	}
	return len(p), nil
}

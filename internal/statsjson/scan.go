package statsjson

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/godelta/delta/deltaerr"
)

// ErrInvalid marks a stats string that is not well-formed JSON, whose top
// level is not an object, or that is nested deeper than MaxDepth; it
// matches deltaerr.ErrCorrupt too.
var ErrInvalid = fmt.Errorf("invalid stats: %w", deltaerr.ErrCorrupt)

// MaxDepth bounds the nesting of objects and arrays a Scanner accepts, so
// that hostile input cannot exhaust the stack.
const MaxDepth = 1000

// Names of the top-level members. They are part of the on-disk format
// shared with every Delta implementation and must never change.
const (
	KeyNumRecords  = "numRecords"
	KeyMinValues   = "minValues"
	KeyMaxValues   = "maxValues"
	KeyNullCount   = "nullCount"
	KeyTightBounds = "tightBounds"
)

// Kind is the JSON type of a value.
type Kind uint8

// The kinds of JSON values.
const (
	Null Kind = iota
	Bool
	Number
	String
	Object
	Array
)

// Scanner reads one JSON text. A Scanner is used by one goroutine.
type Scanner struct {
	s string
	i int
}

// NewScanner returns a Scanner of the stats string raw. Keep it in a
// variable (it is used through its address) and read it with Fields.
func NewScanner(raw string) Scanner { return Scanner{s: raw} }

// Fields reads the stats string, a JSON object, calling member for each
// top-level key with the Scanner at the member's value, which member must
// consume (Scalar, Skip or Object at depth 1). An empty (or blank) string
// has no members and is no error. Malformed JSON, a top level that is not
// an object, or data after it give an error matching ErrInvalid; an error
// member returns is returned as it is.
func (p *Scanner) Fields(member func(key string) error) error {
	p.ws()
	if p.i == len(p.s) {
		return nil
	}
	if p.s[p.i] != '{' {
		return p.errorf("stats are not a JSON object")
	}
	if err := p.Object(1, member); err != nil {
		return err
	}
	p.ws()
	if p.i != len(p.s) {
		return p.errorf("data after the stats object")
	}
	return nil
}

// Count parses text, a JSON number, as a count: a non-negative integer
// that fits an int64. ok is false for anything else.
func Count(k Kind, text string) (n int64, ok bool) {
	if k != Number {
		return 0, false
	}
	n, err := strconv.ParseInt(text, 10, 64)
	return n, err == nil && n >= 0
}

// NumRecords reads the numRecords member of the stats string raw and skips
// the rest. ok is false when raw is empty or has no numRecords that is a
// non-negative integer of int64 range; err matches ErrInvalid when raw is
// not a JSON object.
func NumRecords(raw string) (n int64, ok bool, err error) {
	p := NewScanner(raw)
	err = p.Fields(func(key string) error {
		if key != KeyNumRecords {
			return p.Skip(1)
		}
		k, text, _, err := p.Scalar(1)
		if c, valid := Count(k, text); valid {
			n, ok = c, true // the last valid one wins, as in expr
		}
		return err
	})
	if err != nil {
		return 0, false, err
	}
	return n, ok, nil
}

func (p *Scanner) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s at offset %d", ErrInvalid, fmt.Sprintf(format, args...), p.i)
}

func (p *Scanner) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// AtObject skips white space and reports whether the next value is an
// object.
func (p *Scanner) AtObject() bool {
	p.ws()
	return p.i < len(p.s) && p.s[p.i] == '{'
}

// Object reads an object at nesting depth depth, calling member for each
// key with the scanner at the member's value, which member must consume.
func (p *Scanner) Object(depth int, member func(key string) error) error {
	if depth > MaxDepth {
		return p.errorf("nested too deeply")
	}
	p.ws()
	if p.i >= len(p.s) || p.s[p.i] != '{' {
		return p.errorf("want an object")
	}
	p.i++
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return nil
	}
	for {
		p.ws()
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return p.errorf("want a key")
		}
		key, _, err := p.str()
		if err != nil {
			return err
		}
		p.ws()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return p.errorf("want ':'")
		}
		p.i++
		if err := member(key); err != nil {
			return err
		}
		p.ws()
		if p.i >= len(p.s) {
			return p.errorf("unterminated object")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return nil
		default:
			return p.errorf("want ',' or '}'")
		}
	}
}

// Scalar reads a scalar, returning its kind and text (the decoded string,
// or the literal text of a number or boolean) and, for strings, the offset
// in the text of the first lone surrogate or invalid UTF-8 byte, or -1. An
// object or array is skipped and only its kind returned.
func (p *Scanner) Scalar(depth int) (k Kind, text string, cut int, err error) {
	p.ws()
	if p.i >= len(p.s) {
		return 0, "", -1, p.errorf("want a value")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return Object, "", -1, p.Skip(depth)
	case c == '[':
		return Array, "", -1, p.Skip(depth)
	case c == '"':
		text, cut, err = p.str()
		return String, text, cut, err
	case c == 't':
		return Bool, "true", -1, p.word("true")
	case c == 'f':
		return Bool, "false", -1, p.word("false")
	case c == 'n':
		return Null, "", -1, p.word("null")
	case c == '-' || c >= '0' && c <= '9':
		text, err = p.number()
		return Number, text, -1, err
	}
	return 0, "", -1, p.errorf("unexpected %q", p.s[p.i])
}

// Skip reads and discards one value of any kind.
func (p *Scanner) Skip(depth int) error {
	if depth > MaxDepth {
		return p.errorf("nested too deeply")
	}
	p.ws()
	if p.i >= len(p.s) {
		return p.errorf("want a value")
	}
	switch p.s[p.i] {
	case '{':
		return p.Object(depth+1, func(string) error { return p.Skip(depth + 1) })
	case '[':
		p.i++
		p.ws()
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			return nil
		}
		for {
			if err := p.Skip(depth + 1); err != nil {
				return err
			}
			p.ws()
			if p.i >= len(p.s) {
				return p.errorf("unterminated array")
			}
			switch p.s[p.i] {
			case ',':
				p.i++
			case ']':
				p.i++
				return nil
			default:
				return p.errorf("want ',' or ']'")
			}
		}
	}
	_, _, _, err := p.Scalar(depth)
	return err
}

func (p *Scanner) word(w string) error {
	if !strings.HasPrefix(p.s[p.i:], w) {
		return p.errorf("bad literal")
	}
	p.i += len(w)
	return nil
}

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func (p *Scanner) number() (string, error) {
	start := p.i
	if p.i < len(p.s) && p.s[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.i < len(p.s) && p.s[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		return "", p.errorf("bad number")
	}
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return "", p.errorf("bad number")
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return "", p.errorf("bad number")
		}
	}
	return p.s[start:p.i], nil
}

// str reads a string at p.s[p.i] == '"'. It returns the decoded text (a
// substring of the input when there are no escapes) and the offset in it
// of the first lone surrogate escape or invalid UTF-8 byte, or -1.
func (p *Scanner) str() (string, int, error) {
	start := p.i + 1
	cut := -1
	for i := start; i < len(p.s); {
		c := p.s[i]
		switch {
		case c == '"':
			p.i = i + 1
			return p.s[start:i], cut, nil
		case c == '\\':
			return p.strEscaped(start, i, cut)
		case c < 0x20:
			p.i = i
			return "", -1, p.errorf("control character in string")
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRuneInString(p.s[i:])
			if r == utf8.RuneError && size == 1 && cut < 0 {
				cut = i - start
			}
			i += size
		}
	}
	p.i = len(p.s)
	return "", -1, p.errorf("unterminated string")
}

// strEscaped continues str from the first backslash at i.
func (p *Scanner) strEscaped(start, i, cut int) (string, int, error) {
	b := make([]byte, 0, i-start+16)
	b = append(b, p.s[start:i]...)
	for i < len(p.s) {
		c := p.s[i]
		switch {
		case c == '"':
			p.i = i + 1
			return string(b), cut, nil
		case c < 0x20:
			p.i = i
			return "", -1, p.errorf("control character in string")
		case c == '\\':
			if i+1 >= len(p.s) {
				p.i = i
				return "", -1, p.errorf("unterminated string")
			}
			e := p.s[i+1]
			i += 2
			switch e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r, ok := hex4(p.s, i)
				if !ok {
					p.i = i
					return "", -1, p.errorf("bad \\u escape")
				}
				i += 4
				if r >= 0xD800 && r < 0xDC00 && i+1 < len(p.s) && p.s[i] == '\\' && p.s[i+1] == 'u' {
					if r2, ok := hex4(p.s, i+2); ok && r2 >= 0xDC00 && r2 < 0xE000 {
						i += 6
						b = utf8.AppendRune(b, 0x10000+(r-0xD800)<<10+(r2-0xDC00))
						continue
					}
				}
				if r >= 0xD800 && r < 0xE000 {
					if cut < 0 {
						cut = len(b)
					}
					r = utf8.RuneError
				}
				b = utf8.AppendRune(b, r)
			default:
				p.i = i - 2
				return "", -1, p.errorf("bad escape")
			}
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, size := utf8.DecodeRuneInString(p.s[i:])
			if r == utf8.RuneError && size == 1 && cut < 0 {
				cut = len(b)
			}
			b = append(b, p.s[i:i+size]...)
			i += size
		}
	}
	p.i = len(p.s)
	return "", -1, p.errorf("unterminated string")
}

func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

package expr

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/godelta/delta/schema"
)

// Parse reads a predicate in SQL-like text:
//
//	a = 1 AND ts >= '2026-01-01' AND name IS NOT NULL
//	x IN (1, 2, 3) OR NOT (y < 10.5)
//
// Columns are bare names (letters, digits, '_' and '.') or `back-quoted`.
// Literals are integers, decimals, 'quoted strings' (” escapes a quote),
// TRUE, FALSE and NULL; DATE '...', TIMESTAMP '...' and TIMESTAMP_NTZ '...'
// are read as text and take the type of the column they are compared with.
// Keywords are case-insensitive. Precedence: NOT, then AND, then OR.
func Parse(text string) (Expr, error) {
	toks, err := lex(text)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	e, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.pos < len(p.toks) {
		return nil, p.errorf("unexpected %q", p.toks[p.pos].text)
	}
	return e, nil
}

type tokKind int

const (
	tIdent tokKind = iota
	tNumber
	tString
	tOp
	tPunct
)

type token struct {
	kind tokKind
	text string
	pos  int
}

func lex(s string) ([]token, error) {
	var out []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(' || c == ')' || c == ',':
			out = append(out, token{tPunct, string(c), i})
			i++
		case c == '=' || c == '<' || c == '>' || c == '!':
			j := i + 1
			if j < len(s) && (s[j] == '=' || (c == '<' && s[j] == '>')) {
				j++
			}
			op := s[i:j]
			if op == "!" {
				return nil, fmt.Errorf("%w at %d: lone '!'", ErrSyntax, i)
			}
			if op == "<>" {
				op = "!="
			}
			out = append(out, token{tOp, op, i})
			i = j
		case c == '\'':
			var b strings.Builder
			j := i + 1
			for {
				if j >= len(s) {
					return nil, fmt.Errorf("%w at %d: unterminated string", ErrSyntax, i)
				}
				if s[j] == '\'' {
					if j+1 < len(s) && s[j+1] == '\'' {
						b.WriteByte('\'')
						j += 2
						continue
					}
					break
				}
				b.WriteByte(s[j])
				j++
			}
			out = append(out, token{tString, b.String(), i})
			i = j + 1
		case c == '`':
			var b strings.Builder
			j := i + 1
			for {
				if j >= len(s) {
					return nil, fmt.Errorf("%w at %d: unterminated `name`", ErrSyntax, i)
				}
				if s[j] == '`' {
					if j+1 < len(s) && s[j+1] == '`' {
						b.WriteByte('`')
						j += 2
						continue
					}
					break
				}
				b.WriteByte(s[j])
				j++
			}
			out = append(out, token{tIdent, b.String(), i})
			i = j + 1
		case c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9'):
			j := i + 1
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.' || s[j] == 'e' || s[j] == 'E' ||
				((s[j] == '-' || s[j] == '+') && (s[j-1] == 'e' || s[j-1] == 'E'))) {
				j++
			}
			out = append(out, token{tNumber, s[i:j], i})
			i = j
		case c == '_' || c < 0x80 && unicode.IsLetter(rune(c)):
			j := i + 1
			for j < len(s) && (s[j] == '_' || s[j] == '.' || s[j] < 0x80 && (unicode.IsLetter(rune(s[j])) || unicode.IsDigit(rune(s[j])))) {
				j++
			}
			out = append(out, token{tIdent, s[i:j], i})
			i = j
		default:
			return nil, fmt.Errorf("%w at %d: unexpected character %q", ErrSyntax, i, c)
		}
	}
	return out, nil
}

type parser struct {
	toks []token
	pos  int
}

func (p *parser) errorf(format string, args ...any) error {
	at := "end"
	if p.pos < len(p.toks) {
		at = strconv.Itoa(p.toks[p.pos].pos)
	}
	return fmt.Errorf("%w at %s: %s", ErrSyntax, at, fmt.Sprintf(format, args...))
}

func (p *parser) peekKeyword(kw string) bool {
	return p.pos < len(p.toks) && p.toks[p.pos].kind == tIdent && strings.EqualFold(p.toks[p.pos].text, kw)
}

func (p *parser) keyword(kw string) bool {
	if p.peekKeyword(kw) {
		p.pos++
		return true
	}
	return false
}

func (p *parser) punct(s string) bool {
	if p.pos < len(p.toks) && p.toks[p.pos].kind == tPunct && p.toks[p.pos].text == s {
		p.pos++
		return true
	}
	return false
}

func (p *parser) or() (Expr, error) {
	left, err := p.and()
	if err != nil {
		return nil, err
	}
	terms := []Expr{left}
	for p.keyword("OR") {
		e, err := p.and()
		if err != nil {
			return nil, err
		}
		terms = append(terms, e)
	}
	if len(terms) == 1 {
		return left, nil
	}
	return Or{Terms: terms}, nil
}

func (p *parser) and() (Expr, error) {
	left, err := p.not()
	if err != nil {
		return nil, err
	}
	terms := []Expr{left}
	for p.keyword("AND") {
		e, err := p.not()
		if err != nil {
			return nil, err
		}
		terms = append(terms, e)
	}
	if len(terms) == 1 {
		return left, nil
	}
	return And{Terms: terms}, nil
}

func (p *parser) not() (Expr, error) {
	if p.keyword("NOT") {
		e, err := p.not()
		if err != nil {
			return nil, err
		}
		return Not{Value: e}, nil
	}
	return p.predicate()
}

func (p *parser) predicate() (Expr, error) {
	if p.punct("(") {
		e, err := p.or()
		if err != nil {
			return nil, err
		}
		if !p.punct(")") {
			return nil, p.errorf("missing ')'")
		}
		return e, nil
	}
	left, err := p.operand()
	if err != nil {
		return nil, err
	}
	switch {
	case p.keyword("IS"):
		neg := p.keyword("NOT")
		if !p.keyword("NULL") {
			return nil, p.errorf("want NULL after IS")
		}
		return IsNull{Value: left, Negate: neg}, nil
	case p.peekKeyword("NOT") || p.peekKeyword("IN"):
		neg := p.keyword("NOT")
		if !p.keyword("IN") {
			return nil, p.errorf("want IN")
		}
		if !p.punct("(") {
			return nil, p.errorf("want '(' after IN")
		}
		var list []Expr
		for {
			e, err := p.operand()
			if err != nil {
				return nil, err
			}
			list = append(list, e)
			if p.punct(")") {
				break
			}
			if !p.punct(",") {
				return nil, p.errorf("want ',' or ')' in IN list")
			}
		}
		return In{Value: left, List: list, Negate: neg}, nil
	}
	if p.pos >= len(p.toks) || p.toks[p.pos].kind != tOp {
		return nil, p.errorf("want a comparison operator")
	}
	op := Op(p.toks[p.pos].text)
	p.pos++
	right, err := p.operand()
	if err != nil {
		return nil, err
	}
	return Compare{Op: op, Left: left, Right: right}, nil
}

func (p *parser) operand() (Expr, error) {
	if p.pos >= len(p.toks) {
		return nil, p.errorf("want a column or literal")
	}
	t := p.toks[p.pos]
	p.pos++
	switch t.kind {
	case tString:
		return Literal{Value: schema.StringValue(t.text), Text: t.text, IsText: true}, nil
	case tNumber:
		if i, err := strconv.ParseInt(t.text, 10, 64); err == nil {
			return Literal{Value: schema.LongValue(i)}, nil
		}
		f, err := strconv.ParseFloat(t.text, 64)
		if err != nil {
			p.pos--
			return nil, p.errorf("bad number %q", t.text)
		}
		return Literal{Value: schema.DoubleValue(f), Text: t.text}, nil
	case tIdent:
		switch strings.ToUpper(t.text) {
		case "TRUE":
			return Literal{Value: schema.BooleanValue(true)}, nil
		case "FALSE":
			return Literal{Value: schema.BooleanValue(false)}, nil
		case "NULL":
			return Literal{}, nil
		case "DATE", "TIMESTAMP", "TIMESTAMP_NTZ":
			if p.pos < len(p.toks) && p.toks[p.pos].kind == tString {
				s := p.toks[p.pos].text
				p.pos++
				return Literal{Value: schema.StringValue(s), Text: s, IsText: true}, nil
			}
		}
		return Column{Name: t.text}, nil
	}
	p.pos--
	return nil, p.errorf("unexpected %q", t.text)
}

package expr

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/godelta/delta/schema"
)

// Parse reads a predicate or a value expression in SQL-like text:
//
//	a = 1 AND ts >= '2026-01-01' AND name IS NOT NULL
//	x IN (1, 2, 3) OR NOT (y < 10.5)
//	length(name) < 10 AND price * qty <= 1000
//	CAST(ts AS DATE), date_format(ts, 'yyyy-MM'), -(a + b) % 7
//
// Columns are bare names (letters, digits, '_' and '.') or `back-quoted`
// (a back-quoted name is always a column, never a keyword or a function);
// a dotted name may quote its parts (t.`a b`, `t`.`a b`, `t`.x name the
// column "t.a b", "t.a b" and "t.x").
// Literals are integers, decimals, 'quoted strings' (” escapes a quote),
// TRUE, FALSE and NULL; DATE '...', TIMESTAMP '...' and TIMESTAMP_NTZ '...'
// are read as text and take the type of the value they are compared with.
// A minus before a number is part of the literal. name(args) calls one of
// Functions; CAST(x AS type) takes Spark's type names (TINYINT or BYTE,
// SMALLINT or SHORT, INT or INTEGER, BIGINT or LONG, FLOAT or REAL, DOUBLE,
// DECIMAL[(p[,s])], STRING, BINARY, BOOLEAN, DATE, TIMESTAMP,
// TIMESTAMP_NTZ). Keywords and function names are case-insensitive.
//
// Comments are skipped as Spark SQL skips them: -- to the end of the line,
// and /* ... */, which nest; /*+ (a hint) and an unclosed /* are errors.
// Inside a 'string' or a `name` they are text.
//
// Precedence, tightest first: unary minus; * / %; + -; comparisons, IS
// [NOT] NULL and [NOT] IN; NOT; AND; OR. An unknown function is
// ErrUnknownFunction; every other error is ErrSyntax.
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
	tArith  // + - * / %
	tQuoted // a `back-quoted` name
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
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			i = lineCommentEnd(s, i)
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			end, err := blockCommentEnd(s, i)
			if err != nil {
				return nil, err
			}
			i = end
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
			out = append(out, token{tQuoted, b.String(), i})
			i = j + 1
		case c == '-' || c == '+' || c == '*' || c == '/' || c == '%':
			out = append(out, token{tArith, string(c), i})
			i++
		case c == '.' || (c >= '0' && c <= '9'):
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

// lineCommentEnd returns the end of the -- comment at s[i]: the line end
// (or the end of s), as Spark SQL's lexer reads one: a backslash right
// before a line feed continues the comment on the next line.
func lineCommentEnd(s string, i int) int {
	j := i + 2
	for j < len(s) {
		switch {
		case s[j] == '\\' && j+1 < len(s) && s[j+1] == '\n':
			j += 2
			continue
		case s[j] == '\n' || s[j] == '\r':
			return j
		}
		j++
	}
	return j
}

// blockCommentEnd returns the index after the /* */ comment at s[i]. As
// in Spark SQL, comments nest (each /* needs its */) and one left open is
// an error; /*+ opens an optimizer hint, not a comment, which has no place
// in an expression.
func blockCommentEnd(s string, i int) (int, error) {
	opens := func(j int) bool {
		return strings.HasPrefix(s[j:], "/*") && !strings.HasPrefix(s[j:], "/*+")
	}
	if !opens(i) {
		return 0, fmt.Errorf("%w at %d: /*+ opens an optimizer hint, not a comment, and a hint has no place in an expression", ErrSyntax, i)
	}
	depth := 0
	for j := i; j < len(s); {
		switch {
		case opens(j):
			depth++
			j += 2
		case strings.HasPrefix(s[j:], "*/"):
			depth--
			j += 2
			if depth == 0 {
				return j, nil
			}
		default:
			j++
		}
	}
	return 0, fmt.Errorf("%w at %d: unclosed /* comment", ErrSyntax, i)
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

// predicate is a value, optionally followed by a comparison, IS [NOT]
// NULL or [NOT] IN; a value alone is a predicate when it is a boolean.
func (p *parser) predicate() (Expr, error) {
	left, err := p.additive()
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
			e, err := p.additive()
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
		return left, nil
	}
	op := Op(p.toks[p.pos].text)
	p.pos++
	right, err := p.additive()
	if err != nil {
		return nil, err
	}
	return Compare{Op: op, Left: left, Right: right}, nil
}

// arithOp consumes one of the operators in ops.
func (p *parser) arithOp(ops string) (ArithOp, bool) {
	if p.pos < len(p.toks) && p.toks[p.pos].kind == tArith && strings.Contains(ops, p.toks[p.pos].text) {
		p.pos++
		return ArithOp(p.toks[p.pos-1].text), true
	}
	return "", false
}

func (p *parser) additive() (Expr, error) {
	left, err := p.multiplicative()
	if err != nil {
		return nil, err
	}
	for {
		op, ok := p.arithOp("+-")
		if !ok {
			return left, nil
		}
		right, err := p.multiplicative()
		if err != nil {
			return nil, err
		}
		left = Arith{Op: op, Left: left, Right: right}
	}
}

func (p *parser) multiplicative() (Expr, error) {
	left, err := p.unary()
	if err != nil {
		return nil, err
	}
	for {
		op, ok := p.arithOp("*/%")
		if !ok {
			return left, nil
		}
		right, err := p.unary()
		if err != nil {
			return nil, err
		}
		left = Arith{Op: op, Left: left, Right: right}
	}
}

func (p *parser) unary() (Expr, error) {
	op, ok := p.arithOp("+-")
	if !ok {
		return p.primary()
	}
	if op == Sub && p.pos < len(p.toks) && p.toks[p.pos].kind == tNumber {
		p.pos++
		return p.number("-"+p.toks[p.pos-1].text, p.pos-1)
	}
	e, err := p.unary()
	if err != nil || op == Add {
		return e, err
	}
	return Neg{Value: e}, nil
}

// number reads a numeric literal as Spark SQL types it: an integer that
// fits a long is a long (EvalValue narrows it to INT where it fits); any
// other number without an exponent, a fraction or an integer beyond a long,
// is an exact DECIMAL of the narrowest precision that holds it, so that it
// compares exactly with decimal and integer columns; a number with an
// exponent (1.5e3) is a DOUBLE. A decimal of more than 38 digits is an
// error, as in Spark.
func (p *parser) number(text string, at int) (Expr, error) {
	if i, err := strconv.ParseInt(text, 10, 64); err == nil {
		return Literal{Value: schema.LongValue(i), Text: text}, nil
	}
	if !strings.ContainsAny(text, "eE") {
		v, ok := decimalLiteral(text)
		switch {
		case !plainNumber(text):
		case !ok:
			p.pos = at
			return nil, p.errorf("number %q does not fit a DECIMAL(%d)", text, schema.MaxDecimalPrecision)
		default:
			return Literal{Value: v, Text: text}, nil
		}
	} else if f, err := strconv.ParseFloat(text, 64); err == nil {
		return Literal{Value: schema.DoubleValue(f), Text: text}, nil
	}
	p.pos = at
	return nil, p.errorf("bad number %q", text)
}

// plainNumber reports whether s is [-]digits[.digits] with at least one
// digit.
func plainNumber(s string) bool {
	s = strings.TrimPrefix(s, "-")
	digits, dots := 0, 0
	for i := range len(s) {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			dots++
		default:
			return false
		}
	}
	return digits > 0 && dots <= 1
}

func (p *parser) primary() (Expr, error) {
	if p.pos >= len(p.toks) {
		return nil, p.errorf("want a column or literal")
	}
	t := p.toks[p.pos]
	p.pos++
	switch t.kind {
	case tPunct:
		if t.text != "(" {
			break
		}
		e, err := p.or()
		if err != nil {
			return nil, err
		}
		if !p.punct(")") {
			return nil, p.errorf("missing ')'")
		}
		return e, nil
	case tQuoted:
		return Column{Name: p.qualified(t.text)}, nil
	case tString:
		return Literal{Value: schema.StringValue(t.text), Text: t.text, IsText: true}, nil
	case tNumber:
		return p.number(t.text, p.pos-1)
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
		case "CAST":
			if p.punct("(") {
				return p.cast()
			}
		}
		if p.punct("(") {
			return p.call(t)
		}
		if strings.HasSuffix(t.text, ".") && p.pos < len(p.toks) && p.toks[p.pos].kind == tQuoted {
			// t.`a b`: a qualified name whose last part is quoted.
			p.pos++
			return Column{Name: p.qualified(t.text + p.toks[p.pos-1].text)}, nil
		}
		return Column{Name: t.text}, nil
	}
	p.pos--
	return nil, p.errorf("unexpected %q", t.text)
}

// qualified reads the rest of a dotted name after its first part, name:
// `t`.`a b` and `t`.x are the column "t.a b" and "t.x", as `t.a b` is.
// Qualified names are how a MERGE condition names the target and source
// sides (t.id = s.id).
func (p *parser) qualified(name string) string {
	for p.pos+1 < len(p.toks) && p.toks[p.pos].kind == tNumber && p.toks[p.pos].text == "." &&
		(p.toks[p.pos+1].kind == tQuoted || p.toks[p.pos+1].kind == tIdent) {
		name += "." + p.toks[p.pos+1].text
		p.pos += 2
	}
	return name
}

// call reads the arguments of a function call, after the '('.
func (p *parser) call(name token) (Expr, error) {
	var args []Expr
	if !p.punct(")") {
		for {
			e, err := p.or()
			if err != nil {
				return nil, err
			}
			args = append(args, e)
			if p.punct(")") {
				break
			}
			if !p.punct(",") {
				return nil, p.errorf("want ',' or ')' in the arguments of %s", name.text)
			}
		}
	}
	if _, err := lookupFunction(name.text, len(args)); err != nil {
		if errors.Is(err, ErrUnknownFunction) {
			return nil, fmt.Errorf("%w (at %d)", err, name.pos)
		}
		return nil, fmt.Errorf("%w at %d: %s", ErrSyntax, name.pos, strings.TrimPrefix(err.Error(), ErrEval.Error()+": "))
	}
	return Call{Name: strings.ToLower(name.text), Args: args}, nil
}

// cast reads the rest of CAST(x AS type), after the '('.
func (p *parser) cast() (Expr, error) {
	e, err := p.or()
	if err != nil {
		return nil, err
	}
	if !p.keyword("AS") {
		return nil, p.errorf("want AS in CAST")
	}
	if p.pos >= len(p.toks) || p.toks[p.pos].kind != tIdent {
		return nil, p.errorf("want a type name")
	}
	name := strings.ToUpper(p.toks[p.pos].text)
	p.pos++
	var to schema.DataType
	switch name {
	case "TINYINT", "BYTE":
		to = schema.Byte
	case "SMALLINT", "SHORT":
		to = schema.Short
	case "INT", "INTEGER":
		to = schema.Integer
	case "BIGINT", "LONG":
		to = schema.Long
	case "FLOAT", "REAL":
		to = schema.Float
	case "DOUBLE":
		to = schema.Double
	case "STRING":
		to = schema.String
	case "BINARY":
		to = schema.Binary
	case "BOOLEAN":
		to = schema.Boolean
	case "DATE":
		to = schema.Date
	case "TIMESTAMP":
		to = schema.Timestamp
	case "TIMESTAMP_NTZ":
		to = schema.TimestampNTZ
	case "DECIMAL", "DEC", "NUMERIC":
		d := schema.DecimalType{Precision: 10}
		if p.punct("(") {
			var err error
			if d.Precision, err = p.typeParam(); err != nil {
				return nil, err
			}
			if p.punct(",") {
				if d.Scale, err = p.typeParam(); err != nil {
					return nil, err
				}
			}
			if !p.punct(")") {
				return nil, p.errorf("want ')' after DECIMAL parameters")
			}
		}
		if d.Precision < 1 || d.Precision > schema.MaxDecimalPrecision || d.Scale < 0 || d.Scale > d.Precision {
			return nil, p.errorf("bad decimal type %s", sqlTypeName(d))
		}
		to = d
	default:
		p.pos--
		return nil, p.errorf("unknown type %q", p.toks[p.pos].text)
	}
	if !p.punct(")") {
		return nil, p.errorf("want ')' after CAST")
	}
	return Cast{Value: e, To: to}, nil
}

func (p *parser) typeParam() (int, error) {
	if p.pos < len(p.toks) && p.toks[p.pos].kind == tNumber {
		if n, err := strconv.Atoi(p.toks[p.pos].text); err == nil {
			p.pos++
			return n, nil
		}
	}
	return 0, p.errorf("want a number")
}

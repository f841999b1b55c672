package schema

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/godelta/delta/deltaerr"
)

// ParseDDL reads a schema written as Spark SQL column definitions:
//
//	id BIGINT NOT NULL, name STRING, ts TIMESTAMP, price DECIMAL(10,2),
//	tags ARRAY<STRING>, attrs MAP<STRING, INT>, addr STRUCT<city: STRING, zip INT>,
//	`odd name` STRING COMMENT 'kept as the field comment'
//
// Type names are Spark's, ignoring case: BOOLEAN, TINYINT/BYTE,
// SMALLINT/SHORT, INT/INTEGER, BIGINT/LONG, FLOAT/REAL, DOUBLE, DECIMAL(p,s)
// (DECIMAL alone is decimal(10,0)), STRING (also VARCHAR(n) and CHAR(n),
// read as string), BINARY, DATE, TIMESTAMP, TIMESTAMP_NTZ, VARIANT, and
// ARRAY<t>, MAP<k, v>, STRUCT<name[:] t, ...>. Columns are nullable unless
// NOT NULL follows the type. Errors wrap ErrInvalidSchema and
// deltaerr.ErrInvalidArgument and give the position.
func ParseDDL(ddl string) (*StructType, error) {
	p := &ddlParser{s: ddl}
	var fields []StructField
	for {
		f, err := p.field(false)
		if err != nil {
			return nil, err
		}
		fields = append(fields, f)
		p.space()
		if p.eof() {
			break
		}
		if !p.punct(',') {
			return nil, p.errorf("expected ',' or the end")
		}
	}
	st := &StructType{Fields: fields}
	if err := st.check(nil); err != nil {
		return nil, fmt.Errorf("%w: %w", err, deltaerr.ErrInvalidArgument)
	}
	return st, nil
}

type ddlParser struct {
	s   string
	pos int
}

func (p *ddlParser) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: schema %q at offset %d: %s: %w", ErrInvalidSchema, p.s, p.pos, fmt.Sprintf(format, args...), deltaerr.ErrInvalidArgument)
}

func (p *ddlParser) eof() bool { return p.pos >= len(p.s) }

func (p *ddlParser) space() {
	for p.pos < len(p.s) && unicode.IsSpace(rune(p.s[p.pos])) {
		p.pos++
	}
}

func (p *ddlParser) punct(c byte) bool {
	p.space()
	if p.pos < len(p.s) && p.s[p.pos] == c {
		p.pos++
		return true
	}
	return false
}

// ident reads a name: letters, digits and '_', or `backquoted` with “
// for a backquote.
func (p *ddlParser) ident() (string, error) {
	p.space()
	if p.pos < len(p.s) && p.s[p.pos] == '`' {
		var sb strings.Builder
		for i := p.pos + 1; i < len(p.s); i++ {
			if p.s[i] == '`' {
				if i+1 < len(p.s) && p.s[i+1] == '`' {
					sb.WriteByte('`')
					i++
					continue
				}
				p.pos = i + 1
				return sb.String(), nil
			}
			sb.WriteByte(p.s[i])
		}
		return "", p.errorf("unterminated `name`")
	}
	start := p.pos
	for p.pos < len(p.s) {
		c := rune(p.s[p.pos])
		if !(unicode.IsLetter(c) || unicode.IsDigit(c) || c == '_') {
			break
		}
		p.pos++
	}
	if start == p.pos {
		return "", p.errorf("expected a name")
	}
	return p.s[start:p.pos], nil
}

// keyword consumes the keyword kw (any case) if it comes next.
func (p *ddlParser) keyword(kw string) bool {
	p.space()
	end := p.pos + len(kw)
	if end > len(p.s) || !strings.EqualFold(p.s[p.pos:end], kw) {
		return false
	}
	if end < len(p.s) {
		if c := rune(p.s[end]); unicode.IsLetter(c) || unicode.IsDigit(c) || c == '_' {
			return false
		}
	}
	p.pos = end
	return true
}

// field reads "name [:] type [NOT NULL] [COMMENT 'text']"; the colon is
// allowed inside STRUCT<...>.
func (p *ddlParser) field(inStruct bool) (StructField, error) {
	name, err := p.ident()
	if err != nil {
		return StructField{}, err
	}
	if inStruct {
		p.punct(':')
	}
	t, err := p.typ()
	if err != nil {
		return StructField{}, err
	}
	f := StructField{Name: name, Type: t, Nullable: true}
	if p.keyword("NOT") {
		if !p.keyword("NULL") {
			return StructField{}, p.errorf("expected NULL after NOT")
		}
		f.Nullable = false
	}
	if p.keyword("COMMENT") {
		p.space()
		text, err := p.quoted()
		if err != nil {
			return StructField{}, err
		}
		raw, _ := jsonString(text)
		f.Metadata = Metadata{{Key: "comment", Value: raw}}
	}
	return f, nil
}

func (p *ddlParser) quoted() (string, error) {
	if p.pos >= len(p.s) || (p.s[p.pos] != '\'' && p.s[p.pos] != '"') {
		return "", p.errorf("expected a quoted string")
	}
	q := p.s[p.pos]
	var sb strings.Builder
	for i := p.pos + 1; i < len(p.s); i++ {
		switch c := p.s[i]; {
		case c == '\\' && i+1 < len(p.s):
			sb.WriteByte(p.s[i+1])
			i++
		case c == q:
			p.pos = i + 1
			return sb.String(), nil
		default:
			sb.WriteByte(c)
		}
	}
	return "", p.errorf("unterminated string")
}

var ddlTypes = map[string]DataType{
	"BOOLEAN": Boolean, "TINYINT": Byte, "BYTE": Byte, "SMALLINT": Short, "SHORT": Short,
	"INT": Integer, "INTEGER": Integer, "BIGINT": Long, "LONG": Long, "FLOAT": Float, "REAL": Float,
	"DOUBLE": Double, "STRING": String, "BINARY": Binary, "DATE": Date, "TIMESTAMP": Timestamp,
	"TIMESTAMP_LTZ": Timestamp, "TIMESTAMP_NTZ": TimestampNTZ, "VARIANT": Variant, "VOID": Void,
}

func (p *ddlParser) typ() (DataType, error) {
	start := p.pos
	name, err := p.ident()
	if err != nil {
		return nil, err
	}
	switch up := strings.ToUpper(name); up {
	case "ARRAY":
		if !p.punct('<') {
			return nil, p.errorf("expected '<' after ARRAY")
		}
		elem, err := p.typ()
		if err != nil {
			return nil, err
		}
		if !p.punct('>') {
			return nil, p.errorf("expected '>' to close ARRAY")
		}
		return &ArrayType{ElementType: elem, ContainsNull: true}, nil
	case "MAP":
		if !p.punct('<') {
			return nil, p.errorf("expected '<' after MAP")
		}
		k, err := p.typ()
		if err != nil {
			return nil, err
		}
		if !p.punct(',') {
			return nil, p.errorf("expected ',' between MAP key and value types")
		}
		v, err := p.typ()
		if err != nil {
			return nil, err
		}
		if !p.punct('>') {
			return nil, p.errorf("expected '>' to close MAP")
		}
		return &MapType{KeyType: k, ValueType: v, ValueContainsNull: true}, nil
	case "STRUCT":
		if !p.punct('<') {
			return nil, p.errorf("expected '<' after STRUCT")
		}
		st := &StructType{}
		if p.punct('>') {
			return st, nil
		}
		for {
			f, err := p.field(true)
			if err != nil {
				return nil, err
			}
			st.Fields = append(st.Fields, f)
			if p.punct('>') {
				return st, nil
			}
			if !p.punct(',') {
				return nil, p.errorf("expected ',' or '>' in STRUCT")
			}
		}
	case "DECIMAL", "DEC", "NUMERIC":
		prec, scale := 10, 0
		if p.punct('(') {
			var err error
			if prec, err = p.int(); err != nil {
				return nil, err
			}
			if p.punct(',') {
				if scale, err = p.int(); err != nil {
					return nil, err
				}
			}
			if !p.punct(')') {
				return nil, p.errorf("expected ')' to close DECIMAL")
			}
		}
		t := DecimalType{Precision: prec, Scale: scale}
		if !t.valid() {
			p.pos = start
			return nil, p.errorf("invalid %s", t)
		}
		return t, nil
	case "VARCHAR", "CHAR":
		if p.punct('(') {
			if _, err := p.int(); err != nil {
				return nil, err
			}
			if !p.punct(')') {
				return nil, p.errorf("expected ')' to close %s", up)
			}
		}
		return String, nil
	default:
		t, ok := ddlTypes[up]
		if !ok {
			p.pos = start
			return nil, p.errorf("unknown type %q", name)
		}
		return t, nil
	}
}

func (p *ddlParser) int() (int, error) {
	p.space()
	start := p.pos
	for p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
		p.pos++
	}
	n, err := strconv.Atoi(p.s[start:p.pos])
	if err != nil {
		return 0, p.errorf("expected a number")
	}
	return n, nil
}

// jsonString returns s as a JSON string literal.
func jsonString(s string) ([]byte, error) { return appendString(nil, s), nil }

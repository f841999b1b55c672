package statsjson

import (
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/godelta/delta/schema"
)

// Stats are the statistics of one data file, as the data file writer
// (internal/datafile) gathers them and JSON writes them.
type Stats struct {
	// NumRecords is the number of rows in the file.
	NumRecords int64
	// TightBounds writes "tightBounds":true; false leaves the field out (a
	// new file has no deleted rows, and readers take a missing field as
	// true).
	TightBounds bool
	// Columns are the indexed columns, in schema order.
	Columns []Column
}

// Column are the statistics of one indexed column.
type Column struct {
	// Path is the column's physical names from the top of the schema.
	Path []string
	// Type is the column's type.
	Type schema.DataType
	// NullCount is the number of rows in which the column is null.
	NullCount int64
	// Min and Max are the bounds as the JSON holds them (strings cut,
	// timestamps truncated to milliseconds, see internal/datafile's
	// stats.go); null when the column has none.
	Min, Max schema.Value
}

// JSON returns the stats string of the file's add action:
//
//	{"numRecords":N,"minValues":{...},"maxValues":{...},"nullCount":{...},"tightBounds":true}
//
// (tightBounds only with TightBounds),
// keyed by physical names, with nested objects for struct fields; a struct
// none of whose columns has a value in one of the three maps is left out
// of it.
func (s Stats) JSON() string {
	b := make([]byte, 0, 64+len(s.Columns)*64)
	b = append(b, `{"`+KeyNumRecords+`":`...)
	b = strconv.AppendInt(b, s.NumRecords, 10)
	b = append(b, `,"`+KeyMinValues+`":`...)
	b = appendObject(b, s.Columns, func(c *Column) schema.Value { return c.Min })
	b = append(b, `,"`+KeyMaxValues+`":`...)
	b = appendObject(b, s.Columns, func(c *Column) schema.Value { return c.Max })
	b = append(b, `,"`+KeyNullCount+`":`...)
	b = appendObject(b, s.Columns, func(c *Column) schema.Value { return schema.LongValue(c.NullCount) })
	if s.TightBounds {
		b = append(b, `,"`+KeyTightBounds+`":true`...)
	}
	return string(append(b, '}'))
}

// appendObject appends one of the three maps: the non-null values that
// val gives, nested by path. Columns of one struct are contiguous in
// schema order, so each nested object is opened once.
func appendObject(b []byte, cols []Column, val func(c *Column) schema.Value) []byte {
	b = append(b, '{')
	var open []string     // names of the nested objects now open
	first := []bool{true} // per open object: no member written yet
	member := func(name string) {
		if !first[len(first)-1] {
			b = append(b, ',')
		}
		first[len(first)-1] = false
		b = schema.AppendValueJSON(b, schema.StringValue(name), schema.String)
		b = append(b, ':')
	}
	for i := range cols {
		c := &cols[i]
		v := val(c)
		if v.IsNull() || len(c.Path) == 0 {
			continue
		}
		parent := c.Path[:len(c.Path)-1]
		k := 0
		for k < len(open) && k < len(parent) && open[k] == parent[k] {
			k++
		}
		for len(open) > k {
			b = append(b, '}')
			open, first = open[:len(open)-1], first[:len(first)-1]
		}
		for _, name := range parent[k:] {
			member(name)
			b = append(b, '{')
			open, first = append(open, name), append(first, true)
		}
		member(c.Path[len(c.Path)-1])
		b = appendValue(b, v, c.Type)
	}
	for range open {
		b = append(b, '}')
	}
	return append(b, '}')
}

// appendValue appends a bound: timestamps as AppendTimestamp writes them;
// everything else as schema.AppendValueJSON does.
func appendValue(b []byte, v schema.Value, t schema.DataType) []byte {
	switch v.Kind() {
	case schema.KindTimestamp, schema.KindTimestampNTZ:
		return AppendTimestamp(b, time.UnixMicro(v.Int64()), v.Kind() == schema.KindTimestamp)
	}
	return schema.AppendValueJSON(b, v, t)
}

// AppendTimestamp appends a timestamp bound as Spark writes it: a JSON
// string with exactly three fraction digits (truncated, not rounded),
// in UTC, ending in Z for a timestamp (utc) and without a zone for a
// timestamp_ntz.
func AppendTimestamp(b []byte, t time.Time, utc bool) []byte {
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, "2006-01-02T15:04:05.000")
	if utc {
		b = append(b, 'Z')
	}
	return append(b, '"')
}

// AppendString appends s as a JSON string: '"', '\\' and control
// characters escaped, invalid UTF-8 as U+FFFD, as encoding/json does.
func AppendString(buf []byte, s string) []byte {
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			buf = append(buf, s[start:i]...)
			switch c {
			case '"', '\\':
				buf = append(buf, '\\', c)
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			default:
				buf = append(buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf = append(buf, s[start:i]...)
			buf = append(buf, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

// Widen returns the stats string raw of a file that now has a deletion
// vector: numRecords stays the physical row count, as the protocol
// requires, and tightBounds is false, since the minimums, maximums and
// null counts may now cover deleted rows. Other members are kept as they
// are, in their order, and tightBounds goes last. Stats without
// numRecords (or an empty raw) get numRecords physical. Malformed JSON
// gives an error matching ErrInvalid.
func Widen(raw string, physical int64) (string, error) {
	b := make([]byte, 0, len(raw)+48)
	b = append(b, '{')
	hasNum := false
	p := NewScanner(raw)
	err := p.Fields(func(key string) error {
		if key == KeyTightBounds {
			return p.Skip(1)
		}
		hasNum = hasNum || key == KeyNumRecords
		p.ws()
		start := p.i
		if err := p.Skip(1); err != nil {
			return err
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = AppendString(b, key)
		b = append(b, ':')
		b = append(b, p.s[start:p.i]...)
		return nil
	})
	if err != nil {
		return "", err
	}
	if !hasNum {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(b, `"`+KeyNumRecords+`":`...)
		b = strconv.AppendInt(b, physical, 10)
	}
	if len(b) > 1 {
		b = append(b, ',')
	}
	b = append(b, `"`+KeyTightBounds+`":false}`...)
	return string(b), nil
}

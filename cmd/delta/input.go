package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/internal/datafile"
	"github.com/godelta/delta/schema"
)

// inputRows reads the rows of an input file for a table of schema sch, by
// the file's extension: .csv (a header row naming columns, then records;
// an empty field is null), .json/.jsonl/.ndjson (one JSON object per line,
// keyed by column name, values as `delta scan --format jsonl` writes them)
// or .parquet (columns matched by name). Columns the file lacks are null;
// a column the table lacks is an error. Each row has one value per field
// of sch, in order. Errors name the file, the row and the column.
func inputRows(ctx context.Context, path string, sch *schema.StructType) iter.Seq2[inputRow, error] {
	return func(yield func(inputRow, error) bool) {
		fail := func(err error) { yield(inputRow{}, fmt.Errorf("%s: %w", path, err)) }
		f, err := os.Open(path)
		if err != nil {
			fail(err)
			return
		}
		defer f.Close()
		var rows iter.Seq2[inputRow, error]
		switch ext := strings.ToLower(filepath.Ext(path)); ext {
		case ".csv":
			rows = csvInput(f, sch)
		case ".json", ".jsonl", ".ndjson":
			rows = jsonInput(f, sch)
		case ".parquet":
			rows = parquetInput(ctx, f, sch)
		default:
			fail(fmt.Errorf("unknown input format %q (want .csv, .jsonl or .parquet): %w", ext, deltaerr.ErrInvalidArgument))
			return
		}
		for r, err := range rows {
			if err != nil {
				fail(err)
				return
			}
			if !yield(r, nil) {
				return
			}
		}
	}
}

// columnIndex maps input column names to fields of sch, exactly or ignoring
// case.
func columnIndex(sch *schema.StructType, names []string) ([]int, error) {
	idx := make([]int, len(names))
	seen := map[int]string{}
	for i, n := range names {
		j := -1
		for k := range sch.Fields {
			if sch.Fields[k].Name == n {
				j = k
				break
			}
		}
		if j < 0 {
			for k := range sch.Fields {
				if strings.EqualFold(sch.Fields[k].Name, n) {
					j = k
					break
				}
			}
		}
		if j < 0 {
			return nil, fmt.Errorf("column %q is not in the table: %w", n, deltaerr.ErrInvalidArgument)
		}
		if prev, dup := seen[j]; dup {
			return nil, fmt.Errorf("columns %q and %q are the same table column: %w", prev, n, deltaerr.ErrInvalidArgument)
		}
		seen[j] = n
		idx[i] = j
	}
	return idx, nil
}

// inputRow is a row of an input file and the line it starts on (for
// Parquet, its position in the file from 1).
type inputRow struct {
	vals []schema.Value
	line int
}

// maxRecordBytes caps one input record: a CSV record (which may span
// lines) or a JSONL line. Past it, reading stops with an error naming the
// line, instead of growing without bound (a CSV of /dev/zero is one field
// that never ends).
const maxRecordBytes = 64 << 20

// errRecordTooLong is the error of a record over maxRecordBytes.
var errRecordTooLong = fmt.Errorf("a record is longer than %d MiB: %w", maxRecordBytes>>20, deltaerr.ErrInvalidArgument)

// recordLimit passes reads through up to maxRecordBytes from start (an
// input offset, where the current record starts), then fails with
// errRecordTooLong: a record that has not ended within maxRecordBytes
// bytes, its line end included, is refused, as lineReader refuses such a
// line; it counts lines for the message.
type recordLimit struct {
	r     io.Reader
	read  int64 // bytes passed through
	start int64 // input offset where the current record starts
	lines int   // newlines passed through
}

func (l *recordLimit) Read(p []byte) (int, error) {
	room := l.start + maxRecordBytes - l.read
	if room <= 0 {
		return 0, fmt.Errorf("line %d: %w", l.lines+1, errRecordTooLong)
	}
	if int64(len(p)) > room {
		p = p[:room]
	}
	n, err := l.r.Read(p)
	l.read += int64(n)
	l.lines += bytes.Count(p[:n], []byte{'\n'})
	return n, err
}

func csvInput(r io.Reader, sch *schema.StructType) iter.Seq2[inputRow, error] {
	return func(yield func(inputRow, error) bool) {
		lim := &recordLimit{r: r}
		cr := csv.NewReader(lim)
		cr.ReuseRecord = true
		header, err := cr.Read()
		if err != nil {
			yield(inputRow{}, fmt.Errorf("reading the CSV header: %w", err))
			return
		}
		lim.start = cr.InputOffset()
		header[0] = strings.TrimPrefix(header[0], "\ufeff")
		idx, err := columnIndex(sch, header)
		if err != nil {
			yield(inputRow{}, err)
			return
		}
		cr.FieldsPerRecord = len(header)
		temporal := temporalColumns(sch)
		for {
			rec, err := cr.Read()
			if err == io.EOF {
				return
			}
			if errors.Is(err, errRecordTooLong) {
				yield(inputRow{}, fmt.Errorf("CSV: %w", err))
				return
			}
			if err != nil {
				yield(inputRow{}, fmt.Errorf("CSV: %w: %w", err, deltaerr.ErrInvalidArgument))
				return
			}
			lim.start = cr.InputOffset()
			line, _ := cr.FieldPos(0)
			row := make([]schema.Value, len(sch.Fields))
			for i, text := range rec {
				f := &sch.Fields[idx[i]]
				v, err := csvValue(text, f.Type)
				if err == nil && temporal[idx[i]] {
					err = checkYears(v, f.Type)
				}
				if err != nil {
					yield(inputRow{}, fmt.Errorf("line %d, column %q: %w", line, f.Name, err))
					return
				}
				row[idx[i]] = v
			}
			if !yield(inputRow{row, line}, nil) {
				return
			}
		}
	}
}

// csvValue reads one CSV field as type t: empty is null; integers,
// dates and timestamps in the forms of partition values (and RFC 3339);
// decimals, floats and doubles as plain or exponent numbers (see
// plainNumber), and for floats and doubles Spark's spellings of NaN and
// the infinities (see csvFloat); booleans true/false; nested types as
// JSON, read as a JSON lines value is (see jsonText).
func csvValue(text string, t schema.DataType) (schema.Value, error) {
	if text == "" {
		return schema.Value{}, nil
	}
	switch t := t.(type) {
	case *schema.StructType, *schema.ArrayType, *schema.MapType:
		return jsonText(text, t)
	case schema.DecimalType:
		// Strictly the partition-value form: not big.Rat's syntax, which
		// also takes fractions ("1/4") and base prefixes ("0x10").
		if !plainNumber(text) {
			return schema.Value{}, invalidValue(text, t)
		}
		v, err := schema.ParsePartitionValue(t, text)
		if err != nil {
			return schema.Value{}, invalidValue(text, t)
		}
		return v, nil
	case schema.PrimitiveType:
		switch t {
		case schema.Binary:
			return schema.BinaryValue([]byte(text)), nil
		case schema.String:
			if !utf8.ValidString(text) {
				return schema.Value{}, fmt.Errorf("%w (a STRING column holds UTF-8 text)", errBadUTF8)
			}
		case schema.Float, schema.Double:
			return csvFloat(text, t)
		}
	}
	if v, err := schema.ParsePartitionValue(t, text); err == nil {
		return v, nil
	}
	return schema.ParseValueJSON(text, t)
}

// csvFloat reads a float or double field as Spark's CSV reader does with
// its default options: nanValue "NaN", positiveInf "Inf" and negativeInf
// "-Inf", else Java's Double.parseDouble, which also takes "Infinity",
// "+Infinity" and "-Infinity". Other numbers must be plain or exponent
// decimal numbers (see plainNumber): no hexadecimal ("0x1p3"), no digit
// separators ("1_000"), no other spelling of NaN or infinity ("inf",
// "nan", "+Inf"), no surrounding space and no type suffix ("1.5d"),
// although strconv.ParseFloat or Java take some of these. A number out of
// the type's range is an error.
func csvFloat(text string, t schema.PrimitiveType) (schema.Value, error) {
	var f float64
	switch text {
	case "NaN":
		f = math.NaN()
	case "Inf", "Infinity", "+Infinity":
		f = math.Inf(1)
	case "-Inf", "-Infinity":
		f = math.Inf(-1)
	default:
		if !plainNumber(text) {
			return schema.Value{}, invalidValue(text, t)
		}
		v, err := schema.ParsePartitionValue(t, text)
		if err != nil {
			return schema.Value{}, invalidValue(text, t)
		}
		return v, nil
	}
	if t == schema.Float {
		return schema.FloatValue(float32(f)), nil
	}
	return schema.DoubleValue(f), nil
}

// plainNumber reports whether s is a decimal number in plain or exponent
// notation, as Java's BigDecimal reads one: an optional sign, digits with
// an optional point (at least one digit, before or after it), then
// optionally e or E, an optional sign and digits. Nothing else: no space,
// no base prefix, no '_', no fraction a/b.
func plainNumber(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		digits++
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(s)
}

// invalidValue is the error of text that is not a value of type t, in
// the words of schema.ParseValueJSON's.
func invalidValue(text string, t schema.DataType) error {
	if len(text) > 40 {
		text = text[:40] + "…"
	}
	return deltaerr.Mark(fmt.Errorf("%q is not a %s", text, t), schema.ErrInvalidValue, deltaerr.ErrInvalidArgument)
}

// jsonText reads the JSON text of a CSV field of a nested type by the
// rules of JSON lines: the same strictness (see jsonStrict) and the same
// JSON kinds (see jsonKinds).
func jsonText(text string, t schema.DataType) (schema.Value, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil || strings.TrimSpace(text[dec.InputOffset():]) != "" {
		return schema.Value{}, fmt.Errorf("%q is not JSON for %s: %w", text, t, deltaerr.ErrInvalidArgument)
	}
	if err := jsonStrict([]byte(text)); err != nil {
		return schema.Value{}, err
	}
	x, err := jsonKinds(x, t)
	if err != nil {
		return schema.Value{}, err
	}
	return schema.ParseValueJSON(x, t)
}

// errBadUTF8 is the error of text that is not valid UTF-8 where a STRING
// is wanted: it is refused from every input format alike, never stored raw
// or replaced.
var errBadUTF8 = fmt.Errorf("text is not valid UTF-8: %w", deltaerr.ErrInvalidArgument)

// jsonInput reads JSON Lines: each non-blank line is exactly one JSON
// object (anything after it is an error), at most maxRecordBytes long
// (see lineReader). A key twice in one object and a \u escape of a lone
// UTF-16 surrogate are errors (see jsonStrict). Values must have the JSON
// kind the column's type has in Spark's to_json form (see jsonKinds):
// numbers for numeric columns (for decimals also strings holding one),
// true/false for booleans, strings for strings, dates, timestamps and
// binary (base64). A number for a timestamp is seconds since the epoch,
// as Spark's from_json reads it. Dates and timestamps are in years 0001
// to 9999 (see checkYears), as from CSV.
func jsonInput(r io.Reader, sch *schema.StructType) iter.Seq2[inputRow, error] {
	return func(yield func(inputRow, error) bool) {
		lines := newLineReader(r)
		temporal := temporalColumns(sch)
		for {
			raw, line, ok := lines.next()
			if !ok {
				break
			}
			text := bytes.TrimSpace(raw)
			if len(text) == 0 {
				continue
			}
			if !utf8.Valid(text) {
				yield(inputRow{}, fmt.Errorf("line %d: %w", line, errBadUTF8))
				return
			}
			dec := json.NewDecoder(bytes.NewReader(text))
			dec.UseNumber()
			var obj map[string]any
			if err := dec.Decode(&obj); err != nil || obj == nil {
				if err == nil {
					err = errors.New("null")
				}
				yield(inputRow{}, fmt.Errorf("line %d: not a JSON object: %w: %w", line, err, deltaerr.ErrInvalidArgument))
				return
			}
			if rest := bytes.TrimSpace(text[dec.InputOffset():]); len(rest) > 0 {
				yield(inputRow{}, fmt.Errorf("line %d: %q after the JSON object (one object a line): %w", line, clip(rest), deltaerr.ErrInvalidArgument))
				return
			}
			if err := jsonStrict(text); err != nil {
				yield(inputRow{}, fmt.Errorf("line %d: %w", line, err))
				return
			}
			names := make([]string, 0, len(obj))
			for k := range obj {
				names = append(names, k)
			}
			idx, err := columnIndex(sch, names)
			if err != nil {
				yield(inputRow{}, fmt.Errorf("line %d: %w", line, err))
				return
			}
			row := make([]schema.Value, len(sch.Fields))
			for i, k := range names {
				f := &sch.Fields[idx[i]]
				x, err := jsonKinds(obj[k], f.Type)
				var v schema.Value
				if err == nil {
					v, err = schema.ParseValueJSON(x, f.Type)
				}
				if err == nil && temporal[idx[i]] {
					err = checkYears(v, f.Type)
				}
				if err != nil {
					yield(inputRow{}, fmt.Errorf("line %d, column %q: %w", line, f.Name, err))
					return
				}
				row[idx[i]] = v
			}
			if !yield(inputRow{row, line}, nil) {
				return
			}
		}
		if err := lines.err(); err != nil {
			yield(inputRow{}, err)
		}
	}
}

// lineReader reads an input file line by line, for every reader of JSON
// lines (the rows of append and of a MERGE source, and the schema that
// MERGE and append --merge-schema take from such a file), so that all
// share one limit and one message: a line longer than maxRecordBytes is
// errRecordTooLong, naming its number.
type lineReader struct {
	sc   *bufio.Scanner
	line int
}

func newLineReader(r io.Reader) *lineReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxRecordBytes)
	return &lineReader{sc: sc}
}

// next returns the next line, without its "\n" or "\r\n", and its number
// from 1; false at the end of the input or at an error (see err). The
// line is valid until the next call.
func (l *lineReader) next() ([]byte, int, bool) {
	if !l.sc.Scan() {
		return nil, 0, false
	}
	l.line++
	return l.sc.Bytes(), l.line, true
}

// err is the error that ended the reading, nil at the end of the input.
func (l *lineReader) err() error {
	err := l.sc.Err()
	if errors.Is(err, bufio.ErrTooLong) {
		return fmt.Errorf("line %d: %w", l.line+1, errRecordTooLong)
	}
	return err
}

// jsonStrict checks valid JSON text b for what encoding/json lets through
// silently: a key twice in one object (it keeps the last value) and a \u
// escape of a UTF-16 surrogate that is not part of a pair (it reads
// U+FFFD). Both are errors here, as invalid input, wrapping
// deltaerr.ErrInvalidArgument.
func jsonStrict(b []byte) error {
	type frame struct {
		object  bool
		wantKey bool
		keys    [][]byte        // the keys so far, unescaped, while few
		set     map[string]bool // then all of them
	}
	var stack []frame
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '{':
			stack = append(stack, frame{object: true, wantKey: true})
		case '[':
			stack = append(stack, frame{})
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case ',':
			if n := len(stack); n > 0 && stack[n-1].object {
				stack[n-1].wantKey = true
			}
		case '"':
			end, escaped, err := jsonStringEnd(b, i)
			if err != nil {
				return err
			}
			if n := len(stack); n > 0 && stack[n-1].wantKey {
				top := &stack[n-1]
				top.wantKey = false
				key := b[i+1 : end]
				if escaped {
					var k string
					if err := json.Unmarshal(b[i:end+1], &k); err != nil {
						return fmt.Errorf("key %s: %w: %w", b[i:end+1], err, deltaerr.ErrInvalidArgument)
					}
					key = []byte(k)
				}
				dup := false
				if top.set == nil && len(top.keys) < 16 {
					dup = slices.ContainsFunc(top.keys, func(k []byte) bool { return bytes.Equal(k, key) })
					top.keys = append(top.keys, key)
				} else {
					if top.set == nil {
						top.set = make(map[string]bool, 32)
						for _, k := range top.keys {
							top.set[string(k)] = true
						}
					}
					dup = top.set[string(key)]
					top.set[string(key)] = true
				}
				if dup {
					return fmt.Errorf("key %q appears twice in one object: %w", key, deltaerr.ErrInvalidArgument)
				}
			}
			i = end
		}
	}
	return nil
}

// jsonStringEnd returns the index of the quote that closes the JSON
// string starting at b[start], whether the string has escapes, and an
// error for a \u escape of a lone surrogate.
func jsonStringEnd(b []byte, start int) (end int, escaped bool, err error) {
	lone := func(at int) error {
		return fmt.Errorf("%s is a lone UTF-16 surrogate, not a character: %w", b[at:at+6], deltaerr.ErrInvalidArgument)
	}
	for j := start + 1; j < len(b); {
		switch b[j] {
		case '"':
			return j, escaped, nil
		case '\\':
			escaped = true
			if j+1 < len(b) && b[j+1] == 'u' {
				r, ok := hex4(b, j+2)
				switch {
				case !ok:
					j += 2
				case utf16.IsSurrogate(r) && r < 0xdc00: // high: a low must follow
					if lo, ok := hex4(b, j+8); ok && b[j+6] == '\\' && b[j+7] == 'u' && lo >= 0xdc00 && lo <= 0xdfff {
						j += 12
						continue
					}
					return 0, false, lone(j)
				case utf16.IsSurrogate(r): // low, with no high before it
					return 0, false, lone(j)
				default:
					j += 6
				}
				continue
			}
			j += 2
		default:
			j++
		}
	}
	return len(b), escaped, nil
}

// hex4 reads the four hexadecimal digits at b[i:i+4].
func hex4(b []byte, i int) (rune, bool) {
	if i < 0 || i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// The dates and timestamps an input may hold: years 0001 to 9999, the
// range of Spark's DATE and TIMESTAMP (and of the text forms, whose years
// have four digits). For TIMESTAMP the instant counts, in UTC, whatever
// zone the text gave; for TIMESTAMP_NTZ the wall-clock time.
var (
	minInputTime = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	maxInputTime = time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC)
	minInputDay  = minInputTime.Unix() / 86400
	maxInputDay  = maxInputTime.Unix() / 86400
)

// checkYears returns an error naming the first date or timestamp in v, a
// value of type t, that is outside years 0001 to 9999: the one rule for
// every input format, whichever way the value was given (text, with any
// zone; a JSON number of seconds; a date or timestamp nested in a struct,
// an array or a map).
func checkYears(v schema.Value, t schema.DataType) error {
	if v.IsNull() {
		return nil
	}
	switch t := t.(type) {
	case schema.PrimitiveType:
		var ok bool
		switch t {
		case schema.Date:
			ok = v.Int64() >= minInputDay && v.Int64() <= maxInputDay
		case schema.Timestamp, schema.TimestampNTZ:
			ok = v.Int64() >= minInputTime.UnixMicro() && v.Int64() <= maxInputTime.UnixMicro()
		default:
			return nil
		}
		if !ok {
			return fmt.Errorf("%s is outside years 0001 to 9999: %w", v, deltaerr.ErrInvalidArgument)
		}
	case *schema.StructType:
		for i, fv := range v.Fields() {
			if i < len(t.Fields) {
				if err := checkYears(fv, t.Fields[i].Type); err != nil {
					return fmt.Errorf("field %q: %w", t.Fields[i].Name, err)
				}
			}
		}
	case *schema.ArrayType:
		for i, e := range v.Elements() {
			if err := checkYears(e, t.ElementType); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
		}
	case *schema.MapType:
		for i := range v.MapLen() {
			k, e := v.MapEntry(i)
			if err := checkYears(k, t.KeyType); err != nil {
				return fmt.Errorf("key %d: %w", i, err)
			}
			if err := checkYears(e, t.ValueType); err != nil {
				return fmt.Errorf("value of key %s: %w", k, err)
			}
		}
	}
	return nil
}

// temporalColumns reports, for each column of sch, whether its type is or
// holds a date or a timestamp, for which checkYears is needed.
func temporalColumns(sch *schema.StructType) []bool {
	out := make([]bool, len(sch.Fields))
	for i, f := range sch.Fields {
		out[i] = hasTemporal(f.Type)
	}
	return out
}

func hasTemporal(t schema.DataType) bool {
	switch t := t.(type) {
	case schema.PrimitiveType:
		return t == schema.Date || t == schema.Timestamp || t == schema.TimestampNTZ
	case *schema.StructType:
		for _, f := range t.Fields {
			if hasTemporal(f.Type) {
				return true
			}
		}
	case *schema.ArrayType:
		return hasTemporal(t.ElementType)
	case *schema.MapType:
		return hasTemporal(t.KeyType) || hasTemporal(t.ValueType)
	}
	return false
}

// clip shortens b for a message.
func clip(b []byte) string {
	if len(b) > 20 {
		return string(b[:20]) + "…"
	}
	return string(b)
}

// jsonKinds checks that a decoded JSON value x has the JSON kind type t
// has in Spark's to_json form, so that one rule holds for JSONL as CSV's
// typed parsing holds for CSV: no string is read as a number or a boolean,
// and no number as a date. It returns x with a number for a timestamp
// turned from seconds (Spark's reading) into the microseconds that
// schema.ParseValueJSON takes.
func jsonKinds(x any, t schema.DataType) (any, error) {
	if x == nil {
		return nil, nil
	}
	bad := func(want string) (any, error) {
		got := "a string"
		switch x.(type) {
		case json.Number:
			got = "a number"
		case bool:
			got = "a boolean"
		case map[string]any:
			got = "an object"
		case []any:
			got = "an array"
		}
		return nil, fmt.Errorf("%s for a %s column, which takes %s: %w", got, t, want, deltaerr.ErrInvalidArgument)
	}
	switch t := t.(type) {
	case schema.DecimalType:
		// A string holding a number too, as Spark's JSON reader takes it
		// (producers quote decimals to keep them from float rounding): read
		// as exactly as a number, in plain or exponent notation only.
		switch v := x.(type) {
		case json.Number:
		case string:
			if !plainNumber(v) {
				return nil, invalidValue(v, t)
			}
		default:
			return bad("a number, or a string holding one")
		}
	case schema.PrimitiveType:
		switch t {
		case schema.Byte, schema.Short, schema.Integer, schema.Long:
			if _, ok := x.(json.Number); !ok {
				return bad("a number")
			}
		case schema.Float, schema.Double:
			switch v := x.(type) {
			case json.Number:
			case string: // to_json writes these three as strings
				if v != "NaN" && v != "Infinity" && v != "-Infinity" {
					return bad(`a number, "NaN", "Infinity" or "-Infinity"`)
				}
			default:
				return bad("a number")
			}
		case schema.Boolean:
			if _, ok := x.(bool); !ok {
				return bad("true or false")
			}
		case schema.String, schema.Binary, schema.Date:
			if _, ok := x.(string); !ok {
				return bad("a string")
			}
		case schema.Timestamp, schema.TimestampNTZ:
			switch v := x.(type) {
			case string:
			case json.Number:
				secs, err := v.Int64()
				if err != nil || secs > math.MaxInt64/1_000_000 || secs < math.MinInt64/1_000_000 {
					return bad("a string, or whole seconds since the epoch")
				}
				return json.Number(strconv.FormatInt(secs*1_000_000, 10)), nil
			default:
				return bad("a string or a number of seconds")
			}
		}
	case *schema.StructType:
		obj, ok := x.(map[string]any)
		if !ok {
			return bad("an object")
		}
		out := make(map[string]any, len(obj))
		for _, f := range t.Fields {
			v, err := jsonKinds(obj[f.Name], f.Type)
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", f.Name, err)
			}
			out[f.Name] = v
		}
		return out, nil
	case *schema.ArrayType:
		arr, ok := x.([]any)
		if !ok {
			return bad("an array")
		}
		out := make([]any, len(arr))
		for i, e := range arr {
			v, err := jsonKinds(e, t.ElementType)
			if err != nil {
				return nil, fmt.Errorf("element %d: %w", i, err)
			}
			out[i] = v
		}
		return out, nil
	case *schema.MapType:
		switch m := x.(type) {
		case map[string]any:
			out := make(map[string]any, len(m))
			for k, e := range m {
				v, err := jsonKinds(e, t.ValueType)
				if err != nil {
					return nil, fmt.Errorf("key %q: %w", k, err)
				}
				out[k] = v
			}
			return out, nil
		case []any:
			out := make([]any, len(m))
			for i, e := range m {
				ent, ok := e.(map[string]any)
				if !ok {
					return bad(`an object, or an array of {"key", "value"} objects`)
				}
				k, err := jsonKinds(ent["key"], t.KeyType)
				if err != nil {
					return nil, fmt.Errorf("entry %d key: %w", i, err)
				}
				v, err := jsonKinds(ent["value"], t.ValueType)
				if err != nil {
					return nil, fmt.Errorf("entry %d value: %w", i, err)
				}
				out[i] = map[string]any{"key": k, "value": v}
			}
			return out, nil
		}
		return bad(`an object, or an array of {"key", "value"} objects`)
	}
	return x, nil
}

func parquetInput(ctx context.Context, f *os.File, sch *schema.StructType) iter.Seq2[inputRow, error] {
	return func(yield func(inputRow, error) bool) {
		st, err := f.Stat()
		if err != nil {
			yield(inputRow{}, err)
			return
		}
		pf, err := datafile.Open(f, st.Size())
		if err != nil {
			yield(inputRow{}, err)
			return
		}
		// Every column of the file must be a table column.
		fileSch, err := pf.Schema()
		if err != nil {
			yield(inputRow{}, err)
			return
		}
		names := make([]string, len(fileSch.Fields))
		for i, fl := range fileSch.Fields {
			names[i] = fl.Name
		}
		if _, err := columnIndex(sch, names); err != nil {
			yield(inputRow{}, err)
			return
		}
		stop := errors.New("stop")
		err = pf.Read(ctx, sch, datafile.ReadOptions{}, func(b *datafile.Batch) error {
			for i := range b.Len {
				row := make([]schema.Value, len(b.Columns))
				for j, c := range b.Columns {
					row[j] = c[i]
				}
				if !yield(inputRow{row, int(b.FirstRow) + i + 1}, nil) {
					return stop
				}
			}
			return nil
		})
		if err != nil && err != stop {
			yield(inputRow{}, err)
		}
	}
}

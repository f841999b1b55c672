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
	"strconv"
	"strings"
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

// recordLimit passes reads through until the record that started at
// start (an input offset) has grown past maxRecordBytes, then fails with
// errRecordTooLong; it counts lines for the message.
type recordLimit struct {
	r     io.Reader
	read  int64 // bytes passed through
	start int64 // input offset where the current record starts
	lines int   // newlines passed through
}

func (l *recordLimit) Read(p []byte) (int, error) {
	if l.read-l.start > maxRecordBytes {
		return 0, fmt.Errorf("line %d: %w", l.lines+1, errRecordTooLong)
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

// csvValue reads one CSV field as type t: empty is null; numbers, dates
// and timestamps in the forms of partition values (and RFC 3339);
// booleans true/false; nested types as JSON.
func csvValue(text string, t schema.DataType) (schema.Value, error) {
	if text == "" {
		return schema.Value{}, nil
	}
	switch t.(type) {
	case *schema.StructType, *schema.ArrayType, *schema.MapType:
		return jsonText(text, t)
	}
	if t == schema.Binary {
		return schema.BinaryValue([]byte(text)), nil
	}
	if t == schema.String && !utf8.ValidString(text) {
		return schema.Value{}, fmt.Errorf("%w (a STRING column holds UTF-8 text)", errBadUTF8)
	}
	if v, err := schema.ParsePartitionValue(t, text); err == nil {
		return v, nil
	}
	return schema.ParseValueJSON(text, t)
}

func jsonText(text string, t schema.DataType) (schema.Value, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return schema.Value{}, fmt.Errorf("%q is not JSON for %s: %w", text, t, deltaerr.ErrInvalidArgument)
	}
	return schema.ParseValueJSON(x, t)
}

// errBadUTF8 is the error of text that is not valid UTF-8 where a STRING
// is wanted: it is refused from every input format alike, never stored raw
// or replaced.
var errBadUTF8 = fmt.Errorf("text is not valid UTF-8: %w", deltaerr.ErrInvalidArgument)

// jsonInput reads JSON Lines: each non-blank line is exactly one JSON
// object (anything after it is an error), at most maxRecordBytes long.
// Values must have the JSON kind the column's type has in Spark's to_json
// form (see jsonKinds): numbers for numeric columns, true/false for
// booleans, strings for strings, dates, timestamps and binary (base64).
// A number for a timestamp is seconds since the epoch, as Spark's
// from_json reads it.
func jsonInput(r io.Reader, sch *schema.StructType) iter.Seq2[inputRow, error] {
	return func(yield func(inputRow, error) bool) {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), maxRecordBytes)
		line := 0
		for sc.Scan() {
			line++
			text := bytes.TrimSpace(sc.Bytes())
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
				if err != nil {
					yield(inputRow{}, fmt.Errorf("line %d, column %q: %w", line, f.Name, err))
					return
				}
				v, err := schema.ParseValueJSON(x, f.Type)
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
		if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
			yield(inputRow{}, fmt.Errorf("line %d: %w", line+1, errRecordTooLong))
		} else if err != nil {
			yield(inputRow{}, err)
		}
	}
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
		if _, ok := x.(json.Number); !ok {
			return bad("a number")
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

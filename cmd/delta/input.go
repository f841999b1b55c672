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
	"os"
	"path/filepath"
	"strings"

	"github.com/godelta/delta/datafile"
	"github.com/godelta/delta/deltaerr"
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

func csvInput(r io.Reader, sch *schema.StructType) iter.Seq2[inputRow, error] {
	return func(yield func(inputRow, error) bool) {
		cr := csv.NewReader(bufio.NewReader(r))
		cr.ReuseRecord = true
		header, err := cr.Read()
		if err != nil {
			yield(inputRow{}, fmt.Errorf("reading the CSV header: %w", err))
			return
		}
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
			if err != nil {
				yield(inputRow{}, fmt.Errorf("CSV: %w: %w", err, deltaerr.ErrInvalidArgument))
				return
			}
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

func jsonInput(r io.Reader, sch *schema.StructType) iter.Seq2[inputRow, error] {
	return func(yield func(inputRow, error) bool) {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		for line := 1; sc.Scan(); line++ {
			text := bytes.TrimSpace(sc.Bytes())
			if len(text) == 0 {
				continue
			}
			dec := json.NewDecoder(bytes.NewReader(text))
			dec.UseNumber()
			var obj map[string]any
			if err := dec.Decode(&obj); err != nil {
				yield(inputRow{}, fmt.Errorf("line %d: not a JSON object: %w: %w", line, err, deltaerr.ErrInvalidArgument))
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
				v, err := schema.ParseValueJSON(obj[k], f.Type)
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
		if err := sc.Err(); err != nil {
			yield(inputRow{}, err)
		}
	}
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

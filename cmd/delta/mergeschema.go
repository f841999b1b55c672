package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/internal/datafile"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/write"
)

// mergedInputSchema returns the schema of the rows of the input files for
// append --merge-schema: the table's schema with every column of the
// files it lacks added (write.MergeSchemas). A Parquet file gives its own
// schema; a CSV header's new columns are STRING; a JSON lines file's new
// keys take the type of their values (integers BIGINT, other numbers
// DOUBLE, booleans BOOLEAN, anything else STRING), in name order.
func mergedInputSchema(ctx context.Context, table *schema.StructType, paths []string) (*schema.StructType, error) {
	out := table
	for _, p := range paths {
		src, err := inputSchema(ctx, p, out)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		// Widening allowed here: this is the rows' layout; the append
		// decides whether the table may widen.
		if out, _, err = write.MergeSchemas(out, src, true); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	return out, nil
}

func inputSchema(ctx context.Context, path string, table *schema.StructType) (*schema.StructType, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	extra := &schema.StructType{}
	addNew := func(name string, t schema.DataType) {
		if _, ok := table.FieldFold(name); ok {
			return
		}
		if prev, ok := extra.FieldFold(name); ok {
			if prev.Type != t && prev.Type != schema.String {
				if (prev.Type == schema.Long && t == schema.Double) || (prev.Type == schema.Double && t == schema.Long) {
					prev.Type = schema.Double
				} else {
					prev.Type = schema.String
				}
			}
			return
		}
		extra.Fields = append(extra.Fields, schema.StructField{Name: name, Type: t, Nullable: true})
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".parquet":
		st, err := f.Stat()
		if err != nil {
			return nil, err
		}
		pf, err := datafile.Open(f, st.Size())
		if err != nil {
			return nil, err
		}
		return pf.Schema()
	case ".csv":
		header, err := csv.NewReader(bufio.NewReader(f)).Read()
		if err != nil {
			return nil, fmt.Errorf("reading the CSV header: %w", err)
		}
		for i, h := range header {
			if i == 0 {
				h = strings.TrimPrefix(h, "\ufeff")
			}
			addNew(h, schema.String)
		}
	case ".json", ".jsonl", ".ndjson":
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), maxRecordBytes)
		for sc.Scan() {
			dec := json.NewDecoder(strings.NewReader(sc.Text()))
			dec.UseNumber()
			var obj map[string]any
			if dec.Decode(&obj) != nil {
				continue // jsonInput reports it, with the line
			}
			// Keys in name order, as Spark's JSON schema inference orders
			// the fields it finds.
			for _, k := range slices.Sorted(maps.Keys(obj)) {
				switch v := obj[k].(type) {
				case nil:
				case bool:
					addNew(k, schema.Boolean)
				case json.Number:
					if _, err := v.Int64(); err == nil {
						addNew(k, schema.Long)
					} else {
						addNew(k, schema.Double)
					}
				default:
					addNew(k, schema.String)
				}
			}
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unknown input format %q: %w", filepath.Ext(path), deltaerr.ErrInvalidArgument)
	}
	return &schema.StructType{Fields: append(append([]schema.StructField(nil), table.Fields...), extra.Fields...)}, nil
}

package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // zones for partitionTimeZones on machines without them

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/internal/datafile"
	"github.com/godelta/delta/schema"
)

// This file checks the data path: rows read by scans and change data feeds
// against the answers the reference implementations recorded. Rows are
// compared as multisets of formatted cells (see cellText).

// table is a result: column names and rows of cells. A nil cell is null.
type table struct {
	columns []string
	rows    [][]*string
}

// cellText formats a value as arrow's pretty-printer displays it, which is
// the form of the derived expectations: Value.String for primitives, and
// {name: value, ...}, [a, b] and {key: value} for nested values, with nulls
// inside them shown empty. Top-level nulls are nil.
func cellText(v schema.Value, t schema.DataType) *string {
	if v.IsNull() {
		return nil
	}
	s := string(appendCell(nil, v, t))
	return &s
}

func appendCell(b []byte, v schema.Value, t schema.DataType) []byte {
	switch v.Kind() {
	case schema.KindNull:
		return b
	case schema.KindStruct:
		st, _ := t.(*schema.StructType)
		b = append(b, '{')
		for i, f := range v.Fields() {
			if i > 0 {
				b = append(b, ", "...)
			}
			var ft schema.DataType
			name := strconv.Itoa(i)
			switch {
			case st != nil && i < len(st.Fields):
				name, ft = st.Fields[i].Name, st.Fields[i].Type
			case t == schema.Variant && i < 2:
				name = [2]string{"metadata", "value"}[i] // a variant's two binaries
			}
			b = append(b, name...)
			b = append(b, ": "...)
			b = appendCell(b, f, ft)
		}
		return append(b, '}')
	case schema.KindArray:
		var et schema.DataType
		if at, ok := t.(*schema.ArrayType); ok {
			et = at.ElementType
		}
		b = append(b, '[')
		for i, e := range v.Elements() {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = appendCell(b, e, et)
		}
		return append(b, ']')
	case schema.KindMap:
		var kt, vt schema.DataType
		if mt, ok := t.(*schema.MapType); ok {
			kt, vt = mt.KeyType, mt.ValueType
		}
		b = append(b, '{')
		for i := range v.MapLen() {
			if i > 0 {
				b = append(b, ", "...)
			}
			k, val := v.MapEntry(i)
			b = appendCell(b, k, kt)
			b = append(b, ": "...)
			b = appendCell(b, val, vt)
		}
		return append(b, '}')
	}
	return append(b, v.String()...)
}

// collect formats every row a batch iterator yields.
func collect(sch *schema.StructType, batches func(yield func(*delta.Batch, error) bool)) (table, error) {
	out := table{}
	for _, f := range sch.Fields {
		out.columns = append(out.columns, f.Name)
	}
	for b, err := range batches {
		if err != nil {
			return out, err
		}
		for i := range b.Len {
			row := make([]*string, len(b.Columns))
			for j, c := range b.Columns {
				row[j] = cellText(c[i], sch.Fields[j].Type)
			}
			out.rows = append(out.rows, row)
		}
	}
	return out, nil
}

// project keeps the named columns, in that order.
func (t table) project(cols []string) (table, error) {
	idx := make([]int, len(cols))
	for i, c := range cols {
		idx[i] = slices.Index(t.columns, c)
		if idx[i] < 0 {
			return t, fmt.Errorf("result has no column %q (columns %q)", c, t.columns)
		}
	}
	out := table{columns: cols}
	for _, r := range t.rows {
		nr := make([]*string, len(idx))
		for i, k := range idx {
			nr[i] = r[k]
		}
		out.rows = append(out.rows, nr)
	}
	return out, nil
}

// keys returns the rows as sortable strings, one per row.
func (t table) keys() []string {
	out := make([]string, len(t.rows))
	for i, r := range t.rows {
		var sb strings.Builder
		for j, c := range r {
			if j > 0 {
				sb.WriteString(" | ")
			}
			if c == nil {
				sb.WriteString("<null>")
			} else {
				sb.WriteString(strconv.Quote(*c))
			}
		}
		out[i] = sb.String()
	}
	slices.Sort(out)
	return out
}

// sameRows compares two results as multisets of rows, after checking
// that they have the same columns.
func sameRows(got, want table) error {
	if !slices.Equal(got.columns, want.columns) {
		return fmt.Errorf("columns %q, want %q", got.columns, want.columns)
	}
	g, w := got.keys(), want.keys()
	if slices.Equal(g, w) {
		return nil
	}
	missing, extra := multisetDiff(w, g), multisetDiff(g, w)
	return fmt.Errorf("%d rows, want %d; missing %s; unexpected %s", len(g), len(w), sample(missing), sample(extra))
}

// multisetDiff returns the sorted elements of a not matched in b (both
// sorted).
func multisetDiff(a, b []string) []string {
	var out []string
	i, j := 0, 0
	for i < len(a) {
		switch {
		case j >= len(b) || a[i] < b[j]:
			out = append(out, a[i])
			i++
		case a[i] > b[j]:
			j++
		default:
			i++
			j++
		}
	}
	return out
}

func sample(rows []string) string {
	if len(rows) == 0 {
		return "none"
	}
	s := fmt.Sprintf("%d: %s", len(rows), strings.Join(rows[:min(3, len(rows))], "; "))
	if len(rows) > 3 {
		s += "; ..."
	}
	return s
}

// readExpectedParquet reads an answer: one parquet file or every .parquet
// file of a folder (Spark's part files), unioned.
func readExpectedParquet(ctx context.Context, path string) (table, error) {
	var files []string
	if st, err := os.Stat(path); err != nil {
		return table{}, err
	} else if st.IsDir() {
		ents, err := os.ReadDir(path)
		if err != nil {
			return table{}, err
		}
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".parquet") && !strings.HasPrefix(e.Name(), ".") {
				files = append(files, filepath.Join(path, e.Name()))
			}
		}
	} else {
		files = []string{path}
	}
	var out table
	for _, name := range files {
		t, err := readParquetFile(ctx, name)
		if err != nil {
			return out, fmt.Errorf("%s: %w", name, err)
		}
		if out.columns == nil {
			out.columns = t.columns
		} else if !slices.Equal(out.columns, t.columns) {
			return out, fmt.Errorf("%s: columns %q differ from %q", name, t.columns, out.columns)
		}
		out.rows = append(out.rows, t.rows...)
	}
	return out, nil
}

func readParquetFile(ctx context.Context, name string) (table, error) {
	f, err := os.Open(name)
	if err != nil {
		return table{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return table{}, err
	}
	pf, err := datafile.Open(f, st.Size())
	if err != nil {
		return table{}, err
	}
	sch, err := pf.Schema()
	if err != nil {
		return table{}, err
	}
	out := table{}
	for _, fl := range sch.Fields {
		out.columns = append(out.columns, fl.Name)
	}
	err = pf.Read(ctx, sch, datafile.ReadOptions{}, func(b *datafile.Batch) error {
		for i := range b.Len {
			row := make([]*string, len(b.Columns))
			for j, c := range b.Columns {
				row[j] = cellText(c[i], sch.Fields[j].Type)
			}
			out.rows = append(out.rows, row)
		}
		return nil
	})
	return out, err
}

// scanTable opens root at version (nil for the latest) and scans it.
func scanTable(ctx context.Context, root string, version *int64, opts delta.ScanOptions) (table, *delta.Scan, error) {
	tbl, err := delta.Open(ctx, root)
	if err != nil {
		return table{}, nil, err
	}
	var snap *delta.Snapshot
	if version != nil {
		snap, err = tbl.SnapshotAt(ctx, *version)
	} else {
		snap, err = tbl.Snapshot(ctx)
	}
	if err != nil {
		return table{}, nil, err
	}
	s, err := tbl.Scan(snap, opts)
	if err != nil {
		return table{}, nil, err
	}
	t, err := collect(s.Schema(), s.Batches(ctx))
	return t, s, err
}

// partitionTimeZones gives, for the table roots that need one, the zone in
// which the writing Spark session wrote timestamp partition values without
// an offset. The golden table below holds "2021-09-08 11:11:11" while its
// answer says 18:11:11Z: it was written and answered by a Spark session in
// America/Los_Angeles (kernel-rs and kernel-java leave its timestamp column
// out for that reason). Reading it with ScanOptions.PartitionTimeZone shows
// the option at work; every other table is read as UTC.
var partitionTimeZones = map[string]string{
	"golden/data-reader-partition-values/delta": "America/Los_Angeles",
}

// scanOptionsFor returns the scan options a table root needs.
func scanOptionsFor(root string) (delta.ScanOptions, error) {
	for suffix, zone := range partitionTimeZones {
		if strings.HasSuffix(filepath.ToSlash(root), suffix) {
			loc, err := time.LoadLocation(zone)
			if err != nil {
				return delta.ScanOptions{}, err
			}
			return delta.ScanOptions{PartitionTimeZone: loc}, nil
		}
	}
	return delta.ScanOptions{}, nil
}

// checkParquetAnswer compares a full scan of root at version ("latest",
// "" or "v<N>") with the Spark-written answer at answer.
func checkParquetAnswer(ctx context.Context, root, version, answer string) error {
	var v *int64
	if strings.HasPrefix(version, "v") {
		n, err := strconv.ParseInt(version[1:], 10, 64)
		if err != nil {
			return fmt.Errorf("bad version %q", version)
		}
		v = &n
	}
	want, err := readExpectedParquet(ctx, answer)
	if err != nil {
		return fmt.Errorf("reading the answer: %w", err)
	}
	opts, err := scanOptionsFor(root)
	if err != nil {
		return err
	}
	got, _, err := scanTable(ctx, root, v, opts)
	if err != nil {
		return err
	}
	return sameRows(got, want)
}

// rowsJSON is the expected part of scan, cdf and count cases.
type rowsJSON struct {
	Version *int64      `json:"version"`
	Columns []string    `json:"columns"`
	Rows    [][]*string `json:"rows"`
	Count   *int64      `json:"-"`
}

type dataCase struct {
	Kind              string          `json:"kind"`
	Version           *int64          `json:"version"`
	Columns           []string        `json:"columns"`
	Predicate         *string         `json:"predicate"`
	StartVersion      *int64          `json:"start_version"`
	EndVersion        *int64          `json:"end_version"`
	StartingTimestamp *string         `json:"starting_timestamp"`
	ExpectedError     string          `json:"expected_error"`
	Expected          json.RawMessage `json:"expected"`
}

// decodeDataCase decodes a data case and its expected rows.
func decodeDataCase(c Case) (dataCase, table, error) {
	var dc dataCase
	if err := json.Unmarshal(c.Raw, &dc); err != nil {
		return dc, table{}, err
	}
	var r rowsJSON
	if err := json.Unmarshal(dc.Expected, &r); err != nil {
		return dc, table{}, err
	}
	return dc, table{columns: r.Columns, rows: r.Rows}, nil
}

// kernelTimestamp matches kernel-rs's rendering of a timestamp literal in
// its test predicates: "TIMESTAMP 1970-01-01T00:00:04.000400Z (Scalar::...)".
var kernelTimestamp = regexp.MustCompile(`TIMESTAMP (\S+)( \(.*\))?$`)

// predicateText turns a case's predicate into our syntax.
func predicateText(p string) string {
	return kernelTimestamp.ReplaceAllString(p, "'$1'")
}

// checkScanCase checks cases of kind scan.
func checkScanCase(ctx context.Context, root string, c Case) error {
	dc, want, err := decodeDataCase(c)
	if err != nil {
		return err
	}
	opts := delta.ScanOptions{Columns: dc.Columns}
	if dc.Predicate != nil {
		pred, err := expr.Parse(predicateText(*dc.Predicate))
		if err != nil {
			return err
		}
		opts.Predicate = pred
	}
	got, _, err := scanTable(ctx, root, dc.Version, opts)
	if err != nil {
		return err
	}
	return sameRows(got, want)
}

// checkSkippingCase checks cases of kind scan_with_file_skipping_predicate.
// Their answers are every row of the files kernel-rs did not skip, while a
// scan here returns only the rows that satisfy the predicate. So, with P
// the rows of a full scan that satisfy the predicate (evaluated here, row
// by row), the check is: the filtered scan returns exactly P, P is within
// the answer, and the answer is within the full scan.
func checkSkippingCase(ctx context.Context, root string, c Case) error {
	dc, want, err := decodeDataCase(c)
	if err != nil {
		return err
	}
	pred, err := expr.Parse(predicateText(*dc.Predicate))
	if err != nil {
		return err
	}
	filtered, s, err := scanTable(ctx, root, dc.Version, delta.ScanOptions{Columns: dc.Columns, Predicate: pred})
	if err != nil {
		return err
	}
	if filtered, err = filtered.project(want.columns); err != nil {
		return err
	}
	// The full scan, filtered here row by row.
	tbl, err := delta.Open(ctx, root)
	if err != nil {
		return err
	}
	full, err := tbl.Scan(s.Snapshot(), delta.ScanOptions{})
	if err != nil {
		return err
	}
	all := table{columns: want.columns}
	var matching table
	matching.columns = want.columns
	sch := full.Schema()
	for row, err := range full.Rows(ctx) {
		if err != nil {
			return err
		}
		cells := make([]*string, len(want.columns))
		for i, name := range want.columns {
			j := slices.IndexFunc(sch.Fields, func(f schema.StructField) bool { return f.Name == name })
			if j < 0 {
				return fmt.Errorf("table has no column %q", name)
			}
			cells[i] = cellText(row.Values()[j], sch.Fields[j].Type)
		}
		all.rows = append(all.rows, cells)
		lookup := func(col string) (schema.DataType, schema.Value, bool) {
			j := slices.IndexFunc(sch.Fields, func(f schema.StructField) bool { return f.Name == col })
			if j < 0 {
				return nil, schema.Value{}, false
			}
			return sch.Fields[j].Type, row.Values()[j], true
		}
		if expr.Eval(pred, lookup) == expr.True {
			matching.rows = append(matching.rows, cells)
		}
	}
	if err := sameRows(filtered, matching); err != nil {
		return fmt.Errorf("filtered scan vs full scan filtered row by row: %w", err)
	}
	if extra := multisetDiff(matching.keys(), want.keys()); len(extra) > 0 {
		return fmt.Errorf("rows matching the predicate missing from the answer: %s", sample(extra))
	}
	if extra := multisetDiff(want.keys(), all.keys()); len(extra) > 0 {
		return fmt.Errorf("answer rows absent from a full scan: %s", sample(extra))
	}
	return nil
}

// checkCountCase checks cases of kind count.
func checkCountCase(ctx context.Context, root string, c Case) error {
	var exp struct {
		Expected struct {
			Rows int64 `json:"rows"`
		} `json:"expected"`
	}
	if err := json.Unmarshal(c.Raw, &exp); err != nil {
		return err
	}
	tbl, err := delta.Open(ctx, root)
	if err != nil {
		return err
	}
	var snap *delta.Snapshot
	if c.Version != nil {
		snap, err = tbl.SnapshotAt(ctx, *c.Version)
	} else {
		snap, err = tbl.Snapshot(ctx)
	}
	if err != nil {
		return err
	}
	s, err := tbl.Scan(snap, delta.ScanOptions{Columns: []string{}})
	if err != nil {
		return err
	}
	var n int64
	for b, err := range s.Batches(ctx) {
		if err != nil {
			return err
		}
		n += int64(b.Len)
	}
	if n != exp.Expected.Rows {
		return fmt.Errorf("count %d, want %d", n, exp.Expected.Rows)
	}
	return nil
}

// changes opens the change data feed a case names.
func changes(ctx context.Context, root string, dc dataCase) (*delta.Changes, error) {
	tbl, err := delta.Open(ctx, root)
	if err != nil {
		return nil, err
	}
	var opts delta.ChangeOptions
	if dc.EndVersion != nil {
		opts.End = delta.UpTo(*dc.EndVersion)
	}
	if dc.StartingTimestamp != nil {
		ts, err := time.Parse("2006-01-02T15:04:05.999999999", *dc.StartingTimestamp)
		if err != nil {
			return nil, err
		}
		return tbl.ChangesSince(ctx, ts, opts)
	}
	if dc.StartVersion != nil {
		opts.Start = *dc.StartVersion
	}
	return tbl.Changes(ctx, opts)
}

// checkCDFCase checks cases of kind cdf. The answers show
// _commit_timestamp without a zone suffix (it is UTC).
func checkCDFCase(ctx context.Context, root string, c Case) error {
	dc, want, err := decodeDataCase(c)
	if err != nil {
		return err
	}
	ch, err := changes(ctx, root, dc)
	if err != nil {
		return err
	}
	got, err := collect(ch.Schema(), ch.Batches(ctx))
	if err != nil {
		return err
	}
	if got, err = got.project(want.columns); err != nil {
		return err
	}
	if k := slices.Index(got.columns, "_commit_timestamp"); k >= 0 {
		for _, r := range got.rows {
			if r[k] != nil {
				s := strings.TrimSuffix(*r[k], "Z")
				r[k] = &s
			}
		}
	}
	return sameRows(got, want)
}

// checkCDFErrorCase checks cases of kind cdf_error: the feed must fail.
func checkCDFErrorCase(ctx context.Context, root string, c Case) error {
	var dc dataCase
	if err := json.Unmarshal(c.Raw, &dc); err != nil {
		return err
	}
	ch, err := changes(ctx, root, dc)
	if err == nil {
		for _, err = range ch.Batches(ctx) {
			if err != nil {
				break
			}
		}
	}
	if err == nil {
		return fmt.Errorf("succeeded, want an error (%s)", dc.ExpectedError)
	}
	return nil
}

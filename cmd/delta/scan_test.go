package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/godelta/delta"
	"github.com/godelta/delta/schema"
)

// csvRows runs delta with --format csv and returns the header and rows.
func csvRows(t *testing.T, args ...string) ([]string, [][]string) {
	t.Helper()
	r := mustRun(t, append(args, "--format", "csv")...)
	recs, err := csv.NewReader(strings.NewReader(r.stdout)).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("delta %s: not CSV with a header (%v):\n%s", strings.Join(args, " "), err, r.stdout)
	}
	return recs[0], recs[1:]
}

func column(rows [][]string, i int) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r[i])
	}
	slices.Sort(out)
	return out
}

// scan prints the right rows of a table with deletion vectors, one with
// column mapping, and one whose partition values have special characters.
func TestScanGoldenTables(t *testing.T) {
	dir := testdata(t)

	// Deletion vector on disk: rows 0 and 9 of 0..9 are deleted.
	header, rows := csvRows(t, "scan", filepath.Join(dir, "kernel-rs", "table-with-dv-small"))
	if !slices.Equal(header, []string{"value"}) || !slices.Equal(column(rows, 0), []string{"1", "2", "3", "4", "5", "6", "7", "8"}) {
		t.Errorf("table-with-dv-small: %v %v", header, rows)
	}

	// Column mapping (name mode): logical names out, every row read.
	cm := filepath.Join(dir, "golden", "table-with-columnmapping-mode-name", "delta")
	header, rows = csvRows(t, "scan", cm)
	tbl, err := delta.Open(context.Background(), cm)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tbl.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range snap.Schema().Fields {
		names = append(names, f.Name)
	}
	if !slices.Equal(header, names) || len(rows) != 6 {
		t.Errorf("column mapping: header %v (want %v), %d rows (want 6)", header, names, len(rows))
	}
	// Every column is read from its physical column: some row has a value
	// in it (the table also has a row of nulls).
	for i := range header {
		if slices.IndexFunc(rows, func(r []string) bool { return r[i] != "" }) < 0 {
			t.Errorf("column mapping: column %s is empty in every row", header[i])
		}
	}

	// Partition values "A/A" and "B B", stored in directories x=A%2FA
	// and x=B%20B and written URI-encoded in the log.
	header, rows = csvRows(t, "scan", filepath.Join(dir, "delta-rs", "delta-0.8.0-special-partition"))
	if !slices.Equal(header, []string{"x", "y"}) || !slices.Equal(column(rows, 0), []string{"A/A", "B B"}) {
		t.Errorf("special partition values: %v %v", header, rows)
	}

	// --where filters rows and --stats reports skipped files.
	r := mustRun(t, "scan", filepath.Join(dir, "delta-rs", "delta-0.8.0-special-partition"), "--where", "x = 'B B'", "--format", "csv", "--stats")
	if r.stdout != "x,y\nB B,2\n" || !strings.Contains(r.stderr, "1 skipped by partition") {
		t.Errorf("--where: stdout %q stderr %q", r.stdout, r.stderr)
	}
	// --columns and --limit.
	header, rows = csvRows(t, "scan", filepath.Join(dir, "kernel-rs", "table-with-dv-small"), "--columns", "value", "--limit", "3")
	if !slices.Equal(header, []string{"value"}) || len(rows) != 3 {
		t.Errorf("--limit 3: %v %v", header, rows)
	}
}

// --format jsonl writes one object per row, keyed by logical names, that
// reads back to the same values.
func TestScanJSONLRoundTrip(t *testing.T) {
	dir := testdata(t)
	for _, root := range []string{
		filepath.Join(dir, "golden", "data-reader-primitives", "delta"),
		filepath.Join(dir, "golden", "data-reader-nested-struct", "delta"),
		filepath.Join(dir, "golden", "data-reader-map", "delta"),
		filepath.Join(dir, "golden", "data-reader-array-primitives", "delta"),
		filepath.Join(dir, "golden", "decimal-various-scale-precision", "delta"),
		filepath.Join(dir, "golden", "dv-with-columnmapping", "delta"),
		filepath.Join(dir, "golden", "data-reader-timestamp_ntz", "delta"),
	} {
		t.Run(filepath.Base(filepath.Dir(root)), func(t *testing.T) {
			ctx := context.Background()
			tbl, err := delta.Open(ctx, root)
			if err != nil {
				t.Fatal(err)
			}
			snap, err := tbl.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			s, err := tbl.Scan(snap, delta.ScanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for row, err := range s.Rows(ctx) {
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, sortedMaps(schema.StructValue(row.Values())).String())
			}
			out := mustRun(t, "scan", root, "--format", "jsonl").stdout
			var got []string
			sc := bufio.NewScanner(strings.NewReader(out))
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
				dec.UseNumber()
				var obj map[string]any
				if err := dec.Decode(&obj); err != nil {
					t.Fatalf("line %q: %v", sc.Text(), err)
				}
				for _, f := range s.Schema().Fields {
					if _, ok := obj[f.Name]; !ok {
						t.Fatalf("line %q lacks column %q", sc.Text(), f.Name)
					}
				}
				v, err := schema.ParseValueJSON(obj, s.Schema())
				if err != nil {
					t.Fatalf("line %q: %v", sc.Text(), err)
				}
				got = append(got, sortedMaps(v).String())
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("jsonl read back differs:\n got %q\nwant %q", head(got), head(want))
			}
		})
	}
}

func head(s []string) []string { return s[:min(3, len(s))] }

// sortedMaps is v with its map entries in key order: JSON objects do not
// keep the order of a map's entries.
func sortedMaps(v schema.Value) schema.Value {
	switch v.Kind() {
	case schema.KindStruct, schema.KindArray:
		src := v.Fields()
		if v.Kind() == schema.KindArray {
			src = v.Elements()
		}
		out := make([]schema.Value, len(src))
		for i, e := range src {
			out[i] = sortedMaps(e)
		}
		if v.Kind() == schema.KindArray {
			return schema.ArrayValue(out)
		}
		return schema.StructValue(out)
	case schema.KindMap:
		type kv struct{ k, v schema.Value }
		var ents []kv
		for i := range v.MapLen() {
			k, val := v.MapEntry(i)
			ents = append(ents, kv{sortedMaps(k), sortedMaps(val)})
		}
		slices.SortFunc(ents, func(a, b kv) int { return strings.Compare(a.k.String(), b.k.String()) })
		var flat []schema.Value
		for _, e := range ents {
			flat = append(flat, e.k, e.v)
		}
		return schema.MapValue(flat)
	}
	return v
}

func TestChangesCommand(t *testing.T) {
	dir := testdata(t)
	root := filepath.Join(dir, "kernel-rs", "cdf-table-simple")
	header, rows := csvRows(t, "changes", root, "--from", "1", "--to", "1")
	if !slices.Equal(header, []string{"id", "_change_type", "_commit_version", "_commit_timestamp"}) || len(rows) != 10 {
		t.Fatalf("changes: %v, %d rows", header, len(rows))
	}
	for _, r := range rows {
		if r[1] != "delete" || r[2] != "1" {
			t.Errorf("row %v: want a delete at version 1", r)
		}
	}
	// Without --to the range runs to the latest version; --to 0 is
	// version 0, not the latest.
	_, all := csvRows(t, "changes", root, "--from", "1")
	_, upTo := csvRows(t, "changes", root, "--from", "1", "--to", "2")
	if len(all) == 0 || len(all) != len(upTo) || all[len(all)-1][2] != "2" {
		t.Fatalf("changes --from 1: %v; --to 2: %d rows", all, len(upTo))
	}
	if _, zero := csvRows(t, "changes", root, "--from", "0", "--to", "0"); slices.ContainsFunc(zero, func(r []string) bool { return r[2] != "0" }) {
		t.Fatalf("changes --to 0 returned rows of other versions: %v", zero)
	}
	// An end before the start, and a start after the latest version.
	for _, args := range [][]string{{"--from", "1", "--to", "0"}, {"--from", "3"}} {
		r := runDelta(append([]string{"changes", root}, args...)...)
		if r.code != exitFailure {
			t.Errorf("changes %v: exit %d, want 1 (%s)", args, r.code, r.stderr)
		}
		checkErrorLine(t, "changes", r.stderr)
	}
	// A table without the change data feed.
	r := runDelta("changes", filepath.Join(dir, "kernel-rs", "table-with-dv-small"), "--from", "0")
	if r.code != exitFailure || !strings.Contains(r.stderr, "change data feed is not enabled") {
		t.Errorf("changes on a table without CDF: exit %d, %q", r.code, r.stderr)
	}
}

package scan_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/snapshot"
)

type rec struct {
	ID   int64   `parquet:"id"`
	Name *string `parquet:"name,optional"`
}

const testSchema = `{"type":"struct","fields":[` +
	`{"name":"id","type":"long","nullable":false,"metadata":{}},` +
	`{"name":"name","type":"string","nullable":true,"metadata":{}},` +
	`{"name":"part","type":"string","nullable":true,"metadata":{}}]}`

// writeParquet encodes rows as a Parquet file.
func writeParquet(t *testing.T, rows []rec) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[rec](&buf)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// disjointTable writes a table of n files partitioned by part ("even" or
// "odd" file number); file i holds ids i*100 .. i*100+99 and has stats.
func disjointTable(t *testing.T, n int) logstore.Store {
	t.Helper()
	ctx := context.Background()
	store := memory.New()
	acts := []actions.Action{
		{Protocol: &actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}},
		{Metadata: &actions.Metadata{ID: "t", Format: actions.Format{Provider: "parquet"}, SchemaString: testSchema,
			PartitionColumns: []string{"part"}, Configuration: map[string]string{}}},
	}
	for i := range n {
		var rows []rec
		for id := int64(i * 100); id < int64(i*100+100); id++ {
			name := fmt.Sprintf("n%d", id)
			rows = append(rows, rec{ID: id, Name: &name})
		}
		part := []string{"even", "odd"}[i%2]
		path := fmt.Sprintf("part=%s/f%d.parquet", part, i)
		data := writeParquet(t, rows)
		if err := store.Put(ctx, path, data); err != nil {
			t.Fatal(err)
		}
		stats := fmt.Sprintf(`{"numRecords":100,"minValues":{"id":%d,"name":"n%d"},"maxValues":{"id":%d,"name":"n%d"},"nullCount":{"id":0,"name":0}}`,
			i*100, i*100, i*100+99, i*100+99)
		acts = append(acts, actions.Action{Add: &actions.Add{Path: path, Size: int64(len(data)),
			PartitionValues: map[string]string{"part": part}, DataChange: true, Stats: stats}})
	}
	data, err := actions.EncodeCommit(acts)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.PutIfAbsent(ctx, deltalog.CommitKey(0), data); err != nil {
		t.Fatal(err)
	}
	return store
}

func ids(t *testing.T, s *scan.Scan) []int64 {
	t.Helper()
	var out []int64
	for row, err := range s.Rows(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		v, ok := row.Get("id")
		if !ok {
			t.Fatal("no id column")
		}
		out = append(out, v.Int64())
	}
	slices.Sort(out)
	return out
}

func rangeOf(lo, hi int64) []int64 {
	var out []int64
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return out
}

// Data skipping is measured: a selective predicate opens only the files
// whose ranges can match, and the rows are exactly those that satisfy it.
func TestDataSkipping(t *testing.T) {
	store := disjointTable(t, 10)
	snap, err := snapshot.Load(context.Background(), store, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		pred      string
		want      []int64
		filesRead int64
		byPart    int64
		byStats   int64
	}{
		{"id >= 250 AND id < 420", rangeOf(250, 420), 3, 0, 7},
		{"id = 777", []int64{777}, 1, 0, 9},
		{"id < 0", nil, 0, 0, 10},
		{"part = 'odd' AND id < 400", append(rangeOf(100, 200), rangeOf(300, 400)...), 2, 5, 3},
		{"part = 'odd'", nil, 5, 5, 0}, // all rows of odd files; checked by count below
		{"NOT (id >= 100)", rangeOf(0, 100), 1, 0, 9},
		{"id IN (5, 905)", []int64{5, 905}, 2, 0, 8},
		{"name IS NULL", nil, 0, 0, 10},
		{"id > 990 OR id < 3", []int64{0, 1, 2, 991, 992, 993, 994, 995, 996, 997, 998, 999}, 2, 0, 8},
	}
	for _, tc := range tests {
		t.Run(tc.pred, func(t *testing.T) {
			pred, err := expr.Parse(tc.pred)
			if err != nil {
				t.Fatal(err)
			}
			s, err := scan.New(snap, scan.Options{Predicate: pred})
			if err != nil {
				t.Fatal(err)
			}
			got := ids(t, s)
			if tc.pred == "part = 'odd'" {
				if len(got) != 500 {
					t.Errorf("%d rows, want 500", len(got))
				}
			} else if !slices.Equal(got, tc.want) {
				t.Errorf("rows %v, want %v", got, tc.want)
			}
			m := s.Metrics()
			if m.FilesRead != tc.filesRead || m.FilesSkippedPart != tc.byPart || m.FilesSkippedStat != tc.byStats {
				t.Errorf("files read %d, skipped by partition %d, by stats %d; want %d, %d, %d",
					m.FilesRead, m.FilesSkippedPart, m.FilesSkippedStat, tc.filesRead, tc.byPart, tc.byStats)
			}
		})
	}
}

func TestProjectionAndPartitionColumns(t *testing.T) {
	store := disjointTable(t, 2)
	snap, err := snapshot.Load(context.Background(), store, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	s, err := scan.New(snap, scan.Options{Columns: []string{"PART", "id"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Schema().Fields; len(got) != 2 || got[0].Name != "part" || got[1].Name != "id" {
		t.Fatalf("schema %v", s.Schema())
	}
	n := 0
	for row, err := range s.Rows(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		p, _ := row.Get("part")
		id, _ := row.Get("id")
		want := []string{"even", "odd"}[id.Int64()/100]
		if p.String() != want {
			t.Fatalf("id %d in partition %s, want %s", id.Int64(), p, want)
		}
		n++
	}
	if n != 200 {
		t.Fatalf("%d rows, want 200", n)
	}

	type typed struct {
		ID   int64   `parquet:"id"`
		Part string  `parquet:"part"`
		Name *string // by field name, ignoring case
	}
	s, err = scan.New(snap, scan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n = 0
	for r, err := range scan.All[typed](context.Background(), s) {
		if err != nil {
			t.Fatal(err)
		}
		if r.Name == nil || *r.Name != fmt.Sprintf("n%d", r.ID) || r.Part == "" {
			t.Fatalf("typed row %+v", r)
		}
		n++
	}
	if n != 200 {
		t.Fatalf("%d typed rows, want 200", n)
	}
}

func TestBadInput(t *testing.T) {
	store := disjointTable(t, 1)
	snap, err := snapshot.Load(context.Background(), store, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := scan.New(snap, scan.Options{Columns: []string{"nope"}}); !errors.Is(err, deltaerr.ErrInvalidArgument) {
		t.Errorf("unknown column: %v", err)
	}
	pred, _ := expr.Parse("nope = 1")
	if _, err := scan.New(snap, scan.Options{Predicate: pred}); !errors.Is(err, deltaerr.ErrInvalidArgument) {
		t.Errorf("unknown predicate column: %v", err)
	}
	// A data file the log names but storage lacks.
	if err := store.Delete(context.Background(), "part=even/f0.parquet"); err != nil {
		t.Fatal(err)
	}
	s, err := scan.New(snap, scan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range s.Rows(context.Background()) {
		if !errors.Is(err, deltaerr.ErrFileNotFound) || !errors.Is(err, logstore.ErrNotFound) || errors.Is(err, deltaerr.ErrCorrupt) {
			t.Errorf("missing data file: %v", err)
		}
		break
	}
}

// Paths in the log may not leave the table root.
func TestPathsEscapingTheRoot(t *testing.T) {
	ctx := context.Background()
	for _, path := range []string{"../outside.parquet", "a/../../outside.parquet", "/etc/passwd", "file:///etc/passwd", "s3://other/x.parquet", "%2E%2E/x.parquet"} {
		store := memory.New()
		acts := []actions.Action{
			{Protocol: &actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}},
			{Metadata: &actions.Metadata{ID: "t", Format: actions.Format{Provider: "parquet"}, SchemaString: testSchema, Configuration: map[string]string{}}},
			{Add: &actions.Add{Path: path, Size: 10, DataChange: true}},
		}
		data, _ := actions.EncodeCommit(acts)
		if err := store.PutIfAbsent(ctx, deltalog.CommitKey(0), data); err != nil {
			t.Fatal(err)
		}
		snap, err := snapshot.Load(ctx, store, deltalog.Latest)
		if err != nil {
			t.Fatal(err)
		}
		s, err := scan.New(snap, scan.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var got error
		for _, err := range s.Rows(ctx) {
			got = err
			break
		}
		if !errors.Is(got, deltaerr.ErrPathEscapesRoot) {
			t.Errorf("path %q: %v, want ErrPathEscapesRoot", path, got)
		}
	}
}

// Batches recycle their memory once the loop body returns; Clone keeps a
// batch intact across later batches.
func TestBatchLifetime(t *testing.T) {
	store := disjointTable(t, 6)
	snap, err := snapshot.Load(context.Background(), store, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	s, err := scan.New(snap, scan.Options{Columns: []string{"id"}, Concurrency: 2, BatchSize: 30})
	if err != nil {
		t.Fatal(err)
	}
	var kept []*scan.Batch
	var want []int64
	for b, err := range s.Batches(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		kept = append(kept, b.Clone())
		for _, v := range b.Columns[0] {
			want = append(want, v.Int64())
		}
	}
	var got []int64
	for _, b := range kept {
		for _, v := range b.Columns[0] {
			got = append(got, v.Int64())
		}
	}
	if !slices.Equal(got, want) || len(got) != 600 {
		t.Fatalf("kept batches changed: %d ids, first %v", len(got), got[:min(5, len(got))])
	}
}

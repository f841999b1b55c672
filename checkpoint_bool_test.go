package delta_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/godelta/delta"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/schema"
)

// TestBooleanStatsAsSpark: Spark keeps no minimum or maximum for boolean
// columns (DataSkippingReader.scala SkippingEligibleDataType: numeric,
// date, timestamp, timestamp_ntz and string types only), in the JSON stats
// of its data files and in a checkpoint's stats_parsed alike, but counts
// their nulls. A predicate on a boolean column then skips no file, and its
// result stays right when the statistics come from stats_parsed alone.
func TestBooleanStatsAsSpark(t *testing.T) {
	ctx := context.Background()
	sch, err := schema.ParseDDL("id BIGINT, b BOOLEAN")
	if err != nil {
		t.Fatal(err)
	}
	props := map[string]string{"delta.checkpoint.writeStatsAsStruct": "true", "delta.checkpoint.writeStatsAsJson": "false"}
	dir := t.TempDir()
	tbl, err := delta.Create(ctx, dir, delta.TableSpec{Schema: sch, Properties: props})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	files := [][]bool{{true, true, true}, {false, false}, {true, false, true, false}}
	id := int64(0)
	wantTrue := 0
	for _, f := range files {
		var rows [][]schema.Value
		for _, b := range f {
			rows = append(rows, []schema.Value{schema.LongValue(id), schema.BooleanValue(b)})
			id++
			if b {
				wantTrue++
			}
		}
		if _, err := tbl.AppendRows(ctx, rows, delta.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The data files' JSON stats: nullCount for b, no bounds.
	commit, err := tbl.Store().Get(ctx, deltalog.CommitKey(1))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(commit), "\n") {
		var a struct {
			Add *struct {
				Stats string `json:"stats"`
			} `json:"add"`
		}
		if json.Unmarshal([]byte(line), &a) != nil || a.Add == nil {
			continue
		}
		var st struct {
			MinValues, MaxValues, NullCount map[string]any
		}
		if err := json.Unmarshal([]byte(a.Add.Stats), &st); err != nil {
			t.Fatal(err)
		}
		_, hasMin := st.MinValues["b"]
		_, hasMax := st.MaxValues["b"]
		_, hasNulls := st.NullCount["b"]
		if hasMin || hasMax || !hasNulls || st.MinValues["id"] == nil {
			t.Errorf("data file stats %s: want bounds for id, none for b, and b's null count", a.Add.Stats)
		}
	}

	v, err := tbl.Checkpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	data, err := tbl.Store().Get(ctx, deltalog.ClassicCheckpointKey(v))
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, p := range f.Schema().Columns() {
		if len(p) > 2 && p[0] == "add" && p[1] == "stats_parsed" {
			cols = append(cols, strings.Join(p[2:], "."))
		}
	}
	for _, c := range []string{"minValues.b", "maxValues.b"} {
		if slices.Contains(cols, c) {
			t.Errorf("stats_parsed has %s: Spark writes no bounds for booleans (columns %v)", c, cols)
		}
	}
	for _, c := range []string{"numRecords", "minValues.id", "maxValues.id", "nullCount.id", "nullCount.b"} {
		if !slices.Contains(cols, c) {
			t.Errorf("stats_parsed lacks %s (columns %v)", c, cols)
		}
	}

	// Read through the checkpoint only: a fresh table, every file's stats
	// rebuilt from stats_parsed.
	fresh, err := delta.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	snap, err := fresh.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cp, ok := snap.Segment().CheckpointVersion(); !ok || cp != v {
		t.Fatalf("snapshot not from the checkpoint: %+v", snap.Segment())
	}
	for _, tc := range []struct {
		where string
		want  int
	}{{"b = true", wantTrue}, {"b = false", int(id) - wantTrue}, {"NOT b", int(id) - wantTrue}, {"b", wantTrue}} {
		pred, err := delta.ParsePredicate(tc.where)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := fresh.Scan(snap, delta.ScanOptions{Predicate: pred})
		if err != nil {
			t.Fatal(err)
		}
		nfiles := 0
		for _, err := range sc.Files(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			nfiles++
		}
		if nfiles != len(files) {
			t.Errorf("%s: %d files to read, want all %d (no bounds to skip on)", tc.where, nfiles, len(files))
		}
		n := 0
		for _, err := range sc.Rows(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n != tc.want {
			t.Errorf("%s: %d rows, want %d", tc.where, n, tc.want)
		}
	}
}

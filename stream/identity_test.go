package stream_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/godelta/delta"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/stream"
)

// TestSinkIdentity: a sink's batches get identity values and column
// defaults like any append, the high-water mark in the same commit as
// the batch and its txn.
func TestSinkIdentity(t *testing.T) {
	ctx := t.Context()
	sch, err := schema.ParseDDL("id BIGINT GENERATED ALWAYS AS IDENTITY (START WITH 100), n INT DEFAULT 7, v STRING")
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := delta.Create(ctx, filepath.Join(t.TempDir(), "t"), delta.TableSpec{Schema: sch})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	sink, err := stream.NewSink(tbl.Store(), "producer", stream.SinkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	null := schema.Value{}
	for v := range int64(2) {
		rows := [][]schema.Value{{null, null, schema.StringValue("a")}, {null, schema.IntegerValue(1), schema.StringValue("b")}}
		if _, err := sink.Write(ctx, v, delta.Rows(rows)); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := tbl.Scan(snap, delta.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ids, ns []int64
	for r, err := range sc.Rows(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.Values()[0].Int64())
		ns = append(ns, r.Values()[1].Int64())
	}
	slices.Sort(ids)
	slices.Sort(ns)
	if !slices.Equal(ids, []int64{100, 101, 102, 103}) || !slices.Equal(ns, []int64{1, 1, 7, 7}) {
		t.Errorf("ids %v, n %v", ids, ns)
	}
	f, _ := snap.Schema().Field("id")
	if def, _, _ := f.Identity(); def.HighWaterMark != 103 {
		t.Errorf("high-water mark %d, want 103", def.HighWaterMark)
	}
}

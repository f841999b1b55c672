package stream_test

import (
	"cmp"
	"context"
	"fmt"
	"github.com/godelta/delta/actions"
	"slices"
	"testing"
	"time"

	"github.com/godelta/delta"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/stream"
)

// newTable creates a table (batch BIGINT, seq BIGINT, [more DDL]) in a
// temporary directory.
func newTable(t *testing.T, ddl string, props map[string]string, parts ...string) *delta.Table {
	t.Helper()
	if ddl == "" {
		ddl = "batch BIGINT NOT NULL, seq BIGINT NOT NULL"
	}
	sch, err := schema.ParseDDL(ddl)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := delta.Create(context.Background(), t.TempDir(), delta.TableSpec{Schema: sch, Properties: props, PartitionColumns: parts})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tbl.Close() })
	return tbl
}

// rowsOf returns the rows (batch, seq) of batch b.
func rowsOf(b, n int64) [][]schema.Value {
	var out [][]schema.Value
	for i := range n {
		out = append(out, []schema.Value{schema.LongValue(b), schema.LongValue(i)})
	}
	return out
}

// appendBatch appends rowsOf(b, n) in one commit and returns its version.
func appendBatch(t *testing.T, tbl *delta.Table, b, n int64) int64 {
	t.Helper()
	res, err := tbl.AppendRows(context.Background(), rowsOf(b, n), delta.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return res.Version
}

// key is one row's (batch, seq), with the change type in a change feed.
type key struct {
	batch, seq int64
	change     string
}

// drain reads every batch the source has now, and returns its rows.
func drain(t *testing.T, src *stream.Source) ([]key, []*stream.Batch) {
	t.Helper()
	ctx := context.Background()
	var keys []key
	var batches []*stream.Batch
	for {
		b, ok, err := src.TryNext(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return keys, batches
		}
		batches = append(batches, b)
		k, err := readKeys(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k...)
	}
}

func readKeys(ctx context.Context, b *stream.Batch) ([]key, error) {
	var keys []key
	for r, err := range b.Rows(ctx) {
		if err != nil {
			return nil, err
		}
		bv, _ := r.Get("batch")
		sv, _ := r.Get("seq")
		k := key{batch: bv.Int64(), seq: sv.Int64()}
		if c, ok := r.Get("_change_type"); ok {
			k.change = c.String()
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// want returns the keys of batches bs of n rows each, in order.
func want(n int64, change string, bs ...int64) []key {
	var out []key
	for _, b := range bs {
		for i := range n {
			out = append(out, key{batch: b, seq: i, change: change})
		}
	}
	return out
}

func equalKeys(t *testing.T, got, want []key) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rows:\n got %v\nwant %v", got, want)
	}
}

func sortedKeys(k []key) []key {
	out := append([]key(nil), k...)
	slices.SortFunc(out, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.batch, b.batch), cmp.Compare(a.seq, b.seq), cmp.Compare(a.change, b.change))
	})
	return out
}

// removeOf is a data-changing remove of a.
func removeOf(a *actions.Add) actions.Remove {
	ts, size := time.Now().UnixMilli(), a.Size
	return actions.Remove{Path: a.Path, DeletionTimestamp: &ts, DataChange: true, PartitionValues: a.PartitionValues, Size: &size}
}

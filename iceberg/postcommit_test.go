package iceberg_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/stream"
	"github.com/godelta/delta/txn"
	"github.com/godelta/delta/vacuum"
)

// Every commit of every entry point runs the one post-commit chain: a
// stream sink's commit, a stream compaction and a VACUUM on a UniForm table
// each advance the Iceberg metadata to their version, as the facade's
// appends do. They used to run the checkpoint-only path and leave Iceberg
// behind.
func TestPostCommitChainAdvancesIceberg(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	tbl, err := delta.Create(ctx, "file://"+dir, uniformSpec())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	store, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	converted := func(what string, want int64) {
		t.Helper()
		st, err := tbl.IcebergStatus(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.ConvertedVersion != want {
			t.Errorf("after %s: Iceberg holds Delta version %d, want %d", what, st.ConvertedVersion, want)
		}
	}
	row := func(i int) schema.Batch {
		return schema.Batch{Columns: [][]schema.Value{
			{schema.LongValue(int64(i))}, {schema.StringValue("n")}, {schema.DateValue(19000)},
		}, Len: 1}
	}
	sink, err := stream.NewSink(store, "app", stream.SinkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for v := range int64(3) {
		batches := func(yield func(schema.Batch, error) bool) { yield(row(int(v)), nil) }
		res, err := sink.Write(ctx, v, batches)
		if err != nil {
			t.Fatal(err)
		}
		converted("a sink commit", res.Commit.Version)
	}
	cres, err := stream.Compact(ctx, store, stream.CompactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cres.Removed == 0 {
		t.Fatalf("compaction committed nothing: %+v", cres)
	}
	converted("a compaction", cres.Commit.Version)

	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	vres, err := vacuum.Vacuum(ctx, snap, vacuum.Options{RetentionSet: true, Retention: 0, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	converted("a VACUUM", vres.EndVersion)
}

// A post-commit hook that fails or panics never changes the outcome of
// the commit that landed: the append returns its version, the rows are
// there once, and the failure is reported in PostCommit.
func TestPostCommitFailureKeepsTheCommit(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	tbl, err := delta.Create(ctx, "file://"+dir, uniformSpec())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	// metadata/ is a file: every conversion after a commit fails.
	if err := os.RemoveAll(filepath.Join(dir, "metadata")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "metadata"), []byte("in the way"), 0o644); err != nil {
		t.Fatal(err)
	}
	rows := [][]schema.Value{{schema.LongValue(1), schema.StringValue("n"), schema.DateValue(19000)}}
	res, err := tbl.AppendRows(ctx, rows, delta.WriteOptions{})
	if err != nil {
		t.Fatalf("the append failed although its commit landed: %v", err)
	}
	if res.Version != 1 || res.PostCommit.Err == nil || len(res.PostCommit.Failed) != 1 || res.PostCommit.Failed[0].Hook != "iceberg" {
		t.Errorf("result %+v; want version 1 with the iceberg hook's failure reported", res.PostCommit)
	}

	// A hook that panics is reported the same way, and the hooks after it
	// still run.
	ran := false
	txn.RegisterHook(txn.Hook{Name: "test-panics", Order: txn.OrderCompaction, Run: func(context.Context, *txn.CommitResult) error {
		panic("boom")
	}})
	txn.RegisterHook(txn.Hook{Name: "test-after", Order: txn.OrderPublish + 1, Run: func(context.Context, *txn.CommitResult) error {
		ran = true
		return nil
	}})
	res, err = tbl.AppendRows(ctx, rows, delta.WriteOptions{Txn: delta.TxnOptions{Clock: func() time.Time { return time.Now() }}})
	if err != nil {
		t.Fatalf("the append failed although its commit landed: %v", err)
	}
	var names []string
	for _, f := range res.PostCommit.Failed {
		names = append(names, f.Hook)
	}
	if !slices.Contains(names, "test-panics") || !ran {
		t.Errorf("failed hooks %v, later hook ran %v; want the panic reported and the chain continued", names, ran)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := snap.NumFiles(ctx); snap.Version() != 2 || n != 2 || err != nil {
		t.Errorf("version %d with %d files (%v), want 2 and 2", snap.Version(), n, err)
	}
}

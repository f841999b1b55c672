package stream_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltalog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/godelta/delta"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/stream"
	"github.com/godelta/delta/txn"
)

// tableKeys returns every row of the table, sorted.
func tableKeys(t *testing.T, tbl *delta.Table) []key {
	t.Helper()
	ctx := context.Background()
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := tbl.Scan(snap, delta.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var all []key
	for r, err := range sc.Rows(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, key{batch: r.Values()[0].Int64(), seq: r.Values()[1].Int64()})
	}
	return sortedKeys(all)
}

func TestSinkExactlyOnce(t *testing.T) {
	ctx := context.Background()
	tbl := newTable(t, "", nil)
	sink, err := stream.NewSink(tbl.Store(), "producer-1", stream.SinkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := sink.LastVersion(ctx); ok || err != nil {
		t.Fatalf("LastVersion of a new app: %v %v", ok, err)
	}
	for _, step := range []struct {
		version int64
		skipped bool
	}{{0, false}, {1, false}, {1, true}, {0, true}, {3, false}, {2, true}} {
		res, err := sink.Write(ctx, step.version, delta.Rows(rowsOf(step.version, 2)))
		if err != nil {
			t.Fatal(err)
		}
		if res.Skipped != step.skipped {
			t.Fatalf("batch %d: skipped %v, want %v", step.version, res.Skipped, step.skipped)
		}
	}
	if v, ok, err := sink.LastVersion(ctx); v != 3 || !ok || err != nil {
		t.Fatalf("LastVersion = %d %v %v, want 3", v, ok, err)
	}
	equalKeys(t, tableKeys(t, tbl), want(2, "", 0, 1, 3))
	// Another application is independent.
	other, _ := stream.NewSink(tbl.Store(), "producer-2", stream.SinkOptions{})
	if res, err := other.Write(ctx, 1, nil); err != nil || res.Skipped {
		t.Fatalf("empty batch of another app: %v %v", res, err)
	}
	if v, ok, _ := other.LastVersion(ctx); v != 1 || !ok {
		t.Fatalf("empty batch not recorded: %d %v", v, ok)
	}
	if _, err := stream.NewSink(tbl.Store(), "", stream.SinkOptions{}); !errors.Is(err, deltaerr.ErrInvalidArgument) {
		t.Errorf("empty app id: %v", err)
	}
	if _, err := sink.Write(ctx, -1, nil); !errors.Is(err, deltaerr.ErrInvalidArgument) {
		t.Errorf("negative version: %v", err)
	}
}

// TestSinkConcurrentReplay races writers of the same batch: exactly one
// commits it, the others find it committed (inside their transaction, on
// retry after the conflict).
func TestSinkConcurrentReplay(t *testing.T) {
	ctx := context.Background()
	tbl := newTable(t, "", nil)
	sink, _ := stream.NewSink(tbl.Store(), "app", stream.SinkOptions{})
	for v := int64(0); v < 3; v++ {
		var wg sync.WaitGroup
		var mu sync.Mutex
		committed := 0
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := sink.Write(ctx, v, delta.Rows(rowsOf(v, 3)))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if !res.Skipped {
					committed++
				}
				mu.Unlock()
			}()
		}
		wg.Wait()
		if committed != 1 {
			t.Fatalf("batch %d committed %d times", v, committed)
		}
	}
	equalKeys(t, tableKeys(t, tbl), want(3, "", 0, 1, 2))
}

// TestSinkTransactionRetention checks delta.setTransactionRetentionDuration:
// a txn older than it counts as absent, in the snapshot and after a
// checkpoint.
func TestSinkTransactionRetention(t *testing.T) {
	ctx := context.Background()
	tbl := newTable(t, "", map[string]string{"delta.setTransactionRetentionDuration": "interval 1 hours"})
	old := stream.SinkOptions{Txn: txn.Options{Clock: func() time.Time { return time.Now().Add(-2 * time.Hour) }}}
	sOld, _ := stream.NewSink(tbl.Store(), "old", old)
	sNew, _ := stream.NewSink(tbl.Store(), "new", stream.SinkOptions{})
	if _, err := sOld.Write(ctx, 5, delta.Rows(rowsOf(5, 1))); err != nil {
		t.Fatal(err)
	}
	if _, err := sNew.Write(ctx, 6, delta.Rows(rowsOf(6, 1))); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		if _, ok, err := sOld.LastVersion(ctx); ok || err != nil {
			t.Errorf("%s: expired txn still seen (%v)", when, err)
		}
		if v, ok, err := sNew.LastVersion(ctx); v != 6 || !ok || err != nil {
			t.Errorf("%s: live txn: %d %v %v", when, v, ok, err)
		}
	}
	check("from the commits")
	if _, err := tbl.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	check("after a checkpoint")
}

func TestOffsets(t *testing.T) {
	offs := []stream.Offset{{Version: 0}, {Version: 0, Index: 5}, {Version: 3, Snapshot: true}, {Version: 3, Index: 7, Snapshot: true},
		{Version: 4}, {Version: 4, Index: 1}, {Version: 1 << 38, Index: 1<<23 - 1}}
	for i, o := range offs {
		n, err := o.Seq()
		if err != nil {
			t.Fatal(err)
		}
		if back := stream.OffsetFromSeq(n); back != o {
			t.Errorf("Seq round trip of %v gave %v", o, back)
		}
		p, err := stream.ParseOffset(o.String())
		if err != nil || p != o {
			t.Errorf("ParseOffset(%q) = %v, %v", o.String(), p, err)
		}
		if i > 0 {
			prev := offs[i-1]
			m, _ := prev.Seq()
			if !prev.Less(o) || o.Less(prev) || m >= n {
				t.Errorf("%v should come before %v (seq %d, %d)", prev, o, m, n)
			}
		}
	}
	for _, bad := range []string{"", "x", "-1", "1:x", "1:-2", "snapshot:"} {
		if _, err := stream.ParseOffset(bad); !errors.Is(err, stream.ErrOffset) {
			t.Errorf("ParseOffset(%q): %v", bad, err)
		}
	}
	if _, err := (stream.Offset{Version: 1, Index: 1 << 23}).Seq(); !errors.Is(err, stream.ErrOffset) {
		t.Errorf("an index too large to pack: %v", err)
	}
}

func TestCursors(t *testing.T) {
	ctx := context.Background()
	tbl := newTable(t, "", nil)
	sink, _ := stream.NewSink(tbl.Store(), "consumer", stream.SinkOptions{})
	for _, c := range []stream.Cursor{stream.FileCursor{Path: filepath.Join(t.TempDir(), "offset")}, stream.TableCursor{Sink: sink}} {
		if _, ok, err := c.Load(ctx); ok || err != nil {
			t.Fatalf("%T: empty cursor: %v %v", c, ok, err)
		}
		for _, o := range []stream.Offset{{Version: 2, Snapshot: true, Index: 3}, {Version: 9, Index: 1}} {
			if err := c.Save(ctx, o); err != nil {
				t.Fatal(err)
			}
			got, ok, err := c.Load(ctx)
			if !ok || err != nil || got != o {
				t.Fatalf("%T: Load = %v %v %v, want %v", c, got, ok, err, o)
			}
		}
	}
}

// TestWrittenActions checks the actions a sink batch and a compaction
// commit, against what Spark writes for a streaming append and an auto
// compaction.
func TestWrittenActions(t *testing.T) {
	ctx := context.Background()
	tbl := newTable(t, "", nil)
	sink, _ := stream.NewSink(tbl.Store(), "q-1", stream.SinkOptions{})
	var last int64
	for b := int64(0); b < 2; b++ {
		res, err := sink.Write(ctx, b, delta.Rows(rowsOf(b, 1)))
		if err != nil {
			t.Fatal(err)
		}
		last = res.Commit.Version
	}
	acts := commitActions(t, tbl, last)
	var txns, adds int
	for _, a := range acts {
		switch {
		case a.CommitInfo != nil:
			if a.CommitInfo.Operation != "STREAMING UPDATE" || fmt.Sprint(a.CommitInfo.OperationParameters) != "map[epochId:1 outputMode:Append queryId:q-1]" {
				t.Errorf("commitInfo %s %v", a.CommitInfo.Operation, a.CommitInfo.OperationParameters)
			}
		case a.Txn != nil:
			txns++
			if a.Txn.AppID != "q-1" || a.Txn.Version != 1 || a.Txn.LastUpdated == nil {
				t.Errorf("txn %+v", *a.Txn)
			}
		case a.Add != nil:
			adds++
			if !a.Add.DataChange {
				t.Error("a batch's add has dataChange=false")
			}
		}
	}
	if txns != 1 || adds != 1 {
		t.Errorf("batch commit: %d txn, %d add actions; want 1, 1", txns, adds)
	}
	res, err := stream.Compact(ctx, tbl.Store(), stream.CompactOptions{})
	if err != nil || res.Removed != 2 {
		t.Fatalf("compaction: %+v %v", res, err)
	}
	for _, a := range commitActions(t, tbl, res.Commit.Version) {
		switch {
		case a.CommitInfo != nil:
			if a.CommitInfo.Operation != "OPTIMIZE" {
				t.Errorf("compaction operation %q", a.CommitInfo.Operation)
			}
		case a.Add != nil && a.Add.DataChange, a.Remove != nil && a.Remove.DataChange:
			t.Errorf("compaction changed data: %+v", a)
		case a.Txn != nil:
			t.Error("compaction wrote a txn")
		}
	}
}

func commitActions(t *testing.T, tbl *delta.Table, v int64) []actions.Action {
	t.Helper()
	data, err := tbl.Store().Get(context.Background(), deltalog.CommitKey(v))
	if err != nil {
		t.Fatal(err)
	}
	acts, err := actions.DecodeCommit(deltalog.CommitKey(v), data)
	if err != nil {
		t.Fatal(err)
	}
	return acts
}

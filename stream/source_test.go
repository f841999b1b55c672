package stream_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/godelta/delta"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/stream"
)

func TestSourceStarts(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		start stream.Start
		want  []key
	}{
		{"snapshot then commits", stream.Start{}, append(want(3, "", 1), want(2, "", 2)...)},
		{"version 2", stream.FromVersion(2), want(2, "", 2)},
		{"version 0", stream.FromVersion(0), append(want(3, "", 1), want(2, "", 2)...)},
		{"latest", stream.FromLatest(), nil},
		{"offset", stream.FromOffset(stream.Offset{Version: 2}), want(2, "", 2)},
		{"timestamp in the future", stream.FromTimestamp(time.Now().Add(time.Hour)), nil},
		{"timestamp long ago", stream.FromTimestamp(time.Unix(0, 0)), append(want(3, "", 1), want(2, "", 2)...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tbl := newTable(t, "", nil)
			appendBatch(t, tbl, 1, 3) // v1
			appendBatch(t, tbl, 2, 2) // v2
			src, err := stream.NewSource(ctx, tbl.Store(), stream.Options{Start: tc.start})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := drain(t, src)
			equalKeys(t, got, tc.want)
			// Then it follows: a new commit is the next batch.
			v := appendBatch(t, tbl, 100, 1)
			got, bs := drain(t, src)
			equalKeys(t, got, want(1, "", 100))
			if first, last := bs[0].Versions(); first != v || last != v || position(bs[0].End) != (stream.Offset{Version: v + 1}) {
				t.Errorf("batch versions %d..%d end %v, want %d, end %d:0", first, last, bs[0].End, v, v+1)
			}
		})
	}
}

func TestSourceStartErrors(t *testing.T) {
	ctx := context.Background()
	tbl := newTable(t, "", nil)
	appendBatch(t, tbl, 1, 1)
	if _, err := stream.NewSource(ctx, tbl.Store(), stream.Options{Start: stream.FromVersion(5)}); !errors.Is(err, deltaerr.ErrVersionNotFound) {
		t.Errorf("start past latest: %v, want ErrVersionNotFound", err)
	}
	if _, err := stream.NewSource(ctx, tbl.Store(), stream.Options{Columns: []string{"nope"}}); !errors.Is(err, deltaerr.ErrInvalidArgument) {
		t.Errorf("unknown column: %v, want ErrInvalidArgument", err)
	}
	if _, err := stream.NewSource(ctx, tbl.Store(), stream.Options{ReadChangeFeed: true}); !errors.Is(err, scan.ErrChangeDataFeedDisabled) {
		t.Errorf("change feed of a table without it: %v", err)
	}
}

// TestSourceRateLimits checks that a batch spans whole files, at most
// MaxFilesPerTrigger of them and until MaxBytesPerTrigger, at least one,
// and that an offset in the middle of a commit resumes at the right file.
func TestSourceRateLimits(t *testing.T) {
	ctx := context.Background()
	tbl := newTable(t, "batch BIGINT NOT NULL, seq BIGINT NOT NULL, p STRING", nil, "p")
	// Commit 1: three files (one per partition), commit 2: two.
	commit := func(b int64, parts ...string) {
		var rows [][]schema.Value
		for i, p := range parts {
			rows = append(rows, []schema.Value{schema.LongValue(b), schema.LongValue(int64(i)), schema.StringValue(p)})
		}
		if _, err := tbl.AppendRows(ctx, rows, delta.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	commit(1, "a", "b", "c")
	commit(2, "a", "b")
	all := []key{{1, 0, ""}, {1, 1, ""}, {1, 2, ""}, {2, 0, ""}, {2, 1, ""}}
	sortKeys := func(k []key) []key { // a commit's files are in action order: partitions may come in any order
		return sortedKeys(k)
	}
	for _, tc := range []struct {
		name     string
		opts     stream.Options
		perBatch []int
	}{
		{"one file", stream.Options{MaxFilesPerTrigger: 1}, []int{1, 1, 1, 1, 1}},
		{"two files", stream.Options{MaxFilesPerTrigger: 2}, []int{2, 2, 1}},
		{"unbounded", stream.Options{MaxFilesPerTrigger: -1}, []int{5}},
		{"default", stream.Options{}, []int{5}},
		{"one byte", stream.Options{MaxBytesPerTrigger: 1}, []int{1, 1, 1, 1, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			opts.Start = stream.FromVersion(1)
			src, err := stream.NewSource(ctx, tbl.Store(), opts)
			if err != nil {
				t.Fatal(err)
			}
			got, bs := drain(t, src)
			var sizes []int
			for _, b := range bs {
				sizes = append(sizes, b.NumFiles())
			}
			if len(sizes) != len(tc.perBatch) {
				t.Fatalf("batch sizes %v, want %v", sizes, tc.perBatch)
			}
			for i := range sizes {
				if sizes[i] != tc.perBatch[i] {
					t.Fatalf("batch sizes %v, want %v", sizes, tc.perBatch)
				}
			}
			equalKeys(t, sortKeys(got), all)
			// Resume from every batch's End: the rest is read exactly once.
			for i, b := range bs {
				src2, err := stream.NewSource(ctx, tbl.Store(), stream.Options{Start: stream.FromOffset(b.End), MaxFilesPerTrigger: 1})
				if err != nil {
					t.Fatal(err)
				}
				rest, _ := drain(t, src2)
				var before []key
				for _, bb := range bs[:i+1] {
					k, err := readKeys(ctx, bb)
					if err != nil {
						t.Fatal(err)
					}
					before = append(before, k...)
				}
				equalKeys(t, sortKeys(append(before, rest...)), all)
			}
		})
	}
}

func TestSourceChangeCommits(t *testing.T) {
	ctx := context.Background()
	tbl := newTable(t, "", nil)
	appendBatch(t, tbl, 1, 2)                                                                 // v1
	if _, err := tbl.OverwriteRows(ctx, rowsOf(2, 1), delta.OverwriteOptions{}); err != nil { // v2: removes and adds
		t.Fatal(err)
	}
	// v3: a commit that only deletes (every file).
	tx, err := tbl.Begin(ctx, delta.TxnOptions{Operation: "DELETE"})
	if err != nil {
		t.Fatal(err)
	}
	snap := tx.Snapshot()
	for a, err := range snap.Files(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		tx.Remove(removeOf(a))
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	appendBatch(t, tbl, 4, 1) // v4

	read := func(opts stream.Options) ([]key, error) {
		opts.Start = stream.FromVersion(1)
		src, err := stream.NewSource(ctx, tbl.Store(), opts)
		if err != nil {
			return nil, err
		}
		var keys []key
		for {
			b, ok, err := src.TryNext(ctx)
			if err != nil || !ok {
				return keys, err
			}
			k, err := readKeys(ctx, b)
			if err != nil {
				return nil, err
			}
			keys = append(keys, k...)
		}
	}
	got, err := read(stream.Options{})
	var ce *stream.ChangeCommitError
	if !errors.As(err, &ce) || ce.Version != 2 || ce.DeleteOnly || !errors.Is(err, stream.ErrChangeCommit) {
		t.Fatalf("default: %v, want a *ChangeCommitError at version 2", err)
	}
	equalKeys(t, got, want(2, "", 1)) // what came before is read
	_, err = read(stream.Options{IgnoreDeletes: true})
	if !errors.As(err, &ce) || ce.Version != 2 {
		t.Fatalf("IgnoreDeletes: %v, want the update at version 2 refused", err)
	}
	got, err = read(stream.Options{SkipChangeCommits: true})
	if err != nil {
		t.Fatal(err)
	}
	equalKeys(t, got, append(want(2, "", 1), want(1, "", 4)...))
}

func TestSourceDeleteOnlyCommit(t *testing.T) {
	ctx := context.Background()
	tbl := newTable(t, "", nil)
	appendBatch(t, tbl, 1, 2) // v1
	tx, err := tbl.Begin(ctx, delta.TxnOptions{Operation: "DELETE"})
	if err != nil {
		t.Fatal(err)
	}
	for a, err := range tx.Snapshot().Files(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		tx.Remove(removeOf(a))
	}
	if _, err := tx.Commit(ctx); err != nil { // v2
		t.Fatal(err)
	}
	appendBatch(t, tbl, 3, 1) // v3
	src, err := stream.NewSource(ctx, tbl.Store(), stream.Options{Start: stream.FromVersion(2)})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = src.TryNext(ctx)
	var ce *stream.ChangeCommitError
	if !errors.As(err, &ce) || !ce.DeleteOnly || ce.Version != 2 {
		t.Fatalf("delete: %v, want a delete-only *ChangeCommitError", err)
	}
	src, err = stream.NewSource(ctx, tbl.Store(), stream.Options{Start: stream.FromVersion(2), IgnoreDeletes: true})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := drain(t, src)
	equalKeys(t, got, want(1, "", 3))
}

func TestSourceChangeFeed(t *testing.T) {
	ctx := context.Background()
	tbl := newTable(t, "", map[string]string{"delta.enableChangeDataFeed": "true"})
	appendBatch(t, tbl, 1, 2) // v1
	src, err := stream.NewSource(ctx, tbl.Store(), stream.Options{ReadChangeFeed: true})
	if err != nil {
		t.Fatal(err)
	}
	got, bs := drain(t, src)
	equalKeys(t, got, want(2, scan.ChangeInsert, 1))
	if position(bs[0].Start) != (stream.Offset{Version: 1, Snapshot: true}) {
		t.Errorf("start %v, want the snapshot at 1", bs[0].Start)
	}
	if _, err := tbl.OverwriteRows(ctx, rowsOf(2, 1), delta.OverwriteOptions{}); err != nil { // v2
		t.Fatal(err)
	}
	appendBatch(t, tbl, 3, 1) // v3
	got, _ = drain(t, src)
	wantKeys := append(append(want(2, scan.ChangeDelete, 1), want(1, scan.ChangeInsert, 2)...), want(1, scan.ChangeInsert, 3)...)
	equalKeys(t, sortedKeys(got[:3]), sortedKeys(wantKeys[:3]))
	equalKeys(t, got[3:], wantKeys[3:])
	// A batch of the change feed spans whole commits: one at a time here.
	one, err := stream.NewSource(ctx, tbl.Store(), stream.Options{ReadChangeFeed: true, Start: stream.FromVersion(1), MaxFilesPerTrigger: 1})
	if err != nil {
		t.Fatal(err)
	}
	_, bs = drain(t, one)
	var spans [][2]int64
	for _, b := range bs {
		f, l := b.Versions()
		spans = append(spans, [2]int64{f, l})
	}
	if fmt.Sprint(spans) != "[[1 1] [2 2] [3 3]]" {
		t.Errorf("change feed batches span versions %v, want one commit each", spans)
	}
	// The version columns say which commit each change is from.
	if s := src.Schema(); len(s.Fields) != 5 || s.Fields[2].Name != scan.ChangeTypeColumn {
		t.Errorf("schema %v", s)
	}
}

func TestSourceCompactionInvisible(t *testing.T) {
	ctx := context.Background()
	tbl := newTable(t, "", nil)
	for b := int64(1); b <= 4; b++ {
		appendBatch(t, tbl, b, 2)
	}
	src, err := stream.NewSource(ctx, tbl.Store(), stream.Options{Start: stream.FromVersion(1)})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := drain(t, src)
	equalKeys(t, got, want(2, "", 1, 2, 3, 4))
	res, err := stream.Compact(ctx, tbl.Store(), stream.CompactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Removed != 4 || res.Added != 1 {
		t.Fatalf("compaction removed %d, added %d files; want 4, 1", res.Removed, res.Added)
	}
	appendBatch(t, tbl, 5, 1)
	got, _ = drain(t, src)
	equalKeys(t, got, want(1, "", 5))
	// The table still holds every row once.
	equalKeys(t, tableKeys(t, tbl), append(want(2, "", 1, 2, 3, 4), want(1, "", 5)...))
}

func TestSourceCleanedUp(t *testing.T) {
	ctx := context.Background()
	tbl := newTable(t, "", nil)
	appendBatch(t, tbl, 1, 1) // v1
	appendBatch(t, tbl, 2, 1) // v2
	src, err := stream.NewSource(ctx, tbl.Store(), stream.Options{Start: stream.FromVersion(1)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	appendBatch(t, tbl, 3, 1) // v3
	// Log cleanup removed commits 0 and 1.
	for _, v := range []int64{0, 1} {
		if err := tbl.Store().Delete(ctx, deltalog.CommitKey(v)); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := src.TryNext(ctx); !errors.Is(err, stream.ErrVersionsCleanedUp) || !errors.Is(err, deltaerr.ErrVersionNotFound) {
		t.Fatalf("reading a cleaned-up commit: %v", err)
	}
	if _, err := stream.NewSource(ctx, tbl.Store(), stream.Options{Start: stream.FromOffset(stream.Offset{Version: 1})}); err == nil {
		src, _ := stream.NewSource(ctx, tbl.Store(), stream.Options{Start: stream.FromOffset(stream.Offset{Version: 1})})
		if _, _, err := src.TryNext(ctx); !errors.Is(err, stream.ErrVersionsCleanedUp) {
			t.Fatalf("resuming at a cleaned-up commit: %v", err)
		}
	} else if !errors.Is(err, stream.ErrVersionsCleanedUp) {
		t.Fatalf("resuming at a cleaned-up commit: %v", err)
	}
}

func TestSourceNextWaits(t *testing.T) {
	ctx := context.Background()
	tbl := newTable(t, "", nil)
	src, err := stream.NewSource(ctx, tbl.Store(), stream.Options{Start: stream.FromLatest(), PollInterval: time.Millisecond, MaxPollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// Nothing arrives: Next ends with the context.
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := src.Next(cctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next with nothing to read: %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		appendBatch(t, tbl, 7, 2)
	}()
	b, err := src.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	<-done
	got, err := readKeys(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	equalKeys(t, got, want(2, "", 7))
}
